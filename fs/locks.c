/* locks.c - fcntl(2) POSIX locks and flock(2) locks as SMB2 byte-range locks, so that they hold
 * against other clients of the share (the kernel cifs client does the same; option nobrl keeps
 * them on this machine, in the kernel).
 *
 * SMB locks belong to a handle and are mandatory; an exclusive one overlaps nothing, a lock is
 * released only by an UNLOCK of exactly its range, and the server cannot split, merge or convert
 * one. POSIX locks belong to a process (the kernel's lock owner), are split and merged, and a
 * process converts its own locks in place. So each inode keeps its locks here as records, an
 * owner's never overlapping (a change splits the ones it touches), and what the server holds
 * for the mount apart from them, as pieces (below), which a change brings in line. Conflicts
 * between owners on this machine are decided from the records (whatever handles they use); the
 * server decides against other clients.
 *
 * A lock request is tried on the FUSE worker thread that received it (sync calls: a lock is a
 * round trip or a few, and rare), one change at a time per mount (fs->locks_mu), never on the
 * I/O thread. F_SETLKW and flock without LOCK_NB, when refused, go to the waiter thread, which
 * asks again with a growing pause until granted and ends with EINTR when the caller is
 * interrupted: a lock that waited at the server would hold its answer open indefinitely and
 * could not be interrupted.
 *
 * The records and pieces are guarded by in->lock and changed only with fs->locks_mu held too. */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/file.h>
#include <syslog.h>
#include <time.h>

#include "cache.h"
#include "conn.h"
#include "lockrange.h"
#include "locks.h"
#include "notifier.h"
#include "writeback.h"

/* ---- waiting for the current connection and the data: both without locks held ---- */
struct waiter {
  sem_t s;
  int ok;
};
static void woken(void *arg, int ok) {
  struct waiter *w = arg;
  w->ok = ok;
  sem_post(&w->s);
}
static void flushed(int err, void *arg) {
  woken(arg, err == 0);
}

static void wait_sem(sem_t *s) {
  while (sem_wait(s) && errno == EINTR) {
  }
}

/* fh's handle once it belongs to the current connection (a reopen after a reconnect may still
 * be on its way), or NULL. */
static smb3_file *current_handle(struct fs_file *fh) {
  struct waiter w;
  sem_init(&w.s, 0, 0);
  fh_when_current(fh, woken, &w);
  wait_sem(&w.s);
  sem_destroy(&w.s);
  return w.ok ? fh_handle(fh) : NULL;
}

/* What this mount wrote before a lock changes goes to the server first: another client that
 * takes the lock next must read it. A failed write stays for fsync/close to report. */
static void flush_data(struct fs_ctx *fs, struct fs_inode *in) {
  struct waiter w;
  sem_init(&w.s, 0, 0);
  wb_flush(fs, in, 0, flushed, &w);
  wait_sem(&w.s);
  sem_destroy(&w.s);
}

static int srv_lock(struct fs_file *fh, uint64_t start, uint64_t end, int type) {
  smb3_file *f = current_handle(fh);
  if (!f) return SMB3_ECLOSED;
  __atomic_store_n(&fh->in->lock_used, 1, __ATOMIC_RELEASE); /* its handles are closed at once (closeq.h) */
  return smb3_lock(f, start, end - start, type);
}

/* ---- one change of an owner's locks (fs->locks_mu held) ----
 * The records and the plan are lockrange.c's; here the plan is carried out. Two handles of one
 * connection never hold locks over the same bytes: with its POSIX locking on (the default),
 * Samba 4.17 keeps the underlying fcntl lock of a handle that unlocks a range another handle of
 * the same connection also holds, and that stale lock then refuses every exclusive lock of the
 * range. */
static int piece_lock(struct fs_inode *in, uint64_t s, uint64_t e, int wr, struct fs_file *holder) {
  struct piece *p = malloc(sizeof *p);
  if (!p) return SMB3_ENOMEM;
  int rc = srv_lock(holder, s, e, wr ? SMB3_LOCK_EXCLUSIVE : SMB3_LOCK_SHARED);
  if (rc) {
    free(p);
    return rc;
  }
  *p = (struct piece){NULL, s, e, wr, holder};
  pthread_mutex_lock(&in->lock);
  lockrange_piece_link(&in->srv_locks, p);
  pthread_mutex_unlock(&in->lock);
  return 0;
}

