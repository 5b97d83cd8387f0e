/* pp_lurd.c: fuzz target for the push-puzzle LURD parser and checker.
 *
 * The input is solution text. What parses is checked, strictly and not,
 * against a fixed level, and turned into a step script; every move must
 * carry an offset inside the text. Any crash, hang, leak or sanitizer
 * report is a finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gk_push_puzzle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char level[] = "  #####\n"
                            "###   #\n"
                            "#.@$  #\n"
                            "### $.#\n"
                            "#.##$ #\n"
                            "# # . ##\n"
                            "#$ *$$.#\n"
                            "#   .  #\n"
                            "########\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[GK_ERRMSG_MAX];
  gk_pp_moves m;
  const char *text = (const char *)data;
  if (gk_pp_lurd_parse(&m, text, size, "fuzz", err, sizeof err) != 0) return 0;
  for (size_t i = 0; i < m.count; i++)
    if (m.where[i] >= size || (m.moves[i] & ~7u) != 0) abort();
  gk_pp_set set;
  if (gk_pp_set_parse(&set, level, sizeof level - 1, "level", 64, 64, err,
                      sizeof err) != 0)
    abort();
  gk_pp_check_result res;
  (void)gk_pp_check(&set.levels[0], &m, 1, text, size, &res, err, sizeof err);
  (void)gk_pp_check(&set.levels[0], &m, 0, text, size, &res, err, sizeof err);
  if (res.moves_done > m.count) abort();
  size_t n = m.count < 4096 ? m.count : 4096;
  uint8_t *rec = malloc(n * 2 * GK_PP_INPUT_SIZE + 1);
  if (rec != NULL) {
    if (gk_pp_script(m.moves, n, 2, 1, rec) != 0) abort();
    free(rec);
  }
  gk_pp_set_close(&set);
  gk_pp_moves_close(&m);
  return 0;
}
