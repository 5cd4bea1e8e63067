/*
 * netsim: a TCP relay for loopback testing that adds a one-way delay and a bandwidth cap to each
 * direction of every connection it carries. The kernel here has no netem, so benchmarks and tests run
 * the client against "netsim --listen A --to smbd" instead. Usage and design notes: tools/README.md.
 *
 * Model, per direction (up = accepting side -> --to side, down = the reverse):
 *   - every read() of the source is one timestamped chunk in a byte ring; a chunk whose newest byte
 *     reached the relay's socket at time t (SO_TIMESTAMPNS, not the later time the thread read it) is
 *     released at t + delay. The delay is added once per byte, not once per read, so a bulk stream is
 *     limited only by the rate while each request/response pays the delay once each way.
 *   - released bytes leave through a token bucket (rate, burst = max(64 KiB, 50 us of the rate)).
 *     The order "delay, then pace" gives the same departure times as "serialize at the rate, then
 *     propagate", i.e. a link with that bandwidth and that one-way latency.
 *   - when the ring is full, the source is not read (backpressure through the TCP window). The ring is
 *     sized from 2 * rate * delay + 4 MiB (minimum 8 MiB) so the cap, not the ring, limits a stream.
 *   - one thread per direction; sockets are non-blocking and the thread sleeps in poll() on the source,
 *     the destination and a timerfd armed at the absolute CLOCK_MONOTONIC time of the next release or
 *     of the next token. Timer wake-ups on these VMs come 15-100+ us late, so request/response releases
 *     are armed a learned amount early and finished by spinning (dir_deadline), and time lost to late
 *     wake-ups is credited to the bucket (pacer_refill).
 *   - EOF on the source becomes shutdown(SHUT_WR) on the destination once the ring has drained; any
 *     error resets both sides. The last direction thread to finish closes everything.
 * Known limits: TCP itself runs over plain loopback on each side of the relay, so the endpoints' TCP
 * does not see the added RTT (no slow-start or window effects of a real long path), and the rate counts
 * payload bytes only (no per-packet header overhead, so 1gbit carries 125 MB/s of payload).
 *
 * Measured on the 2-core development VM, idle, iperf3 -t 5 -l 1M, Gbit/s at the receiver (details and
 * ranges in tools/README.md): direct loopback 25-43; through netsim uncapped 15-17 (21 with
 * --delay-ms 0.5); --rate 1gbit 0.99-1.0; --rate 10gbit 9.7-9.9 (9.5-9.9 with --delay-ms 0.5).
 * 1-byte ping-pong with --delay-ms 0.5: RTT min 1.025 ms, median 1.036-1.045 ms (direct: 8.5 us).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tamper.h"

#define NSEC_PER_SEC 1000000000LL
#define READ_MAX ((size_t)1 << 20)  /* largest single read from a source */
#define WRITE_MAX ((size_t)4 << 20) /* largest single write to a destination */
#define CHUNK_SLOTS 16384u          /* unreleased reads per direction; power of two */
#define BURST_MIN ((size_t)64 << 10)
#define BURST_NS 50000.0   /* default bucket depth: 50 us worth of the rate */
#define LATE_CREDIT 8.0    /* credit kept across a late pacing wake-up: 8 bursts ... */
#define LATE_CREDIT_NS 2e6 /* ... or 2 ms worth of the rate, whichever is more */
#define QUEUE_MIN ((size_t)8 << 20)
#define QUEUE_HEADROOM ((size_t)4 << 20)
#define QUEUE_AUTO_MAX ((size_t)256 << 20)
#define QUEUE_MAX ((size_t)1 << 30)
#define UNCAPPED_SIZING_RATE 2.5e9 /* bytes/s assumed when sizing the ring of an uncapped direction */
#define SOCK_BUF (4 << 20)
#define THREAD_STACK ((size_t)512 << 10)
#define SPIN_MAX_US 200.0 /* default cap of the early wake-up before a release (see dir_deadline) */
#define EARLY_INIT_NS 20000
#define EARLY_UP_NS 3000 /* with EARLY_DOWN_NS: early_ns tracks the 75th percentile of lateness */
#define EARLY_DOWN_NS 1000
#define SPIN_CHUNKS 4                /* spin only with this few reads in flight (not for bulk streams) */
#define SPIN_SHARE 0.10              /* spinning takes at most this share of a direction's time, */
#define SPIN_BUDGET_MAX_NS 2000000.0 /* saved up for at most this long */

/* ---- configuration ---------------------------------------------------------------------------- */

struct dir_cfg {
  double rate; /* bytes per second, 0 = unlimited */
  int64_t delay_ns;
  size_t burst; /* token bucket depth, bytes */
  size_t queue; /* ring size, bytes, power of two */
};

struct config {
  struct sockaddr_storage listen_addr, to_addr;
  socklen_t listen_len, to_len;
  const char *to_text;
  struct dir_cfg up, down;
  double max_seconds; /* 0 = run until a signal */
  int64_t spin_max_ns;
  bool quiet;
  struct tamper *tamper; /* --rule: relay whole SMB2 messages through the rules (tamper.c) */
  bool trace;            /* --trace: log every message of a --rule connection */
};

/* Command line as given; NAN / 0 mean "not given". */
struct args {
  const char *listen, *to;
  double delay_ms, delay_up_ms, delay_down_ms;
  double rate, rate_up, rate_down; /* bytes per second */
  size_t burst, queue;
  double max_seconds, spin_max_us;
  bool quiet, trace;
  struct tamper *tamper;
};

struct unit {
  const char *name;
  double scale;
};

