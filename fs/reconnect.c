/* reconnect.c - a new connection when the old one is lost.
 *
 * A server restart, a reset connection or an unanswered keep-alive (echo_interval) leaves the
 * client dead: every request on it fails at once. The reconnect thread notices (it looks once a
 * second, and at once when an operation reports a lost connection through reconnect_kick), logs on
 * again with the mount's options, and publishes the new client in fs->c; later operations use it.
 * Meanwhile, operations that can simply be asked again (lookups, stat, statfs, directory listings,
 * opens of existing files; any operation that never reached the wire) wait for the new connection
 * (fs_park) and are sent again on it, as the kernel's cifs client does; if none comes within
 * FS_PARK_SECONDS of the outage's start they fail with the connection's error, and so does every
 * operation after that until the server is back. They never hang. What the old connection
 * held is gone with it: leases and oplocks (every inode forgets what it cached, so the next open
 * reads the server's data) and open handles: every file open here is opened again on the new
 * connection (same path, same access, never again O_CREAT/O_TRUNC) and its handle swapped in;
 * requests that were in flight on the old one failed, and write-back data that could not be
 * written is reported by the file's next fsync or close. A file that cannot be reopened (deleted
 * meanwhile) keeps failing until it is closed. Attempts back off from 1 s to 10 s while the server stays away.
 *
 * The old client is kept (its memory, not its connection) until a few newer ones have replaced
 * it or the mount ends: a FUSE worker may have loaded the pointer just before the swap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "fs.h"

#define RETIRED_MAX 4

struct parked {
  struct parked *next;
  smb3_client *seen; /* the connection it failed on */
  void (*resume)(void *arg, int ok);
  void *arg;
  double deadline;
};

struct reconn {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cv; /* CLOCK_MONOTONIC */
  int stop, kick;
  smb3_client *retired[RETIRED_MAX];
  int nretired;
  struct parked *parked; /* operations waiting for a new connection */
  double lost_at;        /* when the current outage was first seen (0: none) */
  int dropped;           /* this outage's cache drop is done (reconnect thread only) */
};

smb3_client *fs_conn(struct fs_ctx *fs) { return __atomic_load_n(&fs->c, __ATOMIC_ACQUIRE); }

int fs_conn_error(int rc) { return rc == SMB3_ECLOSED || rc == SMB3_ETIMEDOUT || rc == SMB3_ECONNECT; }

void reconnect_kick(struct fs_ctx *fs) {
  struct reconn *r = fs->rc;
  if (r) fs_poke(&r->lock, &r->cv, &r->kick);
}

int fs_park(struct fs_ctx *fs, smb3_client *seen, void (*resume)(void *arg, int ok), void *arg) {
  struct reconn *r = fs->rc;
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
  if (!r->lost_at) r->lost_at = now;
  *p = (struct parked){NULL, seen, resume, arg, r->lost_at + FS_PARK_SECONDS};
  if (now >= p->deadline) {
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

int fs_park_once(struct fs_ctx *fs, struct fs_retry *r, int rc, void (*resume)(void *arg, int ok), void *arg) {
  if (!fs_conn_error(rc)) return 0;
  reconnect_kick(fs);
  if (r->again || !r->conn) return 0;
  r->again = 1;
  r->rc = rc;
  return !fs_park(fs, r->conn, resume, arg);
}

/* Lock held: unlink the entries to resume now: all (all = 1), those whose connection is no longer
 * the current one or is alive after all (a timeout that did not end it), or those past their
 * deadline (ok = 0). Returned in the order they were parked. */
static struct parked *take_parked(struct fs_ctx *fs, struct reconn *r, int all, int ok) {
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
static double next_deadline(const struct reconn *r, double t) {
  for (const struct parked *p = r->parked; p; p = p->next)
    if (p->deadline < t) t = p->deadline;
  return t;
}

/* The new connection has none of the old one's leases: nothing cached may be trusted. */
static void forget_cache(struct fs_inode *in, void *arg) {
  struct fs_ctx *fs = arg;
  pthread_mutex_lock(&in->lock);
  int cached = (in->lease & SMB3_LEASE_READ) || in->cached_valid;
  in->lease = 0;
  cache_forget(in);
  pthread_mutex_unlock(&in->lock);
  /* Pages read over the old connection: gone, so that a file still open here is read anew. By
   * the notifier, not here: an invalidation waits for the pages of reads in progress, and reads
   * that failed with the connection wait for this thread to send them again. */
  if (cached && fs->cache == SMB3_CACHE_STRICT) cache_invalidate_later(fs, in->nodeid);
}

static void retire(struct reconn *r, smb3_client *old) {
  if (r->nretired == RETIRED_MAX) {
    smb3_disconnect(r->retired[0]);
    memmove(r->retired, r->retired + 1, sizeof r->retired[0] * (RETIRED_MAX - 1));
    r->nretired--;
  }
  r->retired[r->nretired++] = old;
}

/* One logon attempt, on its own thread: smb3_connect can take its connect and request timeouts
 * (up to a minute each against a server that accepts connections and then stalls), and parked
 * operations must still be answered at their deadline meanwhile. Owned by the attempt thread
 * once the reconnect thread abandons it (at stop). */
struct attempt {
  struct smb3_options o; /* its own copy: an abandoned attempt outlives the mount's */
  pthread_mutex_t lock;
  pthread_cond_t cv; /* CLOCK_MONOTONIC */
  int done, abandoned, rc;
  smb3_client *nc;
  char err[512];
};

static void cond_init_mono(pthread_cond_t *cv) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &ca);
  pthread_condattr_destroy(&ca);
}

static struct attempt *attempt_new(const struct smb3_options *o) {
  struct attempt *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->o = *o;
  const char *src[] = {o->host, o->share, o->path, o->username, o->password, o->domain};
  char **dst[] = {&a->o.host, &a->o.share, &a->o.path, &a->o.username, &a->o.password, &a->o.domain};
  int bad = 0;
  for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) *dst[i] = NULL;
  for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
    if (src[i] && !(*dst[i] = strdup(src[i]))) bad = 1;
  if (bad) {
    smb3_options_free(&a->o);
    free(a);
    return NULL;
  }
  pthread_mutex_init(&a->lock, NULL);
  cond_init_mono(&a->cv);
  return a;
}

