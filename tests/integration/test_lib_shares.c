/* test_lib_shares.c - smb3_list_shares against the harness's smbd, from a client on a disk share
 * (the call connects IPC$ in the same session and disconnects it again) and from one made without
 * a share (already on IPC$), synchronous and asynchronous, with the counters exact:
 *  - on a share: TREE_CONNECT + CREATE + IOCTL(bind) in one round trip, IOCTL(NetrShareEnum),
 *    CLOSE + TREE_DISCONNECT in one: 6 requests, 3 round trips; nocompound: 6 and 6;
 *  - the client's own tree is untouched: a stat on the share works after it;
 *  - the async form runs its callback once, and may be called from a callback;
 *  - the synchronous form from a callback is refused (SMB3_EDEADLK) with nothing sent. */
#include <errno.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static int find(const struct smb3_share *s, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(s[i].name, name)) return i;
  return -1;
}

static void check_list(const struct smb3_share *s, int n) {
  const char *want[] = {lt_env("SMB3_TEST_SHARE"), lt_env("SMB3_TEST_GUEST_SHARE"),
                        lt_env("SMB3_TEST_RO_SHARE")};
  for (size_t i = 0; i < 3; i++) {
    int k = find(s, n, want[i]);
    if (k < 0) fail_msg("share %s not listed", want[i]);
    assert_int_equal(s[k].type, SMB3_SHARE_DISK);
    assert_non_null(s[k].comment);
  }
  int ipc = find(s, n, "IPC$");
  if (ipc < 0) fail_msg("IPC$ not listed");
  assert_int_equal(s[ipc].type & SMB3_SHARE_TYPE_MASK, SMB3_SHARE_IPC);
}

static uint64_t cmd(const struct smb3_stats *a, const struct smb3_stats *b, int c) {
  return a->per_command[c] - b->per_command[c];
}

static void list_and_count(const char *extra, uint64_t want_rt) {
  smb3_client *c = lt_connect(extra);
  struct smb3_stats b = lt_stats(c);
  struct smb3_share *s = NULL;
  int n = smb3_list_shares(c, &s);
  if (n < 0) fail_msg("smb3_list_shares: %s", smb3_last_error(c));
  struct smb3_stats a = lt_stats(c);
  check_list(s, n);
  smb3_shares_free(s);
  assert_int_equal(cmd(&a, &b, 0x03), 1); /* TREE_CONNECT IPC$ */
  assert_int_equal(cmd(&a, &b, LT_CMD_CREATE), 1);
  assert_int_equal(cmd(&a, &b, 0x0B), 2); /* IOCTL: bind, NetrShareEnum */
  assert_int_equal(cmd(&a, &b, LT_CMD_READ), 0);
  assert_int_equal(cmd(&a, &b, LT_CMD_CLOSE), 1);
  assert_int_equal(cmd(&a, &b, 0x04), 1); /* TREE_DISCONNECT IPC$ */
  assert_int_equal(a.requests - b.requests, 6);
  assert_int_equal(a.round_trips - b.round_trips, want_rt);
  struct smb3_stat st; /* the client's own tree still works */
  assert_int_equal(smb3_stat(c, "", &st), 0);
  assert_true(st.is_dir);
  n = smb3_list_shares(c, &s); /* and a second listing (IPC$ connected anew) */
  if (n < 0) fail_msg("second smb3_list_shares: %s", smb3_last_error(c));
  check_list(s, n);
  smb3_shares_free(s);
  lt_disconnect(c);
}

static void test_on_share(void **st) {
  (void)st;
  list_and_count(NULL, 3);
}

static void test_on_share_nocompound(void **st) {
  (void)st;
  list_and_count("nocompound", 6);
}

static void test_without_share(void **st) {
  (void)st;
  struct smb3_options o;
  char err[512] = "";
  smb3_options_init(&o);
  char url[512];
  snprintf(url, sizeof url, "smb://%s:%s@%s:%s/", lt_env("SMB3_TEST_USER"), lt_env("SMB3_TEST_PASS"),
           lt_env("SMB3_TEST_HOST"), lt_env("SMB3_TEST_PORT"));
  assert_int_equal(smb3_url_parse_server(&o, url, err, sizeof err), 0);
  assert_null(o.share);
  assert_int_equal(smb3_options_parse(&o, "echo_interval=0", 0, err, sizeof err), 0);
  smb3_client *c = NULL;
  int rc = smb3_connect(&o, &c, err, sizeof err);
  smb3_options_free(&o);
  if (rc) fail_msg("smb3_connect without a share: %s", err);
  struct smb3_stats b = lt_stats(c);
  struct smb3_share *s = NULL;
  int n = smb3_list_shares(c, &s);
  if (n < 0) fail_msg("smb3_list_shares: %s", smb3_last_error(c));
  struct smb3_stats a = lt_stats(c);
  check_list(s, n);
  smb3_shares_free(s);
  assert_int_equal(cmd(&a, &b, 0x03), 0); /* on IPC$ already */
  assert_int_equal(cmd(&a, &b, 0x04), 0);
  assert_int_equal(a.requests - b.requests, 4); /* CREATE + bind, NetrShareEnum, CLOSE */
  assert_int_equal(a.round_trips - b.round_trips, 3);
  smb3_disconnect(c);
}

struct async_state {
  smb3_client *c;
  sem_t done;
  int calls, rc, n, ipc, sync_rc, inner_rc;
  int inner;
};

static void inner_cb(int rc, const struct smb3_share *s, size_t n, void *arg) {
  struct async_state *x = arg;
  x->inner_rc = rc;
  x->n = (int)n;
  x->ipc = rc == 0 && find(s, (int)n, "IPC$") >= 0;
  sem_post(&x->done);
}

static void outer_cb(int rc, const struct smb3_share *s, size_t n, void *arg) {
  struct async_state *x = arg;
  x->calls++;
  x->rc = rc;
  if (rc == 0) check_list(s, (int)n);
  struct smb3_share *out = (struct smb3_share *)1;
  x->sync_rc = smb3_list_shares(x->c, &out); /* on the I/O thread: refused */
  if (out) x->sync_rc = 12345;               /* *out must be NULL then */
  /* the async form is allowed here */
  x->inner = smb3_list_shares_async(x->c, inner_cb, x);
  if (x->inner) sem_post(&x->done);
}

static void test_async(void **st) {
  (void)st;
  struct async_state x = {0};
  sem_init(&x.done, 0, 0);
  x.c = lt_connect(NULL);
  assert_int_equal(smb3_list_shares_async(x.c, NULL, NULL), SMB3_EINVAL);
  assert_int_equal(smb3_list_shares_async(NULL, inner_cb, &x), SMB3_EINVAL);
  assert_int_equal(smb3_list_shares(x.c, NULL), SMB3_EINVAL);
  lt_guard("async listing", 60);
  assert_int_equal(smb3_list_shares_async(x.c, outer_cb, &x), 0);
  while (sem_wait(&x.done) && errno == EINTR) {
  }
  lt_unguard();
  assert_int_equal(x.calls, 1);
  assert_int_equal(x.rc, 0);
  assert_int_equal(x.sync_rc, SMB3_EDEADLK);
  assert_int_equal(x.inner, 0);
  assert_int_equal(x.inner_rc, 0);
  assert_true(x.ipc);
  lt_disconnect(x.c);
  sem_destroy(&x.done);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_on_share, lt_teardown),
      cmocka_unit_test_teardown(test_on_share_nocompound, lt_teardown),
      cmocka_unit_test_teardown(test_without_share, lt_teardown),
      cmocka_unit_test_teardown(test_async, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_shares", tests, NULL, NULL);
}
