/* test_wire_state.c: the STATE_* messages of desync forensics beyond the
 * round-trip, truncation and mutation tests every message type gets in
 * test_wire.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "gk_err.h"
#include "gk_net_wire.h"

Test(wire_codec, a_state_answer_that_cannot_carries_no_transfer) {
  gk_wire_msg m;
  memset(&m, 0, sizeof m);
  m.type = GK_MSG_STATE_BEGIN;
  m.u.state_begin = (gk_wire_state_begin){
      .status = GK_ENOTKEPT, .id = 1, .step = 5, .from = 10, .to = 20};
  uint8_t buf[GK_WIRE_MAX];
  size_t len = 0;
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), 0);
  gk_wire_msg back;
  cr_assert_eq(gk_wire_decode(buf, len, &back), 0);
  cr_assert_eq(back.u.state_begin.status, GK_ENOTKEPT);
  m.u.state_begin.total = 3; /* a status with a size is refused */
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO);
  m.u.state_begin.total = 0;
  m.u.state_begin.from = 30; /* from after to */
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ERANGE);
  m.u.state_begin = (gk_wire_state_begin){
      .id = 1, .step = 5, .total = 2048, .chunk_size = 1024, .chunks = 3};
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_EPROTO,
               "the chunk count must fit the size");
  m.u.state_begin.chunks = 2;
  m.u.state_begin.status = 1; /* only 0 or a negative code */
  cr_assert_eq(gk_wire_encode(&m, buf, sizeof buf, &len), GK_ERANGE);
}