/* tc(8) conventions: "bit" units are bits/s, "bps" units are BYTES/s; k/m/g are SI, ki/mi/gi binary. */
static const struct unit rate_units[] = {
    {"", 0.125},
    {"bit", 0.125},
    {"kbit", 125.0},
    {"mbit", 125e3},
    {"gbit", 125e6},
    {"tbit", 125e9},
    {"kibit", 128.0},
    {"mibit", 131072.0},
    {"gibit", 134217728.0},
    {"tibit", 137438953472.0},
    {"bps", 1.0},
    {"kbps", 1e3},
    {"mbps", 1e6},
    {"gbps", 1e9},
    {"tbps", 1e12},
    {"kibps", 1024.0},
    {"mibps", 1048576.0},
    {"gibps", 1073741824.0},
};

static const struct unit size_units[] = {
    {"", 1.0},           {"b", 1.0},           {"k", 1024.0},         {"kb", 1024.0},
    {"kib", 1024.0},     {"m", 1048576.0},     {"mb", 1048576.0},     {"mib", 1048576.0},
    {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0},
};

static void usage(FILE *f) {
  fputs("usage: netsim --listen HOST:PORT --to HOST:PORT [options]\n"
        "\n"
        "TCP relay that adds a one-way delay and a bandwidth cap to each direction of every connection.\n"
        "\"up\" is the accepting side -> the --to side (client to server), \"down\" the reverse.\n"
        "\n"
        "  --listen HOST:PORT  accept connections here; port 0 picks a free port. The first line on\n"
        "                      stdout is always \"listening HOST:PORT\".\n"
        "  --to HOST:PORT      for each accepted connection, connect here and relay both directions\n"
        "  --delay-ms MS       one-way delay added to EACH direction (the RTT grows by 2*MS); default 0\n"
        "  --delay-up-ms MS    one-way delay client -> server (overrides --delay-ms)\n"
        "  --delay-down-ms MS  one-way delay server -> client (overrides --delay-ms)\n"
        "  --rate RATE         bandwidth cap of each direction; 0 or absent means unlimited\n"
        "  --rate-up RATE      cap client -> server (overrides --rate)\n"
        "  --rate-down RATE    cap server -> client (overrides --rate)\n"
        "  --burst SIZE        token bucket depth; default max(64k, 50 us worth of the rate)\n"
        "  --queue SIZE        per-direction queue bound, rounded up to a power of two;\n"
        "                      default max(8m, 2 * rate * delay + 4m)\n"
        "  --spin-max-us N     wake up to N us before a delayed chunk is due and spin on the clock\n"
        "                      until it is (timer wake-ups here are 15-100+ us late); default 200,\n"
        "                      0 trades that accuracy for no spinning\n"
        "  --max-seconds N     exit by itself after N seconds (default: run until SIGTERM/SIGINT)\n"
        "  --rule RULE         act on chosen SMB2 messages (repeatable; syntax in tools/README.md),\n"
        "                      e.g. dir=s2c,cmd=negotiate,clear=secmode:0x2; the relay then passes\n"
        "                      whole messages and takes no delay or rate options\n"
        "  --trace             log every SMB2 message (direction, command, status, flags); implies\n"
        "                      the message relay of --rule\n"
        "  --quiet             do not log connections on stderr\n"
        "  --help              show this help\n"
        "\n"
        "RATE is a number of bits/s, or a number with a unit as in tc(8): bit kbit mbit gbit tbit\n"
        "(SI bits/s), kibit mibit gibit (binary), bps kbps mbps gbps (BYTES/s), kibps mibps gibps.\n"
        "SIZE is a number of bytes with an optional k, m or g (binary) suffix.\n",
        f);
}

/* Parses a non-negative decimal number followed by one of units[] (case-insensitive). */
static int parse_with_unit(const char *s, const struct unit *units, size_t n_units, double *out) {
  if (!((*s >= '0' && *s <= '9') || *s == '.')) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || !isfinite(v) || v < 0) return -1;
  for (size_t i = 0; i < n_units; i++) {
    if (strcasecmp(end, units[i].name) == 0) {
      *out = v * units[i].scale;
      return isfinite(*out) ? 0 : -1;
    }
  }
  return -1;
}

static int parse_rate(const char *s, double *bytes_per_sec) {
  return parse_with_unit(s, rate_units, sizeof rate_units / sizeof rate_units[0], bytes_per_sec);
}

static int parse_size(const char *s, size_t *bytes) {
  double v;
  if (parse_with_unit(s, size_units, sizeof size_units / sizeof size_units[0], &v) < 0) return -1;
  if (v < 1 || v > (double)QUEUE_MAX) return -1;
  *bytes = (size_t)v;
  return 0;
}

/* A plain number in [0, max]. */
static int parse_number(const char *s, double max, double *out) {
  static const struct unit none[] = {{"", 1.0}};
  if (parse_with_unit(s, none, 1, out) < 0 || *out > max) return -1;
  return 0;
}

/* "HOST:PORT" or "[V6]:PORT" -> socket address. */
static int parse_addr(const char *spec, bool passive, struct sockaddr_storage *ss, socklen_t *len) {
  char host[256];
  const char *colon = strrchr(spec, ':');
  if (!colon || colon == spec || colon[1] == '\0') return -1;
  size_t hlen = (size_t)(colon - spec);
  const char *h = spec;
  if (spec[0] == '[') {
    if (hlen < 3 || colon[-1] != ']') return -1;
    h = spec + 1;
    hlen -= 2;
  }
  if (hlen >= sizeof host) return -1;
  memcpy(host, h, hlen);
  host[hlen] = '\0';
  for (const char *p = colon + 1; *p; p++)
    if (*p < '0' || *p > '9') return -1;
  if (atol(colon + 1) > 65535) return -1;

  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)};
  struct addrinfo *res;
  if (getaddrinfo(host, colon + 1, &hints, &res) != 0) return -1;
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

static int bad_arg(const char *opt, const char *value) {
  fprintf(stderr, "netsim: bad %s '%s'\n", opt, value);
  return 2;
}

enum arg_kind { ARG_TEXT, ARG_MS, ARG_RATE, ARG_SIZE, ARG_SECONDS, ARG_US };

