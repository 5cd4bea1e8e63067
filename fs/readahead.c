/* readahead.c - sequential read detection and a window of rsize wire READs ahead of the reader.
 *
 * Per open file, reads that continue where the previous one ended (or start at offset 0) form a
 * stream: the file is read in rsize pieces into our buffers, straight from the socket
 * (smb3_pread_async), and FUSE reads of any size are answered from them. The window of buffers
 * kept ahead of the reader starts at one and doubles each time the reader moves into the next
 * buffer, up to RA_MAX_BYTES. A read elsewhere (random access) is sent to the server as it is
 * and leaves the stream alone. Those decisions are ra_policy.c's; here they are carried out.
 *
 * Buffers are reference counted: the list holds one reference, a wire READ in flight one (the
 * buffer must live until its callback), and every FUSE read waiting for it one. Their memory is
 * the mount's budget (budget.h): the buffers a read waits for are always taken, the window beyond
 * only while all files together stay under the cap. Coherence with
 * local writes: reads first flush the inode's write-back, and buffers read before the inode's
 * data generation changed (write, truncate, lease break) are dropped.
 *
 * A FUSE read whose data could not come because the connection was lost is not answered with the
 * error at once: it waits for the new connection (fs_park) and the file's reopened handle
 * (fh_when_current) and is done again from the start (once). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "budget.h"
#include "cache.h"
#include "conn.h"
#include "memtrim.h"
#include "ra_policy.h"
#include "readahead.h"
#include "writeback.h"

#define RA_MAX_BYTES (16u << 20)
#define RA_MAX_BUFS 64u
/* How far past the stream a read still continues it: the kernel's own read-ahead sends FUSE
 * READs up to about two of its windows (FS_KERNEL_RA: the current one and the asynchronous next)
 * ahead of the reader, on several workers, so out of order. */
#define RA_NEAR(fs) (2 * FS_KERNEL_RA(fs) + (1u << 20))

#define RA_BUF_PIPES 16 /* rsize / pipe_cap at most (ra_pipes_init) */

struct ra_buf {
  struct ra_buf *next;
  struct fs_file *fh;
  struct fs_ctx *fs;
  smb3_client *conn; /* of the handle its READ went through */
  int refs;
  int done;
  int64_t result; /* bytes read (short = end of file) or SMB3_E* */
  uint64_t off;
  size_t len;
  uint8_t *data;
  /* A buffer may hold its data in a pipe instead (ra_pipe_get): spliced from the
   * socket and on to /dev/fuse, never copied through this process. piped: the data is there (the
   * library's answer); pipe_at: the file offset of its first byte not yet sent to the kernel. A
   * pipe is read once, in order: a read behind pipe_at, or one after a reply that did not take
   * what it should have (pipe_bad), goes to the server instead. */
  struct smb3_pipe pipes[RA_BUF_PIPES]; /* rsize bytes in pieces of fs->pipe_cap, in order */
  int npipes;
  int piped;
  int pipe_bad;
  uint64_t pipe_at;
  uint64_t mem_from; /* data[] holds the file from here on (past what a pipe gave before pipe_to_mem) */
};

/* ---- the pipes: a pool of empty ones per mount ---- */
/* FUSE reads smaller than this take the rest of a piped buffer into memory first (pipe_to_mem):
 * below it a splice per read (libfuse: vmsplice, splice, splice) costs more than the one copy. */
#define RA_PIPE_MIN_READ (64u << 10)
/* Empty pipes kept for the next buffers: an unprivileged user's pipes may take 16384 pages in
 * all (pipe-user-pages-soft), counted by their size, not by what they hold. */
#define RA_PIPES_KEPT 32

static void ra_pipe_put(struct fs_ctx *fs, struct smb3_pipe *p);

/* A new empty pipe that holds cap bytes: 0, or -1 (none made: over pipe-max-size without
 * CAP_SYS_RESOURCE, or the user's pipes over pipe-user-pages-soft). */
static int pipe_new(struct smb3_pipe *p, uint32_t cap) {
  int fd[2];
  if (pipe2(fd, O_CLOEXEC | O_NONBLOCK)) return -1;
  if (fcntl(fd[1], F_SETPIPE_SZ, (int)cap) < (int)cap) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  *p = (struct smb3_pipe){fd[0], fd[1], cap};
  return 0;
}

