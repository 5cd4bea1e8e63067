/* notifier.c - the notifier thread: lease breaks and kernel page-cache invalidations.
 *
 * A break is handled here, never on the I/O thread (which must not block) nor a FUSE worker (a
 * kernel page-cache invalidation can wait for FUSE requests of the same inode, and the break must
 * be acknowledged even if every worker is busy): flush dirty data, invalidate the page cache
 * (fuse_lowlevel_notify_inval_inode), then acknowledge the break. It is the only thread that
 * calls fuse_lowlevel_notify_*. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cache.h"
#include "closeq.h"
#include "conn.h"
#include "dircache.h"
#include "dirlease.h"
#include "inode.h"
#include "notifier.h"
#include "openahead.h"
#include "writeback.h"

struct brk {
  struct brk *next;
  uint8_t key[16];
  uint32_t state;
  int ack;
  uint64_t inval_nodeid; /* not a break: only drop the kernel's pages of this inode */
  int attrs_only;        /* ... or only its attributes */
  void (*then)(void *);  /* ... and then call this */
  void *then_arg;
};

struct notifier {
  struct fs_ctx *fs;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  struct brk *head, **tail;
  int stop;
  uint64_t queued, handled; /* entries so far (notifier_drain waits for handled to catch up) */
  pthread_cond_t handled_cv;
};

/* ---- the notifier thread ---- */
struct flush_wait {
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int done;
};

static void wait_over(struct flush_wait *w) {
  pthread_mutex_lock(&w->lock);
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->lock);
}

static void flushed(int err, void *arg) {
  (void)err; /* a failed write stays recorded on the inode for the next fsync/close */
  wait_over(arg);
}

static void drained(void *arg) {
  wait_over(arg);
}

/* Flush in's dirty data (flush) or close the handles the close queue holds (drain), and wait. */
static void finish_and_wait(struct fs_ctx *fs, struct fs_inode *in, int drain) {
  struct flush_wait w = {.done = 0};
  pthread_mutex_init(&w.lock, NULL);
  pthread_cond_init(&w.cv, NULL);
  if (drain)
    closeq_drain(fs, drained, &w);
  else
    wb_flush(fs, in, 0, flushed, &w);
  pthread_mutex_lock(&w.lock);
  while (!w.done)
    pthread_cond_wait(&w.cv, &w.lock);
  pthread_mutex_unlock(&w.lock);
  pthread_mutex_destroy(&w.lock);
  pthread_cond_destroy(&w.cv);
}

static void ack_done(int rc, void *arg) {
  (void)arg;
  if (rc) syslog(LOG_WARNING, "lease break acknowledgment failed: %s", smb3_strerror(rc));
}

static void ack(struct fs_ctx *fs, const struct brk *b) {
  if (b->ack && smb3_lease_ack_async(fs_conn(fs), b->key, b->state, ack_done, NULL))
    syslog(LOG_WARNING, "cannot send a lease break acknowledgment");
}

static void handle_break(struct fs_ctx *fs, const struct brk *b) {
  if (b->inval_nodeid) {
    /* (offset -1: the attributes only, the pages stay) */
    if (fs->se) fuse_lowlevel_notify_inval_inode(fs->se, b->inval_nodeid, b->attrs_only ? -1 : 0, 0);
    atomic_fetch_add(&fs->ctr.invalidations, 1);
    if (b->then) b->then(b->then_arg);
    return;
  }
  atomic_fetch_add(&fs->ctr.lease_breaks, 1);
  /* A directory's: what changes is in that directory; its handle is closed, which ends the break
   * without an acknowledgment (one round trip less for each). */
  if (dirlease_break(fs, b->key, b->state)) return;
  dircache_ns_changed(fs); /* another client opens what we hold: it may make or remove names too */
  struct fs_inode *in = inode_by_key(fs, b->key);
  if (in) {
    pthread_mutex_lock(&in->lock);
    int lost_read = (in->lease & SMB3_LEASE_READ) && !(b->state & SMB3_LEASE_READ);
    in->lease = b->state;
    if (!(b->state & SMB3_LEASE_READ)) cache_forget(in);
    int dirty = wb_dirty(in);
    pthread_mutex_unlock(&in->lock);
    /* The server waits for our dirty data before the other client's access proceeds. */
    if (dirty) finish_and_wait(fs, in, 0);
    /* Handles the application closed and the queue still holds: closed before the acknowledgment
     * (a server that breaks the handle lease of an open for delete waits for it; the file would
     * stay delete-pending on such a handle, and its name unusable, until the queue sent it). */
    if (oa_drop(fs, in) || closeq_holds(fs, in)) finish_and_wait(fs, in, 1);
    if (lost_read && fs->se) {
      fuse_lowlevel_notify_inval_inode(fs->se, in->nodeid, 0, 0);
      atomic_fetch_add(&fs->ctr.invalidations, 1);
    }
    inode_put(fs, in);
  }
  ack(fs, b);
}

