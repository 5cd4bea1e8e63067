/* bulk.c - the pipelined bulk engine (large reads and writes): a range is cut into rsize/wsize wire
 * requests, up to max_inflight of them in flight at once (and never more than the credit window
 * allows: the core queues the rest), completing out of order straight into the right place.
 * The first error stops new submissions; the engine waits for what is in flight and returns it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"
#include "util/clock.h"

struct slot {
  struct bulk *b;
  uint8_t *buf;
  uint64_t src_off; /* WRITE from a local file (bulk.src_fd): where its data is there */
  uint64_t off;
  size_t len;
  int64_t result;
  int busy, done;
  /* read pacing */
  int hot;     /* its response has not yet come down to the low-water mark */
  int started; /* its response started arriving */
  size_t lowat;
  uint64_t t_submit, t_start;
  size_t rem_start; /* data bytes still to come when the response started */
  int idle_submit;  /* sent with nothing else in flight: its response time is the latency */
};

struct bulk {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int inflight;
  int error;
  uint64_t eof_at; /* first offset known to be past the end of file */
  int src_fd;      /* WRITEs: the local file the data is sent from (sendfile), or -1 */
  uint64_t bytes_done;
  /* Reads are paced ("just in time"): the next READ goes out when the responses in flight have
   * no more data to come than the link delivers in about two request latencies, so the pipe
   * never drains and the server never holds more than it needs (a deep queue of large READs
   * only makes the server allocate, fill and free more buffers at once; on a 2-core loopback
   * with Samba that costs 2-3x). */
  int paced;
  int hot; /* requests counted in hot_bytes */
  size_t hot_bytes;
  int receiving; /* responses started and not complete */
  double lat_ns; /* request sent -> first response byte on an idle pipe (smoothed) */
  double rate;   /* data bytes per ns while a response streams (smoothed) */
  uint64_t last_done_ns;
};

#define BULK_READ_WINDOW (8u << 20)
#define BULK_WRITE_WINDOW (24u << 20)
#define PACE_SLACK (256u << 10)

/* Most requests in flight: the option, or a window of bytes. Paced reads usually stay far below
 * their 8 MiB (several bandwidth-delay products of a 10 Gbit/s, 1 ms link). Writes cannot be
 * paced the same way (nothing is heard of a WRITE until the server has written it), and a
 * shallow queue of large WRITEs lets the server go idle between pairs of requests, which with
 * Samba on loopback costs 2-3x (it frees and re-faults its receive buffers); 24 MiB measured
 * best of 8/16/24/32 MiB here. */
static int bulk_depth(const smb3_client *c, size_t piece, int is_read) {
  if (c->opts.max_inflight) return (int)c->opts.max_inflight;
  size_t d = (is_read ? BULK_READ_WINDOW : BULK_WRITE_WINDOW) / piece;
  return d < 2 ? 2 : d > 256 ? 256 : (int)d;
}

static void bulk_init(struct bulk *b, int paced) {
  memset(b, 0, sizeof *b);
  pthread_mutex_init(&b->m, NULL);
  pthread_cond_init(&b->cv, NULL);
  b->eof_at = UINT64_MAX;
  b->paced = paced;
  b->src_fd = -1;
}

static void bulk_destroy(struct bulk *b) {
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->m);
}

/* Bytes of responses to keep queued ahead of the one streaming: the link's bytes per request
 * latency, twice over. Before anything was measured, half a request (at least PACE_SLACK, so
 * that small requests start pipelined and the rate can be measured from their completions). */
static size_t pace_want(const struct bulk *b, size_t piece) {
  if (b->lat_ns <= 0 || b->rate <= 0) return piece / 2 > PACE_SLACK ? piece / 2 : PACE_SLACK;
  double w = b->rate * b->lat_ns * 2.0 + PACE_SLACK;
  return w > (double)(64u << 20) ? (64u << 20) : (size_t)w;
}

/* Under b->m: may another request go out now? */
static int can_issue(const struct bulk *b, int cap, size_t piece) {
  if (b->error || b->inflight >= cap) return 0;
  if (!b->paced) return 1;
  return b->hot == 0 || b->hot_bytes + piece <= pace_want(b, piece);
}

static void unhot(struct bulk *b, struct slot *s) {
  if (!s->hot) return;
  s->hot = 0;
  b->hot--;
  b->hot_bytes -= s->len;
}

static void ewma(double *v, double sample) {
  *v = *v > 0 ? (*v * 3 + sample) / 4 : sample;
}