/* Take p out of the list; unlock it at the server unless its holder is closing (the CLOSE frees it). */
static void piece_drop(struct fs_inode *in, struct piece *p, int unlock) {
  pthread_mutex_lock(&in->lock);
  lockrange_piece_unlink(&in->srv_locks, p);
  pthread_mutex_unlock(&in->lock);
  if (unlock) {
    int u = srv_lock(p->holder, p->start, p->end, SMB3_LOCK_UNLOCK);
    if (u && u != SMB3_EINVAL && u != SMB3_ECLOSED && u != SMB3_EBADF)
      syslog(LOG_WARNING, "unlock of bytes %llu-%llu failed: %s", (unsigned long long)p->start,
             (unsigned long long)p->end, smb3_strerror(u));
  }
  free(p);
}

/* Bring the server's pieces in line with the records (fs->locks_mu held). 0, or the first
 * refusal or error (the pieces then hold part of the change: the caller restores the records and
 * runs this again). dying: an open being released; the pieces it holds go without an UNLOCK,
 * after what they covered that is still needed was locked through another handle. */
static int reconcile(struct fs_inode *in, struct fs_file *dying) {
  struct lock_plan plan;
  pthread_mutex_lock(&in->lock);
  int rc = lockrange_plan(in->locks, in->srv_locks, dying, &plan);
  pthread_mutex_unlock(&in->lock);
  if (rc) return SMB3_ENOMEM;
  for (size_t i = 0; i < plan.n; i++) { /* after a refusal no more locks, but the drops still */
    const struct lock_step *st = &plan.steps[i];
    if (!st->lock)
      piece_drop(in, st->piece, st->unlock);
    else if (!rc)
      rc = piece_lock(in, st->start, st->end, st->wr, st->fh);
  }
  lockrange_plan_free(&plan);
  return rc;
}

/* Apply ch: 1 when it took a lock, 0 when it needed none (an unlock, or held so already), or a
 * negative SMB3_E* (SMB3_EAGAIN: a conflict). */
static int apply(struct fs_ctx *fs, struct fs_inode *in, const struct lock_change *ch) {
  struct lock_undo undo;
  pthread_mutex_lock(&in->lock);
  int rc = lockrange_apply(&in->locks, ch, &undo);
  if (rc == 1) in->lock_changing = 1;
  pthread_mutex_unlock(&in->lock);
  if (rc <= 0) return rc == LOCKRANGE_CONFLICT ? SMB3_EAGAIN : rc == LOCKRANGE_ENOMEM ? SMB3_ENOMEM : 0;
  flush_data(fs, in);
  rc = reconcile(in, NULL);
  if (rc) { /* refused: the owner keeps what it had */
    pthread_mutex_lock(&in->lock);
    lockrange_undo(&in->locks, &undo);
    pthread_mutex_unlock(&in->lock);
    int r2 = reconcile(in, NULL);
    if (r2)
      syslog(LOG_WARNING, "a byte-range lock was lost while a refused change was undone: %s",
             smb3_strerror(r2));
  }
  lockrange_commit(&undo);
  pthread_mutex_lock(&in->lock);
  in->lock_changing = 0;
  pthread_mutex_unlock(&in->lock);
  return rc ? rc : undo.added;
}

static int lock_errno(int rc) {
  if (rc == SMB3_EAGAIN) return EAGAIN;
  if (rc == SMB3_ECLOSED || rc == SMB3_EBADF) return ENOLCK; /* the handle is gone with its connection */
  return fs_errno(rc);
}

/* ---- a granted lock's reply ----
 * Another client may have changed the file before this lock was granted (that is what the lock
 * protects against), and unless this mount holds a write lease nothing told it in time: the
 * break of its read lease by the other client's WRITE is asynchronous. So what the mount cached
 * of the file goes before the caller can use the lock: the read-ahead buffers (data_gen), the
 * attributes, and the kernel's pages and attributes. The kernel's are dropped on the notifier
 * thread, which then replies (an invalidation can wait for reads of the file, which need FUSE
 * workers, so neither this worker nor the waiter thread waits for it). With a write lease no
 * other client can have written. While the lock is held nobody else writes the locked range. */
static void reply_ok(void *req) {
  fuse_reply_err(req, 0);
}

static void reply_granted(struct fs_ctx *fs, struct fs_inode *in, fuse_req_t req, int taken) {
  int stale = 0;
  if (taken) {
    pthread_mutex_lock(&in->lock);
    stale = !(in->lease & SMB3_LEASE_WRITE);
    if (stale) cache_forget(in);
    pthread_mutex_unlock(&in->lock);
  }
  if (stale)
    notifier_invalidate_then(fs, in->nodeid, reply_ok, req);
  else
    fuse_reply_err(req, 0);
}