static void *notifier_main(void *arg) {
  struct notifier *n = arg;
  pthread_mutex_lock(&n->lock);
  for (;;) {
    while (!n->head && !n->stop)
      pthread_cond_wait(&n->cv, &n->lock);
    if (!n->head) break;
    struct brk *b = n->head;
    n->head = b->next;
    if (!n->head) n->tail = &n->head;
    pthread_mutex_unlock(&n->lock);
    handle_break(n->fs, b);
    free(b);
    pthread_mutex_lock(&n->lock);
    n->handled++;
    pthread_cond_broadcast(&n->handled_cv);
  }
  pthread_mutex_unlock(&n->lock);
  return NULL;
}

static void enqueue(struct notifier *n, struct brk *b) {
  pthread_mutex_lock(&n->lock);
  *n->tail = b;
  n->tail = &b->next;
  n->queued++;
  pthread_cond_signal(&n->cv);
  pthread_mutex_unlock(&n->lock);
}

/* Runs on the I/O thread: queue and return. */
void notifier_break_cb(const uint8_t key[16], uint32_t new_state, int ack_required, void *arg) {
  struct fs_ctx *fs = arg;
  struct notifier *n = fs->nt;
  struct brk *b = calloc(1, sizeof *b);
  if (!b || !n) { /* cannot defer: acknowledge at once so that the other client is not stalled */
    free(b);
    if (ack_required) smb3_lease_ack_async(fs_conn(fs), key, new_state, ack_done, NULL);
    return;
  }
  memcpy(b->key, key, 16);
  b->state = new_state;
  b->ack = ack_required;
  enqueue(n, b);
}

void notifier_invalidate_later(struct fs_ctx *fs, uint64_t nodeid) {
  notifier_invalidate_then(fs, nodeid, NULL, NULL);
}

void notifier_attrs_later(struct fs_ctx *fs, uint64_t nodeid) {
  struct notifier *n = fs->nt;
  struct brk *b = n ? calloc(1, sizeof *b) : NULL;
  if (!b) return; /* the kernel's attributes stay until their time is up */
  b->inval_nodeid = nodeid;
  b->attrs_only = 1;
  enqueue(n, b);
}

void notifier_invalidate_then(struct fs_ctx *fs, uint64_t nodeid, void (*then)(void *), void *arg) {
  struct notifier *n = fs->nt;
  struct brk *b = n ? calloc(1, sizeof *b) : NULL;
  if (!b) { /* the pages stay: the next open of the file is not kept cached (cached_valid) */
    if (then) then(arg);
    return;
  }
  b->inval_nodeid = nodeid;
  b->then = then;
  b->then_arg = arg;
  enqueue(n, b);
}

void notifier_drain(struct fs_ctx *fs, double timeout) {
  struct notifier *n = fs->nt;
  if (!n) return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* the condition variable's clock */
  double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + timeout;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  pthread_mutex_lock(&n->lock);
  uint64_t target = n->queued;
  while (n->handled < target && !n->stop)
    if (pthread_cond_timedwait(&n->handled_cv, &n->lock, &ts)) break;
  pthread_mutex_unlock(&n->lock);
}

int notifier_start(struct fs_ctx *fs) {
  struct notifier *n = calloc(1, sizeof *n);
  if (!n) return -ENOMEM;
  n->fs = fs;
  n->tail = &n->head;
  pthread_mutex_init(&n->lock, NULL);
  pthread_cond_init(&n->cv, NULL);
  pthread_cond_init(&n->handled_cv, NULL);
  if (pthread_create(&n->thread, NULL, notifier_main, n)) {
    free(n);
    return -EAGAIN;
  }
  fs->nt = n;
  return 0;
}

void notifier_stop(struct fs_ctx *fs) {
  struct notifier *n = fs->nt;
  if (!n) return;
  fs_poke(&n->lock, &n->cv, &n->stop);
  pthread_join(n->thread, NULL);
  fs->nt = NULL;
  pthread_mutex_destroy(&n->lock);
  pthread_cond_destroy(&n->cv);
  pthread_cond_destroy(&n->handled_cv);
  free(n);
}
