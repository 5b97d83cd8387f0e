/* wire_samples.h: what the wire codec's tests share (wire_samples.c). */
#ifndef WIRE_SAMPLES_H
#define WIRE_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "gk_net_wire.h"

/* The bytes the samples' INPUT records and hashes point at. */
extern uint8_t records[64 * 4];
extern uint8_t hashes[3 * 8];
/* Sample i (0, 1, ...): one valid message of every type, with distinctive
 * values; 0 past the last. */
int sample_msg(int i, gk_wire_msg *m);
/* Encodes m (asserting it works) into buf (GK_WIRE_MAX): its length. */
size_t encode_ok(const gk_wire_msg *m, uint8_t *buf);
/* Encodes m and, if that works, decodes the bytes into d: the first error
 * or 0. */
int round_trip(const gk_wire_msg *m, gk_wire_msg *d);

#endif
