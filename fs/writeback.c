/* writeback.c - coalesce application writes into wsize wire WRITEs.
 *
 * Each inode has up to WB_OPEN extents being filled (wb.open, sorted by offset). A FUSE write is
 * copied into the one it continues (or a new one) and answered at once; an extent that reaches
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
 * Dirty memory is bounded per inode (wb_bound): past it, the reply to the FUSE write is held
 * back until completions bring it down, which stalls the writer instead of growing memory.
 *
 * Errors: the first failed wire WRITE is kept in wb.err and returned by the next write, fsync
 * or flush (close) of the file, like the kernel's writeback errors; it is never dropped. A WRITE
 * that failed because the connection was lost is not an error yet: it stays in flight, waits for
 * the new connection (fs_park) and for its file's reopened handle (fh_when_current), and is sent
 * again through that (a WRITE puts the same bytes at the same place, so sending it twice is
 * harmless); only if that fails too is it reported. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writeback.h"
#include "conn.h"
#include "inode.h"

struct wb_chunk {
  struct wb_chunk *next;      /* in wb.wire or wb.blocked */
  struct wb_chunk *send_next; /* a local list of chunks to submit once the lock is dropped */
  struct fs_ctx *fs;
  struct fs_inode *in;  /* referenced while the chunk exists */
  struct fs_file *fh;   /* the file the data came through; its release flushes first */
  struct fs_retry retry; /* retry.conn: the connection of the handle it was last sent through */
  uint8_t *buf;
  size_t len, cap;
  uint64_t off;
};

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

#define WB_OPEN 4 /* extents being filled per inode */
#define WB_MIN_BOUND (16u << 20)
#define WB_MAX_BOUND (64u << 20)

static size_t wb_bound(const struct fs_ctx *fs) {
  size_t b = (size_t)fs->wsize * 4;
  if (b < WB_MIN_BOUND) b = WB_MIN_BOUND;
  if (b > WB_MAX_BOUND) b = WB_MAX_BOUND;
  return b;
}

static int overlaps(const struct wb_chunk *a, const struct wb_chunk *b) {
  return a->off < b->off + b->len && b->off < a->off + a->len;
}

static int overlaps_any(const struct wb_chunk *c, const struct wb_chunk *list, const struct wb_chunk *stop) {
  for (; list && list != stop; list = list->next)
    if (overlaps(c, list)) return 1;
  return 0;
}

static void append(struct wb_chunk **head, struct wb_chunk *c) {
  c->next = NULL;
  while (*head) head = &(*head)->next;
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
  fh_unref(c->fh);
  inode_put(c->fs, c->in);
  free(c->buf);
  free(c);
}

/* Queue c for the wire (in->lock held): to *send if nothing on the wire or queued before it
 * overlaps it, else to the blocked list. Counts it as in flight either way. */
