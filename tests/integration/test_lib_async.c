/* test_lib_async.c - issue 3: the asynchronous API.
 *
 *  - smb3_pread_async / smb3_pwrite_async: many requests in flight at once, of mixed sizes, complete
 *    (in whatever order) into the right places; each callback runs exactly once; a request larger
 *    than rsize is refused and its callback never runs;
 *  - smb3_stat_async / smb3_open_async / smb3_close_async (and close_stat) / smb3_mkdir_async /
 * smb3_rename_async / smb3_unlink_async (and rmdir/truncate/statvfs/fstat/fsetattr): callbacks run exactly
 * once with the same results as the synchronous forms, with and without compounding;
 *  - callbacks may submit further asynchronous requests (open -> write -> close chained).
 *
 * The test waits with a mutex/condition variable; a guard turns a hang into a failure.
 * Runs under tests/harness/with-smbd (integration.lib_async).
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "libtest.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int completion_seq;

/* ---- one asynchronous operation's outcome ---- */
struct op {
  int calls;
  int64_t rc;
  int order; /* completion sequence number */
  int have_st;
  struct smb3_stat st;
  struct smb3_statvfs sv;
  smb3_file *f;
  pthread_t thread;
};

static void op_done(struct op *o, int64_t rc) {
  o->calls++;
  o->rc = rc;
  o->order = completion_seq++;
  o->thread = pthread_self();
  pthread_cond_broadcast(&cv);
}

static void io_cb(int64_t result, void *arg) {
  pthread_mutex_lock(&mu);
  op_done(arg, result);
  pthread_mutex_unlock(&mu);
}
static void done_cb(int rc, void *arg) {
  pthread_mutex_lock(&mu);
  op_done(arg, rc);
  pthread_mutex_unlock(&mu);
}
/* smb3_set_close_riders: the handles the test hands over, and what became of them */
struct riders {
  smb3_file *f[2];
  int n;
  int done_calls, done_rc;
};
static void riders_done(int rc, void *arg) {
  struct riders *r = arg;
  pthread_mutex_lock(&mu);
  r->done_calls++;
  r->done_rc = rc;
  pthread_mutex_unlock(&mu);
}
static int riders_take(void *arg, smb3_client *c, smb3_file **files, int max, smb3_done_cb *done,
                       void **done_arg) {
  (void)c;
  struct riders *r = arg;
  int n = 0;
  while (r->n && n < max)
    files[n++] = r->f[--r->n];
  if (n) *done = riders_done, *done_arg = r;
  return n;
}
static void stat_cb(int rc, const struct smb3_stat *st, void *arg) {
  struct op *o = arg;
  pthread_mutex_lock(&mu);
  if (st) o->st = *st, o->have_st = 1;
  op_done(o, rc);
  pthread_mutex_unlock(&mu);
}
static void statvfs_cb(int rc, const struct smb3_statvfs *sv, void *arg) {
  struct op *o = arg;
  pthread_mutex_lock(&mu);
  if (sv) o->sv = *sv;
  op_done(o, rc);
  pthread_mutex_unlock(&mu);
}
static void open_cb(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  struct op *o = arg;
  pthread_mutex_lock(&mu);
  o->f = f;
  if (st) o->st = *st, o->have_st = 1;
  op_done(o, rc);
  pthread_mutex_unlock(&mu);
}

static void open_write_cb(int rc, smb3_file *f, const struct smb3_stat *st, int64_t written, void *arg) {
  struct op *o = arg;
  pthread_mutex_lock(&mu);
  o->f = f;
  if (st) o->st = *st, o->have_st = 1;
  o->sv.bsize = (uint64_t)written; /* (the written count, kept beside the open's rc) */
  o->sv.blocks = written < 0;
  op_done(o, rc);
  pthread_mutex_unlock(&mu);
}

static void wait_ops(struct op *ops, int n) {
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n; i++)
    while (ops[i].calls == 0)
      pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

/* A synchronous round trip after everything completed: a duplicate callback still queued on the
 * I/O thread would have run by the time it returns. Then each callback must have run once. */
static void check_once(smb3_client *c, struct op *ops, int n, const char *what) {
  struct smb3_statvfs sv;
  int rc = smb3_statvfs(c, &sv);
  if (rc) fail_msg("%s: statvfs = %d: %s", what, rc, smb3_last_error(c));
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n; i++)
    if (ops[i].calls != 1) {
      int k = ops[i].calls;
      pthread_mutex_unlock(&mu);
      fail_msg("%s: callback %d ran %d times, want exactly once", what, i, k);
    }
  for (int i = 0; i < n; i++)
    if (pthread_equal(ops[i].thread, pthread_self())) {
      pthread_mutex_unlock(&mu);
      fail_msg("%s: callback %d ran on the submitting thread, not the I/O thread", what, i);
    }
  pthread_mutex_unlock(&mu);
}

/* ---- pread_async / pwrite_async ---- */

/* Submits n reads from a callback (the I/O thread). The first refusal is recorded; its callback
 * never runs, so the submissions stop there. */
struct kick {
  smb3_file *f;
  uint8_t **bufs;
  uint64_t *offs;
  size_t *lens;
  struct op *ops;
  int n, done, kick_rc, failed, fail_rc;
};
static void kick_cb(int rc, const struct smb3_statvfs *sv, void *arg) {
  (void)sv;
  struct kick *k = arg;
  int failed = -1, fail_rc = 0;
  for (int i = 0; !rc && i < k->n && failed < 0; i++) {
    int r = smb3_pread_async(k->f, k->bufs[i], k->lens[i], k->offs[i], io_cb, &k->ops[i]);
    if (r) failed = i, fail_rc = r;
  }
  pthread_mutex_lock(&mu);
  k->kick_rc = rc;
  k->failed = failed;
  k->fail_rc = fail_rc;
  k->done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}
#define SRC_SIZE (12u << 20)
#define NIO 96

