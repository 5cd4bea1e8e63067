/* writeback.c - coalesce application writes into wsize wire WRITEs.
 *
 * Each inode has up to EXTENTS_OPEN_MAX extents being filled (wb.open, sorted by offset; where a
 * write's bytes go is extents.c's). A FUSE write is copied into the one it continues (or a new
 * one) and answered at once; an extent that reaches
 * the next one takes that one's bytes, so writes that arrive out of order (the kernel's write-back
 * of the page cache under cache=loose sends several 1 MiB FUSE writes at once, which the FUSE
 * workers deliver in any order) still make whole extents. An extent goes on the wire
 * (smb3_pwrite_async, from our buffer, which lives until the callback) when it reaches wsize,
 * when it is the oldest and a new extent needs its place, when a newer write overlaps it, or when
 * somebody flushes (fsync, flush/close, and anything that needs the server to see the data:
 * read, rename, truncate, setattr, getattr). Several extents are in flight at once; extents
 * that overlap one already on the wire wait for it, because the server may complete concurrent
 * WRITEs in any order.
 *
 * Dirty memory is bounded per inode (wb_bound), and all files together share the mount's budget
 * (budget.h, over_bound): past it, a writer's data goes out in pieces of WB_TIGHT and the reply to
 * the FUSE write is held back until the file's own completions bring it down, which stalls the
 * writer instead of growing memory.
 *
 * Errors: the first failed wire WRITE is kept in wb.err and returned by the next write, fsync
 * or flush (close) of the file, like the kernel's writeback errors; it is never dropped. A WRITE
 * that failed because the connection was lost is not an error yet: it stays in flight, waits for
 * the new connection (fs_park) and for its file's reopened handle (fh_when_current), and is sent
 * again through that (a WRITE puts the same bytes at the same place, so sending it twice is
 * harmless); only if that fails too is it reported.
 *
 * Times set on a file while its data is gathered here (tar's futimens before close) wait for that
 * data (wb_set_times): the flush that sends a single extent sends them in the same compound after
 * its WRITE; otherwise a SET_INFO goes once the last WRITE completed. Either way they come after
 * the data, so the server's write does not move them, and the setattr costs no round trip. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "conn.h"
#include "extents.h"
#include "inode.h"
#include "memtrim.h"
#include "pending.h"
#include "writeback.h"

struct wb_chunk {
  struct extent ext;          /* its bytes; ext.fh: the file they came through (its release flushes first) */
  struct wb_chunk *next;      /* in wb.wire or wb.blocked */
  struct wb_chunk *send_next; /* a local list of chunks to submit once the lock is dropped */
  struct fs_ctx *fs;
  struct fs_inode *in;   /* referenced while the chunk exists */
  struct fs_retry retry; /* retry.conn: the connection of the handle it was last sent through */
  struct wb_times times; /* pending: set them after the WRITE, in the same compound; times_only: no WRITE */
  int times_only;
  uint64_t writes_at; /* ext.fh->writes when the times were attached */
  uint64_t gen_at;    /* in->data_gen then */
};

static struct wb_chunk *chunk_of(struct extent *e) {
  return (struct wb_chunk *)(void *)((char *)e - offsetof(struct wb_chunk, ext));
}

struct wb_waiter {
  struct wb_waiter *next;
  wb_done_fn done;
  void *arg;
  int consume;
};

struct wb_parked {
  struct wb_parked *next;
  fuse_req_t req;
  size_t size;
};

#define WB_MIN_BOUND (16u << 20)
#define WB_MAX_BOUND (64u << 20)

/* While the mount's data is over its budget (many files at once), a writer's data goes out in
 * pieces of at most this much, and it holds about two of them: one on the wire, one filling. */
#define WB_TIGHT (1u << 20)

static size_t wb_tight(const struct fs_ctx *fs) {
  return fs->wsize < WB_TIGHT ? fs->wsize : WB_TIGHT;
}

static size_t wb_bound(const struct fs_ctx *fs) {
  size_t b = (size_t)fs->wsize * 4;
  if (b < WB_MIN_BOUND) b = WB_MIN_BOUND;
  if (b > WB_MAX_BOUND) b = WB_MAX_BOUND;
  return b;
}