static void attempt_free(struct attempt *a) {
  smb3_options_free(&a->o);
  pthread_cond_destroy(&a->cv);
  pthread_mutex_destroy(&a->lock);
  free(a);
}

static void *attempt_main(void *arg) {
  struct attempt *a = arg;
  smb3_client *nc = NULL;
  char err[512] = "";
  int rc = smb3_connect(&a->o, &nc, err, sizeof err);
  pthread_mutex_lock(&a->lock);
  int abandoned = a->abandoned;
  a->rc = rc;
  a->nc = nc;
  memcpy(a->err, err, sizeof err);
  a->done = 1;
  pthread_cond_signal(&a->cv);
  pthread_mutex_unlock(&a->lock);
  if (abandoned) {
    if (!rc) smb3_disconnect(nc);
    attempt_free(a);
  }
  return NULL;
}

static struct timespec ts_of(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  return ts;
}

/* r->lock held on entry and return: run attempt a to its end, answering the parked operations
 * whose time is up meanwhile. Returns 0 when it ended (its result in a), -1 when the mount is
 * stopping (a is then abandoned: its thread frees it). */
static int attempt_wait(struct fs_ctx *fs, struct reconn *r, struct attempt *a) {
  for (;;) {
    double t = next_deadline(r, fs_now() + 0.5);
    int stop = r->stop;
    struct parked *expired = take_parked(fs, r, 0, 0);
    r->kick = 0;
    pthread_mutex_unlock(&r->lock);
    resume_all(expired, 0);
    pthread_mutex_lock(&a->lock);
    if (!a->done && !stop) {
      struct timespec ts = ts_of(t);
      pthread_cond_timedwait(&a->cv, &a->lock, &ts);
    }
    int done = a->done;
    if (!done && stop) a->abandoned = 1;
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_lock(&r->lock);
    if (done) return 0;
    if (stop) return -1;
  }
}

/* Wait until t (monotonic seconds), a kick or stop; lock held. */
static void wait_until(struct reconn *r, double t) {
  struct timespec ts = ts_of(t);
  while (!r->stop && !r->kick && fs_now() < t)
    if (pthread_cond_timedwait(&r->cv, &r->lock, &ts) == ETIMEDOUT) break;
}