/* Every option that takes a value: where it goes in struct args and how it is parsed. */
static const struct arg_spec {
  const char *name;
  enum arg_kind kind;
  size_t offset;
} arg_specs[] = {
    {"listen", ARG_TEXT, offsetof(struct args, listen)},
    {"to", ARG_TEXT, offsetof(struct args, to)},
    {"delay-ms", ARG_MS, offsetof(struct args, delay_ms)},
    {"delay-up-ms", ARG_MS, offsetof(struct args, delay_up_ms)},
    {"delay-down-ms", ARG_MS, offsetof(struct args, delay_down_ms)},
    {"rate", ARG_RATE, offsetof(struct args, rate)},
    {"rate-up", ARG_RATE, offsetof(struct args, rate_up)},
    {"rate-down", ARG_RATE, offsetof(struct args, rate_down)},
    {"burst", ARG_SIZE, offsetof(struct args, burst)},
    {"queue", ARG_SIZE, offsetof(struct args, queue)},
    {"max-seconds", ARG_SECONDS, offsetof(struct args, max_seconds)},
    {"spin-max-us", ARG_US, offsetof(struct args, spin_max_us)},
};
#define N_ARG_SPECS (sizeof arg_specs / sizeof arg_specs[0])
#define ARG_VAL 256 /* getopt_long value of arg_specs[0]; distinct values keep abbreviations unambiguous */

/* Parses one option's value into a; returns 0 or an exit code. */
static int args_set(struct args *a, const struct arg_spec *spec, const char *v) {
  void *field = (char *)a + spec->offset;
  int rc = 0;
  switch (spec->kind) {
  case ARG_TEXT:
    *(const char **)field = v;
    break;
  case ARG_MS:
    rc = parse_number(v, 3600e3, field);
    break;
  case ARG_RATE:
    rc = parse_rate(v, field);
    break;
  case ARG_SIZE:
    rc = parse_size(v, field);
    break;
  case ARG_SECONDS:
    rc = parse_number(v, 1e9, field);
    break;
  case ARG_US:
    rc = parse_number(v, 1e4, field);
    break;
  }
  if (rc == 0) return 0;
  char name[32];
  snprintf(name, sizeof name, "--%s", spec->name);
  return bad_arg(name, v);
}

/* Returns -1 to go on, or the exit code (0 after --help, 2 on a bad command line). */
static int args_parse(int argc, char **argv, struct args *a) {
  struct option opts[N_ARG_SPECS + 5] = {{"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"rule", required_argument, NULL, 'r'},
                                         {"trace", no_argument, NULL, 't'}};
  for (size_t i = 0; i < N_ARG_SPECS; i++)
    opts[i + 4] = (struct option){arg_specs[i].name, required_argument, NULL, ARG_VAL + (int)i};
  *a = (struct args){.delay_ms = 0,
                     .delay_up_ms = NAN,
                     .delay_down_ms = NAN,
                     .rate = 0,
                     .rate_up = NAN,
                     .rate_down = NAN,
                     .spin_max_us = SPIN_MAX_US};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    int rc = 0;
    switch (c) {
    case 'q':
      a->quiet = true;
      break;
    case 't':
      a->trace = true;
      break;
    case 'r': {
      char err[512];
      if (tamper_rule_add(&a->tamper, optarg, err, sizeof err) < 0) {
        fprintf(stderr, "netsim: bad --rule: %s\n", err);
        return 2;
      }
      break;
    }
    case 'h':
      usage(stdout);
      return 0;
    case ':':
      fprintf(stderr, "netsim: option '%s' needs a value (see --help)\n", argv[optind - 1]);
      return 2;
    default:
      if (c >= ARG_VAL && c < ARG_VAL + (int)N_ARG_SPECS) {
        rc = args_set(a, &arg_specs[c - ARG_VAL], optarg);
        break;
      }
      fprintf(stderr, "netsim: unknown or ambiguous option '%s' (see --help)\n", argv[optind - 1]);
      return 2;
    }
    if (rc != 0) return rc;
  }
  if (optind < argc) {
    fprintf(stderr, "netsim: unexpected argument '%s' (see --help)\n", argv[optind]);
    return 2;
  }
  if (!a->listen || !a->to) {
    fprintf(stderr, "netsim: --listen and --to are required (see --help)\n");
    return 2;
  }
  if (a->trace && !a->tamper && !(a->tamper = tamper_new())) {
    fprintf(stderr, "netsim: out of memory\n");
    return 1;
  }
  if (a->tamper && (a->delay_ms || !isnan(a->delay_up_ms) || !isnan(a->delay_down_ms) || a->rate ||
                    !isnan(a->rate_up) || !isnan(a->rate_down))) {
    fprintf(stderr, "netsim: --rule does not combine with delay or rate options\n");
    return 2;
  }
  return -1;
}

static size_t pow2_at_least(double want, size_t lo, size_t hi) {
  size_t q = lo;
  while ((double)q < want && q < hi)
    q <<= 1;
  return q;
}

static struct dir_cfg dir_cfg_make(double rate, double delay_ms, const struct args *a) {
  struct dir_cfg d = {.rate = rate, .delay_ns = (int64_t)llround(delay_ms * 1e6)};
  double burst = rate * BURST_NS / 1e9;
  d.burst = a->burst ? a->burst : burst > (double)BURST_MIN ? (size_t)burst : BURST_MIN;
  double sizing_rate = rate > 0 ? rate : UNCAPPED_SIZING_RATE;
  double want = 2.0 * sizing_rate * (double)d.delay_ns / 1e9 + (double)QUEUE_HEADROOM;
  d.queue = a->queue ? pow2_at_least((double)a->queue, (size_t)64 << 10, QUEUE_MAX)
                     : pow2_at_least(want, QUEUE_MIN, QUEUE_AUTO_MAX);
  return d;
}

