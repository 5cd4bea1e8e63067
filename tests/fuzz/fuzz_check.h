/* fuzz_check.h - invariants the fuzz targets assert on every successful decode: a pointer a
 * decoder hands back must lie, with its length, inside the input. abort() makes libFuzzer
 * (and the standalone driver under ASan) report the input. */
#ifndef SMB3_FUZZ_CHECK_H
#define SMB3_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline void fuzz_check_in(const uint8_t *p, size_t n, const uint8_t *data, size_t size) {
  if (n == 0) return;
  if (!p || p < data || (size_t)(p - data) > size || n > size - (size_t)(p - data)) abort();
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < n; i++)
    sink ^= p[i]; /* let ASan see every byte */
  (void)sink;
}

#endif