void ra_pipes_init(struct fs_ctx *fs) {
  /* signed or sealed: every byte passes through here anyway (pipe_cap stays 0: no pipes) */
  if (smb3_signing_active(fs->c) || smb3_encryption_active(fs->c)) return;
  /* A buffer of rsize takes rsize / cap pipes. Without CAP_SYS_RESOURCE no pipe grows past
   * pipe-max-size: libfuse's own pipe, through which each reply goes to the kernel, neither (its
   * header and a page per piece come on top), so FUSE reads are capped at half of it. */
  struct smb3_pipe p;
  uint32_t cap = fs->rsize;
  if (pipe_new(&p, cap)) {
    long max = 0;
    FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");
    if (!f || fscanf(f, "%ld", &max) != 1) max = 0;
    if (f) fclose(f);
    cap = 1u << 30;
    while (cap > 1 && (cap > fs->rsize || cap > (uint64_t)max))
      cap >>= 1;
    if (cap < (256u << 10) || fs->rsize % cap || fs->rsize / cap > RA_BUF_PIPES || pipe_new(&p, cap)) return;
    fs->fuse_read_max = cap / 2;
  }
  fs->pipe_cap = cap;
  ra_pipe_put(fs, &p);
}

/* An empty pipe of fs->pipe_cap (not 0): from the pool, or new; 0, or -1 when there is none (the
 * buffer goes to memory then). */
static int ra_pipe_get(struct fs_ctx *fs, struct smb3_pipe *p) {
  pthread_mutex_lock(&fs->pipes_mu);
  if (fs->npipes) {
    fs->npipes--;
    *p = (struct smb3_pipe){fs->pipes[fs->npipes][0], fs->pipes[fs->npipes][1], fs->pipe_cap};
    pthread_mutex_unlock(&fs->pipes_mu);
    return 0;
  }
  pthread_mutex_unlock(&fs->pipes_mu);
  return pipe_new(p, fs->pipe_cap);
}

/* Back to the pool when it is empty and the pool has room; closed otherwise. */
static void ra_pipe_put(struct fs_ctx *fs, struct smb3_pipe *p) {
  int left = 1;
  if (ioctl(p->rd, FIONREAD, &left) == 0 && left == 0) {
    pthread_mutex_lock(&fs->pipes_mu);
    if (fs->npipes < RA_PIPES_KEPT) {
      if (!fs->pipes) fs->pipes = calloc(RA_PIPES_KEPT, sizeof *fs->pipes);
      if (fs->pipes) {
        fs->pipes[fs->npipes][0] = p->rd;
        fs->pipes[fs->npipes][1] = p->wr;
        fs->npipes++;
        left = -1;
      }
    }
    pthread_mutex_unlock(&fs->pipes_mu);
    if (left < 0) return;
  }
  close(p->rd);
  close(p->wr);
}

static void buf_pipes_put(struct ra_buf *b) {
  for (int i = 0; i < b->npipes; i++)
    ra_pipe_put(b->fs, &b->pipes[i]);
  b->npipes = 0;
}

/* The rsize / pipe_cap pipes of a buffer: all of them, or none (it goes to memory then; always
 * when the mount has no pipes). */
static void buf_pipes_get(struct ra_buf *b) {
  if (!b->fs->pipe_cap) return;
  int n = (int)((b->len + b->fs->pipe_cap - 1) / b->fs->pipe_cap);
  for (b->npipes = 0; b->npipes < n; b->npipes++)
    if (ra_pipe_get(b->fs, &b->pipes[b->npipes])) {
      buf_pipes_put(b);
      return;
    }
}

void ra_pipes_free(struct fs_ctx *fs) {
  for (int i = 0; i < fs->npipes; i++) {
    close(fs->pipes[i][0]);
    close(fs->pipes[i][1]);
  }
  free(fs->pipes);
  fs->pipes = NULL;
  fs->npipes = 0;
}

struct ra_wait {
  struct ra_wait *next;
  fuse_req_t req;
  uint64_t off;
  size_t size;
  int again; /* done again after a lost connection already */
  int n;
  struct ra_buf *bufs[];
};

