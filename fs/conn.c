/* conn.c - the mount's current connection, and operations parked across a reconnect.
 *
 * fs->c is the current client; the reconnect thread (reconnect.c) replaces it when it is lost.
 * Everyone reads it with fs_conn(). An operation that failed because its connection was lost
 * reports it (reconnect_kick) and, if it may be sent again, parks (fs_park): it is resumed once
 * another connection is published, or told that none came within FS_PARK_SECONDS of the outage's
 * start. The reconnect thread waits here too (conn_wait) and, after publishing a new client,
 * resumes what was parked (conn_resume_parked).
 *
 * The state lives while the reconnect thread does (conn_start..conn_free, from reconnect.c):
 * without a thread to resume them, nothing may park. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "conn.h"

struct parked {
  struct parked *next;
  smb3_client *seen; /* the connection it failed on */
  void (*resume)(void *arg, int ok);
  void *arg;
  double deadline;
  int *rc; /* fs_park_once's retry->rc, told the logon error (conn_logon_failed); NULL: none */
};

struct conn {
  pthread_mutex_t lock;
  pthread_cond_t cv; /* CLOCK_MONOTONIC; the reconnect thread waits on it */
  int stop, kick;
  struct parked *parked; /* operations waiting for a new connection */
  double lost_at;        /* when the current outage was first seen (0: none) */
  int logon_rc;          /* the last reconnect could connect but not log on (SMB3_ELOGON), 0 else */
};

smb3_client *fs_conn(struct fs_ctx *fs) {
  return __atomic_load_n(&fs->c, __ATOMIC_ACQUIRE);
}

int fs_conn_error(int rc) {
  return rc == SMB3_ECLOSED || rc == SMB3_ETIMEDOUT || rc == SMB3_ECONNECT;
}

void reconnect_kick(struct fs_ctx *fs) {
  struct conn *r = fs->conn;
  if (r) fs_poke(&r->lock, &r->cv, &r->kick);
}

/* fs_park; rcp: where the logon error goes when the reconnect cannot log on (fs_park_once). */
static int park(struct fs_ctx *fs, smb3_client *seen, void (*resume)(void *arg, int ok), void *arg,
                int *rcp) {
  struct conn *r = fs->conn;
  struct parked *p = r ? malloc(sizeof *p) : NULL;
  if (!p) return -1;
  double now = fs_now();
  pthread_mutex_lock(&r->lock);
  if (r->stop) {
    pthread_mutex_unlock(&r->lock);
    free(p);
    return -1;
  }
  /* The thread publishes a new client before it takes the list (under this lock): either it is
   * already there, or this entry is on the list when the thread looks. */
  if (fs_conn(fs) != seen) {
    pthread_mutex_unlock(&r->lock);
    free(p);
    resume(arg, 1);
    return 0;
  }
  /* The wait is bounded per outage, not per operation: once the server has been away for
   * FS_PARK_SECONDS, operations fail at once instead of each waiting in turn. */
  /* The server is there but refuses the logon (the Kerberos ticket is gone or expired, the
   * password changed): waiting cannot help until the user acts (kinit); fail at once with it. */
  int logon_rc = r->logon_rc;
  if (!r->lost_at) r->lost_at = now;
  *p = (struct parked){NULL, seen, resume, arg, r->lost_at + FS_PARK_SECONDS, rcp};
  if (logon_rc && rcp) {
    pthread_mutex_unlock(&r->lock);
    free(p);
    *rcp = logon_rc;
    resume(arg, 0);
    return 0;
  }
  if (logon_rc || now >= p->deadline) {
    pthread_mutex_unlock(&r->lock);
    free(p);
    return -1;
  }
  if (!r->parked) { /* the first one wakes the thread; the others must not defeat its back-off */
    r->kick = 1;
    pthread_cond_signal(&r->cv);
  }
  p->next = r->parked;
  r->parked = p;
  pthread_mutex_unlock(&r->lock);
  return 0;
}

int fs_park(struct fs_ctx *fs, smb3_client *seen, void (*resume)(void *arg, int ok), void *arg) {
  return park(fs, seen, resume, arg, NULL);
}

int fs_park_once(struct fs_ctx *fs, struct fs_retry *r, int rc, void (*resume)(void *arg, int ok),
                 void *arg) {
  if (!fs_conn_error(rc)) return 0;
  reconnect_kick(fs);
  if (r->again || !r->conn) return 0;
  r->again = 1;
  r->rc = rc;
  return !park(fs, r->conn, resume, arg, &r->rc);
}

/* ---- for the reconnect thread ---- */