static int overlaps(const struct wb_chunk *a, const struct wb_chunk *b) {
  return a->ext.off < b->ext.off + b->ext.len && b->ext.off < a->ext.off + a->ext.len;
}

static int overlaps_any(const struct wb_chunk *c, const struct wb_chunk *list, const struct wb_chunk *stop) {
  for (; list && list != stop; list = list->next)
    if (overlaps(c, list)) return 1;
  return 0;
}

static void append(struct wb_chunk **head, struct wb_chunk *c) {
  c->next = NULL;
  while (*head)
    head = &(*head)->next;
  *head = c;
}

static void remove_chunk(struct wb_chunk **head, struct wb_chunk *c) {
  for (; *head; head = &(*head)->next)
    if (*head == c) {
      *head = c->next;
      return;
    }
}

static void chunk_free(struct wb_chunk *c) {
  struct fs_ctx *fs = c->fs;
  size_t cap = c->ext.cap;
  if (c->times_only) fh_unref(c->times.fh);
  fh_unref(c->ext.fh);
  inode_put(fs, c->in);
  free(c->ext.buf);
  free(c);
  fs_mem_release(fs, cap);
}

/* Queue c for the wire (in->lock held): to *send if nothing on the wire or queued before it
 * overlaps it, else to the blocked list. Counts it as in flight either way. */
static void queue_chunk(struct fs_inode *in, struct wb_chunk *c, struct wb_chunk **send) {
  struct wb_state *w = &in->wb;
  w->inflight++;
  w->inflight_bytes += c->ext.len;
  if (overlaps_any(c, w->wire, NULL) || overlaps_any(c, w->blocked, NULL)) {
    append(&w->blocked, c);
    return;
  }
  append(&w->wire, c);
  c->send_next = *send;
  *send = c;
}

/* Move blocked chunks that no longer overlap anything ahead of them to the wire. */
static void unblock(struct fs_inode *in, struct wb_chunk **send) {
  struct wb_state *w = &in->wb;
  for (struct wb_chunk *c = w->blocked, *next; c; c = next) {
    next = c->next;
    if (overlaps_any(c, w->wire, NULL) || overlaps_any(c, w->blocked, c)) continue;
    remove_chunk(&w->blocked, c);
    append(&w->wire, c);
    c->send_next = *send;
    *send = c;
  }
}

static void chunk_done(int64_t result, void *arg);
static void times_done(int rc, void *arg) {
  chunk_done(rc < 0 ? rc : 0, arg);
}

static void chunk_send(struct wb_chunk *c);
static void chunk_created(void *arg, int rc) { /* the CREATE another chunk carried was answered */
  if (rc)
    chunk_done(rc, arg);
  else
    chunk_send(arg);
}

/* A file whose CREATE is put off (pending.h): the first chunk carries it. 1 when handled. */
static int chunk_send_pending(struct wb_chunk *c) {
  struct fs_file *fh = c->ext.fh;
  if (!pending_is(fh)) return 0;
  c->retry.conn = fs_conn(c->fs);
  const struct wb_times *t = &c->times;
  int times = c->times_only || t->pending, data = !c->times_only;
  struct fs_ctx *fs = c->fs;
  if (data) atomic_fetch_add(&fs->ctr.wb_wire_writes, 1); /* (c may be gone once the call returns) */
  int r = pending_send_data(fh, data ? c->ext.buf : NULL, data ? c->ext.len : 0, c->ext.off,
                            times && t->has_at ? &t->at : NULL, times && t->has_mt ? &t->mt : NULL,
                            chunk_done, c);
  if (r <= 0 && data) atomic_fetch_sub(&fs->ctr.wb_wire_writes, 1); /* it goes later, through chunk_send */
  if (r < 0) pending_when_created(fh, chunk_created, c);
  return r != 0;
}

