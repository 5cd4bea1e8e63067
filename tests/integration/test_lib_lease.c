/* test_lib_lease.c - issue 3: leases and lease breaks.
 *
 * Client A opens a file with smb3_open_lease_async (our key, READ|HANDLE|WRITE wanted);
 * smb3_file_lease() reports what was granted. A second client B then opens the same file for
 * writing and writes: A's break handler runs with A's key, A acknowledges with
 * smb3_lease_ack_async when the server asks for it (from inside the handler, on A's I/O thread),
 * and B's open and write complete. Dialects 2.1 (lease v1), 3.0 and 3.1.1 (lease v2), and 2.0.2,
 * where the same calls get and break an oplock on A's handle.
 *
 * Runs under tests/harness/with-smbd (integration.lib_lease).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

#define MAXBRK 8
struct breaks {
  smb3_client *c;
  int n;
  uint8_t key[MAXBRK][16];
  uint32_t state[MAXBRK];
  int ack_required[MAXBRK];
  int acks_sent, ack_calls, ack_submit_rc;
  int ack_rc;
};

static void ack_done(int rc, void *arg) {
  struct breaks *b = arg;
  pthread_mutex_lock(&mu);
  b->ack_calls++;
  b->ack_rc = rc;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void on_break(const uint8_t key[16], uint32_t new_state, int ack_required, void *arg) {
  struct breaks *b = arg;
  pthread_mutex_lock(&mu); /* ack_done cannot run before this handler returned (same I/O thread) */
  int i = b->n++;
  if (i < MAXBRK) {
    memcpy(b->key[i], key, 16);
    b->state[i] = new_state;
    b->ack_required[i] = ack_required;
  }
  if (ack_required) { /* nothing cached to flush: acknowledge right away */
    int rc = smb3_lease_ack_async(b->c, key, new_state, ack_done, b);
    if (rc)
      b->ack_submit_rc = rc;
    else
      b->acks_sent++;
  }
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

/* Waits (under lt_guard's deadline) until at least one break came and every acknowledgment sent was
 * answered; returns a consistent snapshot (more breaks may still come). */
static struct breaks wait_breaks(struct breaks *b) {
  pthread_mutex_lock(&mu);
  while (b->n == 0 || b->ack_calls < b->acks_sent)
    pthread_cond_wait(&cv, &mu);
  struct breaks snap = *b;
  pthread_mutex_unlock(&mu);
  return snap;
}