static int config_make(const struct args *a, struct config *cfg) {
  *cfg = (struct config){.to_text = a->to,
                         .max_seconds = a->max_seconds,
                         .quiet = a->quiet,
                         .tamper = a->tamper,
                         .trace = a->trace,
                         .spin_max_ns = (int64_t)(a->spin_max_us * 1e3)};
  if (parse_addr(a->listen, true, &cfg->listen_addr, &cfg->listen_len) < 0)
    return bad_arg("--listen", a->listen);
  if (parse_addr(a->to, false, &cfg->to_addr, &cfg->to_len) < 0) return bad_arg("--to", a->to);
  cfg->up = dir_cfg_make(isnan(a->rate_up) ? a->rate : a->rate_up,
                         isnan(a->delay_up_ms) ? a->delay_ms : a->delay_up_ms, a);
  cfg->down = dir_cfg_make(isnan(a->rate_down) ? a->rate : a->rate_down,
                           isnan(a->delay_down_ms) ? a->delay_ms : a->delay_down_ms, a);
  return 0;
}

/* ---- the byte ring with timestamped chunks ------------------------------------------------------ */

struct chunk {
  uint64_t end;       /* stream offset just past this read */
  int64_t release_ns; /* CLOCK_MONOTONIC time at which it may leave */
};

/* head <= released <= tail are byte offsets into the stream; the ring holds [head, tail). */
struct queue {
  char *buf;
  uint64_t mask;        /* ring size - 1 */
  uint64_t head;        /* written to the destination */
  uint64_t released;    /* delay elapsed */
  uint64_t tail;        /* read from the source */
  int64_t ready_ns;     /* release time of the oldest released, unsent chunk (if released > head) */
  struct chunk *chunks; /* unreleased reads, oldest first */
  uint32_t chunk_first, chunk_count;
};

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int queue_init(struct queue *q, size_t size) {
  q->buf = malloc(size);
  q->chunks = malloc(CHUNK_SLOTS * sizeof *q->chunks);
  q->mask = size - 1;
  return q->buf && q->chunks ? 0 : -1;
}

static void queue_free(struct queue *q) {
  free(q->buf);
  free(q->chunks);
}

static size_t queue_space(const struct queue *q) {
  return (size_t)(q->mask + 1 - (q->tail - q->head));
}

/*
 * A full ring is refilled only once a good part of it is free again: when the destination is the
 * bottleneck this turns many small reads (and as many wake-ups of the sender) into few large ones.
 */
static bool queue_can_read(const struct queue *q) {
  size_t low = (q->mask + 1) / 4 < READ_MAX ? (q->mask + 1) / 4 : READ_MAX;
  return queue_space(q) >= low && q->chunk_count < CHUNK_SLOTS;
}

/* Describes ring bytes [from, from + len) as at most two iovecs. */
static int queue_iov(const struct queue *q, uint64_t from, size_t len, struct iovec iov[2]) {
  size_t off = (size_t)(from & q->mask);
  size_t first = len < q->mask + 1 - off ? len : (size_t)(q->mask + 1 - off);
  iov[0] = (struct iovec){q->buf + off, first};
  iov[1] = (struct iovec){q->buf, len - first};
  return first == len ? 1 : 2;
}

/*
 * Reads at most max bytes into the ring. When it read some, *arrived_ns is when the kernel received the
 * newest of them (the socket's SO_TIMESTAMPNS, converted to CLOCK_MONOTONIC), or now when it gave no
 * timestamp: the delay counts from the byte's arrival at the relay, not from when this thread got round to
 * reading it (a poll() wake-up here comes 15-100 us late, which would otherwise be added to every message).
 */