void ra_init(struct fs_file *fh) {
  memset(&fh->ra, 0, sizeof fh->ra);
  pthread_mutex_init(&fh->ra.lock, NULL);
  fh->ra.window = 1;
}

static void buf_unref(struct ra_buf *b) {
  if (--b->refs) return;
  struct fs_ctx *fs = b->fs;
  size_t len = b->len;
  buf_pipes_put(b);
  free(b->data);
  free(b);
  fs_mem_release(fs, len);
}

static unsigned max_window(const struct fs_ctx *fs) {
  unsigned n = RA_MAX_BYTES / fs->rsize;
  if (n < 2) n = 2;
  return n > RA_MAX_BUFS ? RA_MAX_BUFS : n;
}

/* Cut the stream at its first failed buffer: that buffer and everything after it leave the list
 * (in-flight ones keep their wire reference), so the stream stays one contiguous range and the
 * next read there asks the server again. Never a hole: a read inside one would find no buffer. */
static void prune_failed(struct ra_state *ra) {
  struct ra_buf **pp = &ra->bufs;
  while (*pp && !((*pp)->done && (*pp)->result < 0))
    pp = &(*pp)->next;
  while (*pp) {
    struct ra_buf *b = *pp;
    *pp = b->next;
    buf_unref(b);
  }
}

static void drop_all(struct ra_state *ra) {
  while (ra->bufs) {
    struct ra_buf *b = ra->bufs;
    ra->bufs = b->next;
    buf_unref(b);
  }
}

/* ---- answering a FUSE read from buffers (ra->lock held) ---- */
static uint64_t known_eof(const struct ra_state *ra);

/* A FUSE read to do again (after a flush, or after a lost connection). */
struct ra_retry {
  struct ra_retry *next;
  struct fs_file *fh;
  fuse_req_t req;
  size_t size;
  uint64_t off;
  int again;
  int rc;            /* the lost connection's error, answered if no new one comes */
  smb3_client *conn; /* the lost connection */
};

static void ra_read_again(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off, int again);

static void retry_reopened(void *arg, int ok) {
  struct ra_retry *r = arg;
  if (ok)
    ra_read_again(r->fh, r->req, r->size, r->off, 1);
  else
    fuse_reply_err(r->req, smb3_err_to_errno(r->rc));
  free(r);
}

static void retry_resume(void *arg, int ok) {
  struct ra_retry *r = arg;
  if (ok) {
    fh_when_current(r->fh, retry_reopened, r);
    return;
  }
  fuse_reply_err(r->req, smb3_err_to_errno(r->rc));
  free(r);
}

/* No lock held: park each read of the list until the connection is back (see the top). */
static void park_reads(struct ra_retry *list) {
  while (list) {
    struct ra_retry *r = list;
    list = r->next;
    reconnect_kick(r->fh->fs);
    if (fs_park(r->fh->fs, r->conn, retry_resume, r)) {
      fuse_reply_err(r->req, smb3_err_to_errno(r->rc));
      free(r);
    }
  }
}

/* Queue the read to be done again once the lost connection conn has a successor: 1 if queued
 * (the caller answers nothing), 0 if it must answer rc itself. */
static int want_again(struct ra_retry **list, struct fs_file *fh, fuse_req_t req, uint64_t off, size_t size,
                      int again, int rc, smb3_client *conn) {
  if (again || !fs_conn_error(rc) || !conn) return 0;
  struct ra_retry *r = malloc(sizeof *r);
  if (!r) return 0;
  *r = (struct ra_retry){*list, fh, req, size, off, 1, rc, conn};
  *list = r;
  return 1;
}

static void direct_read(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off, int again);

/* The pipe of a piped buffer that holds the file's byte at, and how many bytes from at it still
 * holds (the rest of its piece, or of the data). */
static struct smb3_pipe *pipe_of(struct ra_buf *b, uint64_t at, uint64_t *span) {
  uint64_t rel = at - b->off, cap = b->fs->pipe_cap, end = (uint64_t)b->result;
  uint64_t k = rel / cap, piece_end = (k + 1) * cap < end ? (k + 1) * cap : end;
  *span = piece_end - rel;
  return &b->pipes[k];
}

