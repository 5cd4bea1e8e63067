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
  pthread_mutex_lock(&mu);
  while (b.n == 0 || b.ack_calls < b.acks_sent)
    pthread_cond_wait(&cv, &mu);
  /* a consistent snapshot: every ack sent so far was answered (more breaks may still come) */
  struct breaks snap = b;
  pthread_mutex_unlock(&mu);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_lease_311, lt_teardown),
      cmocka_unit_test_teardown(test_lease_30, lt_teardown),
      cmocka_unit_test_teardown(test_lease_21, lt_teardown),
      cmocka_unit_test_teardown(test_oplock_202, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_lease", tests, NULL, NULL);
}