static ssize_t queue_recv(struct queue *q, int fd, size_t max, int64_t *arrived_ns) {
  struct iovec iov[2];
  union {
    char buf[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
  } ctl;
  struct msghdr m = {.msg_iov = iov, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
  m.msg_iovlen = (size_t)queue_iov(q, q->tail, max, iov);
  ssize_t r = recvmsg(fd, &m, MSG_DONTWAIT);
  if (r <= 0) return r; /* nothing read: no arrival */
  /* The age of the stamp is measured on CLOCK_REALTIME and taken off a CLOCK_MONOTONIC reading made
   * after it: should the thread be preempted between the two readings, the arrival comes out late,
   * never early (no byte may leave before its full delay). */
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  int64_t now = mono_ns();
  *arrived_ns = now;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    struct timespec ts;
    memcpy(&ts, CMSG_DATA(c), sizeof ts);
    int64_t age = ((int64_t)real.tv_sec - ts.tv_sec) * NSEC_PER_SEC + (real.tv_nsec - ts.tv_nsec);
    if (age > 0 && age < NSEC_PER_SEC) *arrived_ns = now - age; /* ignore a clock step */
  }
  return r;
}

static ssize_t queue_send(struct queue *q, int fd, size_t len) {
  struct iovec iov[2];
  struct msghdr m = {.msg_iov = iov};
  m.msg_iovlen = (size_t)queue_iov(q, q->head, len, iov);
  return sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Appends n freshly read bytes that may leave at release_ns. */
static void queue_push(struct queue *q, size_t n, int64_t release_ns) {
  q->tail += n;
  if (q->chunk_count > 0) {
    struct chunk *last = &q->chunks[(q->chunk_first + q->chunk_count - 1) & (CHUNK_SLOTS - 1)];
    if (last->release_ns >= release_ns) { /* not later than the last chunk: leaves with it */
      last->end = q->tail;
      return;
    }
  }
  q->chunks[(q->chunk_first + q->chunk_count) & (CHUNK_SLOTS - 1)] =
      (struct chunk){.end = q->tail, .release_ns = release_ns};
  q->chunk_count++;
}

/* Moves q->released past every chunk whose time has come. */
static void queue_release(struct queue *q, int64_t now) {
  while (q->chunk_count > 0 && q->chunks[q->chunk_first].release_ns <= now) {
    if (q->released == q->head) q->ready_ns = q->chunks[q->chunk_first].release_ns;
    q->released = q->chunks[q->chunk_first].end;
    q->chunk_first = (q->chunk_first + 1) & (CHUNK_SLOTS - 1);
    q->chunk_count--;
  }
}

/* ---- the token bucket ---------------------------------------------------------------------------- */

/* What the direction was doing since the pacer last looked. */
enum pacer_state {
  PACER_IDLE,       /* nothing released to send */
  PACER_BLOCKED,    /* the destination did not take more */
  PACER_BACKLOGGED, /* released data waited for credit */
};

struct pacer {
  double rate_ns;  /* bytes per nanosecond, 0 = unlimited */
  double burst;    /* bucket depth, bytes */
  double late_cap; /* most credit kept across a late wake-up */
  double credit;   /* bytes that may be sent now */
  int64_t last_ns;
  int64_t wake_ns; /* when the credit for the next write will be there, 0 = not waiting */
  enum pacer_state state;
};

static void pacer_init(struct pacer *p, const struct dir_cfg *cfg, int64_t now) {
  *p = (struct pacer){
      .rate_ns = cfg->rate / 1e9, .burst = (double)cfg->burst, .credit = (double)cfg->burst, .last_ns = now};
  p->late_cap = fmax(p->burst * LATE_CREDIT, p->rate_ns * LATE_CREDIT_NS);
}

/*
 * Adds the credit earned since last_ns. A token bucket caps it at one burst, and so does this for time
 * in which the link really was idle or the receiver full. But time in which released data waited only
 * because this thread woke up late (a pacing or release timer that fired late) is credited up to
 * late_cap, so that wake-up latency does not lower the long-term rate; ready_ns is when the data now
 * waiting was released.
 */
static void pacer_refill(struct pacer *p, int64_t now, int64_t ready_ns) {
  int64_t due = p->last_ns; /* credit from here on is not capped at one burst */
  if (p->state == PACER_IDLE) due = ready_ns < p->last_ns ? p->last_ns : ready_ns < now ? ready_ns : now;
  if (p->state == PACER_BLOCKED) due = now;
  p->credit = fmin(p->credit + (double)(due - p->last_ns) * p->rate_ns, fmax(p->burst, p->credit));
  p->credit = fmin(p->credit + (double)(now - due) * p->rate_ns, fmax(p->late_cap, p->credit));
  p->last_ns = now;
}

/*
 * How many of avail released bytes may be written now; 0 means wait until p->wake_ns. It waits for a
 * full burst (or for all of avail, if smaller), so a bulk stream is written in burst-sized pieces.
 */
static size_t pacer_allow(struct pacer *p, int64_t now, size_t avail, int64_t ready_ns) {
  p->wake_ns = 0;
  if (p->rate_ns <= 0) return avail;
  pacer_refill(p, now, ready_ns);
  double need = fmin((double)avail, p->burst);
  if (p->credit < need) {
    p->wake_ns = now + (int64_t)ceil((need - p->credit) / p->rate_ns);
    return 0;
  }
  return p->credit < (double)avail ? (size_t)p->credit : avail;
}

static void pacer_consume(struct pacer *p, size_t n) {
  if (p->rate_ns > 0) p->credit -= (double)n;
}

/* ---- one direction of one connection ------------------------------------------------------------ */

struct conn;

struct dir {
  struct conn *conn;
  const char *name;
  int src, dst, timer;
  int64_t delay_ns;
  int64_t armed_ns;   /* absolute deadline the timerfd is armed for, 0 = disarmed */
  bool armed_ahead;   /* it was in the future when armed, so its wake-up lateness is a fair sample */
  int64_t spin_until; /* the release time the armed timer is early for, 0 = none */
  int64_t early_ns;   /* how early release times are armed (see dir_deadline) */
  int64_t spin_max_ns;
  double spin_budget_ns; /* spinning allowed now; grows by SPIN_SHARE of the time passed */
  int64_t budget_ns_at;
  bool src_eof;     /* read() returned 0 */
  bool src_idle;    /* read() said EAGAIN; wait for POLLIN */
  bool dst_blocked; /* write() said EAGAIN; wait for POLLOUT */
  struct queue q;
  struct pacer pacer;
};

struct conn {
  const struct config *cfg;
  unsigned long id;
  int client, server;
  atomic_int refs;    /* direction threads still running */
  atomic_bool failed; /* an error: both sides are being reset */
  struct dir up, down;
  struct tamper_conn *tc; /* --rule connections */
};

static void conn_fail(struct conn *c) {
  if (atomic_exchange(&c->failed, true)) return;
  shutdown(c->client, SHUT_RDWR); /* wakes the other direction's poll() */
  shutdown(c->server, SHUT_RDWR);
}

static int dir_error(struct dir *d, const char *what, int err) {
  if (!d->conn->cfg->quiet && !atomic_load(&d->conn->failed))
    fprintf(stderr, "netsim: conn %lu %s: %s: %s\n", d->conn->id, d->name, what, strerror(err));
  return -1;
}

static int sock_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err ? err : ECONNRESET;
}

static int dir_write(struct dir *d, int64_t now, bool *progress) {
  struct queue *q = &d->q;
  size_t avail = (size_t)(q->released - q->head);
  d->pacer.wake_ns = 0;
  if (avail > 0 && !d->dst_blocked) {
    size_t n = pacer_allow(&d->pacer, now, avail < WRITE_MAX ? avail : WRITE_MAX, q->ready_ns);
    if (n > 0) {
      ssize_t w = queue_send(q, d->dst, n);
      if (w > 0) {
        q->head += (uint64_t)w;
        pacer_consume(&d->pacer, (size_t)w);
        *progress = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        d->dst_blocked = true;
      } else if (errno != EINTR) {
        return dir_error(d, "send", errno);
      }
    }
  }
  d->pacer.state = q->released == q->head ? PACER_IDLE : d->dst_blocked ? PACER_BLOCKED : PACER_BACKLOGGED;
  return 0;
}

static int dir_read(struct dir *d, bool *progress) {
  struct queue *q = &d->q;
  if (d->src_eof || d->src_idle || !queue_can_read(q)) return 0;
  size_t space = queue_space(q);
  int64_t arrived;
  ssize_t r = queue_recv(q, d->src, space < READ_MAX ? space : READ_MAX, &arrived);
  if (r > 0) {
    /* Stamped with the arrival of the newest byte read, so no byte can leave before its full delay. */
    queue_push(q, (size_t)r, arrived + d->delay_ns);
    *progress = true;
  } else if (r == 0) {
    d->src_eof = true;
    *progress = true;
  } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
    d->src_idle = true;
  } else if (errno != EINTR) {
    return dir_error(d, "recv", errno);
  }
  return 0;
}