/* Through the file's current handle (a reconnect may have swapped it since the chunk began). */
static void chunk_send(struct wb_chunk *c) {
  if (chunk_send_pending(c)) return;
  smb3_file *f = fh_handle(c->ext.fh);
  if (!f && c->ext.fh->pend_rc) { /* its CREATE failed: that is this write's error */
    chunk_done(c->ext.fh->pend_rc, c);
    return;
  }
  c->retry.conn = smb3_file_client(f);
  const struct wb_times *t = &c->times;
  int rc;
  if (c->times_only) {
    rc = smb3_fsetattr_async(f, t->has_at ? &t->at : NULL, t->has_mt ? &t->mt : NULL, 0, times_done, c);
    if (rc) times_done(rc, c);
    return;
  }
  atomic_fetch_add(&c->fs->ctr.wb_wire_writes, 1);
  if (t->pending)
    rc = smb3_pwrite_setattr_async(f, c->ext.buf, c->ext.len, c->ext.off, t->has_at ? &t->at : NULL,
                                   t->has_mt ? &t->mt : NULL, chunk_done, c);
  else
    rc = smb3_pwrite_async(f, c->ext.buf, c->ext.len, c->ext.off, chunk_done, c);
  if (rc) chunk_done(rc, c);
}

static void chunk_reopened(void *arg, int ok) {
  struct wb_chunk *c = arg;
  if (ok)
    chunk_send(c);
  else
    chunk_done(c->retry.rc, c);
}

static void chunk_resume(void *arg, int ok) {
  struct wb_chunk *c = arg;
  if (ok)
    fh_when_current(c->ext.fh, chunk_reopened, c);
  else
    chunk_done(c->retry.rc, c);
}

static void send_all(struct wb_chunk *send) {
  struct wb_chunk *rev = NULL; /* built by prepending: restore the file order */
  while (send) {
    struct wb_chunk *n = send->send_next;
    send->send_next = rev;
    rev = send;
    send = n;
  }
  send = rev;
  while (send) {
    struct wb_chunk *c = send;
    send = c->send_next;
    chunk_send(c);
  }
}

static struct wb_waiter *take_waiters(struct wb_state *w) {
  if (w->inflight) return NULL;
  struct wb_waiter *list = w->waiters;
  w->waiters = NULL;
  if (!w->open.head) w->dirty_end = 0;
  return list;
}

/* Run waiters (no lock held); err is reported to each, consumed by the first that consumes. */
static void run_waiters(struct fs_inode *in, struct wb_waiter *list) {
  /* Reverse to call them in arrival order. */
  struct wb_waiter *rev = NULL;
  while (list) {
    struct wb_waiter *n = list->next;
    list->next = rev;
    rev = list;
    list = n;
  }
  while (rev) {
    struct wb_waiter *x = rev;
    rev = x->next;
    pthread_mutex_lock(&in->lock);
    int err = in->wb.err;
    if (x->consume) in->wb.err = 0;
    pthread_mutex_unlock(&in->lock);
    x->done(err, x->arg);
    free(x);
  }
}

/* The mount's data is over its budget (many files at once): writers go small (see over_bound). */
static int over_budget(const struct fs_ctx *fs) {
  return !budget_room(&fs->mem, 0);
}

/* Is the writer of in over its bound (in->lock held)? Its own bound (wb_bound), or, while the
 * mount's data is over its budget (many files at once), more than one piece (wb_tight): it then
 * waits for its own WRITEs (never for another file's), so that what each writer holds beyond the
 * cap stays small however many write at once. */
static int over_bound(const struct fs_ctx *fs, const struct wb_state *w) {
  size_t dirty = w->inflight_bytes + w->open.bytes;
  return dirty > wb_bound(fs) || (dirty > wb_tight(fs) && over_budget(fs));
}

static struct wb_parked *take_parked(struct fs_ctx *fs, struct fs_inode *in) {
  struct wb_state *w = &in->wb;
  struct wb_parked *out = NULL, **tail = &out;
  while (w->parked && !over_bound(fs, w)) {
    struct wb_parked *p = w->parked;
    w->parked = p->next;
    p->next = NULL;
    *tail = p;
    tail = &p->next;
  }
  /* Nothing will complete any more: release the rest too rather than hang the writers. */
  if (!w->inflight) {
    *tail = w->parked;
    w->parked = NULL;
  }
  return out;
}

static void reply_parked(struct wb_parked *p) {
  while (p) {
    struct wb_parked *n = p->next;
    fuse_reply_write(p->req, p->size);
    free(p);
    p = n;
  }
}

