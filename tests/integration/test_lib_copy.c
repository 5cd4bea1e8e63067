/* test_lib_copy.c - server-side copy (smb3_copy_range: FSCTL_SRV_COPYCHUNK_WRITE) against Samba.
 *
 *  - every dialect: a 40 MiB + 123 byte file copied whole (more requests than the window, a last
 *    chunk that is not a multiple of anything); every byte checked in the share, and the data
 *    never crossed the network (no READ or WRITE sent, bytes_copied counts it);
 *  - ranges: odd offsets into the middle of an existing file (its bytes around the range stay),
 *    a length past the source's end (copied up to it), an offset past it (0 bytes), length 0;
 *  - the async form, two copies at once;
 *  - signed and sealed sessions;
 *  - refusals: a destination open read-only (EACCES, one line naming the copy), files of two
 *    clients (EXDEV), a directory (EISDIR).
 *
 * Runs under tests/harness/with-smbd (integration.lib_copy).
 */
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static const char *cur_tag = "";

static smb3_file *open_or_fail(smb3_client *c, const char *path, int flags) {
  smb3_file *f = NULL;
  int rc = smb3_open(c, path, flags, &f, NULL);
  if (rc) fail_msg("%s: open %s = %d: %s", cur_tag, path, rc, smb3_last_error(c));
  return lt_track_file(f);
}

/* Copy all of a fresh file on one session; the copy is checked byte for byte in the share. */
static void whole_copy(const char *opts, const char *tag) {
  cur_tag = tag;
  lt_guard(tag, 120);
  smb3_client *c = lt_connect(opts);
  const size_t fsize = (40u << 20) + 123;
  uint8_t *data = lt_random(fsize, 7);
  char src[64], dst[64];
  snprintf(src, sizeof src, "copy-src-%s", tag);
  snprintf(dst, sizeof dst, "copy-dst-%s", tag);
  lt_write_local(src, data, fsize);
  struct smb3_stats before = lt_stats(c);
  smb3_file *s = open_or_fail(c, src, O_RDONLY);
  smb3_file *d = open_or_fail(c, dst, O_WRONLY | O_CREAT | O_TRUNC);
  int64_t n = smb3_copy_range(s, 0, d, 0, UINT64_MAX);
  if (n != (int64_t)fsize)
    fail_msg("%s: copy of %zu bytes returned %lld: %s", tag, fsize, (long long)n, smb3_last_error(c));
  struct smb3_stats after = lt_stats(c);
  assert_int_equal(after.per_command[LT_CMD_READ], before.per_command[LT_CMD_READ]);
  assert_int_equal(after.per_command[LT_CMD_WRITE], before.per_command[LT_CMD_WRITE]);
  assert_int_equal(after.bytes_copied - before.bytes_copied, fsize);
  /* 16 MiB per request: 3 COPYCHUNKs, and the resume key */
  if (after.per_command[0x0B] - before.per_command[0x0B] < 4)
    fail_msg("%s: %llu IOCTLs for a 40 MiB copy", tag,
             (unsigned long long)(after.per_command[0x0B] - before.per_command[0x0B]));
  assert_int_equal(lt_close(d), 0);
  assert_int_equal(lt_close(s), 0);
  lt_check_local(tag, dst, data, fsize);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}

static void test_whole_202(void **st) {
  (void)st;
  whole_copy("vers=2.0.2", "202");
}
static void test_whole_21(void **st) {
  (void)st;
  whole_copy("vers=2.1", "21");
}
static void test_whole_30(void **st) {
  (void)st;
  whole_copy("vers=3.0", "30");
}
static void test_whole_311(void **st) {
  (void)st;
  whole_copy("vers=3.1.1", "311");
}
static void test_whole_signed(void **st) {
  (void)st;
  whole_copy("vers=3.1.1,sign", "signed");
}
static void test_whole_sealed(void **st) {
  (void)st;
  whole_copy("vers=3.1.1,seal", "sealed");
}

static void test_ranges(void **st) {
  (void)st;
  cur_tag = "ranges";
  lt_guard(cur_tag, 120);
  smb3_client *c = lt_connect("vers=3.1.1");
  const size_t ssize = (24u << 20) + 5, dsize = 30u << 20;
  const size_t nsize = dsize - 10 + 1000; /* the last copy below grows the destination to this */
  uint8_t *sdata = lt_random(ssize, 11), *want = lt_random(nsize, 12);
  lt_write_local("range-src", sdata, ssize);
  lt_write_local("range-dst", want, dsize);
  smb3_file *s = open_or_fail(c, "range-src", O_RDONLY);
  smb3_file *d = open_or_fail(c, "range-dst", O_RDWR);
  /* the middle: [5 MiB + 7, + 17 MiB + 3) to 3 MiB + 1 */
  uint64_t so = (5u << 20) + 7, dof = (3u << 20) + 1, len = (17u << 20) + 3;
  assert_int_equal(smb3_copy_range(s, so, d, dof, len), (int64_t)len);
  memcpy(want + dof, sdata + so, len);
  /* past the source's end: up to it, onto the end of the destination (which grows) */
  uint64_t so2 = ssize - 1000, dof2 = dsize - 10;
  assert_int_equal(smb3_copy_range(s, so2, d, dof2, 1u << 20), 1000);
  memcpy(want + dof2, sdata + so2, 1000);
  /* at or past the end: nothing */
  assert_int_equal(smb3_copy_range(s, ssize, d, 0, 4096), 0);
  assert_int_equal(smb3_copy_range(s, ssize + 4096, d, 0, 4096), 0);
  assert_int_equal(smb3_copy_range(s, 0, d, 0, 0), 0);
  assert_int_equal(lt_close(d), 0);
  assert_int_equal(lt_close(s), 0);
  lt_check_local(cur_tag, "range-dst", want, nsize);
  lt_free(want);
  lt_free(sdata);
  lt_disconnect(c);
  lt_unguard();
}

