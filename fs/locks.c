/* locks.c - fcntl(2) POSIX locks and flock(2) locks as SMB2 byte-range locks, so that they hold
 * against other clients of the share (the kernel cifs client does the same; option nobrl keeps
 * them on this machine, in the kernel).
 *
 * SMB locks belong to a handle and are mandatory; an exclusive one overlaps nothing, a lock is
 * released only by an UNLOCK of exactly its range, and the server cannot split, merge or convert
 * one. POSIX locks belong to a process (the kernel's lock owner), are split and merged, and a
 * process converts its own locks in place. So each inode keeps its locks here, one record per
 * SMB lock, records of one owner never overlapping: a change unlocks the owner's records that
 * it touches, locks the new range and locks again what is left of the old ones (their pieces
 * outside the range). Conflicts between owners on this machine are decided here (whatever
 * handles they use); the server decides against other clients.
 *
 * A lock request is tried on the FUSE worker thread that received it (sync calls: a lock is a
 * round trip or a few, and rare), one change at a time per mount (fs->locks_mu), never on the
 * I/O thread. F_SETLKW and flock without LOCK_NB, when refused, go to the waiter thread, which
 * asks again with a growing pause until granted and ends with EINTR when the caller is
 * interrupted: a lock that waited at the server would hold its answer open indefinitely and
 * could not be interrupted.
 *
 * The records are guarded by in->lock and changed only with fs->locks_mu held as well. */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/file.h>
#include <syslog.h>
#include <time.h>

#include "fs.h"

/* "To the end of the file" (l_len 0): the end of what off_t can address. */
#define LOCK_EOF ((uint64_t)INT64_MAX)

struct fs_lock {
  struct fs_lock *next;
  uint64_t owner;      /* the kernel's lock owner (flock: the open file's) */
  struct fs_file *fh;  /* whose server handle holds it */
  uint64_t start, end; /* [start, end) */
  int wr;              /* exclusive */
  int flock;           /* flock(2) lock: never conflicts with POSIX locks on this machine */
  pid_t pid;
};

static int overlap(const struct fs_lock *l, uint64_t start, uint64_t end) { return l->start < end && start < l->end; }

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
static void flushed(int err, void *arg) { woken(arg, err == 0); }

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
  return smb3_lock(f, start, end - start, type);
}

/* ---- one change of an owner's locks (fs->locks_mu held) ---- */
struct change {
  uint64_t owner;
  struct fs_file *fh;
  uint64_t start, end;
  int type; /* F_RDLCK, F_WRLCK, F_UNLCK */
  int flock;
  pid_t pid;
};

/* A record of another owner on this machine that forbids ch (or NULL). */
static struct fs_lock *local_conflict(struct fs_inode *in, const struct change *ch) {
  for (struct fs_lock *l = in->locks; l; l = l->next)
    if (l->flock == ch->flock && l->owner != ch->owner && overlap(l, ch->start, ch->end) &&
        (l->wr || ch->type == F_WRLCK))
      return l;
  return NULL;
}

static struct fs_lock *new_rec(const struct fs_lock *from, uint64_t start, uint64_t end) {
  struct fs_lock *l = malloc(sizeof *l);
  if (l) {
    *l = *from;
    l->next = NULL;
    l->start = start;
    l->end = end;
  }
  return l;
}

static void free_list(struct fs_lock *l) {
  while (l) {
    struct fs_lock *next = l->next;
    free(l);
    l = next;
  }
}

/* The end of a change: its records go (back) into the list. */
static void change_done(struct fs_inode *in, struct fs_lock *recs) {
  pthread_mutex_lock(&in->lock);
  for (struct fs_lock *l = recs, *next; l; l = next) next = l->next, l->next = in->locks, in->locks = l;
  in->lock_changing = 0;
  pthread_mutex_unlock(&in->lock);
}