/* Take n bytes from pipe_at on out of a piped buffer's pipes: into dst, or dropped (dst NULL: a
 * read that skipped them). 0, or -1 when the pipes did not hold them. */
static int pipe_take(struct ra_buf *b, uint64_t n, uint8_t *dst) {
  uint8_t scratch[4096];
  while (n) {
    uint64_t span;
    struct smb3_pipe *p = pipe_of(b, b->pipe_at, &span);
    size_t want = n < span ? (size_t)n : (size_t)span;
    if (!dst && want > sizeof scratch) want = sizeof scratch;
    ssize_t r = read(p->rd, dst ? dst : scratch, want);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    n -= (uint64_t)r;
    b->pipe_at += (uint64_t)r;
    if (dst) dst += r;
  }
  return 0;
}

/* What b's pipes still hold, read into b->data where it belongs: the buffer is served from memory
 * from now on (pipe_bad if the pipes did not hold it). */
static void pipe_to_mem(struct ra_buf *b) {
  uint64_t end = b->off + (uint64_t)b->result;
  b->mem_from = b->pipe_at;
  if (pipe_take(b, end - b->pipe_at, b->data + (b->pipe_at - b->off)))
    b->pipe_bad = 1;
  else
    b->piped = 0;
}

/* After a reply that spliced from b's pipes: do they hold exactly what they should? */
static void pipe_check(struct ra_buf *b) {
  uint64_t left = 0;
  for (int i = 0; i < b->npipes; i++) {
    int n = -1;
    if (ioctl(b->pipes[i].rd, FIONREAD, &n) || n < 0) {
      b->pipe_bad = 1;
      return;
    }
    left += (uint64_t)n;
  }
  if (left != b->off + (uint64_t)b->result - b->pipe_at) b->pipe_bad = 1;
}

/* Answer req from bufs, or queue it on *retry (see want_again). Data in memory goes to the kernel
 * from there (one writev), data in pipes is spliced on (fuse_reply_data: a piece per pipe). */
struct slice {
  struct ra_buf *b;
  uint64_t at, len;
};

static void reply_piped(fuse_req_t req, const struct slice *sl, int k) {
  struct fuse_bufvec *v = calloc(1, sizeof *v + sizeof v->buf[0] * (size_t)k * RA_BUF_PIPES);
  if (!v) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  size_t m = 0;
  for (int i = 0; i < k; i++) {
    struct ra_buf *b = sl[i].b;
    uint64_t left = sl[i].len;
    if (!b->piped) {
      v->buf[m++] = (struct fuse_buf){.size = left, .mem = b->data + (sl[i].at - b->off)};
      continue;
    }
    while (left) { /* one piece per pipe it spans */
      uint64_t span;
      struct smb3_pipe *p = pipe_of(b, b->pipe_at, &span);
      uint64_t take = left < span ? left : span;
      v->buf[m++] = (struct fuse_buf){.size = take, .flags = FUSE_BUF_IS_FD, .fd = p->rd};
      b->pipe_at += take;
      left -= take;
    }
  }
  v->count = m;
  fuse_reply_data(req, v, 0);
  for (int i = 0; i < k; i++)
    if (sl[i].b->piped) pipe_check(sl[i].b);
  free(v);
}

