/* test_lib_dfs.c - smb3_dfs_follow against the harness's smbd with its [test] share a DFS root
 * (with-smbd --share "msdfs root = yes"), the links made here in the share's directory:
 *  - the share says it is in a DFS namespace (smb3_dfs_share);
 *  - a path under a link to another share of the server gives a client on that share and the path
 *    there; the referral is one IOCTL round trip on the origin client;
 *  - a second path under the same link within the TTL sends nothing (the referral cache);
 *  - a path that crosses no link, and the root, stay on the client (not redirected);
 *  - a link to itself is SMB3_ELOOP with a message naming the link, and costs one IOCTL only;
 *  - a link whose only target does not answer is SMB3_ECONNECT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "libtest.h"

static void link_at(const char *name, const char *target) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", lt_env("SMB3_TEST_SHARE_DIR"), name);
  unlink(p);
  if (symlink(target, p)) fail_msg("symlink %s: %s", p, strerror(errno));
}

static uint64_t ioctls(smb3_client *c) {
  struct smb3_stats s = lt_stats(c);
  return s.per_command[11];
}

static void test_follow(void **state) {
  (void)state;
  char target[256];
  snprintf(target, sizeof target, "msdfs:127.0.0.1\\%s", lt_env("SMB3_TEST_GUEST_SHARE"));
  link_at("other", target);
  smb3_client *c = lt_connect(NULL);
  assert_true(smb3_dfs_share(c));
  uint64_t i0 = ioctls(c);
  smb3_client *t;
  char *path;
  assert_int_equal(smb3_dfs_follow(c, "other/a/b", &t, &path), 0);
  assert_ptr_not_equal(t, c);
  assert_string_equal(path, "a/b");
  assert_string_equal(smb3_client_share(t), lt_env("SMB3_TEST_GUEST_SHARE"));
  assert_int_equal(ioctls(c), i0 + 1);
  smb3_disconnect(t);
  free(path);
  /* within the TTL: from the cache, no request */
  assert_int_equal(smb3_dfs_follow(c, "/other", &t, &path), 0);
  assert_ptr_not_equal(t, c);
  assert_string_equal(path, "");
  assert_int_equal(ioctls(c), i0 + 1);
  smb3_disconnect(t);
  free(path);
  /* not redirected: the root and a path crossing no link */
  assert_int_equal(smb3_dfs_follow(c, "", &t, &path), 0);
  assert_ptr_equal(t, c);
  assert_null(path);
  assert_int_equal(smb3_dfs_follow(c, "nolink/x", &t, &path), 0);
  assert_ptr_equal(t, c);
  assert_null(path);
  lt_disconnect(c);
}

static void test_loop_and_dead(void **state) {
  (void)state;
  char target[256];
  snprintf(target, sizeof target, "msdfs:127.0.0.1\\%s\\loop", lt_env("SMB3_TEST_SHARE"));
  link_at("loop", target);
  link_at("dead", "msdfs:127.0.0.9\\x");
  smb3_client *c = lt_connect(NULL);
  uint64_t i0 = ioctls(c);
  smb3_client *t;
  char *path;
  assert_int_equal(smb3_dfs_follow(c, "loop/x", &t, &path), SMB3_ELOOP);
  assert_ptr_equal(t, c);
  assert_null(path);
  assert_non_null(strstr(smb3_last_error(c), "refers back to itself"));
  assert_int_equal(ioctls(c), i0 + 1);
  assert_int_equal(smb3_dfs_follow(c, "dead/f", &t, &path), SMB3_ECONNECT);
  assert_ptr_equal(t, c);
  assert_non_null(strstr(smb3_last_error(c), "none of its 1 target"));
  lt_disconnect(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_follow, lt_teardown),
      cmocka_unit_test_teardown(test_loop_and_dead, lt_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
