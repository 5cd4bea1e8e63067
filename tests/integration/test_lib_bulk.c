/* test_lib_bulk.c - issue 3: bulk pipelined I/O.
 *
 *  - smb3_read_range / smb3_write_range / smb3_read_stream / smb3_write_stream with rsize=wsize=64K
 *    on every dialect: lengths that are not multiples of the request size at odd offsets, files
 *    smaller than one request, reads past EOF (short counts), every byte checked against the file
 *    in the share;
 *  - 64 MiB transfers on 2.1 and 3.1.1 with rsize/wsize 1M and 4M: the wire READs/WRITEs have the
 *    configured size and more than one request is in flight.
 *
 * Runs under tests/harness/with-smbd (integration.lib_bulk).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

#define K64 65536u

static const char *cur_tag = "";

/* ---- sinks and sources ---- */
struct sink {
  uint8_t *buf;
  size_t cap;
  uint64_t start, next; /* next offset expected: the sink must be called in order, contiguously */
  int calls;
};

static int sink_collect(const void *buf, size_t n, uint64_t off, void *arg) {
  struct sink *s = arg;
  if (off != s->next)
    fail_msg("%s: sink called at offset %llu, want %llu (out of order or gap)", cur_tag,
             (unsigned long long)off, (unsigned long long)s->next);
  if (off - s->start + n > s->cap)
    fail_msg("%s: sink got %zu bytes at %llu, beyond the range asked for", cur_tag, n,
             (unsigned long long)off);
  memcpy(s->buf + (off - s->start), buf, n);
  s->next += n;
  s->calls++;
  return 0;
}

struct source {
  const uint8_t *data;
  size_t len;
  uint64_t start, next;
  int calls_after_end;
};

static ssize_t source_feed(void *buf, size_t n, uint64_t off, void *arg) {
  struct source *s = arg;
  if (off != s->next)
    fail_msg("%s: source asked for offset %llu, want %llu", cur_tag, (unsigned long long)off,
             (unsigned long long)s->next);
  size_t done = (size_t)(off - s->start);
  size_t k = s->len - done < n ? s->len - done : n;
  if (k == 0) s->calls_after_end++;
  memcpy(buf, s->data + done, k);
  s->next += k;
  return (ssize_t)k;
}

/* ---- helpers ---- */
static smb3_file *open_or_fail(smb3_client *c, const char *path, int flags) {
  smb3_file *f = NULL;
  int rc = smb3_open(c, path, flags, &f, NULL);
  if (rc) fail_msg("%s: open %s = %d: %s", cur_tag, path, rc, smb3_last_error(c));
  return lt_track_file(f);
}

/* Read [off, off+len) with read_range and read_stream; the file holds data[0..fsize). */
static void check_read(smb3_client *c, smb3_file *f, const uint8_t *data, uint64_t fsize, uint64_t off,
                       size_t len) {
  uint64_t end = off + len < fsize ? off + len : fsize;
  size_t want = off < fsize ? (size_t)(end - off) : 0;
  /* read_range, with guard bytes around the caller's buffer */
  uint8_t *raw = lt_malloc(len + 64);
  assert_non_null(raw);
  memset(raw, 0xA5, len + 64);
  uint8_t *buf = raw + 32;
  ssize_t n = smb3_read_range(f, buf, len, off);
  if (n != (ssize_t)want)
    fail_msg("%s: read_range(off=%llu, len=%zu) = %zd, want %zu (file size %llu): %s", cur_tag,
             (unsigned long long)off, len, n, want, (unsigned long long)fsize,
             n < 0 ? smb3_last_error(c) : "");
  const uint8_t *exp = want ? data + off : data;
  lt_assert_bytes(cur_tag, buf, exp, want, off);
  for (int i = 0; i < 32; i++)
    if (raw[i] != 0xA5 || raw[32 + len + (size_t)i] != 0xA5)
      fail_msg("%s: read_range(off=%llu, len=%zu) wrote outside the caller's buffer", cur_tag,
               (unsigned long long)off, len);
  /* read_stream */
  memset(buf, 0, len);
  struct sink s = {buf, len, off, off, 0};
  int64_t r = smb3_read_stream(f, off, len, sink_collect, &s, NULL, NULL);
  if (r != (int64_t)want)
    fail_msg("%s: read_stream(off=%llu, len=%zu) = %lld, want %zu: %s", cur_tag, (unsigned long long)off, len,
             (long long)r, want, r < 0 ? smb3_last_error(c) : "");
  if (s.next - off != want)
    fail_msg("%s: read_stream(off=%llu, len=%zu): the sink got %llu bytes, the call returned %lld", cur_tag,
             (unsigned long long)off, len, (unsigned long long)(s.next - off), (long long)r);
  lt_assert_bytes(cur_tag, buf, exp, want, off);
  lt_free(raw);
}

