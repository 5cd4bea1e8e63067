/* sync.c - the synchronous wrapper: submit a chain and wait on a condition variable. */
#include <pthread.h>

#include "client/client.h"

struct waiter {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int done;
};

static void waiter_cb(struct smb3_chain *ch, void *arg) {
  (void)ch;
  struct waiter *w = arg;
  pthread_mutex_lock(&w->m);
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->m);
}

int client_run(smb3_client *c, struct smb3_chain *ch) {
  struct waiter w = {.done = 0};
  pthread_mutex_init(&w.m, NULL);
  pthread_cond_init(&w.cv, NULL);
  ch->cb = waiter_cb;
  ch->arg = &w;
  int rc = client_submit(c, ch);
  if (!rc) {
    pthread_mutex_lock(&w.m);
    while (!w.done) pthread_cond_wait(&w.cv, &w.m);
    pthread_mutex_unlock(&w.m);
    rc = ch->error;
  }
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.m);
  if (rc) client_fail(c, rc, 0, "%s", smb3_strerror(rc));
  return rc;
}
