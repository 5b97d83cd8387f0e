/* tests/tsan_criterion.c: lets Criterion start under ThreadSanitizer.
 * Linked into every test program of a -Db_sanitize=thread build only
 * (meson.build wraps criterion_dep; scripts/tsan.sh).
 *
 * Criterion 2.4 (BoxFort 0.1) maps its shared arena at a random address,
 * 0x200000000000 + (rand_r() & 0x3fffff) * 16 MiB, and gives up after a
 * few tries that find the place taken: "criterion: Could not initialize
 * inheritable arena: Resource temporarily unavailable", then abort
 * (Snaipe/Criterion#274). Under ThreadSanitizer all of that range but
 * 0x550000000000..0x568000000000 holds TSan's shadow, meta and guard
 * mappings, so about 19 starts in 20 fail. This rand_r, which the
 * program's definition lets win over libc's for libcriterion too, answers
 * within that window: 0x358000..0x367fff, so the arena lands at
 * 0x558000000000..0x567fffffffff (BoxFort still checks every page is
 * free). Nothing else in the test programs calls rand_r.
 */
int rand_r(unsigned int *seed);

int rand_r(unsigned int *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (int)(0x358000u + ((*seed >> 8) & 0xffffu));
}
