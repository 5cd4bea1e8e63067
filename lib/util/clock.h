/* clock.h - the monotonic clock in nanoseconds (deadlines, pacing, the data-phase timer). */
#ifndef SMB3_CLOCK_H
#define SMB3_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