static struct wb_chunk *chunk_new(struct fs_file *fh, uint64_t off);

/* The pending times as a SET_INFO of their own, once no data is left before them (in->lock held);
 * counted in flight. NULL when not due (or out of memory: they stay pending, dirty, for the next
 * flush). */
static struct wb_chunk *times_take(struct fs_inode *in) {
  struct wb_state *w = &in->wb;
  if (!w->times.pending || w->inflight || w->open.head) return NULL;
  struct wb_chunk *c = chunk_new(w->times.fh, 0);
  if (!c) return NULL;
  c->times = w->times; /* its reference to the file moves into the chunk */
  c->times_only = 1;
  c->writes_at = c->ext.fh->writes;
  c->gen_at = in->data_gen;
  w->times.pending = 0;
  w->times.fh = NULL;
  w->inflight++;
  append(&w->wire, c);
  return c;
}

static void chunk_done(int64_t result, void *arg) {
  struct wb_chunk *c = arg;
  struct fs_inode *in = c->in;
  struct fs_ctx *fs = c->fs;
  struct wb_chunk *send = NULL;
  /* a lost connection: still in flight (and on the wire list) while it waits for the next one */
  if (result < 0 && fs_park_once(fs, &c->retry, (int)result, chunk_resume, c)) return;
  pthread_mutex_lock(&in->lock);
  struct wb_state *w = &in->wb;
  remove_chunk(&w->wire, c);
  w->inflight--;
  w->inflight_bytes -= c->ext.len;
  /* Data sent with an explicit mtime after it (tar's futimens, or the time a closing flush gave it):
   * the server keeps that time, also when the handle is closed (Samba and Windows stop updating the
   * write time of a handle whose write time was set), so its CLOSE may wait and go with others
   * (closeq.h), unless the application wrote again since. */
  if (c->times.pending && c->times.has_mt && result >= 0) {
    c->ext.fh->time_set = 1;
    c->ext.fh->pin_gen = c->gen_at;
    if ((uint64_t)result == c->ext.len && c->ext.fh->writes == c->writes_at) c->ext.fh->mtime_forced = 1;
  }
  if (result < 0 || (uint64_t)result < c->ext.len) {
    atomic_fetch_add(&fs->ctr.wb_errors, 1);
    /* A short WRITE means the server could not take it all (disk full): not retried. */
    if (!w->err) w->err = result < 0 ? -smb3_err_to_errno((int)result) : -EIO;
  }
  unblock(in, &send);
  struct wb_chunk *tset = times_take(in);
  if (tset) tset->send_next = send, send = tset;
  struct wb_parked *parked = take_parked(fs, in);
  struct wb_waiter *waiters = take_waiters(w);
  pthread_mutex_unlock(&in->lock);
  send_all(send);
  reply_parked(parked);
  if (waiters) run_waiters(in, waiters);
  chunk_free(c);
}

static struct wb_chunk *chunk_new(struct fs_file *fh, uint64_t off) {
  struct wb_chunk *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fs = fh->fs;
  c->in = fh->in;
  c->ext.fh = fh;
  fh->refs++; /* in->lock is held: the file lives as long as its data (fh_unref in chunk_free) */
  c->ext.off = off;
  inode_ref(fh->fs, fh->in);
  return c;
}

/* ---- the extents being filled (extents.c decides where bytes go) ---- */
struct absorb {
  struct fs_inode *in;
  struct wb_chunk **send, **dead;
  struct fs_ctx *fs;
};

static struct extent *extent_make(void *ctx, struct fs_file *fh, uint64_t off) {
  struct wb_chunk *c = chunk_new(fh, off);
  (void)ctx;
  return c ? &c->ext : NULL;
}

/* Sealed: to the wire (in->lock held). */
static void extent_seal(void *ctx, struct extent *e) {
  struct absorb *a = ctx;
  queue_chunk(a->in, chunk_of(e), a->send);
}

/* Emptied: freed by the caller once unlocked. */
static void extent_bury(void *ctx, struct extent *e) {
  struct absorb *a = ctx;
  struct wb_chunk *c = chunk_of(e);
  c->next = *a->dead;
  *a->dead = c;
}