/* ---- every dialect, rsize = wsize = 64 KiB ---- */
static void bulk_dialect(const char *vers, uint16_t dialect) {
  char opts[128], tag[64];
  snprintf(opts, sizeof opts, "vers=%s,rsize=64K,wsize=64K,timeout=60", vers);
  snprintf(tag, sizeof tag, "vers=%s", vers);
  cur_tag = tag;
  lt_guard(tag, 300);
  smb3_client *c = lt_connect(opts);
  assert_int_equal(smb3_dialect(c), dialect);
  assert_int_equal(smb3_rsize(c), K64);
  assert_int_equal(smb3_wsize(c), K64);
  char src[64], small[64], empty[64], w[64], ws[64], ws2[64], ws0[64];
  snprintf(src, sizeof src, "bulk_%s_src", vers);
  snprintf(small, sizeof small, "bulk_%s_small", vers);
  snprintf(empty, sizeof empty, "bulk_%s_empty", vers);
  snprintf(w, sizeof w, "bulk_%s_w", vers);
  snprintf(ws, sizeof ws, "bulk_%s_ws", vers);
  snprintf(ws2, sizeof ws2, "bulk_%s_ws2", vers);
  snprintf(ws0, sizeof ws0, "bulk_%s_ws0", vers);

  /* reads */
  const size_t fsize = 4 * K64 + 333;
  uint8_t *data = lt_random(fsize, 100 + dialect);
  lt_write_local(src, data, fsize);
  smb3_file *f = open_or_fail(c, src, O_RDONLY);
  const struct {
    uint64_t off;
    size_t len;
  } rd[] = {
      {1, 1},
      {3, K64 - 1},
      {7, K64 + 1},
      {13, 3 * K64 + 5},
      {0, fsize},
      {K64, K64},
      {K64 - 1, 2},
      {fsize - 100, 1000},        /* past EOF: short count */
      {fsize - K64 - 1, 3 * K64}, /* past EOF in the second request */
      {fsize - 1, 1},
      {fsize, 10},             /* at EOF: 0 */
      {fsize + 1000, K64 + 7}, /* beyond EOF: 0 */
      {5, fsize + 3 * K64},    /* the whole file and more */
  };
  for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++)
    check_read(c, f, data, fsize, rd[i].off, rd[i].len);
  assert_int_equal(lt_close(f), 0);

  /* a file smaller than one request, and an empty one */
  lt_write_local(small, data, 100);
  f = open_or_fail(c, small, O_RDONLY);
  check_read(c, f, data, 100, 0, 3 * K64);
  check_read(c, f, data, 100, 0, 100);
  check_read(c, f, data, 100, 99, K64);
  check_read(c, f, data, 100, 37, 10);
  assert_int_equal(lt_close(f), 0);
  lt_write_local(empty, "", 0);
  f = open_or_fail(c, empty, O_RDONLY);
  check_read(c, f, data, 0, 0, K64 + 1);
  assert_int_equal(lt_close(f), 0);

  /* write_range: overlapping pieces at odd offsets, a hole, then compare with the share */
  const size_t wcap = 400000 + K64 + 1;
  uint8_t *ref = lt_calloc(1, wcap);
  assert_non_null(ref);
  size_t wlen = 0;
  f = open_or_fail(c, w, O_RDWR | O_CREAT | O_TRUNC);
  const struct {
    uint64_t off;
    size_t len;
    uint64_t seed;
  } wr[] = {
      {13, 3 * K64 + 5, 1},       {7, K64 + 1, 2},  {3, K64 - 1, 3}, {1, 1, 4},
      {2 * K64 + 11, 2 * K64, 5}, {400001, K64, 6}, /* beyond EOF: leaves a hole */
  };
  for (size_t i = 0; i < sizeof wr / sizeof wr[0]; i++) {
    uint8_t *piece = lt_random(wr[i].len, 1000 + wr[i].seed);
    ssize_t n = smb3_write_range(f, piece, wr[i].len, wr[i].off);
    if (n != (ssize_t)wr[i].len)
      fail_msg("%s: write_range(off=%llu, len=%zu) = %zd: %s", tag, (unsigned long long)wr[i].off, wr[i].len,
               n, n < 0 ? smb3_last_error(c) : "");
    memcpy(ref + wr[i].off, piece, wr[i].len);
    if (wr[i].off + wr[i].len > wlen) wlen = (size_t)(wr[i].off + wr[i].len);
    lt_free(piece);
  }
  /* what the handle reads back is what the share holds */
  check_read(c, f, ref, wlen, 0, wlen + 10);
  assert_int_equal(lt_close(f), 0);
  lt_check_local(cur_tag, w, ref, wlen);
  lt_free(ref);

  /* write_stream: 3*64K+5 bytes at offset 7 of a new file */
  const size_t slen = 3 * K64 + 5;
  uint8_t *sdata = lt_random(slen, 200 + dialect);
  f = open_or_fail(c, ws, O_RDWR | O_CREAT | O_TRUNC);
  struct source so = {sdata, slen, 7, 7, 0};
  int64_t r = smb3_write_stream(f, 7, source_feed, &so, NULL, NULL);
  if (r != (int64_t)slen)
    fail_msg("%s: write_stream(off=7, %zu bytes) = %lld: %s", tag, slen, (long long)r,
             r < 0 ? smb3_last_error(c) : "");
  assert_int_equal(lt_close(f), 0);
  uint8_t *want = lt_calloc(1, slen + 7);
  assert_non_null(want);
  memcpy(want + 7, sdata, slen);
  lt_check_local(cur_tag, ws, want, slen + 7);
  lt_free(want);
  /* exactly two requests' worth, into the middle of an existing file */
  uint8_t *base = lt_random(5 * K64, 300 + dialect);
  lt_write_local(ws2, base, 5 * K64);
  f = open_or_fail(c, ws2, O_RDWR);
  struct source so2 = {sdata, 2 * K64, K64 + 3, K64 + 3, 0};
  r = smb3_write_stream(f, K64 + 3, source_feed, &so2, NULL, NULL);
  if (r != (int64_t)(2 * K64))
    fail_msg("%s: write_stream(2 x 64K at 64K+3) = %lld: %s", tag, (long long)r,
             r < 0 ? smb3_last_error(c) : "");
  assert_int_equal(lt_close(f), 0);
  memcpy(base + K64 + 3, sdata, 2 * K64);
  lt_check_local(cur_tag, ws2, base, 5 * K64);
  lt_free(base);
  /* nothing to write */
  f = open_or_fail(c, ws0, O_RDWR | O_CREAT | O_TRUNC);
  struct source so0 = {sdata, 0, 0, 0, 0};
  r = smb3_write_stream(f, 0, source_feed, &so0, NULL, NULL);
  assert_int_equal(r, 0);
  assert_int_equal(lt_close(f), 0);
  lt_check_local(cur_tag, ws0, sdata, 0);
  lt_free(sdata);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}

