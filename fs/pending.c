/* pending.c - creates put off until the new file's data goes: see pending.h.
 *
 * State: one struct fs_pending per put-off create, on fs->pend (under fs->pend_mu) from
 * pending_start until its CREATE is answered; fh->pend points to it (read without a lock by
 * pending_is; set before the create is answered to the kernel, cleared under pend_mu). The
 * pending holds a reference to fh. `sent`: the CREATE is on the wire (pend_mu). Waiters queue on
 * it and run, in order, on the I/O thread that got the answer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "conn.h"
#include "dfs.h"
#include "dircache.h"
#include "fusereq.h"
#include "inode.h"
#include "pending.h"

struct pend_waiter {
  struct pend_waiter *next;
  void (*fn)(void *arg, int rc);
  void *arg;
};

struct fs_pending {
  struct fs_pending *next;
  struct fs_file *fh; /* referenced */
  char *path;
  int flags;
  int64_t mode;
  uint64_t seq; /* order of pending_start, for the barrier */
  int sent;     /* the CREATE is on the wire */
  /* sent once more on the next connection when the first is lost (conn.h); then without O_EXCL:
   * the lost one may have made the file */
  struct fs_retry retry;
  struct pend_waiter *waiters;
  /* the data sent with the CREATE */
  smb3_cb done; /* (written or SMB3_E*, arg) */
  void *done_arg;
  const void *buf; /* what send_create was given (the chunk's, alive until done runs) */
  size_t len;
  uint64_t off;
  struct timespec_smb3 at, mt;
  int has_at, has_mt;
};

void pending_init(struct fs_ctx *fs) {
  pthread_mutex_init(&fs->pend_mu, NULL);
  pthread_cond_init(&fs->pend_cv, NULL);
}

void fs_clock_note(struct fs_ctx *fs, const struct timespec_smb3 *srv) {
  pthread_mutex_lock(&fs->pend_mu);
  fs->clock_srv = *srv;
  fs->clock_loc = fs_now();
  fs->clock_known = 1;
  pthread_mutex_unlock(&fs->pend_mu);
}

int fs_clock_now(struct fs_ctx *fs, struct timespec_smb3 *now, double *at) {
  pthread_mutex_lock(&fs->pend_mu);
  int known = fs->clock_known;
  struct timespec_smb3 t = fs->clock_srv;
  double since = fs_now() - fs->clock_loc;
  pthread_mutex_unlock(&fs->pend_mu);
  if (!known) return 0;
  int64_t ns = t.nsec + (since > 0 ? (int64_t)(since * 1e9) : 0);
  t.sec += ns / 1000000000;
  t.nsec = (long)(ns % 1000000000);
  *now = t;
  *at = fs_now();
  return 1;
}

int pending_may_defer(struct fs_ctx *fs, struct fs_inode *parent, const char *name, int flags) {
  /* Not under cache=loose (the kernel's own write-back keeps the size and times: the CLOSE's
   * attributes are its reference) nor on a POSIX share (the owner and mode the server gives the
   * new file are not known before it answers). Only in a directory this mount made, or made a
   * file in (it may create there: what is left to fail is a full share or quota, as a write
   * can), and only where no lookup is needed (the name is known to be absent). Not O_EXCL unless
   * lazyexcl: that is a promise that the name was free on the server at open(2), which another
   * client's create of it during that window (at most actimeo since our knowledge of the
   * directory's names, plus until the data goes) would break; lock files rely on it. */
  if (!fs->pend_barrier_on || fs->wb_cache || smb3_posix(fs_conn(fs)) || (flags & O_ACCMODE) == O_RDONLY)
    return 0;
  if (((flags & O_EXCL) && !fs->lazyexcl) || !__atomic_load_n(&parent->made_in, __ATOMIC_ACQUIRE)) return 0;
  return inode_known(fs, parent, name) == KNOWN_ABSENT;
}

void pending_stat(struct smb3_stat *st) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  memset(st, 0, sizeof *st);
  st->attributes = 0x20; /* FILE_ATTRIBUTE_ARCHIVE: what a new file gets */
  st->nlink = 1;
  st->mode = S_IFREG | 0644;
  st->uid = st->gid = SMB3_NO_ID;
  st->created = 1;
  st->atime.sec = st->mtime.sec = st->ctime.sec = st->btime.sec = now.tv_sec;
  st->atime.nsec = st->mtime.nsec = st->ctime.nsec = st->btime.nsec = now.tv_nsec / 100 * 100;
}