/* Its buffer grew: the bytes are the mount's (budget.h); a writer always gets the room it needs,
 * the throttle below keeps the total near the cap. */
static void extent_grew(void *ctx, struct extent *e, size_t more) {
  struct absorb *a = ctx;
  (void)e;
  budget_charge(&a->fs->mem, more);
}

/* The mount's data is over its budget: see over_bound. */
static int extent_tight(void *ctx) {
  return over_budget(((struct absorb *)ctx)->fs);
}

static const struct extent_ops wb_extent_ops = {extent_make, extent_seal, extent_bury, extent_grew,
                                                extent_tight};

/* Copy buf into the inode's extents (in->lock held); full or finished extents go to *send,
 * extents merged into others to *dead. */
static int absorb(struct fs_file *fh, const char *buf, size_t size, uint64_t off, struct wb_chunk **send,
                  struct wb_chunk **dead) {
  struct wb_state *w = &fh->in->wb;
  struct absorb a = {fh->in, send, dead, fh->fs};
  uint64_t reached;
  int rc = extents_add(&w->open, fh, buf, size, off, fh->fs->wsize, &wb_extent_ops, &a, &reached);
  if (reached > w->dirty_end) w->dirty_end = reached;
  return rc;
}

void wb_write(struct fs_file *fh, fuse_req_t req, const char *buf, size_t size, uint64_t off) {
  struct fs_inode *in = fh->in;
  struct fs_ctx *fs = fh->fs;
  struct wb_chunk *send = NULL, *dead = NULL;
  pthread_mutex_lock(&in->lock);
  struct wb_state *w = &in->wb;
  int err = w->err;
  w->err = 0;
  if (!err) {
    in->data_gen++;
    inode_touch_locked(in, INODE_TOUCH_DATA); /* write(2) and a page written through mmap alike */
    fh->mtime_forced = 0;
    fh->writes++;
    err = absorb(fh, buf, size, off, &send, &dead);
    if (off + size > in->st.size) in->st.size = off + size;
  }
  if (!err && w->open.bytes >= wb_tight(fs) && over_budget(fs)) { /* see over_bound */
    struct absorb a = {in, &send, &dead, fs};
    extents_seal_all(&w->open, &wb_extent_ops, &a);
  }
  if (off + size > in->kern_size) in->kern_size = off + size; /* the kernel's write(2) grew it already */
  struct wb_parked *park = NULL;
  if (!err && w->inflight && over_bound(fs, w)) {
    park = calloc(1, sizeof *park);
    if (park) {
      park->req = req;
      park->size = size;
      struct wb_parked **pp = &w->parked;
      while (*pp)
        pp = &(*pp)->next;
      *pp = park;
    }
  }
  pthread_mutex_unlock(&in->lock);
  while (dead) {
    struct wb_chunk *n = dead->next;
    chunk_free(dead);
    dead = n;
  }
  send_all(send);
  if (err) {
    fuse_reply_err(req, -err);
    return;
  }
  atomic_fetch_add(&fs->ctr.wb_writes, 1);
  if (park)
    atomic_fetch_add(&fs->ctr.wb_throttled, 1);
  else
    fuse_reply_write(req, size);
}

/* The server's clock now, as estimated from the CREATE of fh (file.h: born_*), in the 100 ns
 * units a FILETIME keeps (so that the time read back is the time set). */
static struct timespec_smb3 server_now(const struct fs_file *fh) {
  double since = fs_now() - fh->born_loc;
  int64_t ns = since > 0 ? (int64_t)(since * 1e9) : 0;
  struct timespec_smb3 t = fh->born_srv;
  ns += t.nsec;
  t.sec += ns / 1000000000;
  t.nsec = (long)(ns % 1000000000);
  t.nsec -= t.nsec % 100;
  return t;
}

/* A closing flush (close or release) of a file pin created: its write time, as the server would
 * give it now, set in the compound of its last WRITE, so that the CLOSE moves nothing and may wait
 * for others (closeq.h); only when that costs no round trip: one extent of pin's goes out now
 * (a file written in one go), and only under a write lease (no other client writes the file
 * before that CLOSE: an open of theirs breaks the lease, and the break sends the queued CLOSEs
 * first). The server no longer times the writes of a handle whose time was set, and gives the
 * file that time again when the handle closes: after a write since (through pin, or another open
 * here while pin stayed open: data_gen), the time is set again (a SET_INFO of its own when the
 * data went already). Not under cache=loose (its CLOSE brings the attributes back) nor after a
 * failed write. in->lock held. */