/* Apply ch: 0, or a negative SMB3_E* (SMB3_EAGAIN: a conflict). */
static int apply(struct fs_ctx *fs, struct fs_inode *in, const struct change *ch) {
  pthread_mutex_lock(&in->lock);
  if (ch->type != F_UNLCK && local_conflict(in, ch)) {
    pthread_mutex_unlock(&in->lock);
    return SMB3_EAGAIN;
  }
  /* The owner's records that ch touches, taken out of the list; and whether ch changes anything. */
  struct fs_lock *touched = NULL, **pp = &in->locks;
  int covered = 0;
  while (*pp) {
    struct fs_lock *l = *pp;
    if (l->owner == ch->owner && l->flock == ch->flock && overlap(l, ch->start, ch->end)) {
      if (ch->type != F_UNLCK && l->wr == (ch->type == F_WRLCK) && l->start <= ch->start && ch->end <= l->end)
        covered = 1; /* already held so: nothing to do */
      *pp = l->next;
      l->next = touched;
      touched = l;
    } else {
      pp = &l->next;
    }
  }
  if (covered || (!touched && ch->type == F_UNLCK)) {
    struct fs_lock **tail = pp;
    *tail = touched; /* back as they were */
    pthread_mutex_unlock(&in->lock);
    return 0;
  }
  in->lock_changing = 1; /* the touched records are out of the list until the end */
  pthread_mutex_unlock(&in->lock);

  /* Pieces of the touched records outside ch's range: held again afterwards. */
  struct fs_lock *keep = NULL;
  int rc = 0;
  for (struct fs_lock *l = touched; l && !rc; l = l->next) {
    uint64_t cut[2][2] = {{l->start, ch->start < l->end ? ch->start : l->end}, {ch->end > l->start ? ch->end : l->start, l->end}};
    for (int k = 0; k < 2 && !rc; k++) {
      if (cut[k][0] >= cut[k][1] || (k == 0 && l->start >= ch->start) || (k == 1 && l->end <= ch->end)) continue;
      struct fs_lock *p = new_rec(l, cut[k][0], cut[k][1]);
      if (!p) rc = SMB3_ENOMEM;
      else p->next = keep, keep = p;
    }
  }
  struct fs_lock *add = NULL;
  if (!rc && ch->type != F_UNLCK) {
    struct fs_lock proto = {NULL, ch->owner, ch->fh, ch->start, ch->end, ch->type == F_WRLCK, ch->flock, ch->pid};
    if (!(add = new_rec(&proto, ch->start, ch->end))) rc = SMB3_ENOMEM;
  }
  if (rc) {
    free_list(keep);
    change_done(in, touched);
    return rc;
  }
  flush_data(fs, in);
  /* The server: release what ch touches, take the new range, take the pieces back. */
  struct fs_lock *released = NULL;
  for (struct fs_lock *l = touched, *next; l; l = next) {
    next = l->next;
    int u = srv_lock(l->fh, l->start, l->end, SMB3_LOCK_UNLOCK);
    if (u && u != SMB3_EINVAL && u != SMB3_ECLOSED && u != SMB3_EBADF)
      syslog(LOG_WARNING, "smb3fs: unlock of bytes %llu-%llu failed: %s", (unsigned long long)l->start,
             (unsigned long long)l->end, smb3_strerror(u));
    l->next = released;
    released = l;
  }
  if (add) {
    rc = srv_lock(ch->fh, ch->start, ch->end, add->wr ? SMB3_LOCK_EXCLUSIVE : SMB3_LOCK_SHARED);
    if (rc) { /* refused: what the owner held is taken back, the pieces are not needed */
      free(add);
      add = NULL;
      free_list(keep);
      keep = released;
      released = NULL;
    }
  }
  struct fs_lock *held = add;
  for (struct fs_lock *l = keep, *next; l; l = next) {
    next = l->next;
    int r = srv_lock(l->fh, l->start, l->end, l->wr ? SMB3_LOCK_EXCLUSIVE : SMB3_LOCK_SHARED);
    if (r) { /* another client took it in between: the owner has lost it */
      syslog(LOG_WARNING, "smb3fs: a lock of bytes %llu-%llu was lost while being changed: %s",
             (unsigned long long)l->start, (unsigned long long)l->end, smb3_strerror(r));
      free(l);
      continue;
    }
    l->next = held;
    held = l;
  }
  free_list(released);
  change_done(in, held);
  return rc;
}

