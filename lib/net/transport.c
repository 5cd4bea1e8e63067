/* transport.c - TCP connect, NBSS framing (MS-SMB2 2.1), and the I/O thread's epoll loop. */
#include "net/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "smb3/smb3.h"
#include "smb3/smb3_errors.h"
#include "util/clock.h"

#define RX_STAGE (512u * 1024u) /* staging buffer for small frames and frame heads */
#define HEAD_ONLY_FRAMES 4
#define TX_IOV 256

enum rx_state { RX_LEN, RX_HEAD, RX_FRAME, RX_DIRECT };

struct deferred { /* transport_defer: a call due at `due` (mono_ns), in a list sorted by it */
  struct deferred *next;
  uint64_t due;
  void (*fn)(void *);
  void *arg;
};

struct smb3_transport {
  int fd, efd, epfd;
  pthread_t thread;
  pthread_mutex_t lock;
  struct smb3_core *core;
  int stop;
  transport_break_cb on_break;
  transport_tick_cb on_tick;
  void *cb_arg;
  /* receive state (I/O thread only) */
  uint8_t *stage;
  size_t st_off, st_len;
  enum rx_state rx;
  uint32_t frame_len;
  uint8_t *frame; /* RX_FRAME: malloc'd frame */
  size_t frame_got;
  struct core_direct direct; /* RX_DIRECT */
  size_t direct_got;
  int direct_lowat_told; /* the READ's low-water progress call was made */
  int rcvlowat;          /* SO_RCVLOWAT now set on the socket (0 = the default, 1) */
  int head_only;         /* > 0: read no more than the next frame's head, a READ that may be piped can be due
                          * (HEAD_ONLY_FRAMES other frames after the last such READ: interim answers) */
  int no_splice;         /* splice(2) from the socket failed once: never again on it */
  uint64_t last_housekeeping;
  int kick;                /* output may be pending: flush on this loop (I/O thread only) */
  int completed_at_submit; /* a submit completed its chain at once: run its callback (atomic) */
  int out_armed;
  struct deferred *deferred; /* under lock */
};

/* ---- connect ---- */
static int wait_connected(int fd, int timeout_ms) {
  struct pollfd p = {.fd = fd, .events = POLLOUT};
  int n;
  do
    n = poll(&p, 1, timeout_ms);
  while (n < 0 && errno == EINTR);
  if (n == 0) return ETIMEDOUT;
  if (n < 0) return errno;
  int soerr = 0;
  socklen_t sl = sizeof soerr;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
  return soerr;
}

static void tune_socket(int fd, size_t sockbuf) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  if (sockbuf) {
    /* Large pipelined writes: the send buffer must exceed ~2x wsize or throughput collapses.
     * Plain SO_SNDBUF is capped by net.core.wmem_max (often 208 KiB, below autotuning); only the
     * privileged FORCE variants can raise it, so without privilege we keep the kernel's autotuning. */
    int v = sockbuf > (size_t)0x7fffffff / 2 ? 0x3fffffff : (int)sockbuf;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v);
  }
}

static int connect_fd(const char *host, int port, int timeout_ms, size_t sockbuf, char *err, size_t errlen) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
  char portstr[16];
  snprintf(portstr, sizeof portstr, "%d", port);
  int gai = getaddrinfo(host, portstr, &hints, &res);
  if (gai) {
    snprintf(err, errlen, "cannot resolve host '%s': %s", host, gai_strerror(gai));
    return SMB3_ECONNECT;
  }
  int last = ECONNREFUSED, fd = -1;
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    tune_socket(fd, sockbuf);
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
    if (rc == EINPROGRESS) rc = wait_connected(fd, timeout_ms);
    if (rc) {
      last = rc;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    snprintf(err, errlen, "cannot connect to %s port %d: %s", host, port,
             last == ETIMEDOUT ? "connection timed out" : strerror(last));
    return last == ETIMEDOUT ? SMB3_ETIMEDOUT : SMB3_ECONNECT;
  }
  return fd;
}

/* ---- event dispatch (no lock held) ---- */
static void run_events(struct smb3_transport *t, struct core_event *e) {
  while (e) {
    struct core_event *next = e->next;
    if (e->chain) {
      struct smb3_chain *ch = e->chain;
      ch->cb(ch, ch->arg); /* may free ch (and e with it) */
    } else {
      if (t->on_break) t->on_break(&e->brk, t->cb_arg);
      core_event_free(e);
    }
    e = next;
  }
}