static void pin_time(struct fs_ctx *fs, struct fs_inode *in, struct fs_file *pin, int one) {
  struct wb_state *w = &in->wb;
  if (!pin || !pin->born_known || fs->wb_cache || w->err || w->times.pending) return;
  if (pin->time_set
          ? pin->mtime_forced && pin->pin_gen == in->data_gen
          : !one || !((in->lease & SMB3_LEASE_WRITE) || __atomic_load_n(&in->pending, __ATOMIC_ACQUIRE)))
    return;
  w->times.pending = 1;
  w->times.fh = pin;
  pin->refs++; /* as wb_set_times */
  w->times.has_at = 0;
  w->times.has_mt = 1;
  w->times.mt = server_now(pin);
  in->st.mtime = w->times.mt;
}

static void flush(struct fs_ctx *fs, struct fs_inode *in, int consume, struct fs_file *pin, wb_done_fn done,
                  void *arg) {
  struct wb_chunk *send = NULL;
  struct wb_waiter *x = calloc(1, sizeof *x);
  pthread_mutex_lock(&in->lock);
  struct wb_state *w = &in->wb;
  struct absorb a = {in, &send, NULL, fs};
  int before = w->inflight;
  extents_seal_all(&w->open, &wb_extent_ops, &a);
  struct fs_file *times_fh = NULL;
  int one = before == 0 && w->inflight == 1 && send && !send->send_next;
  pin_time(fs, in, pin, one && send->ext.fh == pin);
  if (w->times.pending && one && send->ext.fh == w->times.fh) {
    send->times = w->times; /* one extent goes out now: the times in its compound */
    send->writes_at = send->ext.fh->writes;
    send->gen_at = in->data_gen;
    times_fh = w->times.fh;
    w->times.pending = 0;
    w->times.fh = NULL;
  } else {
    struct wb_chunk *tset = times_take(in);
    if (tset) tset->send_next = send, send = tset;
  }
  if (!w->inflight || !x) {
    int err = w->err;
    if (consume) w->err = 0;
    if (!x && w->inflight) err = -ENOMEM;
    pthread_mutex_unlock(&in->lock);
    free(x);
    send_all(send);
    if (times_fh) fh_unref(times_fh);
    done(err, arg);
    return;
  }
  x->done = done;
  x->arg = arg;
  x->consume = consume;
  x->next = w->waiters;
  w->waiters = x;
  pthread_mutex_unlock(&in->lock);
  send_all(send);
  if (times_fh) fh_unref(times_fh);
}

void wb_flush(struct fs_ctx *fs, struct fs_inode *in, int consume, wb_done_fn done, void *arg) {
  flush(fs, in, consume, NULL, done, arg);
}

void wb_flush_closing(struct fs_file *fh, wb_done_fn done, void *arg) {
  flush(fh->fs, fh->in, 1, fh, done, arg);
}

int wb_set_times(struct fs_inode *in, const struct timespec_smb3 *at, const struct timespec_smb3 *mt) {
  struct fs_file *old = NULL;
  pthread_mutex_lock(&in->lock);
  struct wb_state *w = &in->wb;
  struct extent *e = w->open.head;
  if (!e || (!at && !mt)) {
    pthread_mutex_unlock(&in->lock);
    return -1;
  }
  struct wb_times *t = &w->times;
  if (t->pending && t->fh != e->fh) old = t->fh, t->fh = NULL;
  if (!t->fh) {
    t->fh = e->fh;
    e->fh->refs++; /* in->lock held, as chunk_new does */
  }
  if (!t->pending) t->has_at = t->has_mt = 0;
  t->pending = 1;
  if (at) t->at = *at, t->has_at = 1, in->st.atime = *at;
  if (mt) t->mt = *mt, t->has_mt = 1, in->st.mtime = *mt;
  pthread_mutex_unlock(&in->lock);
  if (old) fh_unref(old);
  return 0;
}