static void serve(const struct ra_state *ra, fuse_req_t req, uint64_t off, size_t size, struct ra_buf **bufs,
                  int n, int again, struct ra_retry **retry) {
  struct slice sl_small[8], *sl = n <= 8 ? sl_small : malloc(sizeof *sl * (size_t)n);
  if (!sl) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  int k = 0, eof = 0, piped = 0, err = 0;
  uint64_t pos = off, end = off + size;
  for (int i = 0; i < n && pos < end; i++) {
    struct ra_buf *b = bufs[i];
    if (b->result < 0) {
      if (!want_again(retry, b->fh, req, off, size, again, (int)b->result, b->conn))
        err = smb3_err_to_errno((int)b->result);
      k = -1;
      break;
    }
    uint64_t bend = b->off + (uint64_t)b->result;
    eof = (uint64_t)b->result < b->len; /* short READ: the file ends at bend */
    if (pos < b->off || pos >= bend) break;
    uint64_t take = (bend < end ? bend : end) - pos;
    sl[k++] = (struct slice){b, pos, take};
    pos += take;
    if (eof) break;
  }
  /* Not the end of the file but no data: a short reply would tell the kernel the file ends here
   * (it shrinks its size). An error is the truth; the reader may retry. */
  if (k >= 0 && pos < end && !eof && pos < known_eof(ra)) err = EIO, k = -1;
  for (int i = 0; i < k; i++) {
    struct ra_buf *b = sl[i].b;
    uint64_t at = sl[i].at;
    /* small reads (a splice each would cost more than the copy): the rest of the buffer to memory.
     * So too a page-cache open's read that skips bytes: its reads are the kernel's read-ahead, sent
     * on several workers, so one may come before the one in front of it; dropping what it skips
     * would send that one to the server (a direct-I/O open's reader that skips has moved on). */
    if (b->piped && !b->pipe_bad && at >= b->pipe_at &&
        (size < RA_PIPE_MIN_READ || (at > b->pipe_at && !b->fh->direct)))
      pipe_to_mem(b);
    if ((b->piped && (b->pipe_bad || at < b->pipe_at || pipe_take(b, at - b->pipe_at, NULL))) ||
        (!b->piped && at < b->mem_from)) {
      direct_read(b->fh, req, size, off, again); /* that part of the pipes is gone: ask the server */
      k = -2;
      break;
    }
    piped |= b->piped;
  }
  if (k == -1 && err) fuse_reply_err(req, err);
  if (k >= 0 && piped) reply_piped(req, sl, k);
  if (k >= 0 && !piped) { /* all in memory: one writev */
    struct iovec iov_small[8] = {{0}}, *iov = k <= 8 ? iov_small : malloc(sizeof *iov * (size_t)k);
    if (iov) {
      for (int i = 0; i < k; i++)
        iov[i] = (struct iovec){sl[i].b->data + (sl[i].at - sl[i].b->off), sl[i].len};
      fuse_reply_iov(req, iov, k);
    } else {
      fuse_reply_err(req, ENOMEM);
    }
    if (iov != iov_small) free(iov);
  }
  if (sl != sl_small) free(sl);
}

static int all_done(const struct ra_wait *w) {
  for (int i = 0; i < w->n; i++)
    if (!w->bufs[i]->done) return 0;
  return 1;
}

static void release_wait(struct ra_wait *w) {
  for (int i = 0; i < w->n; i++)
    buf_unref(w->bufs[i]);
  free(w);
}

/* Serve every waiter whose buffers have all arrived, in arrival order. */
static void serve_waiters(struct ra_state *ra, struct ra_retry **retry) {
  for (struct ra_wait **pp = &ra->waiters; *pp;) {
    struct ra_wait *w = *pp;
    if (!all_done(w)) {
      pp = &w->next;
      continue;
    }
    *pp = w->next;
    serve(ra, w->req, w->off, w->size, w->bufs, w->n, w->again, retry);
    release_wait(w);
  }
}

/* ---- wire READs ---- */
static void buf_done(int64_t result, void *arg) {
  struct ra_buf *b = arg;
  struct fs_file *fh = b->fh;
  struct ra_state *ra = &fh->ra;
  pthread_mutex_lock(&ra->lock);
  b->done = 1;
  b->result = result;
  if (b->piped) atomic_fetch_add(&b->fs->ctr.ra_piped, 1);
  if (result < 0) prune_failed(ra); /* the next read retries from here */
  ra->inflight--;
  struct ra_retry *retry = NULL;
  serve_waiters(ra, &retry);
  void (*drained)(struct fs_file *) = ra->inflight ? NULL : ra->drained;
  buf_unref(b);
  pthread_mutex_unlock(&ra->lock);
  park_reads(retry);
  if (drained) drained(fh);
}

/* Append a buffer for [off, off+rsize) to the stream and send its READ (ra->lock held). needed:
 * a FUSE read waits for it, so it is taken whatever the mount's budget; read further ahead only
 * while the budget has room (budget.h). NULL: not issued. */