static void slot_progress(void *arg, size_t remaining) {
  struct slot *s = arg;
  struct bulk *b = s->b;
  uint64_t now = mono_ns();
  pthread_mutex_lock(&b->m);
  if (!s->started) {
    s->started = 1;
    s->t_start = now;
    s->rem_start = remaining;
    if (!b->receiving && now > s->t_submit) /* nothing ahead of it: an unqueued latency */
      ewma(&b->lat_ns, (double)(now - s->t_submit));
    b->receiving++;
  }
  if (s->hot && remaining <= s->lowat) {
    unhot(b, s);
    pthread_cond_broadcast(&b->cv);
  }
  pthread_mutex_unlock(&b->m);
}

static void slot_done(int64_t result, void *arg) {
  struct slot *s = arg;
  struct bulk *b = s->b;
  uint64_t now = b->paced ? mono_ns() : 0;
  pthread_mutex_lock(&b->m);
  s->result = result;
  s->done = 1;
  b->inflight--;
  unhot(b, s);
  if (s->started) {
    b->receiving--;
    if (s->rem_start >= PACE_SLACK && now > s->t_start)
      ewma(&b->rate, (double)s->rem_start / (double)(now - s->t_start));
  } else if (b->paced && result > 0) {
    /* A response small enough to arrive whole (no progress calls): alone, it measures the
     * latency; queued behind the previous one, the gap between completions measures the rate. */
    if ((s->idle_submit || !b->inflight) && now > s->t_submit) ewma(&b->lat_ns, (double)(now - s->t_submit));
    if (b->last_done_ns && s->t_submit < b->last_done_ns && now > b->last_done_ns)
      ewma(&b->rate, (double)result / (double)(now - b->last_done_ns));
  }
  if (b->paced) b->last_done_ns = now;
  if (result < 0 && !b->error) b->error = (int)result;
  if (result >= 0) {
    b->bytes_done += (uint64_t)result;
    if ((size_t)result < s->len && s->off + (uint64_t)result < b->eof_at)
      b->eof_at = s->off + (uint64_t)result;
  }
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->m);
}

/* Submit one piece; on submit failure record the error as if the piece had failed. */
static void slot_submit(smb3_file *f, struct bulk *b, struct slot *s, int is_read) {
  s->b = b;
  s->busy = 1;
  s->done = 0;
  s->started = 0;
  pthread_mutex_lock(&b->m);
  s->idle_submit = b->inflight == 0;
  b->inflight++;
  s->hot = b->paced;
  if (s->hot) {
    b->hot++;
    b->hot_bytes += s->len;
    size_t want = pace_want(b, s->len);
    s->lowat = want < s->len ? want : s->len;
    s->t_submit = mono_ns();
  }
  pthread_mutex_unlock(&b->m);
  int rc;
  if (is_read && b->paced) {
    struct read_pacing pace = {slot_progress, s, s->lowat};
    rc = file_pread_paced(f, s->buf, s->len, s->off, slot_done, s, &pace);
  } else {
    rc = is_read          ? smb3_pread_async(f, s->buf, s->len, s->off, slot_done, s)
         : b->src_fd >= 0 ? file_pwrite_fd_async(f, b->src_fd, s->src_off, s->len, s->off, slot_done, s)
                          : smb3_pwrite_async(f, s->buf, s->len, s->off, slot_done, s);
  }
  if (rc) slot_done(rc, s);
}

static void wait_slots_below(struct bulk *b, int n) {
  pthread_mutex_lock(&b->m);
  while (b->inflight > n)
    pthread_cond_wait(&b->cv, &b->m);
  pthread_mutex_unlock(&b->m);
}

/* Wait until another request may go out; returns 0 if it may, 1 if the transfer must stop
 * (an error, or next_off is past the end of file). */
static int wait_issue(struct bulk *b, int cap, size_t piece, uint64_t next_off) {
  pthread_mutex_lock(&b->m);
  while (!b->error && next_off < b->eof_at && !can_issue(b, cap, piece))
    pthread_cond_wait(&b->cv, &b->m);
  int stop = b->error || next_off >= b->eof_at;
  pthread_mutex_unlock(&b->m);
  return stop;
}

/* ---- ranges into/out of one caller buffer, or out of a local file ---- */
struct range_src { /* (range_io with src NULL: the caller's buf) */
  int fd;
  uint64_t fd_off;
  smb3_progress_cb progress;
  void *parg;
};

