/* gk_server_main.c: the gk-server command line.
 *
 *   gk-server [--config FILE] [--port N] [--log-level LEVEL]
 *             [--check-config] [--help]
 *
 * Exit status: 0 after a clean shutdown (SIGTERM/SIGINT) or a good
 * --check-config; 1 if the server could not start (port in use, replay
 * folder not writable); 2 for a usage or config error, which is printed on
 * stderr naming the file, the key and the reason (and logged as a
 * "config_error" JSON line on stdout for log collectors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server.h"

#define DEFAULT_CONFIG "configs/server.json"

static void usage(FILE *f) {
  fprintf(f,
          "usage: gk-server [--config FILE] [--port N] [--log-level LEVEL]\n"
          "                 [--check-config] [--help]\n"
          "\n"
          "Hosts deterministic lockstep matches: many rooms on one UDP port.\n"
          "\n"
          "  --config FILE      server config (JSON; default %s;\n"
          "                     every key is described in configs/README.md)\n"
          "  --port N           UDP port, overrides listen.port (0: any free\n"
          "                     port, logged in the \"listening\" line)\n"
          "  --log-level LEVEL  debug, info, warn or error; overrides log_level\n"
          "  --check-config     validate the config and exit (0 = valid)\n"
          "  --help             this text\n"
          "\n"
          "Logs are JSON lines on stdout. SIGTERM or SIGINT ends every match\n"
          "with a notice, finalises the replays and exits 0.\n",
          DEFAULT_CONFIG);
}

static int parse_port(const char *s, uint16_t *out) {
  char *end = NULL;
  if (!s || !*s) return GK_EINVAL;
  unsigned long v = strtoul(s, &end, 10);
  if (*end || v > 65535 || s[0] == '-' || s[0] == '+') return GK_ERANGE;
  *out = (uint16_t)v;
  return 0;
}

int main(int argc, char **argv) {
  const char *config = DEFAULT_CONFIG;
  const char *port_s = NULL, *level_s = NULL;
  int check = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--check-config") == 0) {
      check = 1;
    } else if ((strcmp(a, "--config") == 0 || strcmp(a, "--port") == 0 ||
                strcmp(a, "--log-level") == 0)) {
      if (i + 1 >= argc) {
        fprintf(stderr, "gk-server: %s needs a value\n", a);
        usage(stderr);
        return 2;
      }
      const char *v = argv[++i];
      if (a[2] == 'c') config = v;
      else if (a[2] == 'p') port_s = v;
      else level_s = v;
    } else {
      fprintf(stderr, "gk-server: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }

  gk_server_log log;
  gk_log_init(&log, stdout, GK_LOG_INFO);
  gk_server_config cfg;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_config_load(&cfg, config, err, sizeof(err));
  if (rc == 0 && port_s && parse_port(port_s, &cfg.port) != 0) {
    snprintf(err, sizeof(err), "--port: must be an integer in 0..65535, got "
             "'%.64s'", port_s);
    rc = GK_ERANGE;
  }
  if (rc == 0 && level_s && gk_log_level_parse(level_s, &cfg.log_level)) {
    snprintf(err, sizeof(err), "--log-level: must be debug, info, warn or "
             "error, got '%.64s'", level_s);
    rc = GK_ERANGE;
  }
  if (rc) {
    fprintf(stderr, "gk-server: %s\n", err);
    gk_log_msg(&log, GK_LOG_ERROR, "config_error", NULL, "reason", err);
    gk_server_config_free(&cfg);
    return 2;
  }
  if (check) {
    printf("%s: ok\n", config);
    gk_server_config_free(&cfg);
    return 0;
  }
  log.level = cfg.log_level;
  rc = gk_server_run(&cfg, &log);
  gk_server_config_free(&cfg);
  return rc;
}