static int timer_arm(struct dir *d, int64_t deadline) {
  if (deadline == d->armed_ns) return 0;
  struct itimerspec its = {0};
  its.it_value.tv_sec = deadline / NSEC_PER_SEC;
  its.it_value.tv_nsec = deadline % NSEC_PER_SEC;
  if (timerfd_settime(d->timer, TFD_TIMER_ABSTIME, &its, NULL) < 0) return dir_error(d, "timerfd", errno);
  d->armed_ns = deadline;
  d->armed_ahead = deadline > mono_ns();
  return 0;
}

/*
 * The time to wake up at, 0 for none. Timer wake-ups on this VM arrive 15-100+ us late (halt exits,
 * busy cores), which would add that much to every delayed message. So the next release time is armed
 * early_ns early and the rest is spun out on the clock (dir_timer_fired), but only for request/response
 * traffic (what the delay is about: at most SPIN_CHUNKS reads in flight), and only within a budget of
 * SPIN_SHARE of the time. A bulk stream, which has many reads in flight and a release due every few
 * tens of microseconds, does not care about a late release and so burns no CPU that the endpoints on
 * this 2-core machine need. Pacing deadlines are armed
 * exactly: a late pacing wake-up keeps its credit (pacer_allow), so lateness costs no rate there.
 */
static int64_t dir_deadline(struct dir *d) {
  int64_t now = mono_ns(), at = d->pacer.wake_ns;
  d->spin_budget_ns =
      fmin(d->spin_budget_ns + (double)(now - d->budget_ns_at) * SPIN_SHARE, SPIN_BUDGET_MAX_NS);
  d->budget_ns_at = now;
  d->spin_until = 0;
  if (d->q.chunk_count > 0) {
    int64_t release = d->q.chunks[d->q.chunk_first].release_ns;
    bool spin =
        d->spin_max_ns > 0 && d->q.chunk_count <= SPIN_CHUNKS && d->spin_budget_ns >= (double)d->early_ns;
    int64_t early = spin ? d->early_ns : 0;
    if (at == 0 || release - early < at) {
      at = release - early;
      d->spin_until = spin ? release : 0;
    }
  }
  return at;
}

/*
 * The timer went off. early_ns follows the 75th percentile of the wake-up lateness (a stochastic
 * quantile estimate: up 3 us when a wake-up was later than early_ns, down 1 us otherwise), within
 * [0, --spin-max-us]; then the wait for the release time is finished by spinning.
 */
static void dir_timer_fired(struct dir *d) {
  int64_t now = mono_ns(), start = now, late = now - d->armed_ns;
  d->armed_ns = 0;
  if (!d->spin_until) return;
  if (d->armed_ahead) {
    d->early_ns += late > d->early_ns ? EARLY_UP_NS : -EARLY_DOWN_NS;
    if (d->early_ns > d->spin_max_ns) d->early_ns = d->spin_max_ns;
    if (d->early_ns < 0) d->early_ns = 0;
  }
  while (now < d->spin_until)
    now = mono_ns();
  d->spin_budget_ns -= (double)(now - start);
}

/* Sleeps until the source is readable, the destination writable, or the next release/token time. */
static int dir_wait(struct dir *d) {
  if (timer_arm(d, dir_deadline(d)) < 0) return -1;
  bool want_in = !d->src_eof && d->src_idle && queue_can_read(&d->q);
  struct pollfd pfd[3] = {
      {.fd = want_in ? d->src : -1, .events = POLLIN},
      {.fd = d->dst, .events = d->dst_blocked ? POLLOUT : 0}, /* POLLERR/POLLHUP always reported */
      {.fd = d->timer, .events = POLLIN},
  };
  if (poll(pfd, 3, -1) < 0) return errno == EINTR ? 0 : dir_error(d, "poll", errno);
  if (pfd[0].revents) d->src_idle = false;
  if (pfd[1].revents & (POLLERR | POLLHUP)) return dir_error(d, "send", sock_error(d->dst));
  if (pfd[1].revents & POLLOUT) d->dst_blocked = false;
  if (pfd[2].revents & POLLIN) {
    uint64_t ticks;
    if (read(d->timer, &ticks, sizeof ticks) < 0 && errno != EAGAIN) return dir_error(d, "timerfd", errno);
    dir_timer_fired(d);
  }
  return 0;
}

/* ---- --rule: whole messages through tamper.c ---------------------------------------------------- */

/* Waits until fd is ready for ev (the sockets are non-blocking; conn_fail's shutdown wakes it). */
static int fd_wait(int fd, short ev) {
  struct pollfd p = {.fd = fd, .events = ev};
  while (poll(&p, 1, -1) < 0)
    if (errno != EINTR) return -1;
  return 0;
}

