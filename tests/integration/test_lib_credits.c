/* test_lib_credits.c - issue 3: a server that grants few credits.
 *
 * Runs under with-smbd --global "smb2 max credits = 16" (integration.lib_credits). A 64 MiB
 * transfer asked for with rsize = wsize = 4M (a 4 MiB request costs 64 credits, more than the
 * server will ever grant), or 1M (16 credits, all of them), must still complete with the right bytes:
 * requests are limited by the credits the server grants and the core queues the rest. It must not hang (a
 * guard turns a hang into a failure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

#define BIG (64u << 20)

static const char *cur_tag = "";

struct sink {
  uint8_t *buf;
  uint64_t next;
};
static int sink_collect(const void *buf, size_t n, uint64_t off, void *arg) {
  struct sink *s = arg;
  if (off != s->next || off + n > BIG)
    fail_msg("%s: sink at %llu (+%zu), want %llu", cur_tag, (unsigned long long)off, n,
             (unsigned long long)s->next);
  memcpy(s->buf + off, buf, n);
  s->next += n;
  return 0;
}

struct source {
  const uint8_t *data;
};
static ssize_t source_feed(void *buf, size_t n, uint64_t off, void *arg) {
  struct source *s = arg;
  size_t k = off >= BIG ? 0 : (BIG - off < n ? (size_t)(BIG - off) : n);
  memcpy(buf, s->data + off, k);
  return (ssize_t)k;
}

static void check_credits(smb3_client *c, const char *what) {
  struct smb3_stats s = lt_stats(c);
  print_message("%s %s: rsize %u wsize %u, largest READ %u WRITE %u, credits in flight at most %u\n", cur_tag,
                what, smb3_rsize(c), smb3_wsize(c), s.max_read_size, s.max_write_size,
                s.credits_max_in_flight);
  /* No bound is asserted on credits_max_in_flight: it counts requests awaiting their final
   * response, and a request that got an interim (STATUS_PENDING) response no longer holds a credit
   * on the server (Samba then grants more), so the count legitimately exceeds 16. Spending more
   * credits than granted would make Samba drop the connection, which the transfers would show. */
}

static void few_credits(const char *vers, const char *size) {
  char opts[128], tag[64], rel[64];
  snprintf(opts, sizeof opts, "vers=%s,rsize=%s,wsize=%s,timeout=30", vers, size, size);
  snprintf(tag, sizeof tag, "vers=%s (max credits 16, rsize=wsize=%s)", vers, size);
  snprintf(rel, sizeof rel, "credits_%s_%s", vers, size);
  cur_tag = tag;
  lt_guard(tag, 400);
  uint8_t *data = lt_random(BIG, 77), *back = lt_malloc(BIG);
  assert_non_null(back);

  smb3_client *c = lt_connect(opts);
  smb3_file *f = NULL;
  int rc = smb3_open(c, rel, O_RDWR | O_CREAT | O_TRUNC, &f, NULL);
  if (rc) fail_msg("%s: open = %d: %s", tag, rc, smb3_last_error(c));
  lt_track_file(f);
  ssize_t n = smb3_write_range(f, data, BIG, 0);
  if (n != (ssize_t)BIG)
    fail_msg("%s: write_range 64 MiB = %zd (%s): %s", tag, n, smb3_strerror((int)n), smb3_last_error(c));
  check_credits(c, "write_range");
  n = smb3_read_range(f, back, BIG, 0);
  if (n != (ssize_t)BIG)
    fail_msg("%s: read_range 64 MiB = %zd (%s): %s", tag, n, smb3_strerror((int)n), smb3_last_error(c));
  lt_assert_bytes("read_range", back, data, BIG, 0);
  check_credits(c, "read_range");
  assert_int_equal(lt_close(f), 0);
  size_t ln;
  uint8_t *local = lt_read_local(rel, &ln);
  assert_int_equal(ln, BIG);
  lt_assert_bytes("file in the share after write_range", local, data, BIG, 0);
  lt_free(local);

  /* streams: other data */
  lt_fill(data, BIG, 78);
  rc = smb3_open(c, rel, O_RDWR | O_TRUNC, &f, NULL);
  if (rc) fail_msg("%s: reopen = %d: %s", tag, rc, smb3_last_error(c));
  lt_track_file(f);
  struct source so = {data};
  int64_t r = smb3_write_stream(f, 0, source_feed, &so, NULL, NULL);
  if (r != (int64_t)BIG)
    fail_msg("%s: write_stream 64 MiB = %lld: %s", tag, (long long)r, smb3_last_error(c));
  memset(back, 0, BIG);
  struct sink si = {back, 0};
  r = smb3_read_stream(f, 0, BIG, sink_collect, &si, NULL, NULL);
  if (r != (int64_t)BIG) fail_msg("%s: read_stream 64 MiB = %lld: %s", tag, (long long)r, smb3_last_error(c));
  lt_assert_bytes("read_stream", back, data, BIG, 0);
  check_credits(c, "streams");
  assert_int_equal(lt_close(f), 0);
  /* metadata still works on the same connection */
  struct smb3_stat st;
  rc = smb3_stat(c, rel, &st);
  if (rc) fail_msg("%s: stat = %d: %s", tag, rc, smb3_last_error(c));
  assert_int_equal(st.size, BIG);
  lt_disconnect(c);
  char *p = lt_local(rel);
  unlink(p);
  lt_free(p);
  lt_free(back);
  lt_free(data);
  lt_unguard();
}

static void test_few_credits_21(void **s) {
  (void)s;
  few_credits("2.1", "4M");
}
static void test_few_credits_311(void **s) {
  (void)s;
  few_credits("3.1.1", "4M");
}
/* 1 MiB requests cost exactly 16 credits (MS-SMB2 3.1.5.2: by the data length), all the server has. */
static void test_few_credits_311_1m(void **s) {
  (void)s;
  few_credits("3.1.1", "1M");
}

/* Without multi-credit requests (2.0.2) every request costs one credit anyway. */
static void test_few_credits_202(void **s) {
  (void)s;
  cur_tag = "vers=2.0.2 (max credits 16)";
  lt_guard(cur_tag, 400);
  size_t len = 8u << 20;
  uint8_t *data = lt_random(len, 79), *back = lt_malloc(len);
  assert_non_null(back);
  smb3_client *c = lt_connect("vers=2.0.2,timeout=30");
  smb3_file *f = NULL;
  int rc = smb3_open(c, "credits_202", O_RDWR | O_CREAT | O_TRUNC, &f, NULL);
  if (rc) fail_msg("%s: open = %d: %s", cur_tag, rc, smb3_last_error(c));
  lt_track_file(f);
  ssize_t n = smb3_write_range(f, data, len, 0);
  if (n != (ssize_t)len) fail_msg("%s: write_range = %zd: %s", cur_tag, n, smb3_last_error(c));
  n = smb3_read_range(f, back, len, 0);
  if (n != (ssize_t)len) fail_msg("%s: read_range = %zd: %s", cur_tag, n, smb3_last_error(c));
  lt_assert_bytes("read_range", back, data, len, 0);
  check_credits(c, "ranges");
  assert_int_equal(lt_close(f), 0);
  lt_disconnect(c);
  lt_free(back);
  lt_free(data);
  lt_unguard();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_few_credits_202, lt_teardown),
      cmocka_unit_test_teardown(test_few_credits_21, lt_teardown),
      cmocka_unit_test_teardown(test_few_credits_311, lt_teardown),
      cmocka_unit_test_teardown(test_few_credits_311_1m, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_credits", tests, NULL, NULL);
}
