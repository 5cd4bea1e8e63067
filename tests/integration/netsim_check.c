/*
 * netsim_check: functional test of tools/netsim.  Usage: netsim_check PATH/TO/netsim
 *
 * Checks that bytes are relayed intact in both directions (50 MiB each way, and several connections
 * at once), that EOF and half-close propagate, that an upstream reset or refusal reaches the client,
 * that the configured one-way delays and rate caps are never undercut, that connections leave no
 * descriptor or thread behind, and that bad arguments, SIGTERM and --max-seconds end netsim as
 * documented.  Timing checks are lower bounds only (the machine may be loaded, never faster); the
 * measured RTT is printed for the record.  Waits that guard against hangs are generous (20 s).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD_MS 20000 /* a step that takes longer than this is considered hung */
#define MIB ((uint64_t)1 << 20)

#define CHECK(cond, ...)                                                                                     \
  do {                                                                                                       \
    if (!(cond)) fail(__LINE__, __VA_ARGS__);                                                                \
  } while (0)

static const char *netsim_path;

/* netsim processes not yet reaped: a failure kills them, or one left behind would keep ctest's
 * output pipe open and turn the failure into a timeout. */
#define MAX_LIVE 16
static pid_t live[MAX_LIVE];

static void live_set(pid_t pid, int on) {
  for (int i = 0; i < MAX_LIVE; i++)
    if (on ? live[i] == 0 : live[i] == pid) {
      live[i] = on ? pid : 0;
      return;
    }
}

static void fail(int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "netsim_check:%d: FAIL: ", line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  for (int i = 0; i < MAX_LIVE; i++)
    if (live[i] > 0) kill(live[i], SIGKILL);
  exit(1);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* ---- processes ---------------------------------------------------------------------------------- */

struct netsim {
  pid_t pid;
  int port;
};

/* Waits up to GUARD_MS for pid to exit; returns its wait status. */
static int wait_exit(pid_t pid) {
  int status;
  for (int ms = 0; ms < GUARD_MS; ms += 5) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    CHECK(r >= 0, "waitpid: %s", strerror(errno));
    if (r == pid) {
      live_set(pid, 0);
      return status;
    }
    sleep_ms(5);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  live_set(pid, 0);
  fail(__LINE__, "netsim pid %d did not exit", (int)pid);
  return -1;
}

/* Runs netsim with argv; its stdout goes to out_fd[0] and stderr to err_fd (if >= 0). */
static pid_t spawn(char *const argv[], int out_fd, int err_fd) {
  pid_t pid = fork();
  CHECK(pid >= 0, "fork: %s", strerror(errno));
  if (pid == 0) {
    if (out_fd >= 0) dup2(out_fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    execv(netsim_path, argv);
    _exit(127);
  }
  live_set(pid, 1);
  return pid;
}

/* Reads one line from fd within GUARD_MS. */
static void read_line(int fd, char *buf, size_t size) {
  size_t n = 0;
  while (n + 1 < size) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CHECK(poll(&p, 1, GUARD_MS) == 1, "no output from netsim");
    ssize_t r = read(fd, buf + n, 1);
    if (r <= 0 || buf[n] == '\n') break;
    n++;
  }
  buf[n] = '\0';
}

/* Starts "netsim --listen 127.0.0.1:0 --to 127.0.0.1:to_port --quiet" plus extra (NULL-terminated). */
static struct netsim netsim_start(int to_port, const char *extra[]) {
  char to[32], line[128];
  const char *argv[32] = {netsim_path, "--listen", "127.0.0.1:0", "--to", to, "--quiet"};
  int argc = 6;
  snprintf(to, sizeof to, "127.0.0.1:%d", to_port);
  for (int i = 0; extra && extra[i]; i++)
    argv[argc++] = extra[i];
  int out[2];
  CHECK(pipe2(out, O_CLOEXEC) == 0, "pipe");
  struct netsim ns = {.pid = spawn((char *const *)argv, out[1], -1)};
  close(out[1]);
  read_line(out[0], line, sizeof line);
  close(out[0]);
  CHECK(sscanf(line, "listening 127.0.0.1:%d", &ns.port) == 1 && ns.port > 0,
        "first stdout line is '%s', want 'listening 127.0.0.1:PORT'", line);
  return ns;
}

static void netsim_stop(struct netsim *ns) {
  CHECK(kill(ns->pid, SIGTERM) == 0, "kill: %s", strerror(errno));
  int st = wait_exit(ns->pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "netsim did not exit cleanly on SIGTERM (status %#x)", st);
}

static int count_dir(const char *path) {
  DIR *d = opendir(path);
  int n = 0;
  CHECK(d, "opendir %s: %s", path, strerror(errno));
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

struct usage {
  int fds, threads;
};

static struct usage usage_of(pid_t pid) {
  char path[64];
  struct usage u;
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  u.fds = count_dir(path);
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  u.threads = count_dir(path);
  return u;
}

/* After every connection has closed, netsim must be back to its idle descriptors and threads. */
static void check_no_leaks(const struct netsim *ns, struct usage idle) {
  struct usage u = usage_of(ns->pid);
  for (int ms = 0; ms < GUARD_MS && (u.fds != idle.fds || u.threads != idle.threads); ms += 10) {
    sleep_ms(10);
    u = usage_of(ns->pid);
  }
  CHECK(u.fds == idle.fds && u.threads == idle.threads,
        "leak: %d fds / %d threads after all connections closed, %d / %d when idle", u.fds, u.threads,
        idle.fds, idle.threads);
}

/* ---- sockets ------------------------------------------------------------------------------------ */

static int listen_any(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 64) == 0 &&
            getsockname(fd, (struct sockaddr *)&a, &len) == 0,
        "listen: %s", strerror(errno));
  *port = ntohs(a.sin_port);
  return fd;
}