static void test_pread_many(void **s) {
  (void)s;
  lt_guard("pread_async many", 300);
  uint8_t *data = lt_random(SRC_SIZE, 1);
  lt_write_local("async_src", data, SRC_SIZE);
  smb3_client *c = lt_connect("rsize=1M");
  uint32_t rsize = smb3_rsize(c);
  smb3_file *f = NULL;
  int rc = smb3_open(c, "async_src", O_RDONLY, &f, NULL);
  if (rc) fail_msg("open = %d: %s", rc, smb3_last_error(c));
  lt_track_file(f);
  struct op ops[NIO];
  uint8_t *bufs[NIO];
  uint64_t offs[NIO];
  size_t lens[NIO], want[NIO];
  memset(ops, 0, sizeof ops);
  for (int i = 0; i < NIO; i++) {
    /* big ones first, small ones after: a reason for the server to finish them out of order */
    size_t len = i < 8 ? rsize : (size_t)(1 + ((uint64_t)i * 7919u) % 150000u);
    uint64_t off = ((uint64_t)i * 1234577u) % (SRC_SIZE - len);
    if (i == NIO - 2) off = SRC_SIZE - 10, len = 100; /* past EOF: 10 bytes */
    if (i == NIO - 1) off = SRC_SIZE + 5, len = 1000; /* beyond EOF: 0 */
    offs[i] = off;
    lens[i] = len;
    want[i] = off >= SRC_SIZE ? 0 : (SRC_SIZE - off < len ? SRC_SIZE - off : len);
    bufs[i] = lt_malloc(len);
    assert_non_null(bufs[i]);
    memset(bufs[i], 0xEE, len);
  }
  struct smb3_stats b = lt_stats(c);
  /* All NIO are submitted from a callback, on the I/O thread: no answer can be taken in before the
   * last one is submitted, so "at once" holds however the threads are scheduled. (Submitted from
   * this thread, a loaded machine can run each read's whole round trip before the next call.) */
  struct kick k = {.f = f, .bufs = bufs, .offs = offs, .lens = lens, .ops = ops, .n = NIO};
  rc = smb3_statvfs_async(c, kick_cb, &k);
  if (rc) fail_msg("statvfs_async = %d: %s", rc, smb3_last_error(c));
  pthread_mutex_lock(&mu);
  while (!k.done)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  if (k.kick_rc) fail_msg("statvfs_async callback: %d", k.kick_rc);
  if (k.failed >= 0)
    fail_msg("pread_async #%d (off %llu len %zu) = %d", k.failed, (unsigned long long)offs[k.failed],
             lens[k.failed], k.fail_rc);
  wait_ops(ops, NIO);
  struct smb3_stats a = lt_stats(c);
  int out_of_order = 0;
  for (int i = 0; i < NIO; i++) {
    if (ops[i].rc != (int64_t)want[i])
      fail_msg("pread_async #%d (off %llu len %zu) = %lld, want %zu", i, (unsigned long long)offs[i], lens[i],
               (long long)ops[i].rc, want[i]);
    lt_assert_bytes("pread_async", bufs[i], want[i] ? data + offs[i] : data, want[i], offs[i]);
    for (size_t k = want[i]; k < lens[i]; k++)
      if (bufs[i][k] != 0xEE) fail_msg("pread_async #%d wrote past the %zu bytes it returned", i, want[i]);
    if (ops[i].order != i) out_of_order = 1;
  }
  print_message("%d reads: completions %s submission order; %llu READs, credits in flight at most %u\n", NIO,
                out_of_order ? "out of" : "in", (unsigned long long)(a.reads - b.reads),
                a.credits_max_in_flight);
  if (a.reads - b.reads != NIO)
    fail_msg("%d pread_async calls sent %llu READs", NIO, (unsigned long long)(a.reads - b.reads));
  if (a.credits_max_in_flight <= rsize / 65536)
    fail_msg("never more than one request in flight (%u credits) although %d were submitted at once",
             a.credits_max_in_flight, NIO);
  check_once(c, ops, NIO, "pread_async");
  /* too large for one request: refused, callback never runs */
  struct op big = {0};
  uint8_t *huge = lt_malloc((size_t)rsize + 1);
  assert_non_null(huge);
  rc = smb3_pread_async(f, huge, (size_t)rsize + 1, 0, io_cb, &big);
  assert_int_equal(rc, SMB3_EINVAL);
  rc = smb3_pwrite_async(f, huge, (size_t)smb3_wsize(c) + 1, 0, io_cb, &big);
  assert_int_equal(rc, SMB3_EINVAL);
  check_once(c, ops, 0, "refused");
  assert_int_equal(big.calls, 0);
  lt_free(huge);
  for (int i = 0; i < NIO; i++)
    lt_free(bufs[i]);
  assert_int_equal(lt_close(f), 0);
  lt_disconnect(c);
  lt_free(data);
  lt_unguard();
}

/* ---- smb3_pread_pipe_async: the data spliced into a pipe, or in the buffer when it cannot be ---- */
struct pipe_rd {
  int64_t rc;
  int piped;
};

/* One pipe read of [off, off+len) into pipes (or buf); the bytes, from wherever they went, into out. */
static struct pipe_rd pipe_read(smb3_client *c, smb3_file *f, const struct smb3_pipe *pipes, int npipes,
                                uint8_t *buf, uint8_t *out, size_t len, uint64_t off) {
  struct op o = {0};
  struct pipe_rd r = {0, -1};
  int rc = smb3_pread_pipe_async(f, buf, len, off, pipes, npipes, &r.piped, io_cb, &o);
  if (rc) fail_msg("pread_pipe_async(off %llu) = %d: %s", (unsigned long long)off, rc, smb3_last_error(c));
  wait_ops(&o, 1);
  r.rc = o.rc;
  if (r.rc > 0 && r.piped) { /* in order: each pipe its cap, the last what is left */
    size_t at = 0;
    for (int i = 0; i < npipes && at < (size_t)r.rc; i++) {
      size_t end = at + pipes[i].cap < (size_t)r.rc ? at + pipes[i].cap : (size_t)r.rc;
      while (at < end) {
        ssize_t n = read(pipes[i].rd, out + at, end - at);
        if (n <= 0) fail_msg("pipe %d held %zu of the %lld bytes read", i, at, (long long)r.rc);
        at += (size_t)n;
      }
    }
  } else if (r.rc > 0) {
    memcpy(out, buf, (size_t)r.rc);
  }
  for (int i = 0; i < npipes; i++) {
    int left = -1;
    if (ioctl(pipes[i].rd, FIONREAD, &left) || left != 0)
      fail_msg("%d bytes more in pipe %d than the READ gave it", left, i);
  }
  return r;
}

static struct smb3_pipe make_pipe(size_t cap) {
  int fd[2];
  assert_int_equal(pipe2(fd, O_CLOEXEC | O_NONBLOCK), 0);
  if (fcntl(fd[1], F_SETPIPE_SZ, (int)cap) < (int)cap) fail_msg("F_SETPIPE_SZ %zu: %s", cap, strerror(errno));
  return (struct smb3_pipe){fd[0], fd[1], cap};
}

