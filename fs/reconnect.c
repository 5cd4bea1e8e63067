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
 * meanwhile) keeps failing until it is closed. Attempts back off from 1 s to 10 s while the server stays
 * away.
 *
 * Parking, waking and publishing are conn.c's; this thread uses them like every other caller.
 * The old client is kept (its memory, not its connection) until a few newer ones have replaced
 * it or the mount ends: a FUSE worker may have loaded the pointer just before the swap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "cache.h"
#include "closeq.h"
#include "conn.h"
#include "dircache.h"
#include "dirlease.h"
#include "file.h"
#include "inode.h"
#include "locks.h"
#include "notifier.h"
#include "openahead.h"
#include "reconnect.h"

#define RETIRED_MAX 4

/* The reconnect thread's own state (conn.c holds what operations share with it). */
struct reconn {
  pthread_t thread;
  smb3_client *retired[RETIRED_MAX];
  int nretired;
  int dropped; /* this outage's cache drop is done */
};

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
  if (cached && fs->cache == SMB3_CACHE_STRICT) notifier_invalidate_later(fs, in->nodeid);
  dirlease_drop(in); /* a directory lease ends with its connection */
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

static struct attempt *attempt_new(const struct smb3_options *o) {
  struct attempt *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->o = *o;
  const char *src[] = {o->host,   o->share, o->path,        o->username,   o->password,
                       o->domain, o->ip,    o->krb5_keytab, o->krb5_ccache};
  char **dst[] = {&a->o.host,   &a->o.share, &a->o.path,        &a->o.username,   &a->o.password,
                  &a->o.domain, &a->o.ip,    &a->o.krb5_keytab, &a->o.krb5_ccache};
  int bad = 0;
  for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
    *dst[i] = NULL;
  for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
    if (src[i] && !(*dst[i] = strdup(src[i]))) bad = 1;
  if (bad) {
    smb3_options_free(&a->o);
    free(a);
    return NULL;
  }
  pthread_mutex_init(&a->lock, NULL);
  fs_cond_init_mono(&a->cv);
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

/* Run attempt a to its end, answering the parked operations whose time is up meanwhile. Returns
 * 0 when it ended (its result in a), -1 when the mount is stopping (a is then abandoned: its
 * thread frees it). */
static int attempt_wait(struct fs_ctx *fs, struct attempt *a) {
  for (;;) {
    double t;
    int stop = conn_expire(fs, fs_now() + 0.5, &t);
    pthread_mutex_lock(&a->lock);
    if (!a->done && !stop) {
      struct timespec ts = fs_timespec_of(t);
      pthread_cond_timedwait(&a->cv, &a->lock, &ts);
    }
    int done = a->done;
    if (!done && stop) a->abandoned = 1;
    pthread_mutex_unlock(&a->lock);
    if (done) return 0;
    if (stop) return -1;
  }
}

static void *reconnect_main(void *arg) {
  struct fs_ctx *fs = arg;
  struct reconn *r = fs->rc;
  double backoff = 1.0;
  int failing = 0, unkick = 0;
  char logged[512] = ""; /* the cause last logged in this outage */
  for (;;) {
    /* 1. Wait for the next look (a second, the back-off, a kick, a parked operation's deadline);
     *    resume what is due meanwhile. */
    if (conn_wait(fs, fs_now() + (failing ? backoff : 1.0), unkick)) break;
    unkick = 0;
    smb3_client *old = fs_conn(fs);
    if (!smb3_connection_lost(old)) {
      failing = 0;
      backoff = 1.0;
      conn_outage(fs, 0);
      continue;
    }
    conn_outage(fs, 1);
    if (!r->dropped) {
      r->dropped = 1;
      atomic_fetch_add(&fs->ctr.outages, 1); /* once per outage: tests wait for the loss to be known */
      /* 2. What was cached over the lost connection goes now, while nothing can be read again:
       *    the kernel's pages of an open file must be gone before the new connection answers
       *    anything (a read that hits them after "the server is back" would return the old bytes). */
      itab_each(fs, forget_cache, fs);
      dircache_ns_changed(fs); /* no listing from the old connection is served again */
      oa_drop_all(fs);         /* nor a file opened ahead on it (its handle goes with it) */
    }
    /* 3. Log on again, on an attempt thread. */
    struct attempt *a = attempt_new(&fs->o);
    pthread_t at;
    if (!a || pthread_create(&at, NULL, attempt_main, a)) {
      if (a) attempt_free(a);
      failing = 1; /* try again after the back-off */
      continue;
    }
    pthread_detach(at);
    if (attempt_wait(fs, a)) break; /* stopping */
    int rc = a->rc;
    smb3_client *nc = a->nc;
    char err[512];
    memcpy(err, a->err, sizeof err);
    attempt_free(a);
    if (rc) {
      /* One line per outage, and one more each time the cause changes (the server came back but
       * the logon fails: "no Kerberos ticket ...: run kinit"), not one per attempt. */
      const char *why = err[0] ? err : smb3_strerror(rc);
      if (!failing || strcmp(why, logged)) {
        syslog(LOG_WARNING, "connection lost; reconnecting: %s", why);
        snprintf(logged, sizeof logged, "%s", why);
      }
      /* A logon the server refuses waits for the user (kinit, a new password): what waits for the
       * connection fails now with it instead of at the park deadline. */
      conn_logon_failed(fs, rc == SMB3_ELOGON ? rc : 0);
      failing = 1;
      backoff = backoff * 2 > 10.0 ? 10.0 : backoff * 2;
      unkick = 1; /* a failed operation's kick must not turn the back-off into a busy loop */
      continue;
    }
    if (conn_stopping(fs)) {
      smb3_disconnect(nc);
      break;
    }
    /* 4. Switch over. forget_cache's invalidations can wait for FUSE requests whose replies come
     *    from an I/O thread that may itself be waiting for conn.c's lock in reconnect_kick: no
     *    lock is held here. */
    smb3_set_break_handler(nc, notifier_break_cb, fs);
    smb3_set_break_handler(old, NULL, NULL);
    smb3_set_close_riders(nc, closeq_riders, fs);
    smb3_set_close_riders(old, NULL, NULL);
    /* The invalidations queued at the loss are done (bounded: one can wait for the page of a read
     * that itself waits for this connection) */
    notifier_drain(fs, 0.5);
    struct reopen_list *reopen = files_reopen_prepare(fs);
    conn_publish(fs, nc);
    atomic_fetch_add(&fs->ctr.reconnects, 1);
    itab_each(fs, forget_cache, fs);
    dircache_ns_changed(fs);
    files_reopen(fs, reopen, locks_reacquire); /* asynchronous: each handle is swapped in as its open
                                                * completes, then its byte-range locks taken again */
    retire(r, old);                            /* r->retired: this thread's own until it is joined */
    syslog(LOG_NOTICE, "reconnected to %s", fs->o.host ? fs->o.host : "the server");
    /* 5. What waited for a new connection is sent again on it. */
    r->dropped = 0; /* the next loss drops what this connection cached */
    conn_resume_parked(fs);
    failing = 0;
    backoff = 1.0;
  }
  conn_resume_all_failed(fs); /* the mount is ending */
  return NULL;
}

int reconnect_start(struct fs_ctx *fs) {
  struct reconn *r = calloc(1, sizeof *r);
  if (!r) return -ENOMEM;
  if (conn_start(fs)) {
    free(r);
    return -ENOMEM;
  }
  fs->rc = r;
  if (pthread_create(&r->thread, NULL, reconnect_main, fs)) {
    fs->rc = NULL;
    conn_free(fs);
    free(r);
    return -EAGAIN;
  }
  return 0;
}

void reconnect_stop(struct fs_ctx *fs) {
  struct reconn *r = fs->rc;
  if (!r) return;
  conn_stop(fs); /* fs_park refuses from here on */
  pthread_join(r->thread, NULL);
  for (int i = 0; i < r->nretired; i++)
    smb3_disconnect(r->retired[i]);
  r->nretired = 0;
}

/* After the last connection was disconnected: its callbacks may still have called fs_park or
 * reconnect_kick (which see the stop) until then. */
void reconnect_free(struct fs_ctx *fs) {
  struct reconn *r = fs->rc;
  if (!r) return;
  fs->rc = NULL;
  conn_free(fs);
  free(r);
}