/* ---- waiting locks: F_SETLKW, flock without LOCK_NB ----
 * A lock that is refused and may wait is handed to the waiter thread, which asks again with a
 * growing pause (5 ms doubling to 200 ms) until it is granted, fails otherwise, or the caller is
 * interrupted (EINTR). The FUSE worker is free at once: the mount has few workers, and the
 * unlock that ends the wait comes through one of them. */
struct lock_wait {
  struct lock_wait *next;
  fuse_req_t req;
  struct fs_inode *in; /* the file's: the kernel holds the file while the call waits */
  struct lock_change ch;
  long pause_ms;
  struct timespec due;
};
struct lock_waits {
  pthread_mutex_t m;
  pthread_cond_t cv; /* CLOCK_MONOTONIC */
  struct lock_wait *head;
  int started, stop;
  pthread_t th;
};

static void due_in(struct timespec *t, long ms) {
  clock_gettime(CLOCK_MONOTONIC, t);
  t->tv_nsec += ms * 1000000L;
  t->tv_sec += t->tv_nsec / 1000000000L;
  t->tv_nsec %= 1000000000L;
}
static int before(const struct timespec *a, const struct timespec *b) {
  return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *waiter_main(void *arg) {
  struct fs_ctx *fs = arg;
  struct lock_waits *lw = fs->lock_waits;
  pthread_mutex_lock(&lw->m);
  while (!lw->stop) {
    struct lock_wait **first = NULL;
    for (struct lock_wait **pp = &lw->head; *pp; pp = &(*pp)->next)
      if (!first || before(&(*pp)->due, &(*first)->due)) first = pp;
    if (!first) {
      pthread_cond_wait(&lw->cv, &lw->m);
      continue;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (before(&now, &(*first)->due)) {
      pthread_cond_timedwait(&lw->cv, &lw->m, &(*first)->due);
      continue;
    }
    struct lock_wait *w = *first;
    *first = w->next;
    pthread_mutex_unlock(&lw->m);
    int err = EINTR, rc = 0;
    if (!fuse_req_interrupted(w->req)) {
      pthread_mutex_lock(&fs->locks_mu);
      rc = apply(fs, w->in, &w->ch);
      pthread_mutex_unlock(&fs->locks_mu);
      err = rc < 0 ? lock_errno(rc) : 0;
    }
    pthread_mutex_lock(&lw->m);
    if (err == EAGAIN && !lw->stop) {
      w->pause_ms = w->pause_ms * 2 > 200 ? 200 : w->pause_ms * 2;
      due_in(&w->due, w->pause_ms);
      w->next = lw->head;
      lw->head = w;
      continue;
    }
    pthread_mutex_unlock(&lw->m);
    if (err)
      fuse_reply_err(w->req, err);
    else
      reply_granted(fs, w->in, w->req, rc > 0);
    free(w);
    pthread_mutex_lock(&lw->m);
  }
  struct lock_wait *left = lw->head;
  lw->head = NULL;
  pthread_mutex_unlock(&lw->m);
  while (left) { /* the mount is ending */
    struct lock_wait *next = left->next;
    fuse_reply_err(left->req, EINTR);
    free(left);
    left = next;
  }
  return NULL;
}

/* Queue a waiting lock; ENOMEM or EAGAIN (no thread) when it cannot wait. */
static int wait_later(fuse_req_t req, struct fs_ctx *fs, struct fs_inode *in, const struct lock_change *ch) {
  struct lock_waits *lw = fs->lock_waits;
  struct lock_wait *w = malloc(sizeof *w);
  if (!lw || !w) {
    free(w);
    return ENOMEM;
  }
  *w = (struct lock_wait){NULL, req, in, *ch, 5, {0, 0}};
  due_in(&w->due, w->pause_ms);
  pthread_mutex_lock(&lw->m);
  if (!lw->started && !lw->stop) lw->started = pthread_create(&lw->th, NULL, waiter_main, fs) == 0;
  if (!lw->started || lw->stop) {
    pthread_mutex_unlock(&lw->m);
    free(w);
    return EAGAIN;
  }
  w->next = lw->head;
  lw->head = w;
  pthread_cond_signal(&lw->cv);
  pthread_mutex_unlock(&lw->m);
  return 0;
}

/* One try here; a refused lock that may wait goes to the waiter thread, which replies. */
static void change_locks(fuse_req_t req, struct fs_ctx *fs, struct fs_inode *in, const struct lock_change *ch,
                         int wait) {
  pthread_mutex_lock(&fs->locks_mu);
  int rc = apply(fs, in, ch);
  pthread_mutex_unlock(&fs->locks_mu);
  int err = rc < 0 ? lock_errno(rc) : 0;
  if (err == EAGAIN && wait && wait_later(req, fs, in, ch) == 0) return;
  if (err)
    fuse_reply_err(req, err);
  else
    reply_granted(fs, in, req, rc > 0);
}

int locks_start(struct fs_ctx *fs) {
  struct lock_waits *lw = calloc(1, sizeof *lw);
  if (!lw) return -1;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&lw->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&lw->m, NULL);
  fs->lock_waits = lw;
  return 0;
}

void locks_stop(struct fs_ctx *fs) {
  struct lock_waits *lw = fs->lock_waits;
  if (!lw) return;
  pthread_mutex_lock(&lw->m);
  lw->stop = 1;
  int started = lw->started;
  pthread_cond_signal(&lw->cv);
  pthread_mutex_unlock(&lw->m);
  if (started) pthread_join(lw->th, NULL);
  pthread_cond_destroy(&lw->cv);
  pthread_mutex_destroy(&lw->m);
  free(lw);
  fs->lock_waits = NULL;
}

static int posix_range(const struct flock *fl, uint64_t *start, uint64_t *end) {
  if (fl->l_start < 0 || fl->l_len < 0 || (uint64_t)fl->l_start >= LOCK_EOF) return EINVAL;
  *start = (uint64_t)fl->l_start;
  *end = fl->l_len == 0 || (uint64_t)fl->l_len >= LOCK_EOF - *start ? LOCK_EOF : *start + (uint64_t)fl->l_len;
  return 0;
}

/* Reply: this worker (synchronous requests), or the lock waiter thread for an F_SETLKW that waits; a
 * lock granted without a write lease: the notifier thread, after the page invalidation (reply_granted). */
static void ll_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *fl, int sleep) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  struct lock_change ch = {fi->lock_owner, fh, 0, 0, fl->l_type, 0, fl->l_pid};
  int err = fl->l_type != F_RDLCK && fl->l_type != F_WRLCK && fl->l_type != F_UNLCK
                ? EINVAL
                : posix_range(fl, &ch.start, &ch.end);
  if (err)
    fuse_reply_err(req, err);
  else
    change_locks(req, fh->fs, fh->in, &ch, sleep);
}