static void test_bulk_202(void **s) {
  (void)s;
  bulk_dialect("2.0.2", 0x0202);
}
static void test_bulk_21(void **s) {
  (void)s;
  bulk_dialect("2.1", 0x0210);
}
static void test_bulk_30(void **s) {
  (void)s;
  bulk_dialect("3.0", 0x0300);
}
static void test_bulk_302(void **s) {
  (void)s;
  bulk_dialect("3.0.2", 0x0302);
}
static void test_bulk_311(void **s) {
  (void)s;
  bulk_dialect("3.1.1", 0x0311);
}

/* ---- 64 MiB: request sizes and pipelining ---- */
#define BIG (64u << 20)

/* Sizes and counts of a 64 MiB transfer's wire requests, and that more than one was in flight at
 * once. With `overlapped` the last is not a failure: *overlapped tells whether it happened. */
static void check_wire_overlap(const char *what, smb3_client *c, const struct smb3_stats *b, int is_read,
                               uint32_t size, int *overlapped) {
  struct smb3_stats a = lt_stats(c);
  uint64_t n = is_read ? a.reads - b->reads : a.writes - b->writes;
  uint64_t cmd = is_read ? a.per_command[LT_CMD_READ] - b->per_command[LT_CMD_READ]
                         : a.per_command[LT_CMD_WRITE] - b->per_command[LT_CMD_WRITE];
  uint32_t max = is_read ? a.max_read_size : a.max_write_size;
  uint32_t eff = is_read ? smb3_rsize(c) : smb3_wsize(c);
  print_message("%s %s: %llu requests, largest %u, credits in flight at most %u\n", cur_tag, what,
                (unsigned long long)n, max, a.credits_max_in_flight);
  if (eff != size)
    fail_msg("%s: smb3_%csize() = %u, want the configured %u", cur_tag, is_read ? 'r' : 'w', eff, size);
  if (max != size)
    fail_msg("%s %s: largest wire request %u bytes, want the configured %u", cur_tag, what, max, size);
  if (n != BIG / size || cmd != n)
    fail_msg("%s %s: %llu wire requests (%llu by command count) for 64 MiB, want %u", cur_tag, what,
             (unsigned long long)n, (unsigned long long)cmd, BIG / size);
  if (overlapped) {
    *overlapped = a.credits_max_in_flight > size / K64;
    return;
  }
  if (a.credits_max_in_flight <= size / K64)
    fail_msg("%s %s: at most %u credits in flight: not more than one %u-byte request (charge %u) at a time",
             cur_tag, what, a.credits_max_in_flight, size, size / K64);
}

