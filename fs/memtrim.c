/* memtrim.c - trim the heap a second after the mount's data memory went idle (see memtrim.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "budget.h"
#include "memtrim.h"

#define MEMTRIM_DELAY_S 1

struct memtrim {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int kicked; /* the budget went to zero since the thread last looked */
  int stop;
};

static void *trim_thread(void *arg) {
  struct fs_ctx *fs = arg;
  struct memtrim *t = fs->trim;
  pthread_mutex_lock(&t->lock);
  while (!t->stop) {
    if (!t->kicked) {
      pthread_cond_wait(&t->cond, &t->lock);
      continue;
    }
    /* Quiet for a second? Another kick meanwhile starts the second again. */
    t->kicked = 0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += MEMTRIM_DELAY_S;
    int rc = 0;
    while (!t->stop && !t->kicked && rc != ETIMEDOUT)
      rc = pthread_cond_timedwait(&t->cond, &t->lock, &until);
    if (t->stop || t->kicked || atomic_load(&fs->mem.used)) continue;
    pthread_mutex_unlock(&t->lock);
    malloc_trim(0);
    atomic_fetch_add(&fs->ctr.mem_trims, 1);
    pthread_mutex_lock(&t->lock);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

int memtrim_start(struct fs_ctx *fs) {
  struct memtrim *t = calloc(1, sizeof *t);
  if (!t) return -ENOMEM;
  pthread_mutex_init(&t->lock, NULL);
  pthread_cond_init(&t->cond, NULL);
  fs->trim = t;
  int rc = pthread_create(&t->thread, NULL, trim_thread, fs);
  if (rc) {
    fs->trim = NULL;
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t);
    return -rc;
  }
  return 0;
}

void memtrim_stop(struct fs_ctx *fs) {
  struct memtrim *t = fs->trim;
  if (!t) return;
  pthread_mutex_lock(&t->lock);
  t->stop = 1;
  pthread_cond_signal(&t->cond);
  pthread_mutex_unlock(&t->lock);
  pthread_join(t->thread, NULL);
  fs->trim = NULL;
  pthread_cond_destroy(&t->cond);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

void fs_mem_release(struct fs_ctx *fs, size_t n) {
  if (budget_release(&fs->mem, n) || !fs->trim) return;
  struct memtrim *t = fs->trim;
  pthread_mutex_lock(&t->lock);
  t->kicked = 1;
  pthread_cond_signal(&t->cond);
  pthread_mutex_unlock(&t->lock);
}