static void take_and_run(struct smb3_transport *t) {
  pthread_mutex_lock(&t->lock);
  struct core_event *e = core_take_events(t->core);
  /* a response that granted credits may have released queued requests: send them */
  if (core_want_write(t->core)) t->kick = 1;
  pthread_mutex_unlock(&t->lock);
  run_events(t, e);
}

static void fail(struct smb3_transport *t, int err) {
  if (t->rx == RX_DIRECT) core_recv_direct_abort(&t->direct); /* before the request fails */
  pthread_mutex_lock(&t->lock);
  core_fail_all(t->core, err);
  pthread_mutex_unlock(&t->lock);
  if (t->rx == RX_FRAME) free(t->frame);
  t->frame = NULL;
  t->rx = RX_LEN;
}

/* ---- sending ---- */
/* sendfile(2) of a WRITE's file data. Unlike sendmsg() it has no MSG_NOSIGNAL, so SIGPIPE is
 * blocked around it and one it raised is taken back (a library must not kill its host process). */
static ssize_t send_file_data(int sock, int fd, uint64_t off, size_t len) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE);
  off_t o = (off_t)off;
  ssize_t w = sendfile(sock, fd, &o, len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len);
  int err = errno;
  /* sendfile works in rounds: a round that hit EPIPE raises SIGPIPE even when the call returns
   * the count of the rounds before it, so whatever it returned, take back a SIGPIPE that is
   * pending now and was not before. */
  if (!was_pending && !sigpending(&pending) && sigismember(&pending, SIGPIPE)) {
    struct timespec zero = {0, 0};
    sigtimedwait(&pipe_set, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = err;
  return w;
}

/* Write what the core has queued until done (0), the socket is full (1) or it failed (<0).
 * Either thread may call it, also both at once: each step takes the head of the core's output
 * under the connection mutex. */
static int flush_output(struct smb3_transport *t) {
  struct iovec iov[TX_IOV];
  for (;;) {
    /* The iovecs point into frames and requests the core owns: they stay valid only while the
     * connection mutex is held (a failure or a response on the other thread may free them), so
     * the mutex covers the send. sendmsg() on this non-blocking socket only copies. */
    pthread_mutex_lock(&t->lock);
    int file_next = 0;
    int n = core_output_upto_file(t->core, iov, TX_IOV, &file_next);
    int fd;
    uint64_t foff;
    size_t flen;
    ssize_t w;
    if (n) {
      /* sendmsg, not writev: MSG_NOSIGNAL keeps a reset connection from raising SIGPIPE in the
       * application (a library must not kill its host process). MSG_MORE when file data follows,
       * so that the headers leave in its first segment. */
      struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
      w = sendmsg(t->fd, &mh, MSG_NOSIGNAL | (file_next ? MSG_MORE : 0));
    } else if (core_output_file(t->core, &fd, &foff, &flen)) {
      w = send_file_data(t->fd, fd, foff, flen);
      if (w == 0) { /* the file ended before the length the frame announced: the stream is lost */
        pthread_mutex_unlock(&t->lock);
        return -EIO;
      }
    } else {
      pthread_mutex_unlock(&t->lock);
      return 0;
    }
    int err = w < 0 ? errno : 0;
    if (w > 0) core_output_done(t->core, (size_t)w);
    pthread_mutex_unlock(&t->lock);
    if (err == EINTR) continue;
    if (err == EAGAIN) return 1; /* wait for EPOLLOUT */
    if (err) return -err;
  }
}

/* ---- receiving ---- */
static void stage_compact(struct smb3_transport *t) {
  if (t->st_off == 0) return;
  memmove(t->stage, t->stage + t->st_off, t->st_len - t->st_off);
  t->st_len -= t->st_off;
  t->st_off = 0;
}

static size_t staged(const struct smb3_transport *t) {
  return t->st_len - t->st_off;
}

/* Copy staged bytes into an iovec list starting at byte `got`; returns bytes copied. */
static size_t stage_to_iov(struct smb3_transport *t, struct iovec *iov, int cnt, size_t got, size_t want) {
  size_t copied = 0, pos = 0;
  for (int i = 0; i < cnt && copied < want; i++) {
    size_t l = iov[i].iov_len;
    if (got >= pos + l) {
      pos += l;
      continue;
    }
    size_t in = got - pos + 0;
    size_t n = l - in;
    if (n > want - copied) n = want - copied;
    memcpy((uint8_t *)iov[i].iov_base + in, t->stage + t->st_off + copied, n);
    copied += n;
    got += n;
    pos += l;
  }
  t->st_off += copied;
  return copied;
}

static int frame_done(struct smb3_transport *t, uint8_t *buf, size_t len) {
  pthread_mutex_lock(&t->lock);
  int rc = core_recv_frame(t->core, buf, len);
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* Tell a paced READ how much of its data is still to come: once when the response starts
 * arriving (start=1), once when it falls to the message's low-water mark. The message stays
 * valid until core_recv_direct_done(). */
static void direct_progress(struct smb3_transport *t, int start) {
  struct smb3_msg *m = t->direct.msg;
  if (!m->rd_progress || t->direct_lowat_told) return;
  size_t total = t->frame_len - t->direct.head_len;
  size_t remaining = total - t->direct_got;
  if (remaining <= m->rd_lowat)
    t->direct_lowat_told = 1;
  else if (!start)
    return;
  m->rd_progress(m->rd_progress_arg, remaining);
}

/* How much of the direct READ's data to take in the next read from the socket: all that is still
 * to come, but no further than the low-water mark while its progress call is due. A backlog in
 * the socket (a busy client) would otherwise be taken in one go past the mark, and the paced
 * engine would send the next READ only when this one is complete: the server goes idle. */
static size_t direct_want(const struct smb3_transport *t) {
  const struct smb3_msg *m = t->direct.msg;
  size_t remaining = t->frame_len - t->direct.head_len - t->direct_got;
  if (m->rd_progress && !t->direct_lowat_told && remaining > m->rd_lowat) return remaining - m->rd_lowat;
  return remaining;
}

/* n more bytes of the direct READ arrived (in order) into t->direct.iov: decrypt them in place
 * when the frame is sealed. */
static int direct_take(struct smb3_transport *t, size_t n) {
  size_t pos = 0, at = t->direct_got, end = at + n;
  for (int i = 0; i < t->direct.iovcnt && at < end; i++) {
    size_t l = t->direct.iov[i].iov_len;
    if (at < pos + l) {
      size_t in = at - pos, k = l - in < end - at ? l - in : end - at;
      int rc = core_recv_direct_decrypt(&t->direct, (uint8_t *)t->direct.iov[i].iov_base + in, k);
      if (rc) return rc;
      at += k;
    }
    pos += l;
  }
  t->direct_got = end;
  return 0;
}

/* Process what is staged; returns <0 on a fatal error. */
static int process_stage(struct smb3_transport *t) {
  int rc_decrypt;
  for (;;) {
    if (t->rx == RX_LEN) {
      if (staged(t) < 4) return 0;
      const uint8_t *p = t->stage + t->st_off;
      if (p[0] != 0) return SMB3_EPROTO; /* NBSS session message only */
      t->frame_len = (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
      if (t->frame_len < 4 || t->frame_len > CORE_FRAME_MAX) return SMB3_EPROTO;
      t->st_off += 4;
      t->rx = RX_HEAD;
    }
    if (t->rx == RX_HEAD) {
      /* a sealed frame's head has its transform header in front (4 bytes tell which) */
      size_t head = SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
      if (staged(t) < 4 && t->frame_len >= 4) return 0;
      if (t->frame_len >= 4 && le32_at(t->stage + t->st_off) == SMB2_TRANSFORM_ID)
        head += SMB2_TRANSFORM_HDR_LEN;
      size_t need = t->frame_len < head ? t->frame_len : head;
      if (staged(t) < need) return 0;
      if (staged(t) >= t->frame_len) { /* whole frame staged: process in place */
        uint8_t *p = t->stage + t->st_off;
        if (t->head_only) t->head_only--;
        t->st_off += t->frame_len;
        t->rx = RX_LEN;
        int rc = frame_done(t, p, t->frame_len);
        if (rc) return rc;
        continue;
      }
      pthread_mutex_lock(&t->lock);
      int d = core_recv_direct(t->core, t->stage + t->st_off, head, t->frame_len, &t->direct);
      pthread_mutex_unlock(&t->lock);
      if (d < 0) return d;
      if (d == 1) {
        t->st_off += head;
        /* A piped READ's bytes must all come from the socket: one whose start is staged already
         * goes to memory. Streams of them are read head by head (head_only), so the next one's
         * data is still in the socket when its head is seen. */
        if (t->direct.msg->rd_use_pipe && !t->no_splice)
          t->head_only = HEAD_ONLY_FRAMES;
        else if (t->head_only)
          t->head_only--;
        if (t->direct.pipe && (staged(t) || t->no_splice)) t->direct.pipe = 0;
        t->direct_got = 0;
        t->rx = RX_DIRECT;
        rc_decrypt = direct_take(t, stage_to_iov(t, t->direct.iov, t->direct.iovcnt, 0, staged(t)));
        if (rc_decrypt) return rc_decrypt;
        t->direct_lowat_told = 0;
        direct_progress(t, 1);
      } else {
        if (t->head_only) t->head_only--;
        t->frame = malloc(t->frame_len);
        if (!t->frame) return SMB3_ENOMEM;
        t->frame_got = staged(t);
        memcpy(t->frame, t->stage + t->st_off, t->frame_got);
        t->st_off += t->frame_got;
        t->rx = RX_FRAME;
      }
    }
    return 0; /* RX_FRAME / RX_DIRECT continue from the socket */
  }
}

static ssize_t read_some(struct smb3_transport *t, struct iovec *iov, int cnt) {
  ssize_t n;
  do
    n = readv(t->fd, iov, cnt);
  while (n < 0 && errno == EINTR);
  if (n == 0) return SMB3_ECLOSED;
  if (n < 0) return errno == EAGAIN ? 0 : SMB3_ECLOSED;
  return n;
}

/* While a large READ streams in, wake only for RX_LOWAT bytes at a time (fewer wake-ups and
 * readv calls, bigger copies); never ask for more than is still to come. */
#define RX_LOWAT (512u << 10)
static void set_rcvlowat(struct smb3_transport *t, size_t want) {
  int v = want > RX_LOWAT ? (int)RX_LOWAT : want ? (int)want : 1;
  if (v == (t->rcvlowat ? t->rcvlowat : 1)) return;
  setsockopt(t->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v);
  t->rcvlowat = v;
}

/* The pipe of a piped READ that takes the data byte `at`, and how much more that pipe takes. */
static const struct smb3_pipe *pipe_at(const struct smb3_msg *m, size_t at, size_t *room) {
  size_t pos = 0;
  for (int i = 0; i < m->rd_npipes; i++) {
    if (at < pos + m->rd_pipes[i].cap) {
      *room = pos + m->rd_pipes[i].cap - at;
      return &m->rd_pipes[i];
    }
    pos += m->rd_pipes[i].cap;
  }
  *room = 0;
  return NULL;
}

/* A piped READ's pipe cannot take more (its slots fill with pieces smaller than a page) or cannot
 * take a splice at all: what the pipes hold goes back to the caller's buffer and the rest follows
 * there (core.h: rd_piped 0). */
static int pipe_spill(struct smb3_transport *t) {
  struct smb3_msg *m = t->direct.msg;
  size_t at = 0, room;
  while (at < t->direct_got) {
    const struct smb3_pipe *p = pipe_at(m, at, &room);
    size_t want = t->direct_got - at < room ? t->direct_got - at : room;
    ssize_t n = p ? read(p->rd, m->rd_buf + at, want) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return SMB3_EIO; /* the bytes the pipes took are not there: the stream is lost */
    at += (size_t)n;
  }
  t->direct.pipe = 0;
  return 0;
}

/* Splice the piped READ's data from the socket into its pipes: 1 = all there, 0 = wait for more,
 * <0 = failed; a spill (pipe_spill) leaves the rest to the copying loop (t->direct.pipe 0). */
static int rx_pipe(struct smb3_transport *t) {
  struct smb3_msg *m = t->direct.msg;
  size_t total = t->frame_len - t->direct.head_len, room;
  while (t->direct.pipe && t->direct_got < total) {
    const struct smb3_pipe *p = pipe_at(m, t->direct_got, &room);
    if (!p) return SMB3_EPROTO; /* more data than the pipes take: cannot be (see direct_match) */
    size_t want = direct_want(t);
    if (want > room) want = room;
    set_rcvlowat(t, want);
    ssize_t n = splice(t->fd, NULL, p->wr, NULL, want, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    if (n > 0) {
      t->direct_got += (size_t)n;
      direct_progress(t, 0);
      continue;
    }
    if (n == 0) return SMB3_ECLOSED;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) { /* the socket has nothing ready, or the pipe is full? */
      struct pollfd free_room = {.fd = p->wr, .events = POLLOUT};
      if (poll(&free_room, 1, 0) == 1 && (free_room.revents & POLLOUT)) return 0; /* wait for the socket */
    } else {
      t->no_splice = 1;
    }
    int rc = pipe_spill(t);
    if (rc) return rc;
  }
  return 1;
}

/* Receive into the direct READ destination (no copy; a sealed frame is decrypted there, in place,
 * piece by piece as it arrives: one pass over the data), or into its pipe. */
static int rx_direct(struct smb3_transport *t) {
  size_t total = t->frame_len - t->direct.head_len;
  if (t->direct.pipe) {
    int rc = rx_pipe(t);
    if (rc <= 0) return rc;
  }
  while (t->direct_got < total) {
    size_t want = direct_want(t);
    set_rcvlowat(t, want);
    struct iovec iov[2];
    int cnt = 0;
    size_t pos = 0;
    for (int i = 0; i < t->direct.iovcnt && want; i++) {
      size_t l = t->direct.iov[i].iov_len;
      if (t->direct_got < pos + l) {
        size_t in = t->direct_got > pos ? t->direct_got - pos : 0;
        size_t k = l - in < want ? l - in : want;
        iov[cnt++] = (struct iovec){(uint8_t *)t->direct.iov[i].iov_base + in, k};
        want -= k;
      }
      pos += l;
    }
    ssize_t n = read_some(t, iov, cnt);
    if (n <= 0) return (int)n;
    int rc = direct_take(t, (size_t)n);
    if (rc) return rc;
    direct_progress(t, 0);
  }
  set_rcvlowat(t, 1);
  t->rx = RX_LEN;
  pthread_mutex_lock(&t->lock);
  int rc = core_recv_direct_done(t->core, &t->direct);
  pthread_mutex_unlock(&t->lock);
  return rc ? rc : 1;
}

static int rx_frame(struct smb3_transport *t) {
  while (t->frame_got < t->frame_len) {
    struct iovec iov = {t->frame + t->frame_got, t->frame_len - t->frame_got};
    ssize_t n = read_some(t, &iov, 1);
    if (n <= 0) return (int)n;
    t->frame_got += (size_t)n;
  }
  t->rx = RX_LEN;
  int rc = frame_done(t, t->frame, t->frame_len);
  free(t->frame);
  t->frame = NULL;
  return rc ? rc : 1;
}

/* Read until the socket would block. Returns 0 or SMB3_E*. */
static int on_readable(struct smb3_transport *t) {
  for (;;) {
    int rc;
    if (t->rx == RX_DIRECT)
      rc = rx_direct(t);
    else if (t->rx == RX_FRAME)
      rc = rx_frame(t);
    else {
      stage_compact(t);
      size_t room = RX_STAGE - t->st_len;
      if (t->head_only) { /* only up to the end of the next frame's head */
        size_t need = (t->rx == RX_LEN ? 4u : 0u) + SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
        if (need > staged(t) && need - staged(t) < room) room = need - staged(t);
      }
      struct iovec iov = {t->stage + t->st_len, room};
      ssize_t n = read_some(t, &iov, 1);
      if (n <= 0) return (int)n;
      t->st_len += (size_t)n;
      rc = process_stage(t);
      if (rc) return rc;
      rc = 1;
    }
    if (rc <= 0) return rc;
    take_and_run(t);
    if (t->rx == RX_LEN || t->rx == RX_HEAD) {
      rc = process_stage(t);
      if (rc) return rc;
    }
  }
}

static void arm_output(struct smb3_transport *t, int want) {
  if (want == t->out_armed) return;
  struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.fd = t->fd};
  epoll_ctl(t->epfd, EPOLL_CTL_MOD, t->fd, &ev);
  t->out_armed = want;
}

static void drain_eventfd(int efd) {
  uint64_t v;
  while (read(efd, &v, sizeof v) > 0) {
  }
}

/* Housekeeping (timeouts, the client's tick) at most this often, so that the I/O thread does not
 * take the core lock on every wake-up while callers are submitting. */
#define HOUSEKEEPING_NS (50u * 1000000u)

/* The deferred calls due by now (all of them when now is UINT64_MAX), taken off the list. */
static struct deferred *take_due(struct smb3_transport *t, uint64_t now) {
  pthread_mutex_lock(&t->lock);
  struct deferred *due = t->deferred, **pp = &t->deferred;
  while (*pp && (*pp)->due <= now)
    pp = &(*pp)->next;
  if (pp == &t->deferred) {
    due = NULL;
  } else {
    t->deferred = *pp; /* the rest */
    *pp = NULL;        /* (pp: the last due one's next) */
  }
  pthread_mutex_unlock(&t->lock);
  return due;
}

static void run_deferred(struct deferred *d) {
  while (d) {
    struct deferred *next = d->next;
    d->fn(d->arg);
    free(d);
    d = next;
  }
}

/* epoll_wait's timeout: 250 ms, or less when a deferred call is due sooner. */
static int wait_ms(struct smb3_transport *t) {
  int ms = 250;
  pthread_mutex_lock(&t->lock);
  if (t->deferred) {
    uint64_t now = mono_ns(), due = t->deferred->due;
    uint64_t left = due > now ? (due - now + 999999u) / 1000000u : 0;
    if (left < (uint64_t)ms) ms = (int)left;
  }
  pthread_mutex_unlock(&t->lock);
  return ms;
}

int transport_defer(struct smb3_transport *t, uint64_t delay_ns, void (*fn)(void *), void *arg) {
  struct deferred *d = malloc(sizeof *d);
  if (!d) return SMB3_ENOMEM;
  *d = (struct deferred){NULL, mono_ns() + delay_ns, fn, arg};
  pthread_mutex_lock(&t->lock);
  int stopped = __atomic_load_n(&t->stop, __ATOMIC_ACQUIRE);
  struct deferred **pp = &t->deferred;
  while (!stopped && *pp && (*pp)->due <= d->due)
    pp = &(*pp)->next;
  if (!stopped) {
    d->next = *pp;
    *pp = d;
  }
  pthread_mutex_unlock(&t->lock);
  if (stopped) {
    free(d);
    return SMB3_ECLOSED;
  }
  if (!pthread_equal(pthread_self(), t->thread)) { /* the I/O thread may sleep past the new due time */
    uint64_t one = 1;
    ssize_t w = write(t->efd, &one, sizeof one);
    (void)w;
  }
  return 0;
}

static int loop_once(struct smb3_transport *t) {
  struct epoll_event evs[4];
  int n = epoll_wait(t->epfd, evs, 4, wait_ms(t));
  if (n < 0 && errno != EINTR) return SMB3_EIO;
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    if (evs[i].data.fd == t->efd) {
      drain_eventfd(t->efd);
      t->kick = 1;
      continue;
    }
    if (evs[i].events & EPOLLOUT) t->kick = 1;
    if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) rc = on_readable(t);
  }
  if (rc) return rc;
  /* Submitters send themselves and kick this thread (eventfd) only when they could not finish;
   * EPOLLOUT is armed only while the socket is full. */
  if (t->kick) {
    t->kick = 0;
    int w = flush_output(t);
    if (w < 0) return SMB3_ECLOSED;
    arm_output(t, w == 1);
  }
  if (__atomic_exchange_n(&t->completed_at_submit, 0, __ATOMIC_ACQ_REL))
    take_and_run(t); /* a chain transport_submit completed at once */
  uint64_t now = mono_ns();
  run_deferred(take_due(t, now));
  if (n == 0 || now - t->last_housekeeping >= HOUSEKEEPING_NS) {
    t->last_housekeeping = now;
    pthread_mutex_lock(&t->lock);
    int timed_out = core_check_timeouts(t->core, now);
    pthread_mutex_unlock(&t->lock);
    if (timed_out) return SMB3_ETIMEDOUT;
    if (t->on_tick) t->on_tick(t->cb_arg);
  }
  return 0;
}