static void check_wire(const char *what, smb3_client *c, const struct smb3_stats *b, int is_read,
                       uint32_t size) {
  check_wire_overlap(what, c, b, is_read, size, NULL);
}

enum phase { PHASE_READ_STREAM, PHASE_WRITE_STREAM, PHASE_READ_RANGE };
static const char *const phase_name[] = {"read_stream", "write_stream", "read_range"};

/* One 64 MiB transfer on a fresh connection (so the in-flight maximum is its own), up to three
 * times until more than one request was in flight at once. Reads check what came back against
 * `data` (into `scratch`, or a buffer of their own); the write stream sends `data` and the file
 * is checked on the share. */
static void overlap_phase(const char *tag, const char *opts, uint32_t size, enum phase ph, const char *rel,
                          const uint8_t *data, uint8_t *scratch) {
  const char *what = phase_name[ph];
  int is_read = ph != PHASE_WRITE_STREAM, overlapped = 0;
  uint8_t *back = is_read ? (scratch ? scratch : lt_malloc(BIG)) : NULL;
  if (is_read) assert_non_null(back);
  for (int attempt = 0; attempt < 3 && !overlapped; attempt++) {
    smb3_client *c = lt_connect(opts);
    smb3_file *f = open_or_fail(c, rel, is_read ? O_RDONLY : O_RDWR | O_CREAT | O_TRUNC);
    struct smb3_stats b = lt_stats(c);
    int64_t r;
    if (ph == PHASE_WRITE_STREAM) {
      struct source so = {data, BIG, 0, 0, 0};
      r = smb3_write_stream(f, 0, source_feed, &so, NULL, NULL);
    } else {
      memset(back, 0, BIG);
      struct sink s = {back, BIG, 0, 0, 0};
      r = ph == PHASE_READ_STREAM ? smb3_read_stream(f, 0, BIG, sink_collect, &s, NULL, NULL)
                                  : smb3_read_range(f, back, BIG, 0);
    }
    if (r != (int64_t)BIG) fail_msg("%s: %s 64 MiB = %lld: %s", tag, what, (long long)r, smb3_last_error(c));
    check_wire_overlap(what, c, &b, is_read, size, &overlapped);
    if (is_read) lt_assert_bytes(what, back, data, BIG, 0);
    assert_int_equal(lt_close(f), 0);
    lt_disconnect(c);
    if (!is_read) lt_check_local(cur_tag, rel, data, BIG);
  }
  if (!overlapped)
    fail_msg("%s %s: in three runs never more than one %u-byte request in flight at a time", tag, what, size);
  if (back != scratch) lt_free(back);
}

