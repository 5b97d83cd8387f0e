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
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server.h"

#define DEFAULT_CONFIG "configs/server.json"

static void usage(FILE *f) {
  fprintf(
      f,
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

typedef struct cli {
  const char *config;
  const char *port_s, *level_s;
  int check;
} cli;

/* Parses the command line into *o. Returns -1 to go on, or the exit
 * status (0 after --help, 2 for a usage error, said on stderr). */
static int parse_args(int argc, char **argv, cli *o) {
  static const struct option longopts[] = {
      {"config", required_argument, NULL, 'c'},
      {"port", required_argument, NULL, 'p'},
      {"log-level", required_argument, NULL, 'l'},
      {"check-config", no_argument, NULL, 'C'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  opterr = 0;           /* the messages below are ours */
  int opt, at = optind; /* argv[at]: the word being parsed */
  /* '+': stop at the first operand (there are none: it is an error);
   * ':': a missing value is told apart from an unknown option */
  for (; (opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1;
       at = optind) {
    switch (opt) {
    case 'h':
      usage(stdout);
      return 0;
    case 'C':
      o->check = 1;
      break;
    case 'c':
      o->config = optarg;
      break;
    case 'p':
      o->port_s = optarg;
      break;
    case 'l':
      o->level_s = optarg;
      break;
    case ':':
      fprintf(stderr, "gk-server: %s needs a value\n", argv[at]);
      usage(stderr);
      return 2;
    default:
      fprintf(stderr, "gk-server: unknown option '%s'\n", argv[at]);
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "gk-server: unknown option '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
  }
  return -1;
}

/* Agones sets AGONES_SDK_HTTP_PORT for the game server process: its
 * presence turns the SDK client on (agones.port, if set, wins). */
static void agones_env(gk_server_config *cfg) {
  const char *env = getenv("AGONES_SDK_HTTP_PORT");
  uint16_t port = 0;
  if (!env || !*env) return;
  cfg->agones.enabled = 1;
  if (!cfg->agones.port && parse_port(env, &port) == 0) cfg->agones.port = port;
}

int main(int argc, char **argv) {
  cli o = {DEFAULT_CONFIG, NULL, NULL, 0};
  int status = parse_args(argc, argv, &o);
  if (status >= 0) return status;

  gk_server_log log;
  gk_log_init(&log, stdout, GK_LOG_INFO);
  gk_server_config cfg;
  char err[GK_SERVER_CONFIG_ERR_MAX];
  int rc = gk_server_config_load(&cfg, o.config, err, sizeof(err));
  if (rc == 0 && o.port_s && parse_port(o.port_s, &cfg.port) != 0) {
    snprintf(err, sizeof(err),
             "--port: must be an integer in 0..65535, got "
             "'%.64s'",
             o.port_s);
    rc = GK_ERANGE;
  }
  if (rc == 0 && o.level_s && gk_log_level_parse(o.level_s, &cfg.log_level)) {
    snprintf(err, sizeof(err),
             "--log-level: must be debug, info, warn or "
             "error, got '%.64s'",
             o.level_s);
    rc = GK_ERANGE;
  }
  if (rc) {
    fprintf(stderr, "gk-server: %s\n", err);
    gk_log_msg(&log, GK_LOG_ERROR, "config_error", NULL, "reason", err);
    gk_server_config_free(&cfg);
    return 2;
  }
  if (o.check) {
    printf("%s: ok\n", o.config);
    gk_server_config_free(&cfg);
    return 0;
  }
  log.level = cfg.log_level;
  /* a file size limit (RLIMIT_FSIZE) makes a replay write fail with EFBIG,
   * which costs that recording only, instead of killing the process */
  signal(SIGXFSZ, SIG_IGN);
  agones_env(&cfg);
  rc = gk_server_run(&cfg, &log);
  gk_server_config_free(&cfg);
  return rc;
}