/* Reads exactly n bytes: n, 0 on EOF before the first byte, -1 on an error or EOF inside. */
static ssize_t read_full(struct dir *d, uint8_t *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(d->src, p + got, n - got);
    if (r > 0) {
      got += (size_t)r;
    } else if (r == 0) {
      return got ? dir_error(d, "read", EPIPE) : 0;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (atomic_load(&d->conn->failed) || fd_wait(d->src, POLLIN) < 0) return -1;
    } else if (errno != EINTR) {
      return dir_error(d, "read", errno);
    }
  }
  return (ssize_t)n;
}

static int write_full(struct dir *d, const uint8_t *p, size_t n) {
  while (n) {
    ssize_t w = write(d->dst, p, n);
    if (w > 0) {
      p += w, n -= (size_t)w;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (atomic_load(&d->conn->failed) || fd_wait(d->dst, POLLOUT) < 0) return -1;
    } else if (w < 0 && errno != EINTR) {
      return dir_error(d, "write", errno);
    }
  }
  return 0;
}

/* Relays one direction message by message (MS-SMB2 2.1 framing: a zero byte, a 24-bit length),
 * each through the rules, until EOF (0) or an error (-1). */
static int dir_run_msgs(struct dir *d) {
  size_t cap = 64 << 10;
  uint8_t *buf = malloc(cap);
  int rc = buf ? 0 : dir_error(d, "malloc", ENOMEM);
  enum tamper_dir td = d == &d->conn->up ? TAMPER_C2S : TAMPER_S2C;
  while (!rc && !atomic_load(&d->conn->failed)) {
    ssize_t r = read_full(d, buf, 4);
    if (r == 0) {
      if (shutdown(d->dst, SHUT_WR) < 0 && errno != ENOTCONN) rc = dir_error(d, "shutdown", errno);
      break;
    }
    size_t n = (size_t)buf[1] << 16 | (size_t)buf[2] << 8 | buf[3];
    if (r < 0) {
      rc = -1;
      break;
    }
    if (n + 4 > cap) {
      uint8_t *nb = realloc(buf, n + 4);
      if (!nb) {
        rc = dir_error(d, "malloc", ENOMEM);
        break;
      }
      buf = nb, cap = n + 4;
    }
    if (n && read_full(d, buf + 4, n) != (ssize_t)n) {
      rc = -1;
      break;
    }
    size_t len = n + 4;
    int keep = tamper_apply(d->conn->tc, td, &buf, &len, &cap);
    if (keep < 0) rc = dir_error(d, "tamper", ENOMEM);
    if (keep > 0) rc = write_full(d, buf, len);
  }
  free(buf);
  return rc;
}

/* Relays one direction until EOF has been passed on (0) or an error (-1). */
static int dir_run(struct dir *d) {
  if (d->conn->cfg->tamper) return dir_run_msgs(d);
  for (;;) {
    if (atomic_load(&d->conn->failed)) return -1;
    int64_t now = mono_ns();
    bool progress = false;
    queue_release(&d->q, now);
    if (dir_write(d, now, &progress) < 0 || dir_read(d, &progress) < 0) return -1;
    if (d->src_eof && d->q.head == d->q.tail) {
      if (shutdown(d->dst, SHUT_WR) < 0 && errno != ENOTCONN) return dir_error(d, "shutdown", errno);
      return 0;
    }
    if (!progress && dir_wait(d) < 0) return -1;
  }
}

static int dir_init(struct dir *d, struct conn *c, const char *name, int src, int dst,
                    const struct dir_cfg *cfg) {
  *d = (struct dir){.conn = c,
                    .name = name,
                    .src = src,
                    .dst = dst,
                    .delay_ns = cfg->delay_ns,
                    .spin_max_ns = c->cfg->spin_max_ns};
  d->early_ns = EARLY_INIT_NS < d->spin_max_ns ? EARLY_INIT_NS : d->spin_max_ns;
  d->spin_budget_ns = SPIN_BUDGET_MAX_NS;
  d->budget_ns_at = mono_ns();
  d->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  pacer_init(&d->pacer, cfg, mono_ns());
  if (d->timer < 0 || queue_init(&d->q, cfg->queue) < 0) return dir_error(d, "setup", errno);
  return 0;
}

/* ---- connections --------------------------------------------------------------------------------- */

static void sock_tune(int fd) {
  int one = 1, size = SOCK_BUF;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one); /* arrival times, see queue_recv */
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

static void close_fd(int fd, bool reset) {
  if (fd < 0) return;
  if (reset) {
    struct linger l = {.l_onoff = 1, .l_linger = 0}; /* close() sends RST */
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  close(fd);
}

static void conn_destroy(struct conn *c) {
  bool reset = atomic_load(&c->failed);
  if (!c->cfg->quiet)
    fprintf(stderr, "netsim: conn %lu %s, up %" PRIu64 " bytes, down %" PRIu64 " bytes\n", c->id,
            reset ? "reset" : "closed", c->up.q.tail, c->down.q.tail);
  close_fd(c->client, reset);
  close_fd(c->server, reset);
  close_fd(c->up.timer, false);
  close_fd(c->down.timer, false);
  tamper_conn_free(c->tc);
  queue_free(&c->up.q);
  queue_free(&c->down.q);
  free(c);
}

static void dir_finish(struct dir *d, int rc) {
  struct conn *c = d->conn;
  if (rc < 0) conn_fail(c);
  if (atomic_fetch_sub(&c->refs, 1) == 1) conn_destroy(c);
}

static void *dir_thread(void *arg) {
  struct dir *d = arg;
  dir_finish(d, dir_run(d));
  return NULL;
}

static int thread_spawn(void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, THREAD_STACK);
  int rc = pthread_create(&t, &attr, fn, arg);
  pthread_attr_destroy(&attr);
  return rc;
}