/* Reply: this worker (synchronous requests), or the lock waiter thread for a blocking flock that waits; a
 * lock granted without a write lease: the notifier thread, after the page invalidation (reply_granted). */
static void ll_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  int how = op & (LOCK_SH | LOCK_EX | LOCK_UN);
  struct lock_change ch = {
      fi->lock_owner, fh, 0, LOCK_EOF, how == LOCK_SH ? F_RDLCK : how == LOCK_EX ? F_WRLCK : F_UNLCK, 1, 0};
  if (how != LOCK_SH && how != LOCK_EX && how != LOCK_UN)
    fuse_reply_err(req, EINVAL);
  else
    change_locks(req, fh->fs, fh->in, &ch, !(op & LOCK_NB)); /* EAGAIN is EWOULDBLOCK */
}

/* F_GETLK: a conflicting lock of another owner here, else a probe at the server (a lock of the
 * parts of the range this mount holds nothing of, released at once). Another client's lock is
 * reported as the requested range, exclusive, pid 0: SMB does not say whose or which it is. */
/* Reply: this worker (synchronous probe at the server). */
static void ll_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *fl) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  struct fs_ctx *fs = fh->fs;
  struct fs_inode *in = fh->in;
  struct lock_change ch = {fi->lock_owner, fh, 0, 0, fl->l_type, 0, 0};
  int err = fl->l_type != F_RDLCK && fl->l_type != F_WRLCK ? EINVAL : posix_range(fl, &ch.start, &ch.end);
  if (err) {
    fuse_reply_err(req, err);
    return;
  }
  pthread_mutex_lock(&fs->locks_mu);
  pthread_mutex_lock(&in->lock);
  struct fs_lock *l = lockrange_conflict(in->locks, &ch);
  struct flock out = *fl;
  int conflict = l != NULL;
  if (l) {
    out.l_type = l->wr ? F_WRLCK : F_RDLCK;
    out.l_start = (off_t)l->start;
    out.l_len = l->end >= LOCK_EOF ? 0 : (off_t)(l->end - l->start);
    out.l_pid = l->pid;
  }
  /* The gaps between what this mount holds at the server in the range: a probe over its own
   * locks would conflict with them (there the records decided). */
  uint64_t gaps[16][2];
  int ngaps = conflict ? 0 : lockrange_gaps(in->srv_locks, ch.start, ch.end, gaps, 16);
  pthread_mutex_unlock(&in->lock);
  for (int i = 0; i < ngaps && !conflict; i++) {
    int type = ch.type == F_WRLCK ? SMB3_LOCK_EXCLUSIVE : SMB3_LOCK_SHARED;
    int rc = srv_lock(fh, gaps[i][0], gaps[i][1], type);
    if (rc == SMB3_EAGAIN) {
      conflict = 1;
      out.l_type = F_WRLCK;
      out.l_pid = 0;
    } else if (rc) {
      pthread_mutex_unlock(&fs->locks_mu);
      fuse_reply_err(req, lock_errno(rc));
      return;
    } else {
      srv_lock(fh, gaps[i][0], gaps[i][1], SMB3_LOCK_UNLOCK);
    }
  }
  pthread_mutex_unlock(&fs->locks_mu);
  if (!conflict) out.l_type = F_UNLCK;
  fuse_reply_lock(req, &out);
}

