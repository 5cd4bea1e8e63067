/* test_lib_secure.c - issue 4: compounding works on signed sessions (2.0.2, 2.1, 3.0, 3.0.2,
 * 3.1.1) and on encrypted ones (3.0, 3.0.2, 3.1.1): every compounded operation still takes one
 * round trip and gives the right result, a failing chain reports its error, and bulk reads and
 * writes (zero-copy receive of signed/sealed READ responses) carry the right bytes.
 *
 * Runs under with-smbd --global "server signing = mandatory" (integration.lib_secure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static uint64_t rt_of(smb3_client *c, const struct smb3_stats *before) {
  struct smb3_stats a = lt_stats(c);
  return a.round_trips - before->round_trips;
}

#define ONE_RT(c, what, stmt)                                                                                \
  do {                                                                                                       \
    struct smb3_stats b_ = lt_stats(c);                                                                      \
    int rc_ = (stmt);                                                                                        \
    if (rc_ < 0) fail_msg("%s: %s = %d (%s): %s", tag, what, rc_, smb3_strerror(rc_), smb3_last_error(c));   \
    uint64_t rt_ = rt_of(c, &b_);                                                                            \
    if (rt_ != 1) fail_msg("%s: %s took %llu round trips, want 1", tag, what, (unsigned long long)rt_);      \
  } while (0)

static char *nm(const char *tag, const char *what) {
  static char buf[16][256];
  static int k;
  char *b = buf[k++ & 15];
  snprintf(b, 256, "%s_%s", tag, what);
  return b;
}

static void scenario(smb3_client *c, const char *tag) {
  const char *f = nm(tag, "f"), *f2 = nm(tag, "f2"), *d = nm(tag, "newdir"), *ld = nm(tag, "list");
  uint8_t *data = lt_random(3000, 11);
  lt_write_local(f, data, 3000);
  struct smb3_stat st;
  ONE_RT(c, "stat", smb3_stat(c, f, &st));
  assert_int_equal(st.size, 3000);
  struct smb3_statvfs sv;
  ONE_RT(c, "statvfs", smb3_statvfs(c, &sv));
  assert_true(sv.blocks > 0);
  ONE_RT(c, "mkdir", smb3_mkdir(c, d));
  assert_true(lt_is_dir(d));
  ONE_RT(c, "rename", smb3_rename(c, f, f2, 0));
  assert_false(lt_exists(f));
  assert_true(lt_exists(f2));
  ONE_RT(c, "truncate", smb3_truncate(c, f2, 100));
  assert_int_equal(lt_stat_local(f2).st_size, 100);
  struct timespec_smb3 t = {1234567890, 0};
  ONE_RT(c, "utimens", smb3_utimens(c, f2, &t, &t));
  assert_int_equal(lt_stat_local(f2).st_mtim.tv_sec, t.sec);
  /* a failing chain on a signed/sealed session */
  struct smb3_stats b = lt_stats(c);
  int rc = smb3_stat(c, nm(tag, "missing"), &st);
  if (rc != SMB3_ENOENT)
    fail_msg("%s: stat missing = %d (%s), want SMB3_ENOENT: %s", tag, rc, smb3_strerror(rc),
             smb3_last_error(c));
  assert_int_equal(rt_of(c, &b), 1);
  b = lt_stats(c);
  rc = smb3_mkdir(c, d);
  if (rc != SMB3_EEXIST)
    fail_msg("%s: mkdir existing = %d (%s), want SMB3_EEXIST: %s", tag, rc, smb3_strerror(rc),
             smb3_last_error(c));
  assert_int_equal(rt_of(c, &b), 1);
  ONE_RT(c, "rmdir", smb3_rmdir(c, d));
  assert_false(lt_exists(d));
  ONE_RT(c, "unlink", smb3_unlink(c, f2));
  assert_false(lt_exists(f2));
  const char *wf = nm(tag, "whole");
  ONE_RT(c, "write_file", (int)smb3_write_file(c, wf, data, 3000));
  uint8_t buf[4000];
  struct smb3_stats b2 = lt_stats(c);
  ssize_t got = smb3_read_file(c, wf, buf, sizeof buf);
  if (got != 3000) fail_msg("%s: read_file = %zd: %s", tag, got, smb3_last_error(c));
  assert_int_equal(rt_of(c, &b2), 1);
  lt_assert_bytes("read_file", buf, data, 3000, 0);
  /* a listing of a few long names */
  lt_mkdir_local(ld);
  for (int i = 0; i < 300; i++) {
    char rel[512];
    snprintf(rel, sizeof rel, "%s/%03d_%0200d", ld, i, 0);
    lt_write_local(rel, "", 0);
  }
  smb3_dir *dir;
  rc = smb3_opendir(c, ld, &dir);
  if (rc) fail_msg("%s: opendir = %d: %s", tag, rc, smb3_last_error(c));
  struct smb3_dirent e;
  int count = 0;
  while ((rc = smb3_readdir(dir, &e)) == 1)
    count++;
  if (rc) fail_msg("%s: readdir = %d: %s", tag, rc, smb3_last_error(c));
  assert_int_equal(smb3_closedir(dir), 0);
  assert_int_equal(count, 300);
  /* bulk: 3 MiB + 5 written and read back (several wire requests) */
  size_t big = (3u << 20) + 5;
  uint8_t *bdata = lt_random(big, 12), *back = lt_malloc(big);
  assert_non_null(back);
  smb3_file *fh;
  rc = smb3_open(c, nm(tag, "big"), O_RDWR | O_CREAT | O_TRUNC, &fh, NULL);
  if (rc) fail_msg("%s: open = %d: %s", tag, rc, smb3_last_error(c));
  lt_track_file(fh);
  ssize_t n = smb3_write_range(fh, bdata, big, 0);
  if (n != (ssize_t)big) fail_msg("%s: write_range = %zd: %s", tag, n, smb3_last_error(c));
  n = smb3_read_range(fh, back, big, 0);
  if (n != (ssize_t)big) fail_msg("%s: read_range = %zd: %s", tag, n, smb3_last_error(c));
  lt_assert_bytes("read back", back, bdata, big, 0);
  assert_int_equal(lt_close(fh), 0);
  size_t ln;
  uint8_t *local = lt_read_local(nm(tag, "big"), &ln);
  assert_int_equal(ln, big);
  lt_assert_bytes("file in the share", local, bdata, big, 0);
  lt_free(local);
  lt_free(back);
  lt_free(bdata);
  lt_free(data);
}

