/* util.h - small helpers of every floor of smb3fs (header only): the FUSE and libsmb3 headers,
 * the monotonic clock, errno of a library error, waking a thread. */
#ifndef SMB3FS_UTIL_H
#define SMB3FS_UTIL_H

#include "smb3/smb3.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 314
#endif
#include <fuse_lowlevel.h>

/* Monotonic seconds (what every timeout, expiry and deadline of the mount is measured in). */
static inline double fs_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
/* The errno for an SMB3_E* code (EIO for one with no closer errno), 0 for 0. */
static inline int fs_errno(int rc) {
  return rc ? (smb3_err_to_errno(rc) ?: EIO) : 0;
}
/* Set *flag and wake the thread waiting on cv (the notifier's and the reconnect thread's stop/kick). */
static inline void fs_poke(pthread_mutex_t *lock, pthread_cond_t *cv, int *flag) {
  pthread_mutex_lock(lock);
  *flag = 1;
  pthread_cond_signal(cv);
  pthread_mutex_unlock(lock);
}

static inline struct timespec fs_timespec_of(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  return ts;
}
/* A condition variable whose timed waits use CLOCK_MONOTONIC (fs_now()). */
static inline void fs_cond_init_mono(pthread_cond_t *cv) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &ca);
  pthread_condattr_destroy(&ca);
}

#endif
