/* sync.c - the synchronous wrapper: submit a chain and wait for its callback.
 * The wait is a semaphore, not a mutex + condition variable: the I/O thread posts and is done,
 * so the woken caller never sleeps again on a mutex the I/O thread still holds (two futex
 * round trips less per request, which shows in every round trip's latency). glibc allows
 * destroying the semaphore as soon as sem_wait() returns. */
#include <errno.h>
#include <semaphore.h>

#include "client/client.h"

static void waiter_cb(struct smb3_chain *ch, void *arg) {
  (void)ch;
  sem_post(arg);
}

void client_sem_wait(sem_t *s) {
  while (sem_wait(s) && errno == EINTR) {
  }
}

int client_run(smb3_client *c, struct smb3_chain *ch) {
  sem_t done;
  sem_init(&done, 0, 0);
  ch->cb = waiter_cb;
  ch->arg = &done;
  int rc = client_submit(c, ch);
  if (!rc) {
    client_sem_wait(&done);
    rc = ch->error;
  }
  sem_destroy(&done);
  if (rc) client_fail(c, rc, 0, "%s", smb3_strerror(rc));
  return rc;
}