static void big_transfer(const char *vers, const char *size_opt, uint32_t size) {
  char opts[128], tag[64], rel[64], rel2[64];
  snprintf(opts, sizeof opts, "vers=%s,rsize=%s,wsize=%s,timeout=60", vers, size_opt, size_opt);
  snprintf(tag, sizeof tag, "vers=%s size=%s", vers, size_opt);
  snprintf(rel, sizeof rel, "big_%s_%s", vers, size_opt);
  snprintf(rel2, sizeof rel2, "big_%s_%s_s", vers, size_opt);
  cur_tag = tag;
  lt_guard(tag, 300);
  uint8_t *data = lt_random(BIG, size), *back = lt_malloc(BIG);
  assert_non_null(back);

  /* write_range on a fresh connection (so the in-flight maximum is this transfer's) */
  smb3_client *c = lt_connect(opts);
  smb3_file *f = open_or_fail(c, rel, O_RDWR | O_CREAT | O_TRUNC);
  struct smb3_stats b = lt_stats(c);
  ssize_t n = smb3_write_range(f, data, BIG, 0);
  if (n != (ssize_t)BIG) fail_msg("%s: write_range 64 MiB = %zd: %s", tag, n, smb3_last_error(c));
  check_wire("write_range", c, &b, 0, size);
  assert_int_equal(lt_close(f), 0);
  lt_disconnect(c);
  lt_check_local(cur_tag, rel, data, BIG);

  /* read_stream, write_stream of other data, read_range. Reads are paced (the next READ goes out
   * when the one streaming is near its end) and the write stream fills each request's buffer from
   * the source (a 4 MiB copy) before sending it: on a loaded machine (parallel tests, sanitizers)
   * a READ can be whole, or a WRITE answered, before the next goes out. So the overlap of each is
   * required in at least one of three runs (an engine that never overlaps fails all three). */
  lt_fill(back, BIG, size + 7); /* write_stream's data */
  overlap_phase(tag, opts, size, PHASE_READ_STREAM, rel, data, NULL);
  overlap_phase(tag, opts, size, PHASE_WRITE_STREAM, rel2, back, NULL);
  memcpy(data, back, BIG);
  overlap_phase(tag, opts, size, PHASE_READ_RANGE, rel2, data, back);

  /* keep the share small */
  char *p = lt_local(rel);
  unlink(p);
  lt_free(p);
  p = lt_local(rel2);
  unlink(p);
  lt_free(p);
  lt_free(back);
  lt_free(data);
  lt_unguard();
}