static ssize_t range_io(smb3_file *f, uint8_t *buf, size_t len, uint64_t off, int is_read,
                        const struct range_src *src) {
  if (!f) return SMB3_EBADF;
  smb3_client *c = f->c;
  int busy =
      client_sync_check(c, is_read ? "read" : "write"); /* even for len 0: the same answer every time */
  if (busy) return busy;
  if (!len) return 0;
  if ((!buf && !src) || off > INT64_MAX - len) return SMB3_EINVAL;
  size_t piece = client_io_size(c, is_read);
  size_t npieces = (len + piece - 1) / piece;
  int cap = bulk_depth(c, piece, is_read);
  struct slot *slots = calloc(npieces, sizeof *slots);
  if (!slots) return SMB3_ENOMEM;
  struct bulk b;
  bulk_init(&b, is_read);
  if (src) b.src_fd = src->fd;
  for (size_t i = 0; i < npieces; i++) {
    uint64_t o = (uint64_t)i * piece;
    if (wait_issue(&b, cap, piece, off + o)) break;
    if (src && src->progress) {
      pthread_mutex_lock(&b.m);
      uint64_t done = b.bytes_done;
      pthread_mutex_unlock(&b.m);
      src->progress(done, src->parg);
    }
    slots[i].buf = src ? NULL : buf + o;
    slots[i].src_off = src ? src->fd_off + o : 0;
    slots[i].off = off + o;
    slots[i].len = len - o < piece ? len - o : piece;
    slot_submit(f, &b, &slots[i], is_read);
  }
  wait_slots_below(&b, 0);
  ssize_t rc;
  if (b.error)
    rc = b.error;
  else if (is_read)
    rc = (ssize_t)((b.eof_at < off + len ? b.eof_at : off + len) - off);
  else
    rc = b.bytes_done == len ? (ssize_t)len : SMB3_EIO; /* a short write is never silently accepted */
  bulk_destroy(&b);
  free(slots);
  if (rc < 0)
    client_fail(c, (int)rc, 0, "%s '%s': %s", is_read ? "read" : "write", f->path, smb3_strerror((int)rc));
  return rc;
}

ssize_t smb3_read_range(smb3_file *f, void *buf, size_t len, uint64_t off) {
  return range_io(f, buf, len, off, 1, NULL);
}
ssize_t smb3_write_range(smb3_file *f, const void *buf, size_t len, uint64_t off) {
  return range_io(f, (void *)buf, len, off, 0, NULL);
}

/* ---- streams through a ring of window buffers (get/cat/put) ---- */
struct ring {
  struct slot *slots;
  int n;
  size_t piece;
};

static int ring_new(struct ring *r, int n, size_t piece) {
  r->n = n;
  r->piece = piece;
  r->slots = calloc((size_t)n, sizeof *r->slots);
  if (!r->slots) return SMB3_ENOMEM;
  for (int i = 0; i < n; i++)
    if (!(r->slots[i].buf = malloc(piece))) return SMB3_ENOMEM;
  return 0;
}

static void ring_free(struct ring *r) {
  for (int i = 0; r->slots && i < r->n; i++)
    free(r->slots[i].buf);
  free(r->slots);
}

/* A stream's engine and its ring of rsize (is_read) or wsize buffers, as deep as the window.
 * Returns 0 or SMB3_ENOMEM; stream_end() frees both either way. */
static int stream_begin(smb3_client *c, int is_read, struct bulk *b, struct ring *r) {
  bulk_init(b, is_read);
  size_t piece = client_io_size(c, is_read);
  return ring_new(r, bulk_depth(c, piece, is_read), piece);
}

static void stream_end(struct bulk *b, struct ring *r) {
  bulk_destroy(b);
  ring_free(r);
}

static void wait_slot(struct bulk *b, struct slot *s) {
  pthread_mutex_lock(&b->m);
  while (s->busy && !s->done)
    pthread_cond_wait(&b->cv, &b->m);
  pthread_mutex_unlock(&b->m);
}

int64_t smb3_read_stream(smb3_file *f, uint64_t off, uint64_t len, smb3_sink_cb sink, void *arg,
                         smb3_progress_cb progress, void *parg) {
  if (!f || !sink) return SMB3_EINVAL;
  smb3_client *c = f->c;
  int busy = client_sync_check(c, "read");
  if (busy) return busy;
  struct ring r;
  struct bulk b;
  int64_t rc = stream_begin(c, 1, &b, &r);
  uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
  uint64_t next = off, delivered = off;
  int eof = 0, ks = 0, kd = 0; /* next slot to submit, next slot to deliver (ring order) */
  while (!rc && !eof && delivered < end) {
    struct slot *d = &r.slots[kd];
    /* Send what pacing allows into free slots, then wait for the oldest piece or for room. */
    pthread_mutex_lock(&b.m);
    for (;;) {
      int room = next < end && !r.slots[ks].busy && next < b.eof_at && can_issue(&b, r.n, r.piece);
      if (room || !d->busy || d->done || b.error) {
        pthread_mutex_unlock(&b.m);
        if (room) {
          struct slot *s = &r.slots[ks];
          s->off = next;
          s->len = end - next < r.piece ? (size_t)(end - next) : r.piece;
          next += s->len;
          slot_submit(f, &b, s, 1);
          ks = (ks + 1) % r.n;
          pthread_mutex_lock(&b.m);
          continue;
        }
        break;
      }
      pthread_cond_wait(&b.cv, &b.m);
    }
    if (!d->busy) break; /* nothing left in flight and nothing more may go out */
    wait_slot(&b, d);
    d->busy = 0;
    kd = (kd + 1) % r.n;
    if (d->result < 0) {
      rc = d->result;
      break;
    }
    if (d->result > 0 && (rc = sink(d->buf, (size_t)d->result, d->off, arg))) break;
    delivered += (uint64_t)d->result;
    eof = (size_t)d->result < d->len;
    if (progress) progress(delivered - off, parg);
  }
  wait_slots_below(&b, 0);
  stream_end(&b, &r);
  if (rc < 0) return client_fail(c, (int)rc, 0, "read '%s': %s", f->path, smb3_strerror((int)rc));
  return rc ? rc : (int64_t)(delivered - off);
}