struct wait1 {
  sem_t done;
  int64_t r;
};
static void wait1_cb(int64_t r, void *arg) {
  struct wait1 *w = arg;
  w->r = r;
  sem_post(&w->done);
}

static void test_async_two(void **st) {
  (void)st;
  cur_tag = "async";
  lt_guard(cur_tag, 120);
  smb3_client *c = lt_connect("vers=3.1.1");
  const size_t fsize = (20u << 20) + 77;
  uint8_t *data = lt_random(fsize, 21);
  lt_write_local("async-src", data, fsize);
  smb3_file *s = open_or_fail(c, "async-src", O_RDONLY);
  smb3_file *d1 = open_or_fail(c, "async-d1", O_WRONLY | O_CREAT | O_TRUNC);
  smb3_file *d2 = open_or_fail(c, "async-d2", O_WRONLY | O_CREAT | O_TRUNC);
  struct wait1 w1 = {.r = 1}, w2 = {.r = 1};
  sem_init(&w1.done, 0, 0);
  sem_init(&w2.done, 0, 0);
  assert_int_equal(smb3_copy_range_async(s, 0, d1, 0, fsize, wait1_cb, &w1), 0);
  assert_int_equal(smb3_copy_range_async(s, 0, d2, 0, fsize, wait1_cb, &w2), 0);
  sem_wait(&w1.done);
  sem_wait(&w2.done);
  assert_int_equal(w1.r, (int64_t)fsize);
  assert_int_equal(w2.r, (int64_t)fsize);
  sem_destroy(&w1.done);
  sem_destroy(&w2.done);
  assert_int_equal(lt_close(d1), 0);
  assert_int_equal(lt_close(d2), 0);
  assert_int_equal(lt_close(s), 0);
  lt_check_local(cur_tag, "async-d1", data, fsize);
  lt_check_local(cur_tag, "async-d2", data, fsize);
  lt_free(data);
  lt_disconnect(c);
  lt_unguard();
}

static void test_refusals(void **st) {
  (void)st;
  cur_tag = "refusals";
  lt_guard(cur_tag, 120);
  smb3_client *c = lt_connect("vers=3.1.1"), *c2 = lt_connect("vers=3.1.1");
  uint8_t *data = lt_random(100000, 31);
  lt_write_local("ref-src", data, 100000);
  lt_write_local("ref-dst", data, 10);
  lt_mkdir_local("ref-dir");
  smb3_file *s = open_or_fail(c, "ref-src", O_RDONLY);
  smb3_file *ro = open_or_fail(c, "ref-dst", O_RDONLY);
  int64_t r = smb3_copy_range(s, 0, ro, 0, 100000);
  if (r != SMB3_EACCES) fail_msg("copy into a read-only handle returned %lld, want EACCES", (long long)r);
  lt_assert_one_line("copy into a read-only handle", smb3_last_error(c));
  if (!strstr(smb3_last_error(c), "copy 'ref-src' to 'ref-dst'"))
    fail_msg("the error does not name the copy: %s", smb3_last_error(c));
  smb3_file *other = open_or_fail(c2, "ref-dst", O_WRONLY);
  assert_int_equal(smb3_copy_range(s, 0, other, 0, 100000), SMB3_EXDEV);
  smb3_file *dir = open_or_fail(c, "ref-dir", O_RDONLY | O_DIRECTORY);
  assert_int_equal(smb3_copy_range(dir, 0, ro, 0, 10), SMB3_EISDIR);
  assert_int_equal(smb3_copy_range(NULL, 0, ro, 0, 10), SMB3_EINVAL);
  lt_close(dir);
  lt_close(other);
  lt_close(ro);
  lt_close(s);
  lt_check_local(cur_tag, "ref-dst", data, 10); /* untouched */
  lt_free(data);
  lt_disconnect(c2);
  lt_disconnect(c);
  lt_unguard();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_whole_202, lt_teardown),
      cmocka_unit_test_teardown(test_whole_21, lt_teardown),
      cmocka_unit_test_teardown(test_whole_30, lt_teardown),
      cmocka_unit_test_teardown(test_whole_311, lt_teardown),
      cmocka_unit_test_teardown(test_whole_signed, lt_teardown),
      cmocka_unit_test_teardown(test_whole_sealed, lt_teardown),
      cmocka_unit_test_teardown(test_ranges, lt_teardown),
      cmocka_unit_test_teardown(test_async_two, lt_teardown),
      cmocka_unit_test_teardown(test_refusals, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_copy", tests, NULL, NULL);
}