static void test_big_21_1m(void **s) {
  (void)s;
  big_transfer("2.1", "1M", 1u << 20);
}
static void test_big_21_4m(void **s) {
  (void)s;
  big_transfer("2.1", "4M", 4u << 20);
}
static void test_big_311_1m(void **s) {
  (void)s;
  big_transfer("3.1.1", "1M", 1u << 20);
}
static void test_big_311_4m(void **s) {
  (void)s;
  big_transfer("3.1.1", "4M", 4u << 20);
}

/* ---- smb3_write_from_fd: a local file's range, sent with sendfile (or read, when signed) ---- */
struct prog {
  uint64_t last, calls;
  int backwards;
  int shrink_fd; /* >= 0: cut this file short at the first report after some data went out */
};
static void prog_cb(uint64_t done, void *arg) {
  struct prog *p = arg;
  if (done < p->last) p->backwards = 1;
  p->last = done;
  p->calls++;
  if (p->shrink_fd >= 0 && done > 0) {
    if (ftruncate(p->shrink_fd, 4096)) fail_msg("ftruncate: %s", strerror(errno));
    p->shrink_fd = -1;
  }
}

static int local_temp(const uint8_t *data, size_t len) {
  char name[] = "/tmp/smb3-fromfd-XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0) fail_msg("mkstemp: %s", strerror(errno));
  unlink(name);
  for (size_t done = 0; done < len;) {
    ssize_t w = write(fd, data + done, len - done);
    if (w <= 0) fail_msg("write: %s", strerror(errno));
    done += (size_t)w;
  }
  return fd;
}

static void from_fd(const char *opts, const char *tag, uint32_t wsize) {
  cur_tag = tag;
  lt_guard(tag, 300);
  smb3_client *c = lt_connect(opts);
  assert_int_equal(smb3_wsize(c), wsize);
  const size_t fsize = 3 * (size_t)wsize + 12345;
  uint8_t *data = lt_random(fsize, 4242 + wsize);
  int fd = local_temp(data, fsize);
  char rel[64];
  snprintf(rel, sizeof rel, "fromfd_%s", tag);
  /* an odd part of the file (not a multiple of wsize, from an odd offset) to an odd remote offset */
  const uint64_t fd_off = 777, roff = 4097;
  const uint64_t len = fsize - fd_off - 5;
  smb3_file *f = open_or_fail(c, rel, O_RDWR | O_CREAT | O_TRUNC);
  struct prog p = {0, 0, 0, -1};
  int64_t r = smb3_write_from_fd(f, roff, fd, fd_off, len, prog_cb, &p);
  if (r != (int64_t)len)
    fail_msg("%s: write_from_fd = %lld, want %llu: %s", tag, (long long)r, (unsigned long long)len,
             r < 0 ? smb3_last_error(c) : "");
  if (p.backwards || p.last != len || !p.calls)
    fail_msg("%s: progress ended at %llu of %llu (%llu calls%s)", tag, (unsigned long long)p.last,
             (unsigned long long)len, (unsigned long long)p.calls, p.backwards ? ", backwards" : "");
  /* a piece smaller than one request, over the start */
  r = smb3_write_from_fd(f, 0, fd, 0, 100, NULL, NULL);
  assert_int_equal(r, 100);
  /* nothing to write, and ranges that are not inside the file */
  assert_int_equal(smb3_write_from_fd(f, 0, fd, fsize, 0, NULL, NULL), 0);
  assert_int_equal(smb3_write_from_fd(f, 0, fd, fsize - 10, 11, NULL, NULL), SMB3_EINVAL);
  assert_int_equal(smb3_write_from_fd(f, 0, fd, fsize + 1, 0, NULL, NULL), SMB3_EINVAL);
  int pp[2];
  assert_int_equal(pipe(pp), 0);
  assert_int_equal(smb3_write_from_fd(f, 0, pp[0], 0, 1, NULL, NULL), SMB3_EINVAL);
  close(pp[0]);
  close(pp[1]);
  /* a descriptor open for writing only cannot be read from */
  char wname[] = "/tmp/smb3-fromfd-wo-XXXXXX";
  int wfd = mkstemp(wname);
  assert_true(wfd >= 0);
  int wo = open(wname, O_WRONLY);
  unlink(wname);
  close(wfd);
  assert_true(wo >= 0);
  assert_int_equal(write(wo, "abc", 3), 3);
  assert_int_equal(smb3_write_from_fd(f, 0, wo, 0, 3, NULL, NULL), SMB3_EINVAL);
  close(wo);
  assert_int_equal(lt_close(f), 0);
  uint8_t *want = lt_calloc(1, roff + len);
  memcpy(want + roff, data + fd_off, (size_t)len);
  memcpy(want, data, 100);
  lt_check_local(cur_tag, rel, want, (size_t)(roff + len));
  /* the local file's offset was not moved */
  assert_int_equal(lseek(fd, 0, SEEK_CUR), (off_t)fsize);
  close(fd);
  lt_free(want);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}