struct opened {
  int calls, rc;
  smb3_file *f;
};
static void open_cb(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  (void)st;
  struct opened *o = arg;
  pthread_mutex_lock(&mu);
  o->calls++;
  o->rc = rc;
  o->f = f;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static smb3_file *open_leased(smb3_client *c, const char *path, const uint8_t key[16], uint32_t want) {
  struct opened o = {0};
  int rc = smb3_open_lease_async(c, path, O_RDWR, key, want, open_cb, &o);
  if (rc) fail_msg("open_lease_async = %d: %s", rc, smb3_last_error(c));
  pthread_mutex_lock(&mu);
  while (!o.calls)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  if (o.rc) fail_msg("open_lease_async callback: %d (%s): %s", o.rc, smb3_strerror(o.rc), smb3_last_error(c));
  assert_non_null(o.f);
  return lt_track_file(o.f);
}

static void lease_break(const char *vers, const char *rel) {
  char opts[64];
  snprintf(opts, sizeof opts, "vers=%s,timeout=60", vers);
  lt_guard(rel, 200);
  lt_write_local(rel, "0123456789", 10);
  uint8_t key[16];
  for (int i = 0; i < 16; i++)
    key[i] = (uint8_t)(0xA0 + i);
  key[15] = (uint8_t)rel[strlen(rel) - 1];

  smb3_client *a = lt_connect(opts);
  static struct breaks b;
  memset(&b, 0, sizeof b);
  b.c = a;
  smb3_set_break_handler(a, on_break, &b);
  smb3_file *fa = open_leased(a, rel, key, SMB3_LEASE_READ | SMB3_LEASE_HANDLE | SMB3_LEASE_WRITE);
  uint32_t lease = smb3_file_lease(fa);
  print_message("vers=%s: lease granted 0x%x\n", vers, lease);
  if (!lease)
    fail_msg("vers=%s: no lease granted (smb3_file_lease() = 0) for a file nobody else has open", vers);
  if (lease & ~(SMB3_LEASE_READ | SMB3_LEASE_HANDLE | SMB3_LEASE_WRITE))
    fail_msg("vers=%s: lease state 0x%x has unknown bits", vers, lease);
  if (!(lease & SMB3_LEASE_READ)) fail_msg("vers=%s: lease 0x%x without READ", vers, lease);

  /* B opens for writing: a WRITE lease must be broken (and acknowledged) before B's open completes */
  smb3_client *bc = lt_connect(opts);
  smb3_file *fb = NULL;
  int rc = smb3_open(bc, rel, O_RDWR, &fb, NULL);
  if (rc)
    fail_msg("vers=%s: second client's open = %d (%s): %s", vers, rc, smb3_strerror(rc), smb3_last_error(bc));
  lt_track_file(fb);
  pthread_mutex_lock(&mu);
  int breaks_at_open = b.n;
  pthread_mutex_unlock(&mu);
  if ((lease & SMB3_LEASE_WRITE) && breaks_at_open == 0)
    fail_msg("vers=%s: second client's open completed but the WRITE lease of the first was never broken",
             vers);
  ssize_t n = smb3_pwrite(fb, "XYZ", 3, 0);
  if (n != 3) fail_msg("vers=%s: second client's write = %zd: %s", vers, n, smb3_last_error(bc));
  /* a write by another open breaks any READ caching of the first: if there was no break yet (a
   * READ-only lease), one must come now */
  struct breaks snap = wait_breaks(&b);
  int need = 0;
  for (int i = 0; i < snap.n && i < MAXBRK; i++) {
    need += snap.ack_required[i];
    print_message("vers=%s: break %d -> 0x%x%s\n", vers, i, snap.state[i],
                  snap.ack_required[i] ? " (ack required)" : "");
    if (memcmp(snap.key[i], key, 16)) fail_msg("vers=%s: break %d came with a different lease key", vers, i);
  }
  if (snap.ack_submit_rc) fail_msg("vers=%s: smb3_lease_ack_async() = %d", vers, snap.ack_submit_rc);
  if (snap.acks_sent != need) fail_msg("vers=%s: %d acks required, %d sent", vers, need, snap.acks_sent);
  if (need && snap.ack_rc)
    fail_msg("vers=%s: lease ack completed with %d (%s)", vers, snap.ack_rc, smb3_strerror(snap.ack_rc));
  if (snap.ack_calls != snap.acks_sent)
    fail_msg("vers=%s: %d ack callbacks for %d acks", vers, snap.ack_calls, snap.acks_sent);

  /* the first client sees the second's data */
  char buf[16] = "";
  n = smb3_pread(fa, buf, sizeof buf, 0);
  assert_int_equal(n, 10);
  assert_memory_equal(buf, "XYZ3456789", 10);
  assert_int_equal(lt_close(fb), 0);
  assert_int_equal(lt_close(fa), 0);
  lt_disconnect(bc);
  lt_disconnect(a);
  lt_unguard();
}

static void test_lease_311(void **s) {
  (void)s;
  lease_break("3.1.1", "lease_311");
}
static void test_lease_30(void **s) {
  (void)s;
  lease_break("3.0", "lease_30");
}
static void test_lease_21(void **s) {
  (void)s;
  lease_break("2.1", "lease_21");
}

/* 2.0.2: an oplock on the handle, reported as the lease state it stands for (BATCH = RWH); the
 * second client's open breaks it to LEVEL_II (READ, acknowledged), its write to none (no ack). */
static void test_oplock_202(void **s) {
  (void)s;
  lease_break("2.0.2", "lease_202");
}

/* ---- directory leases (smb3_listdir_lease_async) ---- */
struct dlisted {
  int calls, rc;
  size_t n;
  int has_a, has_b;
  smb3_file *dh;
};
static void dlist_cb(int rc, const struct smb3_dirent *e, size_t n, smb3_file *dh, void *arg) {
  struct dlisted *d = arg;
  pthread_mutex_lock(&mu);
  d->calls++;
  d->rc = rc;
  d->n = n;
  for (size_t i = 0; i < n; i++) {
    d->has_a |= !strcmp(e[i].name, "a");
    d->has_b |= !strcmp(e[i].name, "b");
  }
  d->dh = dh;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}
static struct dlisted dlist(smb3_client *c, const char *path, const uint8_t key[16]) {
  struct dlisted d = {0};
  int rc = smb3_listdir_lease_async(c, path, key, dlist_cb, &d);
  if (rc) fail_msg("smb3_listdir_lease_async = %d: %s", rc, smb3_last_error(c));
  pthread_mutex_lock(&mu);
  while (!d.calls)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  if (d.rc) fail_msg("listing: %d (%s): %s", d.rc, smb3_strerror(d.rc), smb3_last_error(c));
  if (d.dh) lt_track_file(d.dh);
  return d;
}

/* Samba 4.22 grants directory leases (RH) on SMB 3.x: the listing keeps its handle, and a second
 * client's new name in the directory breaks the lease (with our key) before it is made. Samba 4.17
 * does not offer them, nor does any server on SMB 2.1: the same call lists without one. */
static void test_dir_lease(void **s) {
  (void)s;
  const char *samba = getenv("SMB3_TEST_SAMBA");
  int offered = samba && !strcmp(samba, "4.22");
  lt_guard("dir_lease", 120);
  uint8_t key[16];
  for (int i = 0; i < 16; i++)
    key[i] = (uint8_t)(0x50 + i);
  smb3_client *a = lt_connect("timeout=60");
  static struct breaks b;
  memset(&b, 0, sizeof b);
  b.c = a;
  smb3_set_break_handler(a, on_break, &b);
  int rc = smb3_mkdir(a, "dlease");
  if (rc && rc != SMB3_EEXIST) fail_msg("mkdir: %d %s", rc, smb3_last_error(a));
  lt_write_local("dlease/a", "x", 1);
  struct dlisted d = dlist(a, "dlease", key);
  assert_int_equal(d.n, 1);
  assert_true(d.has_a);
  print_message("Samba %s: directory lease %s (0x%x)\n", samba ? samba : "?", d.dh ? "granted" : "none",
                smb3_file_lease(d.dh));
  if (!offered) {
    if (d.dh) fail_msg("a directory lease from a server that does not offer them");
  } else {
    if (!d.dh) fail_msg("Samba 4.22 granted no directory lease");
    assert_true(smb3_file_lease(d.dh) & SMB3_LEASE_READ);
    smb3_client *bc = lt_connect("timeout=60");
    smb3_file *fb = NULL;
    rc = smb3_open(bc, "dlease/b", O_RDWR | O_CREAT, &fb, NULL);
    if (rc) fail_msg("second client's create: %d %s", rc, smb3_last_error(bc));
    assert_int_equal(smb3_close(fb), 0);
    /* the break may reach us after the second client's create completed: Samba does not hold a
     * create for a directory lease's break, and it goes on another connection. */
    lt_guard("dir_lease: a second client made a name in a leased directory, and no break came", 60);
    struct breaks snap = wait_breaks(&b);
    lt_guard("dir_lease", 60);
    assert_memory_equal(snap.key[0], key, 16);
    assert_false(snap.state[0] & SMB3_LEASE_READ);
    /* closed without a callback: the CLOSE goes all the same (a handle left open would keep the
     * directory delete-pending below: the second client's rmdir would not make it go) */
    lt_untrack((void **)lt_files, d.dh);
    assert_int_equal(smb3_close_async(d.dh, NULL, NULL), 0);
    assert_int_equal(smb3_unlink(bc, "dlease/a"), 0);
    assert_int_equal(smb3_unlink(bc, "dlease/b"), 0);
    assert_int_equal(smb3_rmdir(bc, "dlease"), 0);
    for (int i = 0; i < 100 && lt_exists("dlease"); i++) /* (A's CLOSE and B's rmdir: two connections) */
      usleep(50 * 1000);
    if (lt_exists("dlease")) fail_msg("the directory stayed: the lease handle was not closed");
    lt_disconnect(bc);
  }
  /* on 2.1 no lease whatever the server */
  if (offered) {
    lt_mkdir_local("dlease");
    lt_write_local("dlease/a", "x", 1);
  }
  smb3_client *c21 = lt_connect("vers=2.1,timeout=60");
  struct dlisted d2 = dlist(c21, "dlease", key);
  assert_null(d2.dh);
  assert_int_equal(d2.n, 1);
  assert_true(d2.has_a);
  lt_disconnect(c21);
  lt_disconnect(a);
  lt_unguard();
}

struct donewait {
  int calls, rc;
};
static void done_cb(int rc, void *arg) {
  struct donewait *w = arg;
  pthread_mutex_lock(&mu);
  w->calls++;
  w->rc = rc;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}
static int wait_done(struct donewait *w) {
  pthread_mutex_lock(&mu);
  while (!w->calls)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return w->rc;
}

/* A directory lease is not broken by its own client's changes in the directory (the ParentLeaseKey
 * its CREATEs carry: Samba 4.22 skips the lease they name), while another client's change breaks
 * it; and smb3_close_rmdir_async removes a directory whose handle the caller holds open in one
 * round trip: the directory is gone when it answers (a handle left open would keep it
 * delete-pending). Samba 4.17 grants no directory lease: there a plain directory handle. */
static void test_dir_lease_own(void **s) {
  (void)s;
  const char *samba = getenv("SMB3_TEST_SAMBA");
  int offered = samba && !strcmp(samba, "4.22");
  lt_guard("dir_lease_own", 120);
  uint8_t k1[16], k2[16];
  for (int i = 0; i < 16; i++)
    k1[i] = (uint8_t)(0x60 + i), k2[i] = (uint8_t)(0x70 + i);
  smb3_client *a = lt_connect("timeout=60");
  static struct breaks b;
  memset(&b, 0, sizeof b);
  b.c = a;
  smb3_set_break_handler(a, on_break, &b);
  lt_mkdir_local("down1");
  lt_mkdir_local("down2");
  lt_write_local("down1/a", "x", 1);
  struct dlisted d1 = dlist(a, "down1", k1), d2 = dlist(a, "down2", k2);
  if (offered != (d1.dh != NULL) || offered != (d2.dh != NULL))
    fail_msg("Samba %s: directory leases %p %p", samba ? samba : "?", (void *)d1.dh, (void *)d2.dh);
  /* this client's own changes in down1: a file made, written, renamed, removed; a directory made
   * and removed; a file's times set */
  smb3_file *f = NULL;
  assert_int_equal(smb3_open(a, "down1/n", O_RDWR | O_CREAT, &f, NULL), 0);
  assert_int_equal(smb3_pwrite(f, "abc", 3, 0), 3);
  assert_int_equal(smb3_close(f), 0);
  assert_int_equal(smb3_rename(a, "down1/n", "down1/m", 0), 0);
  struct timespec_smb3 t = {1000000000, 0};
  assert_int_equal(smb3_utimens(a, "down1/m", &t, &t), 0);
  assert_int_equal(smb3_mkdir(a, "down1/sub"), 0);
  assert_int_equal(smb3_rmdir(a, "down1/sub"), 0);
  assert_int_equal(smb3_unlink(a, "down1/m"), 0);
  if (offered) {
    /* another client's create in down2: that break comes; if the own changes above had broken
     * down1's lease, its break (sent while they ran) would have come first */
    smb3_client *bc = lt_connect("timeout=60");
    smb3_file *fb = NULL;
    if (smb3_open(bc, "down2/x", O_RDWR | O_CREAT, &fb, NULL))
      fail_msg("second client: %s", smb3_last_error(bc));
    assert_int_equal(smb3_close(fb), 0);
    lt_guard("dir_lease_own: a second client made a name in a leased directory, and no break came", 60);
    struct breaks snap = wait_breaks(&b);
    lt_guard("dir_lease_own", 60);
    for (int i = 0; i < snap.n && i < MAXBRK; i++)
      if (!memcmp(snap.key[i], k1, 16))
        fail_msg("this client's own changes broke its lease on the directory");
    assert_memory_equal(snap.key[0], k2, 16);
    assert_int_equal(smb3_unlink(bc, "down2/x"), 0);
    lt_disconnect(bc);
  }
  /* down1 emptied; its handle closed with the removal, in one round trip */
  assert_int_equal(smb3_unlink(a, "down1/a"), 0);
  smb3_file *h = d1.dh;
  if (h)
    lt_untrack((void **)lt_files, h);
  else if (smb3_open(a, "down1", O_RDONLY | O_DIRECTORY, &h, NULL))
    fail_msg("open of the directory: %s", smb3_last_error(a));
  struct smb3_stats st0, st1;
  smb3_get_stats(a, &st0);
  struct donewait w = {0};
  assert_int_equal(smb3_close_rmdir_async(a, h, "down1", done_cb, &w), 0);
  int rc = wait_done(&w);
  smb3_get_stats(a, &st1);
  if (rc) fail_msg("close_rmdir: %d %s", rc, smb3_last_error(a));
  if (lt_exists("down1"))
    fail_msg("the directory stayed after close_rmdir answered: its handle was not closed first");
  assert_int_equal(st1.round_trips - st0.round_trips, 1);
  /* NULL: a plain rmdir */
  if (d2.dh) {
    lt_untrack((void **)lt_files, d2.dh);
    assert_int_equal(smb3_close(d2.dh), 0);
  }
  w.calls = 0;
  assert_int_equal(smb3_close_rmdir_async(a, NULL, "down2", done_cb, &w), 0);
  assert_int_equal(wait_done(&w), 0);
  assert_false(lt_exists("down2"));
  lt_disconnect(a);
  lt_unguard();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_lease_311, lt_teardown),
      cmocka_unit_test_teardown(test_lease_30, lt_teardown),
      cmocka_unit_test_teardown(test_lease_21, lt_teardown),
      cmocka_unit_test_teardown(test_oplock_202, lt_teardown),
      cmocka_unit_test_teardown(test_dir_lease, lt_teardown),
      cmocka_unit_test_teardown(test_dir_lease_own, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_lease", tests, NULL, NULL);
}