static void test_pread_pipe(void **s) {
  (void)s;
  lt_guard("pread_pipe_async", 120);
  const size_t M = 1u << 20, K = 128u << 10, total = 4 * M + 123;
  uint8_t *data = lt_random(total, 7);
  lt_write_local("pipe_src", data, total);
  uint8_t *buf = lt_malloc(M), *out = lt_malloc(M);
  struct smb3_pipe one = make_pipe(M), four[4], small = make_pipe(4096);
  for (int i = 0; i < 4; i++)
    four[i] = make_pipe(M / 4);
  small.cap = M; /* said to take 1 MiB, holds one slot: it fills up */
  for (int sign = 0; sign < 2; sign++) {
    smb3_client *c = lt_connect(sign ? "rsize=1M,sign" : "rsize=1M");
    smb3_file *f = NULL;
    int rc = smb3_open(c, "pipe_src", O_RDONLY, &f, NULL);
    if (rc) fail_msg("open = %d: %s", rc, smb3_last_error(c));
    lt_track_file(f);
    /* In order, to the short last one, in 128 KiB and then 1 MiB READs, into one pipe and into
     * four of 256 KiB: each READ that follows another is read head first, so its data can go by
     * pipe (it may still come back to the buffer when a pipe fills: a race with the sender).
     * Never when signed: the data must be verified. */
    int piped = 0, piped4 = 0, reads = 0;
    for (int split = 0; split < 2; split++)
      for (size_t step = K; step <= M; step += M - K)
        for (uint64_t off = 0; off < total; off += step) {
          struct pipe_rd r = split ? pipe_read(c, f, four, 4, buf, out, step, off)
                                   : pipe_read(c, f, &one, 1, buf, out, step, off);
          size_t want = total - off < step ? total - off : step;
          if (r.rc != (int64_t)want)
            fail_msg("read at %llu = %lld, want %zu", (unsigned long long)off, (long long)r.rc, want);
          lt_assert_bytes(sign ? "signed pipe read" : "pipe read", out, data + off, want, off);
          if (split && step == M && want > M / 4)
            piped4 += r.piped;
          else
            piped += r.piped;
          reads++;
        }
    if (sign && piped + piped4) fail_msg("%d signed READs' data went by pipe (unverified)", piped + piped4);
    if (!sign && (!piped || !piped4))
      fail_msg("of %d READs %d went by pipe, %d of those over four pipes: want some of each", reads, piped,
               piped4);
    /* a pipe that fills up before the data is all in (one slot: at most one piece of a segment):
     * what it took comes back to the buffer, the rest follows there */
    pipe_read(c, f, &one, 1, buf, out, M, 0);
    struct pipe_rd r = pipe_read(c, f, &small, 1, buf, out, M, M);
    if (r.rc != (int64_t)M || r.piped)
      fail_msg("into a 4 KiB pipe: %lld bytes, piped %d", (long long)r.rc, r.piped);
    lt_assert_bytes("spilled pipe read", out, data + M, M, M);
    /* and the connection goes on */
    r = pipe_read(c, f, four, 4, buf, out, M, 2 * M);
    if (r.rc != (int64_t)M) fail_msg("read after the spill = %lld", (long long)r.rc);
    lt_assert_bytes("pipe read after a spill", out, data + 2 * M, M, 2 * M);
    struct smb3_pipe bad = {-1, one.wr, M};
    struct op o = {0};
    assert_int_equal(smb3_pread_pipe_async(f, buf, M, 0, &bad, 1, &piped, io_cb, &o), SMB3_EINVAL);
    assert_int_equal(smb3_pread_pipe_async(f, buf, M, 0, NULL, 1, &piped, io_cb, &o), SMB3_EINVAL);
    assert_int_equal(smb3_pread_pipe_async(f, buf, M, 0, four, 3, &piped, io_cb, &o),
                     SMB3_EINVAL); /* 768 KiB */
    assert_int_equal(smb3_pread_pipe_async(f, buf, M, 0, four, 0, &piped, io_cb, &o), SMB3_EINVAL);
    assert_int_equal(lt_close(f), 0);
    lt_disconnect(c);
  }
  struct smb3_pipe *all[] = {&one, &small, &four[0], &four[1], &four[2], &four[3]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    close(all[i]->rd);
    close(all[i]->wr);
  }
  lt_free(buf);
  lt_free(out);
  lt_free(data);
  lt_unguard();
}

static void test_pwrite_many(void **s) {
  (void)s;
  lt_guard("pwrite_async many", 300);
  smb3_client *c = lt_connect("wsize=1M");
  uint32_t wsize = smb3_wsize(c);
  /* NIO adjacent pieces of mixed sizes covering [0, total), submitted in a scrambled order */
  size_t lens[NIO];
  uint64_t offs[NIO];
  uint64_t total = 0;
  for (int i = 0; i < NIO; i++) {
    lens[i] = i % 11 == 0 ? wsize : (size_t)(1 + ((uint64_t)i * 104729u) % 90000u);
    offs[i] = total;
    total += lens[i];
  }
  uint8_t *data = lt_random(total, 2);
  smb3_file *f = NULL;
  int rc = smb3_open(c, "async_dst", O_RDWR | O_CREAT | O_TRUNC, &f, NULL);
  if (rc) fail_msg("open = %d: %s", rc, smb3_last_error(c));
  lt_track_file(f);
  struct op ops[NIO];
  memset(ops, 0, sizeof ops);
  for (int k = 0; k < NIO; k++) {
    int i = (int)(((unsigned)k * 37u) % NIO); /* 37 is coprime with 96: a permutation */
    rc = smb3_pwrite_async(f, data + offs[i], lens[i], offs[i], io_cb, &ops[i]);
    if (rc) fail_msg("pwrite_async #%d = %d: %s", i, rc, smb3_last_error(c));
  }
  wait_ops(ops, NIO);
  for (int i = 0; i < NIO; i++)
    if (ops[i].rc != (int64_t)lens[i])
      fail_msg("pwrite_async #%d (off %llu len %zu) = %lld", i, (unsigned long long)offs[i], lens[i],
               (long long)ops[i].rc);
  check_once(c, ops, NIO, "pwrite_async");
  assert_int_equal(lt_close(f), 0);
  size_t n;
  uint8_t *got = lt_read_local("async_dst", &n);
  assert_non_null(got);
  if (n != total) fail_msg("file has %zu bytes, want %llu", n, (unsigned long long)total);
  lt_assert_bytes("pwrite_async result", got, data, n, 0);
  lt_free(got);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}

/* ---- metadata: async == sync ---- */
static void same_stat(const char *what, const struct smb3_stat *a, const struct smb3_stat *b) {
  if (a->size != b->size || a->is_dir != b->is_dir || a->attributes != b->attributes || a->ino != b->ino ||
      a->mtime.sec != b->mtime.sec || a->mtime.nsec != b->mtime.nsec || a->btime.sec != b->btime.sec)
    fail_msg(
        "%s: async stat (size %llu dir %d attr 0x%x ino %llu mtime %lld.%09ld) differs from sync (size %llu "
        "dir %d attr 0x%x ino %llu mtime %lld.%09ld)",
        what, (unsigned long long)a->size, a->is_dir, a->attributes, (unsigned long long)a->ino,
        (long long)a->mtime.sec, a->mtime.nsec, (unsigned long long)b->size, b->is_dir, b->attributes,
        (unsigned long long)b->ino, (long long)b->mtime.sec, b->mtime.nsec);
}

