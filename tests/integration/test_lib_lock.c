/* test_lib_lock.c - byte-range locks (smb3_lock / smb3_lock_async: SMB2 LOCK) against Samba.
 *
 *  - an exclusive lock of one handle refuses the other client's overlapping locks (shared or
 *    exclusive) and its READs and WRITEs of the range (SMB3_EAGAIN, the file left as it was),
 *    while ranges next to it stay free; the holder reads and writes it;
 *  - shared locks of two clients overlap; an exclusive one over a shared one is refused;
 *  - unlocking needs the exact range (SMB3_EINVAL otherwise, the lock stays); after it, or after
 *    the holder's CLOSE, the other client gets the range;
 *  - the async form, and refused arguments (bad type, off + len past 2^64, no handle).
 *
 * Runs under tests/harness/with-smbd (integration.lib_lock).
 */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static smb3_file *open_or_fail(smb3_client *c, const char *path, int flags) {
  smb3_file *f = NULL;
  int rc = smb3_open(c, path, flags, &f, NULL);
  if (rc) fail_msg("open %s = %d: %s", path, rc, smb3_last_error(c));
  return lt_track_file(f);
}

static void expect_lock(smb3_file *f, uint64_t off, uint64_t len, int type, int want, const char *what) {
  int rc = smb3_lock(f, off, len, type);
  if (rc != want)
    fail_msg("%s: lock(%llu, %llu, type %d) = %d (%s), want %d", what, (unsigned long long)off,
             (unsigned long long)len, type, rc, smb3_last_error(smb3_file_client(f)), want);
}

struct done {
  sem_t s;
  int rc, calls;
};
static void done_cb(int rc, void *arg) {
  struct done *d = arg;
  d->rc = rc;
  d->calls++;
  sem_post(&d->s);
}

static void run(const char *opts, const char *tag) {
  lt_guard(tag, 120);
  char name[64];
  snprintf(name, sizeof name, "locked-%s", tag);
  uint8_t *data = lt_random(4096, 3);
  lt_write_local(name, data, 4096);
  smb3_client *a = lt_connect(opts), *b = lt_connect(opts);
  smb3_file *fa = open_or_fail(a, name, O_RDWR), *fb = open_or_fail(b, name, O_RDWR);
  uint8_t buf[64], junk[64];
  memset(junk, 0x5A, sizeof junk);

  expect_lock(fa, 100, 100, SMB3_LOCK_EXCLUSIVE, 0, "a takes [100,200) exclusive");
  expect_lock(fb, 150, 10, SMB3_LOCK_SHARED, SMB3_EAGAIN, "b shared inside a's exclusive");
  expect_lock(fb, 50, 60, SMB3_LOCK_EXCLUSIVE, SMB3_EAGAIN, "b exclusive across a's start");
  expect_lock(fb, 200, 100, SMB3_LOCK_EXCLUSIVE, 0, "b exclusive right after a's range");
  expect_lock(fb, 0, 100, SMB3_LOCK_SHARED, 0, "b shared right before a's range");
  /* the server enforces them on I/O */
  ssize_t n = smb3_pread(fb, buf, sizeof buf, 150);
  if (n != SMB3_EAGAIN) fail_msg("%s: b's read of a's locked range = %zd, want SMB3_EAGAIN", tag, n);
  n = smb3_pwrite(fb, junk, sizeof junk, 120);
  if (n != SMB3_EAGAIN) fail_msg("%s: b's write into a's locked range = %zd, want SMB3_EAGAIN", tag, n);
  lt_check_local(tag, name, data, 4096);
  n = smb3_pread(fa, buf, 40, 150); /* [150,190): a's own range */
  assert_int_equal(n, 40);
  lt_assert_bytes(tag, buf, data + 150, 40, 150);
  n = smb3_pread(fa, buf, sizeof buf, 220); /* b's exclusive range: refused to a */
  if (n != SMB3_EAGAIN) fail_msg("%s: a's read of b's locked range = %zd, want SMB3_EAGAIN", tag, n);
  memcpy(data + 130, junk, 16);
  assert_int_equal(smb3_pwrite(fa, junk, 16, 130), 16);
  lt_check_local(tag, name, data, 4096);

  /* unlock: the exact range only */
  expect_lock(fa, 100, 50, SMB3_LOCK_UNLOCK, SMB3_EINVAL, "a unlocks half of its range");
  expect_lock(fb, 150, 10, SMB3_LOCK_SHARED, SMB3_EAGAIN, "b, a's lock still held");
  expect_lock(fa, 100, 100, SMB3_LOCK_UNLOCK, 0, "a unlocks its range");
  expect_lock(fa, 100, 100, SMB3_LOCK_UNLOCK, SMB3_EINVAL, "a unlocks it again");
  expect_lock(fb, 150, 10, SMB3_LOCK_SHARED, 0, "b shared after a's unlock");
  expect_lock(fa, 100, 100, SMB3_LOCK_SHARED, 0, "a shared over b's shared");
  expect_lock(fa, 155, 1, SMB3_LOCK_EXCLUSIVE, SMB3_EAGAIN, "a exclusive over b's shared");
  n = smb3_pread(fa, buf, 10, 150); /* shared locks let everyone read */
  assert_int_equal(n, 10);
  n = smb3_pwrite(fa, junk, 4, 152); /* ... and nobody write */
  if (n != SMB3_EAGAIN) fail_msg("%s: a's write into b's shared range = %zd, want SMB3_EAGAIN", tag, n);

  /* the async form */
  struct done d = {.rc = 1};
  sem_init(&d.s, 0, 0);
  assert_int_equal(smb3_lock_async(fa, 1000, 10, SMB3_LOCK_EXCLUSIVE, done_cb, &d), 0);
  sem_wait(&d.s);
  assert_int_equal(d.rc, 0);
  assert_int_equal(smb3_lock_async(fb, 1005, 1, SMB3_LOCK_SHARED, done_cb, &d), 0);
  sem_wait(&d.s);
  assert_int_equal(d.rc, SMB3_EAGAIN);
  assert_int_equal(d.calls, 2);
  sem_destroy(&d.s);

  /* a's CLOSE releases everything a held */
  assert_int_equal(lt_close(fa), 0);
  expect_lock(fb, 1000, 10, SMB3_LOCK_EXCLUSIVE, 0, "b after a's close");
  expect_lock(fb, 100, 40, SMB3_LOCK_EXCLUSIVE, 0, "b over a's old shared range after a's close");

  /* refused arguments: nothing sent */
  expect_lock(fb, 0, 1, 7, SMB3_EINVAL, "bad type");
  expect_lock(fb, UINT64_MAX - 5, 10, SMB3_LOCK_SHARED, SMB3_ERANGE, "off + len past 2^64");
  assert_int_equal(smb3_lock(NULL, 0, 1, SMB3_LOCK_SHARED), SMB3_EBADF);
  assert_int_equal(lt_close(fb), 0);
  lt_disconnect(a);
  lt_disconnect(b);
  lt_free(data);
  lt_unguard();
}