static int conn_connect(struct conn *c) {
  const struct config *cfg = c->cfg;
  int fd = socket(cfg->to_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return dir_error(&c->up, "socket", errno);
  sock_tune(fd);
  if (connect(fd, (const struct sockaddr *)&cfg->to_addr, cfg->to_len) < 0) {
    int err = errno;
    close(fd);
    if (!cfg->quiet)
      fprintf(stderr, "netsim: conn %lu: connect %s: %s\n", c->id, cfg->to_text, strerror(err));
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  c->server = fd;
  return 0;
}

/* Runs the whole life of one accepted connection: connect upstream, then relay "up" in this thread
 * and "down" in a second one. */
static void *conn_main(void *arg) {
  struct conn *c = arg;
  const struct config *cfg = c->cfg;
  if (cfg->tamper && !(c->tc = tamper_conn_new(cfg->tamper, c->id, cfg->quiet ? NULL : stderr, cfg->trace))) {
    atomic_store(&c->failed, true);
    conn_destroy(c);
    return NULL;
  }
  if (conn_connect(c) < 0 || dir_init(&c->up, c, "up", c->client, c->server, &cfg->up) < 0 ||
      dir_init(&c->down, c, "down", c->server, c->client, &cfg->down) < 0) {
    atomic_store(&c->failed, true);
    conn_destroy(c);
    return NULL;
  }
  atomic_store(&c->refs, 2);
  if (thread_spawn(dir_thread, &c->down) != 0) {
    atomic_store(&c->failed, true);
    conn_destroy(c);
    return NULL;
  }
  dir_finish(&c->up, dir_run(&c->up));
  return NULL;
}

static void conn_start(const struct config *cfg, int fd, unsigned long id) {
  struct conn *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return;
  }
  *c = (struct conn){.cfg = cfg, .id = id, .client = fd, .server = -1};
  c->up = (struct dir){.conn = c, .name = "up", .timer = -1};
  c->down = (struct dir){.conn = c, .name = "down", .timer = -1};
  sock_tune(fd);
  if (!cfg->quiet) fprintf(stderr, "netsim: conn %lu open\n", id);
  if (thread_spawn(conn_main, c) != 0) {
    fprintf(stderr, "netsim: cannot start a thread for conn %lu\n", id);
    close_fd(fd, true);
    free(c);
  }
}

/* ---- listening and the main loop ---------------------------------------------------------------- */

static int listen_open(const struct config *cfg) {
  int fd = socket(cfg->listen_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0) return -1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sock_tune(fd); /* before listen(), so that accepted sockets start with big buffers */
  if (bind(fd, (const struct sockaddr *)&cfg->listen_addr, cfg->listen_len) < 0 || listen(fd, 512) < 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

static void print_listening(int fd) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
  if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
    getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
  if (ss.ss_family == AF_INET6)
    printf("listening [%s]:%s\n", host, port);
  else
    printf("listening %s:%s\n", host, port);
  fflush(stdout);
}

static void accept_one(const struct config *cfg, int lfd, unsigned long *next_id) {
  int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd >= 0) {
    conn_start(cfg, fd, ++*next_id);
    return;
  }
  if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
    fprintf(stderr, "netsim: accept: %s\n", strerror(errno));
    struct timespec pause = {0, 10 * 1000 * 1000}; /* do not spin while out of descriptors */
    nanosleep(&pause, NULL);
  }
}

/* Accepts connections until a signal or --max-seconds. */
static int serve(const struct config *cfg, int lfd, int sfd) {
  int64_t end = cfg->max_seconds > 0 ? mono_ns() + (int64_t)(cfg->max_seconds * 1e9) : 0;
  unsigned long next_id = 0;
  for (;;) {
    int timeout = -1;
    if (end) {
      int64_t left = end - mono_ns();
      if (left <= 0) break;
      timeout = (int)((left + 999999) / 1000000);
    }
    struct pollfd pfd[2] = {{.fd = lfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
      fprintf(stderr, "netsim: poll: %s\n", strerror(errno));
      return 1;
    }
    if (pfd[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      if (read(sfd, &si, sizeof si) > 0 && !cfg->quiet)
        fprintf(stderr, "netsim: %s, exiting\n", strsignal((int)si.ssi_signo));
      break;
    }
    if (pfd[0].revents & POLLIN) accept_one(cfg, lfd, &next_id);
  }
  if (!cfg->quiet) fprintf(stderr, "netsim: %lu connections served\n", next_id);
  return 0;
}

/* The rules outlive main(): connection threads may still use them while the process exits. */
static struct tamper *tamper_rules;

int main(int argc, char **argv) {
  static struct args a; /* (cfg may point into it) */
  /* Static: connection threads read it until the process is gone, also while exit() runs after
   * main has returned (on main's stack it was garbage by then: UBSan saw a bool of 23). */
  static struct config cfg;
  int rc = args_parse(argc, argv, &a);
  if (rc < 0 && (rc = config_make(&a, &cfg)) == 0) rc = -1;
  if (rc >= 0) {
    tamper_free(a.tamper);
    return rc;
  }
  tamper_rules = a.tamper;

  /* Block the stop signals in every thread (they inherit the mask) and take them via a signalfd. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
  int lfd = listen_open(&cfg);
  if (sfd < 0 || lfd < 0) {
    fprintf(stderr, "netsim: cannot listen on %s: %s\n", a.listen, strerror(errno));
    return 1;
  }
  print_listening(lfd);
  if (!cfg.quiet)
    fprintf(stderr,
            "netsim: -> %s; up: delay %.3f ms, rate %.0f bit/s, burst %zu, queue %zu; "
            "down: delay %.3f ms, rate %.0f bit/s, burst %zu, queue %zu\n",
            cfg.to_text, (double)cfg.up.delay_ns / 1e6, cfg.up.rate * 8, cfg.up.burst, cfg.up.queue,
            (double)cfg.down.delay_ns / 1e6, cfg.down.rate * 8, cfg.down.burst, cfg.down.queue);
  rc = serve(&cfg, lfd, sfd);
  close(lfd);
  /* Connections still open die with the process; their peers see the sockets close. */
  return rc;
}