static void *io_thread(void *arg) {
  struct smb3_transport *t = arg;
  int dead = 0;
  for (;;) {
    if (__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) break;
    int rc = loop_once(t);
    if (rc && !dead) {
      fail(t, rc);
      dead = 1;
      /* A dead socket stays readable (EOF/HUP) forever: stop watching it, or this loop spins. */
      epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->fd, NULL);
      shutdown(t->fd, SHUT_RDWR);
    }
    if (rc || dead) take_and_run(t); /* failures queue completions; receiving runs its own */
  }
  fail(t, SMB3_ECLOSED);
  take_and_run(t);
  run_deferred(take_due(t, UINT64_MAX)); /* t->stop is set: nothing is added any more */
  take_and_run(t);                       /* (what they submitted failed at once) */
  return NULL;
}

int transport_connect(const char *host, int port, int timeout_ms, size_t sockbuf, struct smb3_core *core,
                      struct smb3_transport **out, char *err, size_t errlen) {
  *out = NULL;
  struct smb3_transport *t = calloc(1, sizeof *t);
  if (!t) return SMB3_ENOMEM;
  t->fd = t->efd = t->epfd = -1;
  t->core = core;
  t->stage = malloc(RX_STAGE);
  int fd = t->stage ? connect_fd(host, port, timeout_ms, sockbuf, err, errlen) : SMB3_ENOMEM;
  if (fd < 0) {
    free(t->stage);
    free(t);
    return fd;
  }
  t->fd = fd;
  t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  t->epfd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev1 = {.events = EPOLLIN, .data.fd = t->fd},
                     ev2 = {.events = EPOLLIN, .data.fd = t->efd};
  int ok = t->efd >= 0 && t->epfd >= 0 && !epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->fd, &ev1) &&
           !epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->efd, &ev2);
  pthread_mutex_init(&t->lock, NULL);
  if (!ok || pthread_create(&t->thread, NULL, io_thread, t)) {
    snprintf(err, errlen, "cannot start the I/O thread: %s", strerror(errno));
    if (t->efd >= 0) close(t->efd);
    if (t->epfd >= 0) close(t->epfd);
    close(t->fd);
    pthread_mutex_destroy(&t->lock);
    free(t->stage);
    free(t);
    return SMB3_ENOMEM;
  }
  *out = t;
  return 0;
}