int64_t smb3_write_stream(smb3_file *f, uint64_t off, smb3_source_cb source, void *arg,
                          smb3_progress_cb progress, void *parg) {
  if (!f || !source) return SMB3_EINVAL;
  smb3_client *c = f->c;
  int busy = client_sync_check(c, "write");
  if (busy) return busy;
  struct ring r;
  struct bulk b;
  int64_t rc = stream_begin(c, 0, &b, &r);
  uint64_t pos = off;
  int end = 0;
  for (int k = 0; !rc && !end; k = (k + 1) % r.n) {
    struct slot *s = &r.slots[k];
    if (s->busy) {
      wait_slot(&b, s);
      s->busy = 0;
      if (s->result < 0 || (size_t)s->result != s->len) {
        rc = s->result < 0 ? s->result : SMB3_EIO;
        break;
      }
      if (progress) progress(b.bytes_done, parg);
    }
    ssize_t n = source(s->buf, r.piece, pos, arg);
    if (n < 0) {
      rc = n;
      break;
    }
    if (n == 0) break;
    end = (size_t)n < r.piece; /* a short fill means the source is exhausted */
    s->off = pos;
    s->len = (size_t)n;
    pos += (uint64_t)n;
    slot_submit(f, &b, s, 0);
  }
  wait_slots_below(&b, 0);
  for (int k = 0; !rc && k < r.n; k++) /* check the tail of the window */
    if (r.slots[k].busy && (r.slots[k].result < 0 || (size_t)r.slots[k].result != r.slots[k].len))
      rc = r.slots[k].result < 0 ? r.slots[k].result : SMB3_EIO;
  if (!rc && b.error) rc = b.error;
  if (progress && !rc) progress(b.bytes_done, parg);
  stream_end(&b, &r);
  if (rc < 0) return client_fail(c, (int)rc, 0, "write '%s': %s", f->path, smb3_strerror((int)rc));
  return (int64_t)(pos - off);
}

/* ---- a local file's range, sent from the page cache ---- */
struct pread_source {
  int fd;
  uint64_t fd_off, remote_off, end; /* end: fd offset where the range ends */
};

static ssize_t source_pread(void *buf, size_t n, uint64_t pos, void *arg) {
  const struct pread_source *s = arg;
  uint64_t at = s->fd_off + (pos - s->remote_off);
  if (at >= s->end) return 0;
  if (n > s->end - at) n = (size_t)(s->end - at);
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(s->fd, (uint8_t *)buf + got, n - got, (off_t)(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return SMB3_EIO; /* the range was checked: a shorter file changed under us */
    got += (size_t)r;
  }
  return (ssize_t)got;
}

int64_t smb3_write_from_fd(smb3_file *f, uint64_t off, int fd, uint64_t fd_off, uint64_t len,
                           smb3_progress_cb progress, void *parg) {
  if (!f) return SMB3_EBADF;
  int busy = client_sync_check(f->c, "write");
  if (busy) return busy;
  struct stat st;
  int fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_ACCMODE) == O_WRONLY || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
      fd_off > (uint64_t)st.st_size || len > (uint64_t)st.st_size - fd_off || len > SSIZE_MAX)
    return client_fail(f->c, SMB3_EINVAL, 0,
                       "write '%s': the local range is not inside a regular file open for reading", f->path);
  if (!len) return 0;
  if (core_signing_active(f->c->core) || core_encryption_active(f->c->core)) {
    /* signing and sealing need the bytes in memory: read them into the stream's buffers */
    struct pread_source s = {fd, fd_off, off, fd_off + len};
    return smb3_write_stream(f, off, source_pread, &s, progress, parg);
  }
  struct range_src src = {fd, fd_off, progress, parg};
  ssize_t n = range_io(f, NULL, (size_t)len, off, 0, &src);
  if (n >= 0 && progress) progress((uint64_t)n, parg);
  if (n < 0 && !fstat(fd, &st) && (uint64_t)st.st_size < fd_off + len) /* what lost the connection */
    client_fail(f->c, (int)n, 0, "write '%s': the local file was cut to %lld bytes during the transfer",
                f->path, (long long)st.st_size);
  return n;
}