/* Lock held: unlink the entries to resume now: all (all = 1), those whose connection is no longer
 * the current one or is alive after all (a timeout that did not end it), or those past their
 * deadline (ok = 0). Returned in the order they were parked. */
static struct parked *take_parked(struct fs_ctx *fs, struct conn *r, int all, int ok) {
  smb3_client *cur = fs_conn(fs);
  int cur_alive = !smb3_connection_lost(cur);
  double now = fs_now();
  struct parked *out = NULL, **pp = &r->parked;
  while (*pp) {
    struct parked *p = *pp;
    int take = all || (ok ? (p->seen != cur || cur_alive) : now >= p->deadline);
    if (take) {
      *pp = p->next;
      p->next = out;
      out = p;
    } else {
      pp = &p->next;
    }
  }
  return out;
}

static void resume_all(struct parked *p, int ok) {
  while (p) {
    struct parked *next = p->next;
    p->resume(p->arg, ok);
    free(p);
    p = next;
  }
}

/* Lock held: the earliest deadline of a parked operation, or `t` if none is earlier. */
static double next_deadline(const struct conn *r, double t) {
  for (const struct parked *p = r->parked; p; p = p->next)
    if (p->deadline < t) t = p->deadline;
  return t;
}

int conn_wait(struct fs_ctx *fs, double t, int unkick) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  if (unkick) r->kick = 0;
  t = next_deadline(r, t);
  struct timespec ts = fs_timespec_of(t);
  while (!r->stop && !r->kick && fs_now() < t)
    if (pthread_cond_timedwait(&r->cv, &r->lock, &ts) == ETIMEDOUT) break;
  if (r->stop) {
    pthread_mutex_unlock(&r->lock);
    return -1;
  }
  r->kick = 0;
  struct parked *go = take_parked(fs, r, 0, 1), *expired = take_parked(fs, r, 0, 0);
  pthread_mutex_unlock(&r->lock);
  resume_all(go, 1); /* unlocked: they submit requests or reply */
  resume_all(expired, 0);
  return 0;
}

int conn_expire(struct fs_ctx *fs, double t, double *next) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  *next = next_deadline(r, t);
  int stop = r->stop;
  struct parked *expired = take_parked(fs, r, 0, 0);
  r->kick = 0;
  pthread_mutex_unlock(&r->lock);
  resume_all(expired, 0);
  return stop ? -1 : 0;
}

void conn_outage(struct fs_ctx *fs, int lost) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  if (!lost)
    r->lost_at = 0;
  else if (!r->lost_at)
    r->lost_at = fs_now(); /* (or fs_park set it: an operation saw it first) */
  pthread_mutex_unlock(&r->lock);
}

int conn_stopping(struct fs_ctx *fs) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  int stop = r->stop;
  pthread_mutex_unlock(&r->lock);
  return stop;
}

void conn_publish(struct fs_ctx *fs, smb3_client *nc) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  r->logon_rc = 0;
  __atomic_store_n(&fs->c, nc, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&r->lock);
}

void conn_logon_failed(struct fs_ctx *fs, int rc) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  r->logon_rc = rc;
  struct parked *failed = rc ? take_parked(fs, r, 1, 0) : NULL;
  for (struct parked *p = failed; p; p = p->next)
    if (p->rc) *p->rc = rc;
  pthread_mutex_unlock(&r->lock);
  resume_all(failed, 0);
}

void conn_resume_parked(struct fs_ctx *fs) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  r->lost_at = 0;
  struct parked *waiting = take_parked(fs, r, 0, 1);
  pthread_mutex_unlock(&r->lock);
  resume_all(waiting, 1); /* sent again on the new connection */
}

void conn_resume_all_failed(struct fs_ctx *fs) {
  struct conn *r = fs->conn;
  pthread_mutex_lock(&r->lock);
  struct parked *left = take_parked(fs, r, 1, 0);
  pthread_mutex_unlock(&r->lock);
  resume_all(left, 0);
}

int conn_start(struct fs_ctx *fs) {
  struct conn *r = calloc(1, sizeof *r);
  if (!r) return -ENOMEM;
  pthread_mutex_init(&r->lock, NULL);
  fs_cond_init_mono(&r->cv);
  fs->conn = r;
  return 0;
}

void conn_stop(struct fs_ctx *fs) {
  struct conn *r = fs->conn;
  if (r) fs_poke(&r->lock, &r->cv, &r->stop);
}

void conn_free(struct fs_ctx *fs) {
  struct conn *r = fs->conn;
  if (!r) return;
  fs->conn = NULL;
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->lock);
  free(r);
}