int transport_submit(struct smb3_transport *t, struct smb3_chain *ch) {
  pthread_mutex_lock(&t->lock);
  int rc = t->stop ? SMB3_ECLOSED : core_submit(t->core, ch, mono_ns());
  /* A chain the core completed at once (SMB3_ERANGE: larger than the server's whole window) has its
   * error set already (no answer can have completed it: the lock is still held). Its callback is
   * an event only the I/O thread runs, and nothing may arrive from the server to wake it. */
  int completed = !rc && ch->error;
  if (completed) __atomic_store_n(&t->completed_at_submit, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&t->lock);
  /* Send from the submitting thread: a request then leaves without waking the I/O thread (one
   * thread hop less per round trip). Only a full socket or an error hands the work to it. */
  if (!rc && flush_output(t) == 0 && !completed) return 0;
  if (!rc) {
    uint64_t one = 1;
    ssize_t w = write(t->efd, &one, sizeof one);
    (void)w; /* a full eventfd counter already means "wake up" */
  }
  return rc;
}

void transport_set_handlers(struct smb3_transport *t, transport_break_cb on_break, transport_tick_cb on_tick,
                            void *arg) {
  pthread_mutex_lock(&t->lock);
  t->on_break = on_break;
  t->on_tick = on_tick;
  t->cb_arg = arg;
  pthread_mutex_unlock(&t->lock);
}

pthread_t transport_thread(const struct smb3_transport *t) {
  return t->thread;
}

void transport_with_core(struct smb3_transport *t, void (*fn)(struct smb3_core *, void *), void *arg) {
  pthread_mutex_lock(&t->lock);
  fn(t->core, arg);
  pthread_mutex_unlock(&t->lock);
}

void transport_close(struct smb3_transport *t) {
  if (!t) return;
  pthread_mutex_lock(&t->lock);
  __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&t->lock);
  uint64_t one = 1;
  ssize_t w = write(t->efd, &one, sizeof one);
  (void)w;
  pthread_join(t->thread, NULL);
  close(t->fd);
  close(t->efd);
  close(t->epfd);
  pthread_mutex_destroy(&t->lock);
  free(t->frame);
  free(t->stage);
  free(t);
}