int pending_start(struct fs_file *fh, char *path, int flags, int64_t mode) {
  struct fs_ctx *fs = fh->fs;
  struct fs_pending *p = calloc(1, sizeof *p);
  if (!p) return -1;
  p->fh = fh;
  p->path = path;
  p->flags = flags;
  p->mode = mode;
  pthread_mutex_lock(&fh->in->lock);
  fh->refs++;
  __atomic_store_n(&fh->in->pending, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&fh->in->lock);
  pthread_mutex_lock(&fs->pend_mu);
  p->seq = ++fs->pend_seq;
  p->next = fs->pend;
  fs->pend = p;
  __atomic_store_n(&fh->pend, p, __ATOMIC_RELEASE);
  atomic_fetch_add(&fs->npending, 1);
  pthread_mutex_unlock(&fs->pend_mu);
  atomic_fetch_add(&fs->ctr.creates_deferred, 1);
  return 0;
}

int pending_is(const struct fs_file *fh) {
  return __atomic_load_n(&fh->pend, __ATOMIC_ACQUIRE) != NULL;
}

static void unlist(struct fs_ctx *fs, struct fs_pending *p) {
  for (struct fs_pending **pp = &fs->pend; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      return;
    }
}

static void resend(void *arg, int ok);

/* The CREATE's answer (I/O thread). */
static void created(int rc, smb3_file *f, const struct smb3_stat *st, int64_t written, void *arg) {
  struct fs_pending *p = arg;
  struct fs_file *fh = p->fh;
  struct fs_inode *in = fh->in;
  struct fs_ctx *fs = fh->fs;
  if (fs_conn_error(rc) && fs_park_once(fs, &p->retry, rc, resend, p)) return; /* waiters stay queued */
  smb3_cb done = p->done;
  void *done_arg = p->done_arg;
  p->done = NULL;
  if (!rc) {
    inode_set_id(fs, in, st->ino);
    struct fs_inode *dir = inode_parent(fs, in, NULL); /* (table lock: not under in->lock) */
    if (dir) dircache_dir_changed(fs, &dir->ns_moved); /* a listing asked for meanwhile lacks it */
    inode_put(fs, dir);
    pthread_mutex_lock(&in->lock);
    fh->born_known = 1;
    fh->born_srv = st->mtime;
    fh->born_loc = fs_now();
    uint32_t lease = smb3_file_lease(f);
    if (lease || in->nopen == 1) in->lease = lease;
    /* The server's attributes, less what is ours: the size of the data written since the
     * create (sent with the CREATE or still held), and times the program set (sent with it, or
     * held for the write-back to send). */
    uint64_t size = in->st.size;
    struct timespec_smb3 mt = in->st.mtime, at = in->st.atime;
    int times_ours = p->has_at || p->has_mt || in->wb.times.pending;
    in->st = *st;
    in->st.ino = in->srv_id;
    if (written > 0 && p->off + p->len > in->st.size) in->st.size = p->off + p->len;
    if (size > in->st.size) in->st.size = size;
    if (times_ours) in->st.mtime = mt, in->st.atime = at;
    __atomic_store_n(&fh->f, f, __ATOMIC_RELEASE);
    __atomic_store_n(&in->pending, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&in->lock);
    fs_clock_note(fs, &st->mtime); /* (pend_mu is never taken inside in->lock) */
  } else {
    /* Not made (another client's name, a full or read-only share, permissions): the name we
     * gave out is not there. The error goes to the program with its next write, flush or
     * fsync; the directory's names are asked of the server again. */
    struct fs_inode *parent = inode_parent(fs, in, NULL);
    inode_detach(fs, in);
    inode_attr_expire(in); /* a stat through the kernel's dentry (until actimeo) asks, and fails */
    if (parent) inode_known_forget(fs, parent);
    inode_put(fs, parent);
    pthread_mutex_lock(&in->lock);
    __atomic_store_n(&in->pending, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&in->lock);
  }
  pthread_mutex_lock(&fs->pend_mu);
  __atomic_store_n(&fh->pend_rc, rc, __ATOMIC_RELEASE);
  __atomic_store_n(&fh->pend, NULL, __ATOMIC_RELEASE);
  unlist(fs, p);
  atomic_fetch_sub(&fs->npending, 1);
  struct pend_waiter *w = p->waiters, *rev = NULL;
  pthread_cond_broadcast(&fs->pend_cv);
  pthread_mutex_unlock(&fs->pend_mu);
  while (w) { /* queued by prepending: run in arrival order */
    struct pend_waiter *next = w->next;
    w->next = rev;
    rev = w;
    w = next;
  }
  free(p->path);
  free(p);
  if (done) done(rc ? rc : written, done_arg);
  while (rev) {
    struct pend_waiter *next = rev->next;
    rev->fn(rev->arg, rc);
    free(rev);
    rev = next;
  }
  file_put(fh);
}