static struct ra_buf *issue(struct fs_file *fh, uint64_t off, int needed) {
  struct ra_state *ra = &fh->ra;
  struct fs_ctx *fs = fh->fs;
  size_t len = fs->rsize;
  if (needed)
    budget_charge(&fs->mem, len);
  else if (!budget_try(&fs->mem, len))
    return NULL;
  struct ra_buf *b = calloc(1, sizeof *b);
  if (b) b->data = malloc(len);
  if (!b || !b->data) {
    free(b);
    fs_mem_release(fs, len);
    return NULL;
  }
  b->fh = fh;
  b->fs = fs;
  b->off = off;
  b->mem_from = b->pipe_at = off;
  b->len = len;
  /* The data can go socket -> pipe -> /dev/fuse with no copy here (serve): into the reader's
   * buffer (direct open) or the page cache */
  if (ra->last_size >= RA_PIPE_MIN_READ) buf_pipes_get(b);
  b->refs = 2; /* the list and the wire */
  struct ra_buf **pp = &ra->bufs;
  while (*pp)
    pp = &(*pp)->next;
  *pp = b;
  ra->inflight++;
  atomic_fetch_add(&fh->fs->ctr.ra_wire_reads, 1);
  smb3_file *f = fh_handle(fh);
  b->conn = smb3_file_client(f);
  int rc = b->npipes
               ? smb3_pread_pipe_async(f, b->data, b->len, off, b->pipes, b->npipes, &b->piped, buf_done, b)
               : smb3_pread_async(f, b->data, b->len, off, buf_done, b);
  if (rc) { /* the callback will not run: finish here */
    b->done = 1;
    b->result = rc;
    ra->inflight--;
    buf_unref(b);
  }
  return b;
}

static struct ra_buf *tail(struct ra_state *ra) {
  struct ra_buf *b = ra->bufs;
  while (b && b->next)
    b = b->next;
  return b;
}

/* Where the stream's data is known to end: a completed short READ. */
static uint64_t known_eof(const struct ra_state *ra) {
  for (const struct ra_buf *b = ra->bufs; b; b = b->next)
    if (b->done && b->result >= 0 && (uint64_t)b->result < b->len) return b->off + (uint64_t)b->result;
  return UINT64_MAX;
}

/* Read ahead from next up to `to` (ra_decide() said), in rsize pieces appended to the stream, but
 * not past the end of the file as far as the buffers know it; the pieces below need_to hold the
 * read being answered, the others are taken only while the budget has room. */
static void top_up(struct fs_file *fh, uint64_t next, uint64_t to, uint64_t need_to) {
  struct ra_state *ra = &fh->ra;
  uint64_t rsize = fh->fs->rsize, eof = known_eof(ra);
  while (next < to && next < eof) {
    if (!issue(fh, next, next < need_to)) break;
    next += rsize;
  }
}

/* A waiter over the stream's buffers for [off, off+size) (ra->lock held). */
static struct ra_wait *make_wait(struct ra_state *ra, fuse_req_t req, uint64_t off, size_t size) {
  int n = 0;
  for (struct ra_buf *b = ra->bufs; b; b = b->next)
    if (b->off < off + size && b->off + b->len > off) n++;
  struct ra_wait *w = calloc(1, sizeof *w + sizeof(struct ra_buf *) * (size_t)n);
  if (!w) return NULL;
  w->req = req;
  w->off = off;
  w->size = size;
  for (struct ra_buf *b = ra->bufs; b; b = b->next)
    if (b->off < off + size && b->off + b->len > off) {
      b->refs++;
      w->bufs[w->n++] = b;
    }
  return w;
}

/* ---- random reads: straight to the server, in rsize pieces if needed ---- */
struct direct_piece {
  struct direct *d;
  size_t at, len;
};

struct direct {
  fuse_req_t req;
  struct fs_file *fh;
  uint64_t off;
  int again;         /* done again after a lost connection already */
  smb3_client *conn; /* of the handle its READs went through */
  pthread_mutex_t lock;
  int pending;
  int err;
  size_t size;
  size_t good; /* with short_seen: bytes valid from the start (a short piece ends the data) */
  int short_seen;
  struct direct_piece *pieces;
  uint8_t data[];
};

