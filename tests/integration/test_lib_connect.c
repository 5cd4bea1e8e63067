/* test_lib_connect.c - issue 3: connection errors give the right SMB3_E* code and one line of
 * explanation from smb3_connect, and leave no client behind.
 *
 *   test_lib_connect            wrong password -> SMB3_ELOGON, unknown share -> SMB3_ENOSHARE,
 *                               closed port -> SMB3_ECONNECT, and the right credentials work
 *   test_lib_connect dialect    (server max protocol = SMB2_10) vers=3.1.1 / 3.0 -> SMB3_EDIALECT,
 *                               while the default range negotiates 2.1
 *
 * Runs under tests/harness/with-smbd (integration.lib_connect, integration.lib_connect_dialect).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "libtest.h"

static void expect_connect_error(const char *what, const char *url, const char *opts, int want,
                                 const char *pattern) {
  struct smb3_options o;
  lt_options(&o, url, opts);
  char err[512];
  memset(err, 'Z', sizeof err); /* make sure the library writes a terminated string */
  err[sizeof err - 1] = 0;
  smb3_client *c = (smb3_client *)&o; /* must be set to NULL */
  int rc = smb3_connect(&o, &c, err, sizeof err);
  smb3_options_free(&o);
  if (rc == 0) {
    lt_disconnect(c);
    fail_msg("%s: connected, want %d (%s)", what, want, smb3_strerror(want));
  }
  print_message("%s: %d (%s): %s\n", what, rc, smb3_strerror(rc), err);
  if (c != NULL) fail_msg("%s: failed but *out is not NULL", what);
  if (rc != want)
    fail_msg("%s: smb3_connect = %d (%s), want %d (%s); err: %s", what, rc, smb3_strerror(rc), want,
             smb3_strerror(want), err);
  lt_assert_one_line(what, err);
  if (strchr(err, 'Z') && strspn(err, "Z") == strlen(err)) fail_msg("%s: err text not written", what);
  if (pattern && !strcasestr(err, pattern))
    fail_msg("%s: err '%s' does not mention '%s'", what, err, pattern);
}

static char *url_with(const char *user, const char *pass, int port, const char *share) {
  static char buf[512];
  snprintf(buf, sizeof buf, "smb://%s:%s@%s:%d/%s", user, pass, lt_env("SMB3_TEST_HOST"), port, share);
  return buf;
}

static int port(void) {
  return atoi(lt_env("SMB3_TEST_PORT"));
}

static void test_right_credentials(void **s) {
  (void)s;
  smb3_client *c = lt_connect(NULL);
  struct smb3_statvfs sv;
  assert_int_equal(smb3_statvfs(c, &sv), 0);
  lt_disconnect(c);
}

static void test_wrong_password(void **s) {
  (void)s;
  expect_connect_error(
      "wrong password",
      url_with(lt_env("SMB3_TEST_USER"), "wrong-password", port(), lt_env("SMB3_TEST_SHARE")), NULL,
      SMB3_ELOGON, "logon");
  /* also with every dialect: the failure comes at SESSION_SETUP each time */
  const char *v[] = {"vers=2.0.2", "vers=2.1", "vers=3.0", "vers=3.0.2", "vers=3.1.1"};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    expect_connect_error(
        v[i], url_with(lt_env("SMB3_TEST_USER"), "wrong-password", port(), lt_env("SMB3_TEST_SHARE")), v[i],
        SMB3_ELOGON, NULL);
}

static void test_unknown_share(void **s) {
  (void)s;
  expect_connect_error("unknown share",
                       url_with(lt_env("SMB3_TEST_USER"), lt_env("SMB3_TEST_PASS"), port(), "nosuchshare"),
                       NULL, SMB3_ENOSHARE, "nosuchshare");
}

static void test_closed_port(void **s) {
  (void)s;
  /* a port nobody listens on: bind one, note it, close it */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  int p = ntohs(a.sin_port);
  close(fd);
  lt_guard("closed port", 60);
  expect_connect_error("closed port", url_with("u", "p", p, "share"), "connect_timeout=10", SMB3_ECONNECT,
                       NULL);
  lt_unguard();
}

/* ---- the server speaks at most 2.1 ---- */
static void test_dialect_pinned_311(void **s) {
  (void)s;
  lt_guard("dialect", 60);
  expect_connect_error("vers=3.1.1 against max protocol SMB2_10", lt_env("SMB3_TEST_URL"), "vers=3.1.1",
                       SMB3_EDIALECT, NULL);
  expect_connect_error("vers=3.0 against max protocol SMB2_10", lt_env("SMB3_TEST_URL"), "vers=3.0",
                       SMB3_EDIALECT, NULL);
  expect_connect_error("vers=3 (3.0..3.1.1) against max protocol SMB2_10", lt_env("SMB3_TEST_URL"), "vers=3",
                       SMB3_EDIALECT, NULL);
  lt_unguard();
}

static void test_dialect_default_range(void **s) {
  (void)s;
  smb3_client *c = lt_connect(NULL);
  assert_int_equal(smb3_dialect(c), 0x0210);
  struct smb3_statvfs sv;
  assert_int_equal(smb3_statvfs(c, &sv), 0);
  lt_disconnect(c);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "dialect")) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_dialect_pinned_311, lt_teardown),
        cmocka_unit_test_teardown(test_dialect_default_range, lt_teardown),
    };
    return cmocka_run_group_tests_name("lib_connect_dialect", tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_right_credentials, lt_teardown),
      cmocka_unit_test_teardown(test_wrong_password, lt_teardown),
      cmocka_unit_test_teardown(test_unknown_share, lt_teardown),
      cmocka_unit_test_teardown(test_closed_port, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_connect", tests, NULL, NULL);
}
