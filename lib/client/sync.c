/* sync.c - the synchronous wrapper: submit a chain and wait for its callback, and the check
 * every synchronous entry point makes first (not on the connection's own I/O thread).
 * The wait is a semaphore, not a mutex + condition variable: the I/O thread posts and is done,
 * so the woken caller never sleeps again on a mutex the I/O thread still holds (two futex
 * round trips less per request, which shows in every round trip's latency). glibc allows
 * destroying the semaphore as soon as sem_wait() returns. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "client/client.h"

int client_sync_check(smb3_client *c, const char *what) {
  if (!c || !c->have_io_thread || __atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) return 0;
  if (!pthread_equal(pthread_self(), c->io_thread)) return 0;
  return client_fail(c, SMB3_EDEADLK, 0,
                     "%s: synchronous call from a callback on the connection's I/O thread", what);
}

static void waiter_cb(struct smb3_chain *ch, void *arg) {
  (void)ch;
  sem_post(arg);
}

void client_sem_wait(sem_t *s) {
  while (sem_wait(s) && errno == EINTR) {
  }
}

int client_run(smb3_client *c, struct smb3_chain *ch) {
  int rc = client_sync_check(c, "request");
  if (rc) return rc;
  sem_t done;
  sem_init(&done, 0, 0);
  ch->cb = waiter_cb;
  ch->arg = &done;
  rc = client_submit(c, ch);
  if (!rc) {
    client_sem_wait(&done);
    rc = ch->error;
  }
  sem_destroy(&done);
  if (rc) client_fail(c, rc, 0, "%s", smb3_strerror(rc));
  return rc;
}