static void sock_guard(int fd) {
  int one = 1;
  struct timeval tv = {GUARD_MS / 1000, 0};
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {
      .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect :%d: %s", port,
        strerror(errno));
  sock_guard(fd);
  return fd;
}

static int accept_guarded(int lfd) {
  struct pollfd p = {.fd = lfd, .events = POLLIN};
  CHECK(poll(&p, 1, GUARD_MS) == 1, "netsim did not connect upstream");
  int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
  CHECK(fd >= 0, "accept: %s", strerror(errno));
  sock_guard(fd);
  return fd;
}

static void write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    CHECK(w > 0, "write: %s", w < 0 ? strerror(errno) : "0");
    p += w;
    n -= (size_t)w;
  }
}

static void read_exact(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    CHECK(r > 0, "read: %s", r < 0 ? strerror(errno) : "early EOF");
    p += r;
    n -= (size_t)r;
  }
}

static void expect_eof(int fd) {
  char c;
  ssize_t r = read(fd, &c, 1);
  CHECK(r == 0, "want EOF, read returned %zd (%s)", r, r < 0 ? strerror(errno) : "data");
}

/* ---- deterministic byte streams ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* splitmix64 finalizer */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Byte off of stream seed is byte (off % 8) of mix64(seed * 2^40 + off / 8). */
static void stream_fill(uint64_t seed, uint64_t off, unsigned char *buf, size_t n) {
  uint64_t word = mix64((seed << 40) + off / 8);
  for (size_t i = 0; i < n; i++, off++) {
    if (i > 0 && off % 8 == 0) word = mix64((seed << 40) + off / 8);
    buf[i] = (unsigned char)(word >> (8 * (off % 8)));
  }
}

struct xfer {
  int fd;
  uint64_t seed, total;
  uint64_t done;
  const char *error; /* NULL when the transfer was intact */
};

/* Sends the stream in writes of varying size (1 byte .. 256 KiB), then half-closes. */
static void *xfer_send(void *arg) {
  struct xfer *x = arg;
  static const size_t sizes[] = {1, 7, 100, 1460, 4096, 65536, 100000, 262144};
  unsigned char *buf = malloc(262144);
  for (unsigned i = 0; x->done < x->total && !x->error; i++) {
    size_t n = sizes[mix64(x->seed + i) % 8];
    if (n > x->total - x->done) n = (size_t)(x->total - x->done);
    stream_fill(x->seed, x->done, buf, n);
    for (size_t off = 0; off < n;) {
      ssize_t w = write(x->fd, buf + off, n - off);
      if (w <= 0) {
        x->error = "write failed";
        break;
      }
      off += (size_t)w;
      x->done += (uint64_t)w;
    }
  }
  if (!x->error && shutdown(x->fd, SHUT_WR) != 0) x->error = "shutdown failed";
  free(buf);
  return NULL;
}