static void run_signed(const char *vers, uint16_t dialect) {
  char opts[64], tag[32];
  snprintf(opts, sizeof opts, "vers=%s", vers);
  snprintf(tag, sizeof tag, "signed_%s", vers);
  smb3_client *c = lt_connect(opts);
  if (smb3_dialect(c) != dialect) fail_msg("%s: dialect 0x%04x, want 0x%04x", tag, smb3_dialect(c), dialect);
  if (!smb3_signing_active(c)) fail_msg("%s: server requires signing but smb3_signing_active() = 0", tag);
  scenario(c, tag);
  lt_disconnect(c);
}

static void run_sealed(const char *vers, uint16_t dialect) {
  char opts[64], tag[32];
  snprintf(opts, sizeof opts, "vers=%s,seal", vers);
  snprintf(tag, sizeof tag, "sealed_%s", vers);
  smb3_client *c = lt_connect(opts);
  if (smb3_dialect(c) != dialect) fail_msg("%s: dialect 0x%04x, want 0x%04x", tag, smb3_dialect(c), dialect);
  if (!smb3_encryption_active(c)) fail_msg("%s: seal asked for but smb3_encryption_active() = 0", tag);
  scenario(c, tag);
  lt_disconnect(c);
}

static void test_signed_202(void **s) {
  (void)s;
  run_signed("2.0.2", 0x0202);
}
static void test_signed_21(void **s) {
  (void)s;
  run_signed("2.1", 0x0210);
}
static void test_signed_30(void **s) {
  (void)s;
  run_signed("3.0", 0x0300);
}
static void test_signed_302(void **s) {
  (void)s;
  run_signed("3.0.2", 0x0302);
}
static void test_signed_311(void **s) {
  (void)s;
  run_signed("3.1.1", 0x0311);
}
static void test_sealed_30(void **s) {
  (void)s;
  run_sealed("3.0", 0x0300);
}
static void test_sealed_302(void **s) {
  (void)s;
  run_sealed("3.0.2", 0x0302);
}
static void test_sealed_311(void **s) {
  (void)s;
  run_sealed("3.1.1", 0x0311);
}

/* Sealing is refused, not silently dropped, where it cannot work. */
static void test_seal_on_21_refused(void **s) {
  (void)s;
  struct smb3_options o;
  lt_options(&o, lt_env("SMB3_TEST_URL"), "vers=2.1,seal");
  smb3_client *c = NULL;
  char err[512] = "";
  int rc = smb3_connect(&o, &c, err, sizeof err);
  smb3_options_free(&o);
  if (!rc) {
    lt_disconnect(c);
    fail_msg("vers=2.1,seal connected: encryption cannot exist on 2.1");
  }
  assert_null(c);
  assert_int_equal(rc, SMB3_ENCRYPT);
  lt_assert_one_line("seal on 2.1", err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_signed_202, lt_teardown),
      cmocka_unit_test_teardown(test_signed_21, lt_teardown),
      cmocka_unit_test_teardown(test_signed_30, lt_teardown),
      cmocka_unit_test_teardown(test_signed_302, lt_teardown),
      cmocka_unit_test_teardown(test_signed_311, lt_teardown),
      cmocka_unit_test_teardown(test_sealed_30, lt_teardown),
      cmocka_unit_test_teardown(test_sealed_302, lt_teardown),
      cmocka_unit_test_teardown(test_sealed_311, lt_teardown),
      cmocka_unit_test_teardown(test_seal_on_21_refused, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_secure", tests, NULL, NULL);
}