static int lock_errno(int rc) {
  if (rc == SMB3_EAGAIN) return EAGAIN;
  if (rc == SMB3_ECLOSED || rc == SMB3_EBADF) return ENOLCK; /* the handle is gone with its connection */
  return fs_errno(rc);
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
  struct change ch;
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
    int err = EINTR;
    if (!fuse_req_interrupted(w->req)) {
      pthread_mutex_lock(&fs->locks_mu);
      int rc = apply(fs, w->in, &w->ch);
      pthread_mutex_unlock(&fs->locks_mu);
      err = rc ? lock_errno(rc) : 0;
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
    fuse_reply_err(w->req, err);
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
static int wait_later(fuse_req_t req, struct fs_ctx *fs, struct fs_inode *in, const struct change *ch) {
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
static void change_locks(fuse_req_t req, struct fs_ctx *fs, struct fs_inode *in, const struct change *ch, int wait) {
  pthread_mutex_lock(&fs->locks_mu);
  int rc = apply(fs, in, ch);
  pthread_mutex_unlock(&fs->locks_mu);
  int err = rc ? lock_errno(rc) : 0;
  if (err == EAGAIN && wait && wait_later(req, fs, in, ch) == 0) return;
  fuse_reply_err(req, err);
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

static void ll_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *fl, int sleep) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  struct change ch = {fi->lock_owner, fh, 0, 0, fl->l_type, 0, fl->l_pid};
  int err = fl->l_type != F_RDLCK && fl->l_type != F_WRLCK && fl->l_type != F_UNLCK ? EINVAL : posix_range(fl, &ch.start, &ch.end);
  if (err) fuse_reply_err(req, err);
  else change_locks(req, fh->fs, fh->in, &ch, sleep);
}

static void ll_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  int how = op & (LOCK_SH | LOCK_EX | LOCK_UN);
  struct change ch = {fi->lock_owner, fh, 0, LOCK_EOF, how == LOCK_SH ? F_RDLCK : how == LOCK_EX ? F_WRLCK : F_UNLCK, 1, 0};
  if (how != LOCK_SH && how != LOCK_EX && how != LOCK_UN) fuse_reply_err(req, EINVAL);
  else change_locks(req, fh->fs, fh->in, &ch, !(op & LOCK_NB)); /* EAGAIN is EWOULDBLOCK */
}

/* F_GETLK: a conflicting lock of another owner here, else a probe at the server (a lock of the
 * parts of the range the owner does not hold itself, released at once). Another client's lock is
 * reported as the requested range, exclusive, pid 0: SMB does not say whose or which it is. */
static void ll_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *fl) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  struct fs_ctx *fs = fh->fs;
  struct fs_inode *in = fh->in;
  struct change ch = {fi->lock_owner, fh, 0, 0, fl->l_type, 0, 0};
  int err = fl->l_type != F_RDLCK && fl->l_type != F_WRLCK ? EINVAL : posix_range(fl, &ch.start, &ch.end);
  if (err) {
    fuse_reply_err(req, err);
    return;
  }
  pthread_mutex_lock(&fs->locks_mu);
  pthread_mutex_lock(&in->lock);
  struct fs_lock *l = local_conflict(in, &ch);
  struct flock out = *fl;
  int conflict = l != NULL;
  if (l) {
    out.l_type = l->wr ? F_WRLCK : F_RDLCK;
    out.l_start = (off_t)l->start;
    out.l_len = l->end >= LOCK_EOF ? 0 : (off_t)(l->end - l->start);
    out.l_pid = l->pid;
  }
  /* The gaps between the owner's own records in the range (they would conflict with themselves). */
  uint64_t gaps[16][2];
  int ngaps = 0;
  uint64_t at = ch.start;
  while (!conflict && at < ch.end && ngaps < 16) {
    struct fs_lock *first = NULL; /* the owner's next record from `at` on */
    for (struct fs_lock *o = in->locks; o; o = o->next)
      if (!o->flock && o->owner == ch.owner && o->end > at && o->start < ch.end && (!first || o->start < first->start))
        first = o;
    uint64_t gap_end = !first ? ch.end : first->start > at ? first->start : at;
    if (gap_end > at) gaps[ngaps][0] = at, gaps[ngaps][1] = gap_end, ngaps++;
    at = first ? first->end : ch.end;
  }
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
  int any = 0;
  for (struct fs_lock *l = in->locks; l && !any; l = l->next) any = !l->flock && l->owner == owner;
  pthread_mutex_unlock(&in->lock);
  if (!any) return;
  struct change ch = {owner, fh, 0, LOCK_EOF, F_UNLCK, 0, 0};
  pthread_mutex_lock(&fh->fs->locks_mu);
  apply(fh->fs, in, &ch);
  pthread_mutex_unlock(&fh->fs->locks_mu);
}

/* fh is being released: the CLOSE releases its locks at the server; forget them here. Without
 * fs->locks_mu unless a change is under way on the inode (its records may then be out of the
 * list): a release need not wait behind another file's lock. */
static struct fs_lock *take_fh(struct fs_inode *in, struct fs_file *fh) {
  struct fs_lock *gone = NULL;
  for (struct fs_lock **pp = &in->locks; *pp;) {
    struct fs_lock *l = *pp;
    if (l->fh == fh) {
      *pp = l->next;
      l->next = gone;
      gone = l;
    } else {
      pp = &l->next;
    }
  }
  return gone;
}

void locks_release(struct fs_file *fh) {
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  int changing = in->lock_changing;
  struct fs_lock *gone = changing ? NULL : take_fh(in, fh);
  pthread_mutex_unlock(&in->lock);
  if (changing) {
    pthread_mutex_lock(&fh->fs->locks_mu);
    pthread_mutex_lock(&in->lock);
    gone = take_fh(in, fh);
    pthread_mutex_unlock(&in->lock);
    pthread_mutex_unlock(&fh->fs->locks_mu);
  }
  free_list(gone);
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
  syslog(LOG_WARNING, "smb3fs: a byte-range lock could not be taken again after reconnecting: %s", smb3_strerror(rc));
}

void locks_reacquire(struct fs_file *fh) {
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  size_t n = 0;
  for (struct fs_lock *l = in->locks; l; l = l->next) n += l->fh == fh;
  struct fs_lock *copy = n ? calloc(n, sizeof *copy) : NULL;
  size_t k = 0;
  for (struct fs_lock *l = in->locks; copy && l; l = l->next)
    if (l->fh == fh) copy[k++] = *l;
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
  free_list(in->locks);
  in->locks = NULL;
}

void ops_locks_fill(struct fuse_lowlevel_ops *o, int nobrl) {
  if (nobrl) return; /* the kernel keeps them, on this machine only */
  o->getlk = ll_getlk;
  o->setlk = ll_setlk;
  o->flock = ll_flock;
}