/* Two handles of one connection, in the order sqlite's locking made on one mount: shared locks
 * of both on one range, taken and released interleaved, then the first upgrades its range. */
static void test_same_connection(void **s) {
  (void)s;
  lt_guard("same connection", 60);
  uint8_t z[16] = {0};
  lt_write_local("locked-same", z, sizeof z);
  smb3_client *c = lt_connect(NULL);
  smb3_file *h1 = open_or_fail(c, "locked-same", O_RDWR), *h2 = open_or_fail(c, "locked-same", O_RDWR);
  const uint64_t P = 0x40000000, R = P + 1, S = P + 2, SL = 510;
  expect_lock(h1, S, SL, SMB3_LOCK_SHARED, 0, "h1 S shared");
  expect_lock(h2, P, 1, SMB3_LOCK_SHARED, 0, "h2 P shared");
  expect_lock(h2, S, SL, SMB3_LOCK_SHARED, 0, "h2 S shared");
  expect_lock(h2, P, 1, SMB3_LOCK_UNLOCK, 0, "h2 P unlock");
  expect_lock(h1, R, 1, SMB3_LOCK_EXCLUSIVE, 0, "h1 R exclusive");
  expect_lock(h2, S, SL, SMB3_LOCK_UNLOCK, 0, "h2 S unlock");
  expect_lock(h2, P, 1, SMB3_LOCK_SHARED, 0, "h2 P shared again");
  expect_lock(h2, S, SL, SMB3_LOCK_SHARED, 0, "h2 S shared again");
  expect_lock(h2, P, 1, SMB3_LOCK_UNLOCK, 0, "h2 P unlock again");
  expect_lock(h2, S, SL, SMB3_LOCK_UNLOCK, 0, "h2 S unlock again");
  expect_lock(h1, P, 1, SMB3_LOCK_EXCLUSIVE, 0, "h1 P exclusive");
  expect_lock(h1, S, SL, SMB3_LOCK_UNLOCK, 0, "h1 S unlock");
  expect_lock(h1, S, SL, SMB3_LOCK_EXCLUSIVE, 0, "h1 S exclusive (h2 holds nothing)");
  assert_int_equal(lt_close(h2), 0);
  assert_int_equal(lt_close(h1), 0);
  lt_disconnect(c);
  lt_unguard();
}

static void test_lock_311(void **s) {
  (void)s;
  run("vers=3.1.1", "311");
}
static void test_lock_210(void **s) {
  (void)s;
  run("vers=2.1", "210");
}
static void test_lock_202(void **s) {
  (void)s;
  run("vers=2.0.2", "202");
}
static void test_lock_sealed(void **s) {
  (void)s;
  run("vers=3.1.1,seal", "sealed");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_lock_311, lt_teardown),
      cmocka_unit_test_teardown(test_lock_210, lt_teardown),
      cmocka_unit_test_teardown(test_lock_202, lt_teardown),
      cmocka_unit_test_teardown(test_lock_sealed, lt_teardown),
      cmocka_unit_test_teardown(test_same_connection, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_lock", tests, NULL, NULL);
}