static void *reconnect_main(void *arg) {
  struct fs_ctx *fs = arg;
  struct reconn *r = fs->rc;
  double backoff = 1.0;
  int failing = 0;
  pthread_mutex_lock(&r->lock);
  for (;;) {
    wait_until(r, next_deadline(r, fs_now() + (failing ? backoff : 1.0)));
    if (r->stop) break;
    r->kick = 0;
    struct parked *go = take_parked(fs, r, 0, 1), *expired = take_parked(fs, r, 0, 0);
    if (go || expired) { /* unlocked: they submit requests or reply */
      pthread_mutex_unlock(&r->lock);
      resume_all(go, 1);
      resume_all(expired, 0);
      pthread_mutex_lock(&r->lock);
    }
    smb3_client *old = fs_conn(fs);
    if (!smb3_connection_lost(old)) {
      failing = 0;
      backoff = 1.0;
      r->lost_at = 0;
      continue;
    }
    if (!r->lost_at) r->lost_at = fs_now(); /* (or fs_park set it: an operation saw it first) */
    if (!r->dropped) {
      r->dropped = 1;
      /* What was cached over the lost connection goes now, while nothing can be read again: the
       * kernel's pages of an open file must be gone before the new connection answers anything
       * (a read that hits them after "the server is back" would return the old bytes). */
      pthread_mutex_unlock(&r->lock);
      itab_each(fs, forget_cache, fs);
      pthread_mutex_lock(&r->lock);
    }
    struct attempt *a = attempt_new(&fs->o);
    pthread_t at;
    if (!a || pthread_create(&at, NULL, attempt_main, a)) {
      if (a) attempt_free(a);
      failing = 1; /* try again after the back-off */
      continue;
    }
    pthread_detach(at);
    if (attempt_wait(fs, r, a)) break; /* stopping */
    int rc = a->rc;
    smb3_client *nc = a->nc;
    char err[512];
    memcpy(err, a->err, sizeof err);
    attempt_free(a);
    if (rc) {
      if (!failing) syslog(LOG_WARNING, "smb3fs: connection lost; reconnecting: %s", err[0] ? err : smb3_strerror(rc));
      failing = 1;
      backoff = backoff * 2 > 10.0 ? 10.0 : backoff * 2;
      r->kick = 0; /* a failed operation's kick must not turn the back-off into a busy loop */
      continue;
    }
    if (r->stop) {
      smb3_disconnect(nc);
      break;
    }
    /* Unlocked from here: forget_cache's invalidations can wait for FUSE requests whose replies
     * come from an I/O thread that may itself be waiting for this lock in reconnect_kick. */
    pthread_mutex_unlock(&r->lock);
    smb3_set_break_handler(nc, cache_break_cb, fs);
    smb3_set_break_handler(old, NULL, NULL);
    /* The invalidations queued at the loss are done (bounded: one can wait for the page of a read
     * that itself waits for this connection) */
    cache_drain(fs, 0.5);
    struct reopen_list *reopen = files_reopen_prepare(fs);
    __atomic_store_n(&fs->c, nc, __ATOMIC_RELEASE);
    atomic_fetch_add(&fs->ctr.reconnects, 1);
    itab_each(fs, forget_cache, fs);
    files_reopen(fs, reopen); /* asynchronous: their handles are swapped in as the opens complete */
    retire(r, old); /* r->retired: this thread's own until it is joined */
    syslog(LOG_NOTICE, "smb3fs: reconnected to %s", fs->o.host ? fs->o.host : "the server");
    pthread_mutex_lock(&r->lock);
    r->lost_at = 0;
    r->dropped = 0; /* the next loss drops what this connection cached */
    struct parked *waiting = take_parked(fs, r, 0, 1);
    pthread_mutex_unlock(&r->lock);
    resume_all(waiting, 1); /* sent again on the new connection */
    pthread_mutex_lock(&r->lock);
    failing = 0;
    backoff = 1.0;
  }
  struct parked *left = take_parked(fs, r, 1, 0);
  pthread_mutex_unlock(&r->lock);
  resume_all(left, 0); /* the mount is ending */
  return NULL;
}

int reconnect_start(struct fs_ctx *fs) {
  struct reconn *r = calloc(1, sizeof *r);
  if (!r) return -ENOMEM;
  pthread_mutex_init(&r->lock, NULL);
  cond_init_mono(&r->cv);
  fs->rc = r;
  if (pthread_create(&r->thread, NULL, reconnect_main, fs)) {
    fs->rc = NULL;
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return -EAGAIN;
  }
  return 0;
}

void reconnect_stop(struct fs_ctx *fs) {
  struct reconn *r = fs->rc;
  if (!r) return;
  fs_poke(&r->lock, &r->cv, &r->stop);
  pthread_join(r->thread, NULL);
  for (int i = 0; i < r->nretired; i++) smb3_disconnect(r->retired[i]);
  r->nretired = 0;
}

/* After the last connection was disconnected: its callbacks may still have called fs_park or
 * reconnect_kick (which see r->stop) until then. */
void reconnect_free(struct fs_ctx *fs) {
  struct reconn *r = fs->rc;
  if (!r) return;
  fs->rc = NULL;
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->lock);
  free(r);
}