static void queue_chunk(struct fs_inode *in, struct wb_chunk *c, struct wb_chunk **send) {
  struct wb_state *w = &in->wb;
  w->inflight++;
  w->inflight_bytes += c->len;
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

/* Through the file's current handle (a reconnect may have swapped it since the chunk began). */
static void chunk_send(struct wb_chunk *c) {
  smb3_file *f = fh_handle(c->fh);
  c->retry.conn = smb3_file_client(f);
  atomic_fetch_add(&c->fs->ctr.wb_wire_writes, 1);
  int rc = smb3_pwrite_async(f, c->buf, c->len, c->off, chunk_done, c);
  if (rc) chunk_done(rc, c);
}

static void chunk_reopened(void *arg, int ok) {
  struct wb_chunk *c = arg;
  if (ok) chunk_send(c);
  else chunk_done(c->retry.rc, c);
}

static void chunk_resume(void *arg, int ok) {
  struct wb_chunk *c = arg;
  if (ok) fh_when_current(c->fh, chunk_reopened, c);
  else chunk_done(c->retry.rc, c);
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
  if (!w->open) w->dirty_end = 0;
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

static struct wb_parked *take_parked(struct fs_ctx *fs, struct fs_inode *in) {
  struct wb_state *w = &in->wb;
  size_t bound = wb_bound(fs), dirty = w->inflight_bytes + w->open_bytes;
  struct wb_parked *out = NULL, **tail = &out;
  while (w->parked && dirty <= bound) {
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
  w->inflight_bytes -= c->len;
  if (result < 0 || (uint64_t)result < c->len) {
    atomic_fetch_add(&fs->ctr.wb_errors, 1);
    /* A short WRITE means the server could not take it all (disk full): not retried. */
    if (!w->err) w->err = result < 0 ? -smb3_err_to_errno((int)result) : -EIO;
  }
  unblock(in, &send);
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
  c->fh = fh;
  fh->refs++; /* in->lock is held: the file lives as long as its data (fh_unref in chunk_free) */
  c->off = off;
  inode_ref(fh->fs, fh->in);
  return c;
}

/* Extents live in aligned windows of wsize bytes, [k * wsize, (k + 1) * wsize): where the one
 * holding off ends. A window, not a length, so that an extent that began late (its first bytes
 * arrived after later ones) is joined by them, and a write that begins mid-file is followed by
 * aligned WRITEs. */
static uint64_t win_end(uint64_t off, size_t wsize) { return (off / wsize + 1) * wsize; }

/* Room for n more bytes. A streaming writer (a first write of 64 KiB or more) gets the rest of
 * the extent's window at once, so its bytes are copied once; a small writer starts at 64 KiB, then
 * 256 KiB, then the window, so that small files do not cost a wsize allocation each and the
 * re-copying on growth stays under a tenth of the data. */
static int chunk_reserve(struct wb_chunk *c, size_t n, size_t wsize) {
  if (c->len + n <= c->cap) return 0;
  size_t window = (size_t)(win_end(c->off, wsize) - c->off);
  size_t cap = c->len + n;
  if (!c->cap && n >= 64 * 1024)
    cap = window;
  else if (cap <= 64 * 1024)
    cap = 64 * 1024;
  else if (cap <= 256 * 1024)
    cap = 256 * 1024;
  else
    cap = window;
  if (cap > window) cap = window;
  uint8_t *b = realloc(c->buf, cap);
  if (!b) return -ENOMEM;
  c->buf = b;
  c->cap = cap;
  return 0;
}

/* Take c off the open list (in->lock held). */
static void unopen(struct wb_state *w, struct wb_chunk *c) {
  remove_chunk(&w->open, c);
  w->nopen--;
  w->open_bytes -= c->len;
}

/* Drop an open extent whose bytes are all elsewhere (or none); freed by the caller once unlocked. */
static void bury(struct wb_state *w, struct wb_chunk *c, struct wb_chunk **dead) {
  unopen(w, c);
  c->next = *dead;
  *dead = c;
}

/* Send an open extent to the wire (in->lock held). */
static void close_extent(struct fs_inode *in, struct wb_chunk *c, struct wb_chunk **send) {
  unopen(&in->wb, c);
  queue_chunk(in, c, send);
}

/* Whole window: ready for the wire. */
static int extent_full(const struct wb_chunk *c, size_t wsize) { return c->off % wsize == 0 && c->len == wsize; }

/* Reached the end of its window: nothing more can be appended. */
static int extent_at_end(const struct wb_chunk *c, size_t wsize) {
  return c->off + c->len == win_end(c->off, wsize);
}

/* Extent c grew up to the start of the next open one (in its window): take that one's bytes, so
 * out-of-order writes still make whole extents. Emptied extents go to *dead (freed unlocked). */
static int merge_next(struct wb_state *w, struct wb_chunk *c, size_t wsize, struct wb_chunk **dead) {
  struct wb_chunk *g = c->next;
  while (g && g->off == c->off + c->len && !extent_at_end(c, wsize) && g->fh == c->fh) {
    size_t room = (size_t)(win_end(c->off, wsize) - (c->off + c->len));
    size_t m = room < g->len ? room : g->len;
    if (chunk_reserve(c, m, wsize)) return -ENOMEM;
    memcpy(c->buf + c->len, g->buf, m);
    c->len += m;
    memmove(g->buf, g->buf + m, g->len - m);
    g->off += m;
    g->len -= m;
    if (!g->len) bury(w, g, dead); /* its bytes moved to c: open_bytes is unchanged */
    g = c->next;
  }
  return 0;
}

/* Copy buf into the inode's extents (in->lock held); full or finished extents go to *send,
 * extents merged into others to *dead. An extent holds the writes of one open only: it is sent
 * through that open's handle, and the server refuses a WRITE through another handle into a range
 * the writer locked exclusively. */
static int absorb(struct fs_file *fh, const char *buf, size_t size, uint64_t off, struct wb_chunk **send,
                  struct wb_chunk **dead) {
  struct fs_inode *in = fh->in;
  struct wb_state *w = &in->wb;
  size_t wsize = fh->fs->wsize;
  while (size) {
    struct wb_chunk *c = NULL;
    for (struct wb_chunk *e = w->open; e; e = e->next)
      if (e->off + e->len == off && !extent_at_end(e, wsize) && e->fh == fh) c = e;
    size_t n = size, room = (size_t)(win_end(off, wsize) - off);
    if (n > room) n = room;
    /* Older bytes that these overwrite must reach the server first. */
    for (struct wb_chunk *e = w->open, *next; e; e = next) {
      next = e->next;
      if (e != c && e->off < off + n && off < e->off + e->len) close_extent(in, e, send);
    }
    if (!c) {
      if (w->nopen == WB_OPEN) close_extent(in, w->open, send); /* the lowest offset */
      c = chunk_new(fh, off);
      if (!c) return -ENOMEM;
      struct wb_chunk **pos = &w->open;
      while (*pos && (*pos)->off < off) pos = &(*pos)->next;
      c->next = *pos;
      *pos = c;
      w->nopen++;
    }
    if (chunk_reserve(c, n, wsize)) {
      if (!c->len) bury(w, c, dead); /* never leave an empty extent behind */
      return -ENOMEM;
    }
    memcpy(c->buf + c->len, buf, n);
    c->len += n;
    w->open_bytes += n;
    buf += n, off += n, size -= n;
    if (off > w->dirty_end) w->dirty_end = off;
    if (merge_next(w, c, wsize, dead)) return -ENOMEM;
    if (extent_full(c, wsize)) close_extent(in, c, send);
  }
  return 0;
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
    err = absorb(fh, buf, size, off, &send, &dead);
    if (off + size > in->st.size) in->st.size = off + size;
  }
  struct wb_parked *park = NULL;
  if (!err && w->inflight_bytes + w->open_bytes > wb_bound(fs) && w->inflight) {
    park = calloc(1, sizeof *park);
    if (park) {
      park->req = req;
      park->size = size;
      struct wb_parked **pp = &w->parked;
      while (*pp) pp = &(*pp)->next;
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

void wb_flush(struct fs_ctx *fs, struct fs_inode *in, int consume, wb_done_fn done, void *arg) {
  (void)fs;
  struct wb_chunk *send = NULL;
  struct wb_waiter *x = calloc(1, sizeof *x);
  pthread_mutex_lock(&in->lock);
  struct wb_state *w = &in->wb;
  while (w->open) close_extent(in, w->open, &send);
  if (!w->inflight || !x) {
    int err = w->err;
    if (consume) w->err = 0;
    if (!x && w->inflight) err = -ENOMEM;
    pthread_mutex_unlock(&in->lock);
    free(x);
    send_all(send);
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
}