/* Send p's CREATE (p->sent set by the caller under pend_mu), with the data and times given. */
static void send_now(struct fs_pending *p) {
  struct fs_file *fh = p->fh;
  struct fs_route r;
  p->retry.conn = fs_route_c(fh->fs, p->path, &r);
  int flags = p->retry.again ? p->flags & ~O_EXCL : p->flags;
  int rc = smb3_create_write_async(r.c, r.path, flags, fh->in->key, cache_lease_want(fh->fs, flags), p->mode,
                                   p->buf, p->len, p->off, p->has_at ? &p->at : NULL,
                                   p->has_mt ? &p->mt : NULL, created, p);
  fs_route_done(&r);
  if (rc) created(rc, NULL, NULL, 0, p);
}

static void resend(void *arg, int ok) { /* the next connection is there (ok), or none came */
  struct fs_pending *p = arg;
  if (ok)
    send_now(p);
  else
    created(p->retry.rc, NULL, NULL, 0, p); /* (parked once: not again) */
}

static void send_create(struct fs_pending *p, const void *buf, size_t len, uint64_t off,
                        const struct timespec_smb3 *at, const struct timespec_smb3 *mt) {
  p->buf = buf;
  p->len = len;
  p->off = off;
  p->has_at = at != NULL;
  p->has_mt = mt != NULL;
  if (at) p->at = *at;
  if (mt) p->mt = *mt;
  send_now(p);
}

void pending_when_created(struct fs_file *fh, void (*fn)(void *arg, int rc), void *arg) {
  struct fs_ctx *fs = fh->fs;
  if (!pending_is(fh)) { /* (pend_rc was set before pend was cleared) */
    fn(arg, __atomic_load_n(&fh->pend_rc, __ATOMIC_ACQUIRE));
    return;
  }
  struct pend_waiter *w = malloc(sizeof *w);
  pthread_mutex_lock(&fs->pend_mu);
  struct fs_pending *p = fh->pend;
  if (!p || !w) {
    int rc = p ? SMB3_ENOMEM : fh->pend_rc;
    pthread_mutex_unlock(&fs->pend_mu);
    free(w);
    fn(arg, rc);
    return;
  }
  *w = (struct pend_waiter){p->waiters, fn, arg};
  p->waiters = w;
  int send = !p->sent;
  p->sent = 1;
  pthread_mutex_unlock(&fs->pend_mu);
  if (send) send_create(p, NULL, 0, 0, NULL, NULL);
}

/* The pending file whose inode has this nodeid (pend_mu held), or NULL. */
static struct fs_file *pending_of_node(struct fs_ctx *fs, uint64_t nodeid) {
  for (struct fs_pending *p = fs->pend; p; p = p->next)
    if (p->fh->in->nodeid == nodeid) return p->fh;
  return NULL;
}

int pending_when_inode_created(struct fs_ctx *fs, struct fs_inode *in, void (*fn)(void *arg, int rc),
                               void *arg) {
  pthread_mutex_lock(&fs->pend_mu);
  struct fs_file *fh = pending_of_node(fs, in->nodeid);
  if (fh) { /* the pending's reference keeps fh until its answer has run the waiters */
    pthread_mutex_lock(&in->lock);
    fh->refs++;
    pthread_mutex_unlock(&in->lock);
  }
  pthread_mutex_unlock(&fs->pend_mu);
  if (!fh) return 0;
  pending_when_created(fh, fn, arg);
  file_put(fh);
  return 1;
}