/* Receives until EOF and compares every byte with the expected stream. */
static void *xfer_recv(void *arg) {
  struct xfer *x = arg;
  unsigned char *buf = malloc(131072), *want = malloc(131072);
  for (;;) {
    ssize_t r = read(x->fd, buf, 131072);
    if (r < 0) {
      x->error = "read failed";
      break;
    }
    if (r == 0) break;
    stream_fill(x->seed, x->done, want, (size_t)r);
    if (x->done + (uint64_t)r > x->total || memcmp(buf, want, (size_t)r) != 0) {
      x->error = "wrong bytes";
      break;
    }
    x->done += (uint64_t)r;
  }
  if (!x->error && x->done != x->total) x->error = "EOF before the end of the stream";
  free(buf);
  free(want);
  return NULL;
}

/* One relayed connection carrying a stream each way: [0] client->server, [1] server->client. */
struct pair {
  uint64_t id;
  int cfd, sfd;
  struct xfer up_tx, up_rx, down_tx, down_rx;
  pthread_t t[4];
};

static void pair_start_client(struct pair *p, int port, uint64_t bytes) {
  p->cfd = connect_to(port);
  write_all(p->cfd, &p->id, sizeof p->id); /* tells the server side which pair it is */
  p->up_tx = (struct xfer){.fd = p->cfd, .seed = 2 * p->id + 1, .total = bytes};
  p->down_rx = (struct xfer){.fd = p->cfd, .seed = 2 * p->id + 2, .total = bytes};
  pthread_create(&p->t[0], NULL, xfer_send, &p->up_tx);
  pthread_create(&p->t[1], NULL, xfer_recv, &p->down_rx);
}

static void pair_start_server(struct pair *p, int sfd, uint64_t bytes) {
  p->sfd = sfd;
  p->up_rx = (struct xfer){.fd = sfd, .seed = 2 * p->id + 1, .total = bytes};
  p->down_tx = (struct xfer){.fd = sfd, .seed = 2 * p->id + 2, .total = bytes};
  pthread_create(&p->t[2], NULL, xfer_recv, &p->up_rx);
  pthread_create(&p->t[3], NULL, xfer_send, &p->down_tx);
}

static void pair_finish(struct pair *p) {
  for (int i = 0; i < 4; i++)
    pthread_join(p->t[i], NULL);
  CHECK(!p->up_tx.error && !p->up_rx.error, "conn %" PRIu64 " client->server: %s after %" PRIu64 " bytes",
        p->id, p->up_tx.error ? p->up_tx.error : p->up_rx.error, p->up_rx.done);
  CHECK(!p->down_tx.error && !p->down_rx.error, "conn %" PRIu64 " server->client: %s after %" PRIu64 " bytes",
        p->id, p->down_tx.error ? p->down_tx.error : p->down_rx.error, p->down_rx.done);
  close(p->cfd);
  close(p->sfd);
}

/* n connections at once, each carrying `bytes` each way, then EOF each way. */
static void check_streams(const struct netsim *ns, int lfd, int n, uint64_t bytes) {
  struct pair *pairs = calloc((size_t)n, sizeof *pairs);
  for (int i = 0; i < n; i++) {
    pairs[i].id = (uint64_t)i + 1;
    pair_start_client(&pairs[i], ns->port, bytes);
  }
  for (int i = 0; i < n; i++) { /* netsim may connect upstream in any order */
    int sfd = accept_guarded(lfd);
    uint64_t id;
    read_exact(sfd, &id, sizeof id);
    CHECK(id >= 1 && id <= (uint64_t)n && pairs[id - 1].sfd == 0, "bad connection id %" PRIu64, id);
    pair_start_server(&pairs[id - 1], sfd, bytes);
  }
  for (int i = 0; i < n; i++)
    pair_finish(&pairs[i]);
  free(pairs);
  printf("ok: %d connection(s) x %" PRIu64 " MiB each way, intact, EOF propagated\n", n, bytes / MIB);
}