/* Run one asynchronous call on a fresh op (ops[] keeps them all for the exactly-once check). */
#define RUN1(call)                                                                                           \
  do {                                                                                                       \
    o = &ops[no++];                                                                                          \
    memset(o, 0, sizeof *o);                                                                                 \
    int rc_ = (call);                                                                                        \
    if (rc_) fail_msg("%s (%s): submitting failed: %d: %s", #call, mode, rc_, smb3_last_error(c));           \
    wait_ops(o, 1);                                                                                          \
  } while (0)

#define SAME_RC(what, async_rc, sync_rc)                                                                     \
  do {                                                                                                       \
    if ((int)(async_rc) != (int)(sync_rc))                                                                   \
      fail_msg("%s (%s): async %d (%s), sync %d (%s)", what, mode, (int)(async_rc),                          \
               smb3_strerror((int)(async_rc)), (int)(sync_rc), smb3_strerror((int)(sync_rc)));               \
  } while (0)

static const char *nm(const char *p, const char *x) {
  static char buf[64][256];
  static int k;
  char *b = buf[k++ & 63];
  snprintf(b, 256, "%s_%s", p, x);
  return b;
}

static void meta(const char *mode, const char *opts, const char *p) {
#define N(x) nm(p, x)
  smb3_client *c = lt_connect(opts);
  struct op ops[32], *o = NULL;
  int no = 0;
  int rc;
  /* stat: existing file, directory, missing */
  uint8_t *data = lt_random(4321, 3);
  const char *file = N("file");
  lt_write_local(file, data, 4321);
  struct smb3_stat sst;
  rc = smb3_stat(c, file, &sst);
  assert_int_equal(rc, 0);
  RUN1(smb3_stat_async(c, file, stat_cb, o));
  SAME_RC("stat file", o->rc, 0);
  if (!o->have_st) fail_msg("stat_async (%s): no attributes given to the callback", mode);
  same_stat("stat file", &o->st, &sst);
  assert_int_equal(o->st.size, 4321);
  const char *dir = N("dir");
  lt_mkdir_local(dir);
  rc = smb3_stat(c, dir, &sst);
  assert_int_equal(rc, 0);
  RUN1(smb3_stat_async(c, dir, stat_cb, o));
  SAME_RC("stat dir", o->rc, 0);
  same_stat("stat dir", &o->st, &sst);
  rc = smb3_stat(c, N("missing"), &sst);
  RUN1(smb3_stat_async(c, N("missing"), stat_cb, o));
  SAME_RC("stat missing", o->rc, rc);
  assert_int_equal(rc, SMB3_ENOENT);

  /* statvfs */
  struct smb3_statvfs sv;
  assert_int_equal(smb3_statvfs(c, &sv), 0);
  RUN1(smb3_statvfs_async(c, statvfs_cb, o));
  SAME_RC("statvfs", o->rc, 0);
  assert_int_equal(o->sv.bsize * o->sv.blocks, sv.bsize * sv.blocks);

  /* open (create) -> fstat -> close; open of a missing file */
  const char *nf = N("opened");
  RUN1(smb3_open_async(c, nf, O_RDWR | O_CREAT, open_cb, o));
  SAME_RC("open create", o->rc, 0);
  assert_non_null(o->f);
  assert_true(lt_exists(nf));
  smb3_file *af = lt_track_file(o->f);
  smb3_file *sf = NULL;
  struct smb3_stat ost;
  rc = smb3_open(c, nf, O_RDWR, &sf, &ost);
  assert_int_equal(rc, 0);
  lt_track_file(sf);
  if (!o->have_st) fail_msg("open_async (%s): no attributes given to the callback", mode);
  assert_int_equal(o->st.is_dir, ost.is_dir);
  assert_int_equal(o->st.size, ost.size);
  assert_int_equal(smb3_pwrite(af, "hello", 5, 0), 5);
  RUN1(smb3_fstat_async(af, stat_cb, o));
  SAME_RC("fstat", o->rc, 0);
  assert_int_equal(o->st.size, 5);
  /* fsetattr: times through the handle, as a stat by path then sees them */
  struct timespec_smb3 mt = {.sec = 1234567890, .nsec = 500000000};
  RUN1(smb3_fsetattr_async(af, NULL, &mt, 0, done_cb, o));
  SAME_RC("fsetattr", o->rc, 0);
  assert_int_equal(smb3_stat(c, nf, &sst), 0);
  if (sst.mtime.sec != mt.sec)
    fail_msg("fsetattr (%s): mtime %lld, want %lld", mode, (long long)sst.mtime.sec, (long long)mt.sec);
  assert_int_equal(lt_stat_local(nf).st_mtime, mt.sec);
  lt_untrack((void **)lt_files, af);
  RUN1(smb3_close_async(af, done_cb, o));
  SAME_RC("close", o->rc, 0);
  /* close with attributes: what the server holds after this handle's writes */
  assert_int_equal(smb3_pwrite(sf, "world!!", 7, 5), 7);
  lt_untrack((void **)lt_files, sf);
  RUN1(smb3_close_stat_async(sf, stat_cb, o));
  SAME_RC("close_stat", o->rc, 0);
  if (!o->have_st) fail_msg("close_stat_async (%s): no attributes given to the callback", mode);
  assert_int_equal(o->st.size, 12);
  assert_int_equal(smb3_stat(c, nf, &sst), 0);
  assert_int_equal(sst.size, 12);
  if (o->st.mtime.sec != sst.mtime.sec || o->st.mtime.nsec != sst.mtime.nsec ||
      o->st.attributes != sst.attributes)
    fail_msg("close_stat (%s): mtime %lld.%09ld attributes 0x%x, a stat says %lld.%09ld 0x%x", mode,
             (long long)o->st.mtime.sec, o->st.mtime.nsec, o->st.attributes, (long long)sst.mtime.sec,
             sst.mtime.nsec, sst.attributes);
  smb3_file *mf = NULL;
  rc = smb3_open(c, N("missing"), O_RDONLY, &mf, NULL);
  RUN1(smb3_open_async(c, N("missing"), O_RDONLY, open_cb, o));
  SAME_RC("open missing", o->rc, rc);
  assert_int_equal(rc, SMB3_ENOENT);
  assert_null(o->f);
  assert_null(mf);

  /* mkdir: new, existing */
  RUN1(smb3_mkdir_async(c, N("newdir"), done_cb, o));
  SAME_RC("mkdir new", o->rc, 0);
  assert_true(lt_is_dir(N("newdir")));
  rc = smb3_mkdir(c, N("newdir"));
  RUN1(smb3_mkdir_async(c, N("newdir"), done_cb, o));
  SAME_RC("mkdir existing", o->rc, rc);
  assert_int_equal(rc, SMB3_EEXIST);
  /* mkdir with attributes: the same CREATE's, file id included, equal to a stat's afterwards,
   * in as many round trips as a plain mkdir; an existing name fails the same way */
  struct smb3_stats b0, b1;
  smb3_get_stats(c, &b0);
  RUN1(smb3_mkdir_stat_async(c, N("statdir"), stat_cb, o));
  smb3_get_stats(c, &b1);
  SAME_RC("mkdir_stat new", o->rc, 0);
  if (!o->have_st) fail_msg("mkdir_stat (%s): no attributes given to the callback", mode);
  assert_true(o->st.is_dir);
  assert_true(o->st.ino != 0);
  assert_int_equal(b1.round_trips - b0.round_trips, strcmp(mode, "compound") ? 2 : 1);
  rc = smb3_stat(c, N("statdir"), &sst);
  assert_int_equal(rc, 0);
  assert_true(o->st.ino == sst.ino);
  RUN1(smb3_mkdir_stat_async(c, N("statdir"), stat_cb, o));
  SAME_RC("mkdir_stat existing", o->rc, SMB3_EEXIST);
  if (o->have_st) fail_msg("mkdir_stat existing (%s): attributes given with an error", mode);

  /* setattr with attributes: the times set, and the rest as a stat then says, in the round trips
   * of a plain setattr (CREATE + SET_INFO + QUERY_INFO + CLOSE); a missing name fails the same way */
  struct timespec_smb3 smt = {.sec = 1300000000, .nsec = 123456700};
  smb3_get_stats(c, &b0);
  RUN1(smb3_setattr_stat_async(c, file, NULL, &smt, 0, stat_cb, o));
  smb3_get_stats(c, &b1);
  SAME_RC("setattr_stat", o->rc, 0);
  if (!o->have_st) fail_msg("setattr_stat (%s): no attributes given to the callback", mode);
  assert_int_equal(b1.round_trips - b0.round_trips, strcmp(mode, "compound") ? 4 : 1);
  assert_int_equal(smb3_stat(c, file, &sst), 0);
  if (o->st.mtime.sec != smt.sec || o->st.mtime.nsec != smt.nsec)
    fail_msg("setattr_stat (%s): mtime %lld.%09ld, want the one set", mode, (long long)o->st.mtime.sec,
             o->st.mtime.nsec);
  same_stat("setattr_stat", &o->st, &sst);
  assert_int_equal(lt_stat_local(file).st_mtime, smt.sec);
  rc = smb3_utimens(c, N("missing"), NULL, &smt);
  RUN1(smb3_setattr_stat_async(c, N("missing"), NULL, &smt, 0, stat_cb, o));
  SAME_RC("setattr_stat missing", o->rc, rc);
  assert_int_equal(rc, SMB3_ENOENT);
  if (o->have_st) fail_msg("setattr_stat missing (%s): attributes given with an error", mode);

  /* rename: ok, missing source, onto existing without replace */
  lt_write_local(N("ren_a"), "a", 1);
  lt_write_local(N("ren_c"), "c", 1);
  RUN1(smb3_rename_async(c, N("ren_a"), N("ren_b"), 0, done_cb, o));
  SAME_RC("rename", o->rc, 0);
  assert_false(lt_exists(N("ren_a")));
  assert_true(lt_exists(N("ren_b")));
  rc = smb3_rename(c, N("ren_a"), N("ren_x"), 0);
  RUN1(smb3_rename_async(c, N("ren_a"), N("ren_x"), 0, done_cb, o));
  SAME_RC("rename missing", o->rc, rc);
  assert_int_equal(rc, SMB3_ENOENT);
  rc = smb3_rename(c, N("ren_b"), N("ren_c"), 0);
  RUN1(smb3_rename_async(c, N("ren_b"), N("ren_c"), 0, done_cb, o));
  SAME_RC("rename onto existing", o->rc, rc);
  assert_int_equal(rc, SMB3_EEXIST);

  /* link with attributes: the new name is the same file, whose attributes (its two links) come
   * in the round trips of a plain setattr (CREATE + SET_INFO + QUERY_INFO + CLOSE); onto an
   * existing name it fails as smb3_link does, with no attributes */
  smb3_get_stats(c, &b0);
  RUN1(smb3_link_stat_async(c, N("ren_c"), N("link_c"), stat_cb, o));
  smb3_get_stats(c, &b1);
  SAME_RC("link_stat", o->rc, 0);
  if (!o->have_st) fail_msg("link_stat (%s): no attributes given to the callback", mode);
  assert_int_equal(b1.round_trips - b0.round_trips, strcmp(mode, "compound") ? 4 : 1);
  assert_int_equal(lt_stat_local(N("link_c")).st_ino, lt_stat_local(N("ren_c")).st_ino);
  assert_int_equal(o->st.nlink, 2);
  assert_int_equal(smb3_stat(c, N("link_c"), &sst), 0);
  assert_true(o->st.ino == sst.ino);
  rc = smb3_link(c, N("ren_c"), N("link_c"));
  RUN1(smb3_link_stat_async(c, N("ren_c"), N("link_c"), stat_cb, o));
  SAME_RC("link_stat onto existing", o->rc, rc);
  assert_int_equal(rc, SMB3_EEXIST);
  if (o->have_st) fail_msg("link_stat existing (%s): attributes given with an error", mode);
  assert_int_equal(smb3_unlink(c, N("link_c")), 0);

  /* unlink with a handle of the file closed in the same compound, before the removal: one round
   * trip, and the name gone at once (a handle still open would keep it delete-pending) */
  lt_write_local(N("cu"), "cu", 2);
  smb3_file *cuf = NULL;
  assert_int_equal(smb3_open(c, N("cu"), O_RDONLY, &cuf, NULL), 0);
  smb3_get_stats(c, &b0);
  RUN1(smb3_close_unlink_async(c, cuf, N("cu"), done_cb, o));
  smb3_get_stats(c, &b1);
  SAME_RC("close_unlink", o->rc, 0);
  assert_int_equal(b1.round_trips - b0.round_trips, strcmp(mode, "compound") ? 3 : 1);
  assert_false(lt_exists(N("cu")));

  /* close riders: the handles the callback hands over are closed in the next path operation's
   * compound, before it, in its round trip; done once, after their answers; the files are then
   * closed on the server (an unlink removes them at once, no handle keeps them delete-pending).
   * Not with nocompound: nothing is taken */
  static struct riders rd;
  memset(&rd, 0, sizeof rd);
  lt_write_local(N("rd0"), "r", 1);
  lt_write_local(N("rd1"), "r", 1);
  assert_int_equal(smb3_open(c, N("rd0"), O_RDONLY, &rd.f[0], NULL), 0);
  assert_int_equal(smb3_open(c, N("rd1"), O_RDONLY, &rd.f[1], NULL), 0);
  rd.n = 2;
  smb3_set_close_riders(c, riders_take, &rd);
  smb3_get_stats(c, &b0);
  RUN1(smb3_stat_async(c, N("rd0"), stat_cb, o));
  smb3_get_stats(c, &b1);
  smb3_set_close_riders(c, NULL, NULL);
  SAME_RC("stat with riders", o->rc, 0);
  assert_true(o->have_st);
  if (!strcmp(mode, "compound")) {
    assert_int_equal(b1.round_trips - b0.round_trips, 1);
    assert_int_equal(rd.n, 0);
    assert_int_equal(rd.done_calls, 1);
    assert_int_equal(rd.done_rc, 0);
  } else {
    assert_int_equal(rd.n, 2);
    assert_int_equal(rd.done_calls, 0);
    assert_int_equal(smb3_close(rd.f[0]), 0);
    assert_int_equal(smb3_close(rd.f[1]), 0);
  }
  assert_int_equal(smb3_unlink(c, N("rd0")), 0);
  assert_int_equal(smb3_unlink(c, N("rd1")), 0);
  assert_false(lt_exists(N("rd0")));
  assert_false(lt_exists(N("rd1")));

  /* truncate, rmdir */
  RUN1(smb3_truncate_async(c, file, 10, done_cb, o));
  SAME_RC("truncate", o->rc, 0);
  assert_int_equal(lt_stat_local(file).st_size, 10);
  RUN1(smb3_rmdir_async(c, N("newdir"), done_cb, o));
  SAME_RC("rmdir", o->rc, 0);
  assert_false(lt_exists(N("newdir")));

  /* unlink: existing, missing */
  RUN1(smb3_unlink_async(c, N("ren_b"), done_cb, o));
  SAME_RC("unlink", o->rc, 0);
  assert_false(lt_exists(N("ren_b")));
  rc = smb3_unlink(c, N("ren_b"));
  RUN1(smb3_unlink_async(c, N("ren_b"), done_cb, o));
  SAME_RC("unlink missing", o->rc, rc);
  assert_int_equal(rc, SMB3_ENOENT);

  check_once(c, ops, no, mode);
  lt_free(data);
  lt_disconnect(c);
#undef N
}

static void test_meta_compound(void **s) {
  (void)s;
  lt_guard("async metadata (compound)", 300);
  meta("compound", NULL, "am_c");
  lt_unguard();
}
static void test_meta_nocompound(void **s) {
  (void)s;
  lt_guard("async metadata (nocompound)", 300);
  meta("nocompound", "nocompound", "am_n");
  lt_unguard();
}

/* Many metadata operations in flight at once: each completes exactly once with its own result. */
#define NMETA 64
static void many_meta(const char *opts, const char *p) {
  smb3_client *c = lt_connect(opts);
  static struct op st_ops[NMETA], mk_ops[NMETA];
  memset(st_ops, 0, sizeof st_ops);
  memset(mk_ops, 0, sizeof mk_ops);
  char names[NMETA][64], dirs[NMETA][64];
  for (int i = 0; i < NMETA; i++) {
    snprintf(names[i], sizeof names[i], "%s_f%02d", p, i);
    snprintf(dirs[i], sizeof dirs[i], "%s_d%02d", p, i);
    if (i % 2 == 0) { /* odd ones are missing */
      uint8_t *d = lt_random((size_t)i * 100, (uint64_t)i);
      lt_write_local(names[i], d, (size_t)i * 100);
      lt_free(d);
    }
    if (i % 3 == 0) lt_mkdir_local(dirs[i]); /* mkdir of these must fail with EEXIST */
  }
  for (int i = 0; i < NMETA; i++) {
    int rc = smb3_stat_async(c, names[i], stat_cb, &st_ops[i]);
    if (rc) fail_msg("stat_async #%d = %d", i, rc);
    rc = smb3_mkdir_async(c, dirs[i], done_cb, &mk_ops[i]);
    if (rc) fail_msg("mkdir_async #%d = %d", i, rc);
  }
  wait_ops(st_ops, NMETA);
  wait_ops(mk_ops, NMETA);
  check_once(c, st_ops, NMETA, "many stat_async");
  check_once(c, mk_ops, NMETA, "many mkdir_async");
  for (int i = 0; i < NMETA; i++) {
    if (i % 2 == 0) {
      if (st_ops[i].rc != 0 || st_ops[i].st.size != (uint64_t)i * 100)
        fail_msg("stat_async %s = %lld size %llu, want 0 size %d", names[i], (long long)st_ops[i].rc,
                 (unsigned long long)st_ops[i].st.size, i * 100);
    } else if (st_ops[i].rc != SMB3_ENOENT) {
      fail_msg("stat_async %s (missing) = %lld, want SMB3_ENOENT", names[i], (long long)st_ops[i].rc);
    }
    int64_t want = i % 3 == 0 ? SMB3_EEXIST : 0;
    if (mk_ops[i].rc != want)
      fail_msg("mkdir_async %s = %lld, want %lld", dirs[i], (long long)mk_ops[i].rc, (long long)want);
    if (!lt_is_dir(dirs[i])) fail_msg("mkdir_async %s: no directory in the share", dirs[i]);
  }
  lt_disconnect(c);
}

static void test_many_meta(void **s) {
  (void)s;
  lt_guard("many async metadata", 300);
  many_meta(NULL, "mm_c");
  many_meta("nocompound", "mm_n");
  lt_unguard();
}

/* ---- callbacks submitting further requests: open -> write -> fstat -> close ---- */
struct chain_ctx {
  smb3_client *c;
  smb3_file *f;
  const uint8_t *data;
  size_t len;
  int step_calls[4];
  int64_t rc[4];
  struct smb3_stat st;
  int done;
};

static void chain_fail(struct chain_ctx *x, int step, int64_t rc) {
  pthread_mutex_lock(&mu);
  x->rc[step] = rc;
  x->done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void ch_closed(int rc, void *arg) {
  struct chain_ctx *x = arg;
  x->step_calls[3]++;
  chain_fail(x, 3, rc);
}
static void ch_stat(int rc, const struct smb3_stat *st, void *arg) {
  struct chain_ctx *x = arg;
  x->step_calls[2]++;
  x->rc[2] = rc;
  if (st) x->st = *st;
  int r = smb3_close_async(x->f, ch_closed, x);
  if (r) chain_fail(x, 3, r);
}
static void ch_written(int64_t result, void *arg) {
  struct chain_ctx *x = arg;
  x->step_calls[1]++;
  x->rc[1] = result;
  int r = smb3_fstat_async(x->f, ch_stat, x);
  if (r) chain_fail(x, 2, r);
}
static void ch_opened(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  (void)st;
  struct chain_ctx *x = arg;
  x->step_calls[0]++;
  x->rc[0] = rc;
  if (rc) {
    chain_fail(x, 0, rc);
    return;
  }
  x->f = f;
  int r = smb3_pwrite_async(f, x->data, x->len, 0, ch_written, x);
  if (r) chain_fail(x, 1, r);
}

static void test_callback_chaining(void **s) {
  (void)s;
  lt_guard("callback chaining", 120);
  smb3_client *c = lt_connect(NULL);
  uint8_t *data = lt_random(100000, 9);
  struct chain_ctx x = {.c = c, .data = data, .len = 100000};
  int rc = smb3_open_async(c, "chained", O_RDWR | O_CREAT | O_TRUNC, ch_opened, &x);
  if (rc) fail_msg("open_async = %d", rc);
  pthread_mutex_lock(&mu);
  while (!x.done)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  struct smb3_statvfs sv;
  assert_int_equal(smb3_statvfs(c, &sv), 0); /* flush the I/O thread */
  for (int i = 0; i < 4; i++)
    if (x.step_calls[i] != 1) fail_msg("chained step %d: callback ran %d times", i, x.step_calls[i]);
  assert_int_equal(x.rc[0], 0);
  assert_int_equal(x.rc[1], 100000);
  assert_int_equal(x.rc[2], 0);
  assert_int_equal(x.st.size, 100000);
  assert_int_equal(x.rc[3], 0);
  size_t n = 0;
  uint8_t *got = lt_read_local("chained", &n);
  assert_int_equal(n, 100000);
  lt_assert_bytes("chained write", got, data, n, 0);
  lt_free(got);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}

/* ---- whole small files: one compound each, answered on the I/O thread ---- */
static void small_files(const char *opts, const char *tag) {
  lt_guard(tag, 60);
  smb3_client *c = lt_connect(opts);
  uint8_t *data = lt_random(3000, 77);
  char name[64], other[64];
  snprintf(name, sizeof name, "small_%s", tag);
  snprintf(other, sizeof other, "small_%s_srv", tag);
  struct op ops[5];
  memset(ops, 0, sizeof ops);
  uint8_t back[4000], back2[100];
  assert_int_equal(smb3_create_file_async(c, name, data, 3000, io_cb, &ops[0]), 0);
  wait_ops(ops, 1);
  if (ops[0].rc != 3000)
    fail_msg("%s: create_file_async = %lld: %s", tag, (long long)ops[0].rc, smb3_last_error(c));
  lt_check_local(tag, name, data, 3000);
  /* it creates only: an existing name is refused, the file left as it was */
  assert_int_equal(smb3_create_file_async(c, name, data + 1, 10, io_cb, &ops[1]), 0);
  /* reading more than the file holds gives what it holds */
  assert_int_equal(smb3_read_file_async(c, name, back, sizeof back, io_cb, &ops[2]), 0);
  lt_write_local(other, "", 0);
  assert_int_equal(smb3_read_file_async(c, other, back2, sizeof back2, io_cb, &ops[3]), 0);
  assert_int_equal(smb3_read_file_async(c, "no_such_small", back2, sizeof back2, io_cb, &ops[4]), 0);
  wait_ops(ops, 5);
  check_once(c, ops, 5, tag);
  assert_int_equal(ops[1].rc, SMB3_EEXIST);
  lt_check_local(tag, name, data, 3000);
  assert_int_equal(ops[2].rc, 3000);
  lt_assert_bytes(tag, back, data, 3000, 0);
  assert_int_equal(ops[3].rc, 0);
  assert_int_equal(ops[4].rc, SMB3_ENOENT);
  /* more than one request holds: refused at once, no callback */
  assert_int_equal(smb3_read_file_async(c, name, back, (size_t)smb3_rsize(c) + 1, io_cb, &ops[0]),
                   SMB3_EINVAL);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}
static void test_small_files(void **s) {
  (void)s;
  small_files(NULL, "compound");
}
static void test_small_files_nocompound(void **s) {
  (void)s;
  small_files("nocompound", "nocompound");
}

/* SMB3_CLOSE_MANY_MAX handles closed in one compound: one round trip (one per handle with
 * nocompound), every CLOSE answered with success, and the handles really gone: an unlink then
 * removes each file at once (an open handle would keep it, delete-pending, until its close). */
static void close_many(const char *opts, const char *tag) {
  smb3_client *c = lt_connect(opts);
  lt_guard(tag, 60);
  smb3_file *files[SMB3_CLOSE_MANY_MAX + 1];
  char names[SMB3_CLOSE_MANY_MAX][64];
  for (int i = 0; i < SMB3_CLOSE_MANY_MAX; i++) {
    snprintf(names[i], sizeof names[i], "close_many_%s_%d", tag, i);
    lt_write_local(names[i], "x", 1);
    int rc = smb3_open(c, names[i], O_RDONLY, &files[i], NULL);
    if (rc) fail_msg("%s: open %s = %d: %s", tag, names[i], rc, smb3_last_error(c));
  }
  /* one too many: refused, nothing freed */
  files[SMB3_CLOSE_MANY_MAX] = files[0];
  struct op ops[1];
  memset(ops, 0, sizeof ops);
  assert_int_equal(smb3_close_many_async(files, SMB3_CLOSE_MANY_MAX + 1, done_cb, &ops[0]), SMB3_EINVAL);
  struct smb3_stats b = lt_stats(c);
  assert_int_equal(smb3_close_many_async(files, SMB3_CLOSE_MANY_MAX, done_cb, &ops[0]), 0);
  wait_ops(ops, 1);
  struct smb3_stats a = lt_stats(c);
  if (ops[0].rc) fail_msg("%s: close_many = %lld: %s", tag, (long long)ops[0].rc, smb3_last_error(c));
  uint64_t rt = a.round_trips - b.round_trips,
           closes = a.per_command[LT_CMD_CLOSE] - b.per_command[LT_CMD_CLOSE];
  if (closes != SMB3_CLOSE_MANY_MAX || rt != (opts ? (uint64_t)SMB3_CLOSE_MANY_MAX : 1))
    fail_msg("%s: %llu CLOSEs in %llu round trips, want %d in %d", tag, (unsigned long long)closes,
             (unsigned long long)rt, SMB3_CLOSE_MANY_MAX, opts ? SMB3_CLOSE_MANY_MAX : 1);
  for (int i = 0; i < SMB3_CLOSE_MANY_MAX; i++) {
    int rc = smb3_unlink(c, names[i]);
    if (rc) fail_msg("%s: unlink %s = %d: %s", tag, names[i], rc, smb3_last_error(c));
    if (lt_exists(names[i]))
      fail_msg("%s: %s still there after its unlink: a handle stayed open", tag, names[i]);
  }
  lt_disconnect(c);
  lt_unguard();
}
static void test_close_many(void **s) {
  (void)s;
  close_many(NULL, "compound");
}
static void test_close_many_nocompound(void **s) {
  (void)s;
  close_many("nocompound", "nocompound");
}

/* smb3_create_write_async: CREATE + WRITE + SET_INFO of the times in one round trip (three with
 * nocompound); the new file holds the data with the time set; the handle is the caller's (its
 * lease asked for with the key); an existing name with O_EXCL fails the open (no handle, the
 * file untouched); a file created without data or times is a CREATE alone. */
static void create_write(const char *opts, const char *tag) {
  smb3_client *c = lt_connect(opts);
  lt_guard(tag, 60);
  char name[64], other[64], empty[64];
  snprintf(name, sizeof name, "cw_%s", tag);
  snprintf(other, sizeof other, "cw_%s_there", tag);
  snprintf(empty, sizeof empty, "cw_%s_empty", tag);
  size_t len = 3000;
  uint8_t *data = lt_random(len, 7);
  struct timespec_smb3 mt = {1500000000, 0};
  uint8_t key[16] = {1, 2, 3};
  struct op ops[3];
  memset(ops, 0, sizeof ops);
  assert_int_equal(smb3_create_write_async(c, name, O_RDONLY | O_CREAT, key, 0, -1, data, len, 0, NULL, &mt,
                                           open_write_cb, &ops[0]),
                   SMB3_EINVAL);
  assert_int_equal(smb3_create_write_async(c, name, O_WRONLY | O_CREAT, key, 0, -1, data,
                                           (size_t)smb3_wsize(c) + 1, 0, NULL, &mt, open_write_cb, &ops[0]),
                   SMB3_EINVAL);
  struct smb3_stats b = lt_stats(c);
  assert_int_equal(smb3_create_write_async(c, name, O_WRONLY | O_CREAT | O_EXCL, key,
                                           SMB3_LEASE_READ | SMB3_LEASE_WRITE | SMB3_LEASE_HANDLE, -1, data,
                                           len, 0, NULL, &mt, open_write_cb, &ops[0]),
                   0);
  wait_ops(ops, 1);
  struct smb3_stats a = lt_stats(c);
  if (ops[0].rc || !ops[0].f)
    fail_msg("%s: create_write = %lld: %s", tag, (long long)ops[0].rc, smb3_last_error(c));
  if ((int64_t)ops[0].sv.bsize != (int64_t)len)
    fail_msg("%s: written %lld, want %zu", tag, (long long)ops[0].sv.bsize, len);
  if (!ops[0].st.created || !ops[0].st.ino) fail_msg("%s: the answer is not the new file's", tag);
  uint64_t rt = a.round_trips - b.round_trips;
  if (rt != (opts ? 3u : 1u) || a.per_command[LT_CMD_CREATE] - b.per_command[LT_CMD_CREATE] != 1 ||
      a.per_command[LT_CMD_WRITE] - b.per_command[LT_CMD_WRITE] != 1 ||
      a.per_command[LT_CMD_SET_INFO] - b.per_command[LT_CMD_SET_INFO] != 1)
    fail_msg("%s: %llu round trips, want %d, one CREATE, WRITE and SET_INFO", tag, (unsigned long long)rt,
             opts ? 3 : 1);
  assert_int_equal(lt_close(ops[0].f), 0);
  lt_check_local(tag, name, data, len);
  assert_int_equal((long long)lt_stat_local(name).st_mtime, 1500000000LL);
  /* an existing name with O_EXCL: the open fails, nothing is written */
  lt_write_local(other, "keep", 4);
  assert_int_equal(smb3_create_write_async(c, other, O_WRONLY | O_CREAT | O_EXCL, NULL, 0, -1, data, len, 0,
                                           NULL, &mt, open_write_cb, &ops[1]),
                   0);
  wait_ops(&ops[1], 1);
  assert_int_equal(ops[1].rc, SMB3_EEXIST);
  assert_null(ops[1].f);
  lt_check_local(tag, other, (const uint8_t *)"keep", 4);
  /* no data, no times: the CREATE alone */
  b = lt_stats(c);
  assert_int_equal(smb3_create_write_async(c, empty, O_WRONLY | O_CREAT | O_EXCL, NULL, 0, -1, NULL, 0, 0,
                                           NULL, NULL, open_write_cb, &ops[2]),
                   0);
  wait_ops(&ops[2], 1);
  a = lt_stats(c);
  assert_int_equal(ops[2].rc, 0);
  assert_int_equal((int64_t)ops[2].sv.bsize, 0);
  assert_int_equal(a.requests - b.requests, 1);
  assert_int_equal(lt_close(ops[2].f), 0);
  assert_true(lt_exists(empty));
  assert_int_equal(lt_stat_local(empty).st_size, 0);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}
static void test_create_write(void **s) {
  (void)s;
  create_write(NULL, "compound");
}
static void test_create_write_nocompound(void **s) {
  (void)s;
  create_write("nocompound", "nocompound");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_pread_many, lt_teardown),
      cmocka_unit_test_teardown(test_pread_pipe, lt_teardown),
      cmocka_unit_test_teardown(test_pwrite_many, lt_teardown),
      cmocka_unit_test_teardown(test_meta_compound, lt_teardown),
      cmocka_unit_test_teardown(test_meta_nocompound, lt_teardown),
      cmocka_unit_test_teardown(test_many_meta, lt_teardown),
      cmocka_unit_test_teardown(test_callback_chaining, lt_teardown),
      cmocka_unit_test_teardown(test_small_files, lt_teardown),
      cmocka_unit_test_teardown(test_small_files_nocompound, lt_teardown),
      cmocka_unit_test_teardown(test_close_many, lt_teardown),
      cmocka_unit_test_teardown(test_close_many_nocompound, lt_teardown),
      cmocka_unit_test_teardown(test_create_write, lt_teardown),
      cmocka_unit_test_teardown(test_create_write_nocompound, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_async", tests, NULL, NULL);
}