int pending_send_data(struct fs_file *fh, const void *buf, size_t len, uint64_t off,
                      const struct timespec_smb3 *at, const struct timespec_smb3 *mt, smb3_cb done,
                      void *arg) {
  struct fs_ctx *fs = fh->fs;
  pthread_mutex_lock(&fs->pend_mu);
  struct fs_pending *p = fh->pend;
  if (!p || p->sent) {
    pthread_mutex_unlock(&fs->pend_mu);
    return p ? -1 : 0;
  }
  p->sent = 1;
  p->done = done;
  p->done_arg = arg;
  pthread_mutex_unlock(&fs->pend_mu);
  send_create(p, buf, len, off, at, mt);
  return 1;
}

/* Requests that the openers of pending files send for them, and that need no CREATE first. */
static int is_pending_node(struct fs_ctx *fs, uint64_t nodeid) {
  pthread_mutex_lock(&fs->pend_mu);
  int mine = pending_of_node(fs, nodeid) != NULL;
  pthread_mutex_unlock(&fs->pend_mu);
  return mine;
}

static int exempt(struct fs_ctx *fs, const struct fs_req *r) {
  const size_t gx = sizeof(struct fuse_getxattr_in); /* then the name */
  switch (r->opcode) {
  case FUSE_GETXATTR: /* one outside user.* is answered here, without the server (xattr.c): the
                       * kernel asks for security.capability before writes through the page cache */
    return r->arg_len > gx + 5 && memcmp(r->arg + gx, "user.", 5);
  /* A pending file's own: ll_setattr sends its CREATE itself when the change needs the server;
   * ll_getattr answers from what it holds. (Another's, a directory's above all, is the server's
   * business: a time set on the directory before a late CREATE there would be moved by it.) */
  case FUSE_SETATTR:
  case FUSE_GETATTR:
    return is_pending_node(fs, r->nodeid);
  case FUSE_IOCTL: /* the mount root's (smb3 stats) */
    return r->nodeid == FUSE_ROOT_ID;
  case FUSE_OPENDIR: /* (the first READDIR lists) */
  case FUSE_RELEASEDIR:
  case FUSE_WRITE:
  case FUSE_FLUSH:
  case FUSE_RELEASE:
  case FUSE_FORGET:
  case FUSE_BATCH_FORGET:
  case FUSE_INTERRUPT:
    return 1;
  default:
    return 0;
  }
}

static void barrier_sent(void *arg, int rc) {
  (void)arg, (void)rc; /* the barrier waits for the list, not for this */
}

void pending_barrier(struct fs_ctx *fs, const struct fs_req *r) {
  if (!atomic_load(&fs->npending) || exempt(fs, r)) return;
  int cancel;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel); /* libfuse cancels workers in their read */
  pthread_mutex_lock(&fs->pend_mu);
  uint64_t upto = fs->pend_seq;
  for (;;) {
    struct fs_pending *unsent = NULL;
    int waiting = 0;
    for (struct fs_pending *p = fs->pend; p; p = p->next) {
      if (p->seq > upto) continue; /* newer than this request */
      waiting = 1;
      if (!p->sent && !unsent) unsent = p;
    }
    if (!waiting) break;
    if (unsent) { /* sent alone: its data, if any, follows once it is made */
      struct fs_file *fh = unsent->fh;
      pthread_mutex_lock(&fh->in->lock); /* (pend_mu > in->lock) */
      fh->refs++;
      pthread_mutex_unlock(&fh->in->lock);
      pthread_mutex_unlock(&fs->pend_mu);
      pending_when_created(fh, barrier_sent, NULL);
      file_put(fh);
      pthread_mutex_lock(&fs->pend_mu);
      continue;
    }
    pthread_cond_wait(&fs->pend_cv, &fs->pend_mu);
  }
  pthread_mutex_unlock(&fs->pend_mu);
  pthread_setcancelstate(cancel, NULL);
}