/* Client half-closes; the server sees EOF and can still answer; then the client sees EOF. */
static void check_half_close(const struct netsim *ns, int lfd) {
  int c = connect_to(ns->port), s = accept_guarded(lfd);
  char buf[4];
  write_all(c, "ping", 4);
  shutdown(c, SHUT_WR);
  read_exact(s, buf, 4);
  CHECK(memcmp(buf, "ping", 4) == 0, "ping garbled");
  expect_eof(s);
  write_all(s, "pong", 4);
  close(s);
  read_exact(c, buf, 4);
  CHECK(memcmp(buf, "pong", 4) == 0, "pong garbled");
  expect_eof(c);
  close(c);
  printf("ok: half-close\n");
}

/* A reset by the server must close the client's side too (EOF or ECONNRESET, not a hang). */
static void check_reset(const struct netsim *ns, int lfd) {
  int c = connect_to(ns->port), s = accept_guarded(lfd);
  struct linger l = {.l_onoff = 1, .l_linger = 0};
  setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(s);
  char ch;
  ssize_t r = read(c, &ch, 1);
  CHECK(r == 0 || (r < 0 && errno == ECONNRESET), "after upstream reset read gave %zd (%s)", r,
        r < 0 ? strerror(errno) : "data");
  close(c);
  printf("ok: upstream reset closes the client connection\n");
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* 1-byte ping-pong; each one-way time must be at least the configured delay of that direction. */
static void check_delay(const struct netsim *ns, int lfd, double up_ms, double down_ms, int iters) {
  int c = connect_to(ns->port), s = accept_guarded(lfd);
  int64_t *rtt = calloc((size_t)iters, sizeof *rtt), up_min = INT64_MAX, down_min = INT64_MAX, sum = 0;
  char b = 'x';
  for (int i = 0; i < iters; i++) {
    int64_t t0 = now_ns();
    write_all(c, &b, 1);
    read_exact(s, &b, 1);
    int64_t t1 = now_ns();
    write_all(s, &b, 1);
    read_exact(c, &b, 1);
    int64_t t2 = now_ns();
    up_min = t1 - t0 < up_min ? t1 - t0 : up_min;
    down_min = t2 - t1 < down_min ? t2 - t1 : down_min;
    rtt[i] = t2 - t0;
    sum += rtt[i];
  }
  close(c);
  close(s);
  qsort(rtt, (size_t)iters, sizeof *rtt, cmp_i64);
  printf("ok: delay up %.3f ms down %.3f ms: %d round trips, RTT mean %.3f ms, min %.3f, median %.3f, "
         "p99 %.3f, max %.3f; one-way min up %.3f down %.3f ms\n",
         up_ms, down_ms, iters, (double)sum / iters / 1e6, (double)rtt[0] / 1e6, (double)rtt[iters / 2] / 1e6,
         (double)rtt[iters * 99 / 100] / 1e6, (double)rtt[iters - 1] / 1e6, (double)up_min / 1e6,
         (double)down_min / 1e6);
  CHECK(up_min >= (int64_t)(up_ms * 1e6), "client->server took %.3f ms < configured %.3f ms",
        (double)up_min / 1e6, up_ms);
  CHECK(down_min >= (int64_t)(down_ms * 1e6), "server->client took %.3f ms < configured %.3f ms",
        (double)down_min / 1e6, down_ms);
  free(rtt);
}

/* Sends `bytes` from tx to rx; returns the seconds from the first write to the last byte read. */
static double timed_transfer(int tx, int rx, uint64_t bytes) {
  struct xfer send = {.fd = tx, .seed = 99, .total = bytes}, recv = {.fd = rx, .seed = 99, .total = bytes};
  pthread_t t;
  int64_t t0 = now_ns();
  pthread_create(&t, NULL, xfer_send, &send);
  xfer_recv(&recv);
  double secs = (double)(now_ns() - t0) / 1e9;
  pthread_join(t, NULL);
  CHECK(!send.error && !recv.error, "rate transfer: %s", send.error ? send.error : recv.error);
  return secs;
}

/* A capped direction can never deliver more than burst + rate * t bytes in t seconds. */
static void check_rate(const struct netsim *ns, int lfd, double up_bps, double down_bps, double burst) {
  int c = connect_to(ns->port), s = accept_guarded(lfd);
  uint64_t bytes = 8 * MIB;
  double up = timed_transfer(c, s, bytes); /* half-closes c -> s */
  double down = timed_transfer(s, c, bytes);
  close(c);
  close(s);
  double up_min = ((double)bytes - burst) * 8 / up_bps, down_min = ((double)bytes - burst) * 8 / down_bps;
  printf(
      "ok: rate caps: 8 MiB up in %.3f s (%.1f Mbit/s, cap %.0f), down in %.3f s (%.1f Mbit/s, cap %.0f)\n",
      up, (double)bytes * 8 / up / 1e6, up_bps / 1e6, down, (double)bytes * 8 / down / 1e6, down_bps / 1e6);
  CHECK(up >= up_min, "client->server: %.3f s < %.3f s allowed by the cap", up, up_min);
  CHECK(down >= down_min, "server->client: %.3f s < %.3f s allowed by the cap", down, down_min);
}

/* ---- process-level behaviour ------------------------------------------------------------------- */

static void check_bad_args(void) {
  int err[2];
  char line[256];
  CHECK(pipe2(err, O_CLOEXEC) == 0, "pipe");
  char *argv[] = {(char *)netsim_path, "--listen", "127.0.0.1:0", "--to",
                  "127.0.0.1:1",       "--rate",   "1gbt",        NULL};
  pid_t pid = spawn(argv, -1, err[1]);
  close(err[1]);
  read_line(err[0], line, sizeof line);
  close(err[0]);
  int st = wait_exit(pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) != 0, "netsim accepted --rate 1gbt");
  CHECK(strcmp(line, "netsim: bad --rate '1gbt'") == 0, "unexpected error message '%s'", line);
  printf("ok: bad argument rejected: %s\n", line);
}