/* close(2) of any descriptor releases the owner's POSIX locks on the file (FUSE FLUSH carries
 * the owner; the kernel sends no unlock itself when the file system keeps the locks). */
void locks_flush(struct fs_file *fh, uint64_t owner) {
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  int any = lockrange_owner_holds(in->locks, owner);
  pthread_mutex_unlock(&in->lock);
  if (!any) return;
  struct lock_change ch = {owner, fh, 0, LOCK_EOF, F_UNLCK, 0, 0};
  pthread_mutex_lock(&fh->fs->locks_mu);
  apply(fh->fs, in, &ch);
  pthread_mutex_unlock(&fh->fs->locks_mu);
}

/* fh is being released: its records go (flock locks; its POSIX ones went at the close), and
 * what the pieces it holds cover for other opens' records is locked through another handle
 * before its CLOSE frees them at the server. */
void locks_release(struct fs_file *fh) {
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  int any = in->lock_changing || lockrange_file_holds(in->locks, in->srv_locks, fh);
  pthread_mutex_unlock(&in->lock);
  if (!any) return; /* the usual case: no wait behind another file's lock change */
  pthread_mutex_lock(&fh->fs->locks_mu);
  pthread_mutex_lock(&in->lock);
  struct fs_lock *gone = lockrange_take_file(&in->locks, fh);
  pthread_mutex_unlock(&in->lock);
  int rc = reconcile(in, fh);
  if (rc) syslog(LOG_WARNING, "a byte-range lock was lost at a close: %s", smb3_strerror(rc));
  pthread_mutex_unlock(&fh->fs->locks_mu);
  lockrange_free(gone);
}

/* After a reconnect fh has a new handle (I/O thread, no lock held): a new connection holds no
 * locks, so fh's are asked for again. One that another client took meanwhile is lost (logged):
 * POSIX has no way to tell the owner. */
static void relocked(int rc, void *arg) {
  struct fs_ctx *fs = arg;
  if (!rc) {
    atomic_fetch_add(&fs->ctr.relocks, 1);
    return;
  }
  atomic_fetch_add(&fs->ctr.relocks_lost, 1);
  syslog(LOG_WARNING, "a byte-range lock could not be taken again after reconnecting: %s", smb3_strerror(rc));
}

void locks_reacquire(struct fs_file *fh) {
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  size_t n = 0;
  for (struct piece *p = in->srv_locks; p; p = p->next)
    n += p->holder == fh;
  struct piece *copy = n ? calloc(n, sizeof *copy) : NULL;
  size_t k = 0;
  for (struct piece *p = in->srv_locks; copy && p; p = p->next)
    if (p->holder == fh) copy[k++] = *p;
  smb3_file *f = fh_handle(fh);
  pthread_mutex_unlock(&in->lock);
  if (n && !copy) relocked(SMB3_ENOMEM, fh->fs);
  for (size_t i = 0; i < k; i++) {
    int rc = smb3_lock_async(f, copy[i].start, copy[i].end - copy[i].start,
                             copy[i].wr ? SMB3_LOCK_EXCLUSIVE : SMB3_LOCK_SHARED, relocked, fh->fs);
    if (rc) relocked(rc, fh->fs);
  }
  free(copy);
}

void locks_free(struct fs_inode *in) {
  lockrange_free(in->locks);
  in->locks = NULL;
  for (struct piece *p = in->srv_locks, *next; p; p = next)
    next = p->next, free(p);
  in->srv_locks = NULL;
}

void ops_locks_fill(struct fuse_lowlevel_ops *o, int nobrl) {
  if (nobrl) return; /* the kernel keeps them, on this machine only */
  o->getlk = ll_getlk;
  o->setlk = ll_setlk;
  o->flock = ll_flock;
}