static void direct_piece_end(struct direct *d, size_t at, size_t len, int64_t result) {
  pthread_mutex_lock(&d->lock);
  if (result < 0 && !d->err) d->err = (int)result;
  if (result >= 0 && (uint64_t)result < len) {
    size_t end = at + (size_t)result;
    if (!d->short_seen || end < d->good) d->good = end;
    d->short_seen = 1;
  }
  int last = --d->pending == 0;
  pthread_mutex_unlock(&d->lock);
  if (!last) return;
  struct fs_ctx *fs = d->fh->fs; /* before the reply: the file may be released after it */
  size_t size = d->size;
  struct ra_retry *retry = NULL;
  if (d->err && want_again(&retry, d->fh, d->req, d->off, d->size, d->again, d->err, d->conn))
    park_reads(retry);
  else if (d->err)
    fuse_reply_err(d->req, smb3_err_to_errno(d->err));
  else
    fuse_reply_buf(d->req, (const char *)d->data, d->short_seen ? d->good : d->size);
  pthread_mutex_destroy(&d->lock);
  free(d->pieces);
  free(d);
  fs_mem_release(fs, size);
}

static void direct_done(int64_t result, void *arg) {
  struct direct_piece *p = arg;
  direct_piece_end(p->d, p->at, p->len, result);
}

static void direct_read(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off, int again) {
  struct fs_ctx *fs = fh->fs;
  size_t npieces = size ? (size + fs->rsize - 1) / fs->rsize : 0;
  struct direct *d = calloc(1, sizeof *d + size);
  if (d) d->pieces = calloc(npieces ? npieces : 1, sizeof *d->pieces);
  if (!d || !d->pieces) {
    free(d);
    fuse_reply_err(req, ENOMEM);
    return;
  }
  budget_charge(&fs->mem, size); /* a read waits for it: counted, never refused */
  d->req = req;
  d->size = size;
  d->fh = fh;
  d->off = off;
  d->again = again;
  smb3_file *f = fh_handle(fh);
  d->conn = smb3_file_client(f);
  pthread_mutex_init(&d->lock, NULL);
  d->pending = (int)npieces + 1; /* +1 is ours: nothing completes d while we are submitting */
  for (size_t i = 0; i < npieces; i++) {
    struct direct_piece *p = &d->pieces[i];
    p->d = d;
    p->at = i * fs->rsize;
    p->len = size - p->at < fs->rsize ? size - p->at : fs->rsize;
    atomic_fetch_add(&fs->ctr.direct_reads, 1);
    int rc = smb3_pread_async(f, d->data + p->at, p->len, off + p->at, direct_done, p);
    if (rc) direct_piece_end(d, p->at, p->len, rc);
  }
  direct_piece_end(d, 0, 0, 0);
}

/* ---- the FUSE read ---- */
static void after_flush(int err, void *arg) {
  struct ra_retry *r = arg;
  if (err) /* the data could not reach the server: say so rather than read stale bytes */
    fuse_reply_err(r->req, -err);
  else
    ra_read_again(r->fh, r->req, r->size, r->off, r->again);
  free(r);
}

void ra_read(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off) {
  ra_read_again(fh, req, size, off, 0);
}