static void check_max_seconds(int to_port) {
  const char *extra[] = {"--max-seconds", "0.2", NULL};
  struct netsim ns = netsim_start(to_port, extra);
  int st = wait_exit(ns.pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--max-seconds: status %#x", st);
  printf("ok: --max-seconds exits cleanly\n");
}

static void check_refused(void) {
  int dead_port, dead = listen_any(&dead_port);
  close(dead); /* nothing listens there now */
  struct netsim ns = netsim_start(dead_port, NULL);
  int c = connect_to(ns.port);
  char ch;
  ssize_t r = read(c, &ch, 1);
  CHECK(r == 0 || (r < 0 && errno == ECONNRESET), "refused upstream: read gave %zd (%s)", r,
        r < 0 ? strerror(errno) : "data");
  close(c);
  netsim_stop(&ns);
  printf("ok: refused upstream closes the client connection\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: netsim_check PATH/TO/netsim\n");
    return 2;
  }
  netsim_path = argv[1];
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  int up_port, lfd = listen_any(&up_port);

  check_bad_args();
  check_max_seconds(up_port);
  check_refused();

  const char *sym[] = {"--delay-ms", "0.5", NULL};
  struct netsim ns = netsim_start(up_port, sym);
  struct usage idle = usage_of(ns.pid);
  check_streams(&ns, lfd, 1, 50 * MIB);
  check_streams(&ns, lfd, 4, 4 * MIB);
  check_half_close(&ns, lfd);
  check_reset(&ns, lfd);
  check_delay(&ns, lfd, 0.5, 0.5, 1000);
  check_no_leaks(&ns, idle);
  netsim_stop(&ns);

  const char *asym[] = {"--delay-up-ms", "2", "--delay-down-ms", "0.25", NULL};
  ns = netsim_start(up_port, asym);
  check_delay(&ns, lfd, 2, 0.25, 50);
  netsim_stop(&ns);

  const char *rate[] = {"--rate-up", "200mbit", "--rate-down", "100mbit", "--burst", "64k", NULL};
  ns = netsim_start(up_port, rate);
  idle = usage_of(ns.pid);
  check_rate(&ns, lfd, 200e6, 100e6, 65536);
  check_no_leaks(&ns, idle);
  netsim_stop(&ns);
  printf("ok: no descriptor or thread leaks; SIGTERM exits cleanly\n");
  close(lfd);
  return 0;
}