static void test_from_fd_311(void **s) {
  (void)s;
  from_fd("vers=3.1.1,wsize=1M", "3.1.1", 1u << 20);
}
static void test_from_fd_202(void **s) {
  (void)s;
  from_fd("vers=2.0.2", "2.0.2", K64);
}
static void test_from_fd_signed(void **s) {
  (void)s;
  from_fd("vers=3.1.1,wsize=1M,sign", "signed", 1u << 20);
}
static void test_from_fd_sealed(void **s) {
  (void)s;
  from_fd("vers=3.1.1,wsize=1M,seal", "sealed", 1u << 20);
}

/* The local file is cut short while its data is being sent: the frames already announced cannot be
 * completed, so the connection is given up and the call fails (never a hang, never a success). */
static void test_from_fd_shrinks(void **s) {
  (void)s;
  cur_tag = "shrinks";
  lt_guard(cur_tag, 120);
  smb3_client *c = lt_connect("vers=3.1.1,wsize=1M");
  const size_t fsize = 64u << 20;
  uint8_t *data = lt_random(fsize, 99);
  int fd = local_temp(data, fsize);
  smb3_file *f = open_or_fail(c, "fromfd_shrinks", O_RDWR | O_CREAT | O_TRUNC);
  struct prog p = {0, 0, 0, fd};
  int64_t r = smb3_write_from_fd(f, 0, fd, 0, fsize, prog_cb, &p);
  if (r >= 0)
    fail_msg("write_from_fd of a file cut to 4 KiB during the transfer returned %lld", (long long)r);
  if (!strstr(smb3_last_error(c), "was cut to"))
    fail_msg("write_from_fd of a file cut short: the error does not name the cause: %s", smb3_last_error(c));
  close(fd);
  lt_free(data);
  lt_close(f);
  lt_disconnect(c);
  lt_unguard();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_bulk_202, lt_teardown),
      cmocka_unit_test_teardown(test_bulk_21, lt_teardown),
      cmocka_unit_test_teardown(test_bulk_30, lt_teardown),
      cmocka_unit_test_teardown(test_bulk_302, lt_teardown),
      cmocka_unit_test_teardown(test_bulk_311, lt_teardown),
      cmocka_unit_test_teardown(test_big_21_1m, lt_teardown),
      cmocka_unit_test_teardown(test_big_21_4m, lt_teardown),
      cmocka_unit_test_teardown(test_big_311_1m, lt_teardown),
      cmocka_unit_test_teardown(test_big_311_4m, lt_teardown),
      cmocka_unit_test_teardown(test_from_fd_311, lt_teardown),
      cmocka_unit_test_teardown(test_from_fd_202, lt_teardown),
      cmocka_unit_test_teardown(test_from_fd_signed, lt_teardown),
      cmocka_unit_test_teardown(test_from_fd_sealed, lt_teardown),
      cmocka_unit_test_teardown(test_from_fd_shrinks, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_bulk", tests, NULL, NULL);
}