static void ra_read_again(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off, int again) {
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  int dirty = wb_dirty(in);
  uint64_t gen = in->data_gen, size_hint = in->st.size;
  int coherent = (in->lease & SMB3_LEASE_READ) != 0;
  pthread_mutex_unlock(&in->lock);
  if (dirty) { /* the server must have our writes before we read around them */
    struct ra_retry *r = malloc(sizeof *r);
    if (!r) {
      fuse_reply_err(req, ENOMEM);
      return;
    }
    *r = (struct ra_retry){NULL, fh, req, size, off, again, 0, NULL};
    wb_flush(fh->fs, in, 0, after_flush, r);
    return;
  }
  struct ra_state *ra = &fh->ra;
  pthread_mutex_lock(&ra->lock);
  if (gen != ra->gen) {
    drop_all(ra);
    ra->gen = gen;
  }
  prune_failed(ra); /* READs that failed when sent (lost connection): ask again */
  struct ra_buf *t = tail(ra);
  struct ra_input pin = {.next_off = ra->next_off,
                         .started = ra->started,
                         .window = ra->window,
                         .start = ra->bufs ? ra->bufs->off : 0,
                         .end = t ? t->off + t->len : 0,
                         .eof = known_eof(ra),
                         .off = off,
                         .size = size,
                         .direct = fh->direct,
                         .coherent = coherent,
                         .size_hint = size_hint,
                         .rsize = fh->fs->rsize,
                         .near = RA_NEAR(fh->fs),
                         .max_window = max_window(fh->fs)};
  struct ra_decision d;
  ra_decide(&pin, &d);
  /* a small read that does not end the file: see cache.c */
  if (fh->direct_rd && size < FS_DIRECT_SMALL && off + size < size_hint && d.action != RA_DIRECT)
    atomic_fetch_add(&fh->in->direct_unfit, 1);
  if (d.drop_all) drop_all(ra);
  ra->next_off = d.next_off;
  while (ra->bufs && ra->bufs->off + ra->bufs->len <= d.consume_to) { /* the reader is past them */
    struct ra_buf *b = ra->bufs;
    ra->bufs = b->next;
    buf_unref(b);
  }
  ra->window = d.window;
  if (d.action == RA_DIRECT) {
    pthread_mutex_unlock(&ra->lock);
    atomic_fetch_add(&fh->fs->ctr.ra_misses, 1);
    if (fh->direct_rd) atomic_fetch_add(&fh->in->direct_unfit, 1); /* random access: see cache.c */
    direct_read(fh, req, size, off, again);
    return;
  }
  if (d.action == RA_NEW_STREAM) {
    drop_all(ra);
    ra->started = 1;
  }
  ra->last_size = size; /* small reads: no pipes (their data would be taken into memory anyway) */
  top_up(fh, d.issue_from, d.issue_to, off + size);
  struct ra_wait *w = make_wait(ra, req, off, size);
  if (!w) {
    pthread_mutex_unlock(&ra->lock);
    fuse_reply_err(req, ENOMEM);
    return;
  }
  w->again = again;
  if (all_done(w)) {
    atomic_fetch_add(&fh->fs->ctr.ra_hits, 1);
    struct ra_retry *retry = NULL;
    serve(ra, req, off, size, w->bufs, w->n, again, &retry);
    release_wait(w);
    pthread_mutex_unlock(&ra->lock);
    park_reads(retry);
    return;
  } else {
    atomic_fetch_add(&fh->fs->ctr.ra_misses, 1);
    struct ra_wait **pp = &ra->waiters;
    while (*pp)
      pp = &(*pp)->next;
    *pp = w;
  }
  pthread_mutex_unlock(&ra->lock);
}

int ra_prefill(struct fs_file *fh, uint8_t *data, size_t len, int64_t got, uint64_t gen) {
  struct ra_state *ra = &fh->ra;
  struct fs_inode *in = fh->in;
  struct ra_buf *b = calloc(1, sizeof *b);
  if (!b) return 0;
  pthread_mutex_lock(&in->lock);
  int same = in->data_gen == gen && !wb_dirty(in);
  pthread_mutex_unlock(&in->lock);
  pthread_mutex_lock(&ra->lock);
  if (!same || ra->bufs || ra->started) {
    pthread_mutex_unlock(&ra->lock);
    free(b);
    return 0;
  }
  *b = (struct ra_buf){.fh = fh,
                       .fs = fh->fs,
                       .conn = smb3_file_client(fh_handle(fh)),
                       .refs = 1,
                       .done = 1,
                       .result = got,
                       .off = 0,
                       .mem_from = 0,
                       .len = len,
                       .data = data};
  ra->bufs = b;
  ra->gen = gen;
  ra->started = 1;
  ra->next_off = 0;
  pthread_mutex_unlock(&ra->lock);
  return 1;
}

void ra_shutdown(struct fs_file *fh, void (*done)(struct fs_file *)) {
  struct ra_state *ra = &fh->ra;
  pthread_mutex_lock(&ra->lock);
  drop_all(ra);
  int idle = ra->inflight == 0;
  if (!idle) ra->drained = done;
  pthread_mutex_unlock(&ra->lock);
  if (idle) done(fh);
}
