/* Unit tests of the smb:// URL parser, the -o option parser and credentials files. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "smb3/smb3.h"

static void url_full(void **state) {
  (void)state;
  struct smb3_options o;
  char err[256];
  smb3_options_init(&o);
  assert_int_equal(
      smb3_url_parse(&o, "smb://DOM;alice:s%40cret@files.example:1445/Data/dir/f.txt", err, sizeof err), 0);
  assert_string_equal(o.domain, "DOM");
  assert_string_equal(o.username, "alice");
  assert_string_equal(o.password, "s@cret");
  assert_string_equal(o.host, "files.example");
  assert_int_equal(o.port, 1445);
  assert_string_equal(o.share, "Data");
  assert_string_equal(o.path, "dir/f.txt");
  smb3_options_free(&o);
}

static void url_minimal_and_ipv6(void **state) {
  (void)state;
  struct smb3_options o;
  char err[256];
  smb3_options_init(&o);
  assert_int_equal(smb3_url_parse(&o, "smb://host/share", err, sizeof err), 0);
  assert_null(o.username);
  assert_int_equal(o.port, 445);
  assert_string_equal(o.path, "");
  smb3_options_free(&o);
  smb3_options_init(&o);
  assert_int_equal(smb3_url_parse(&o, "smb://u@[::1]:4450/s/a/b/", err, sizeof err), 0);
  assert_string_equal(o.host, "::1");
  assert_int_equal(o.port, 4450);
  assert_string_equal(o.path, "a/b");
  smb3_options_free(&o);
}

static void url_bad(void **state) {
  (void)state;
  const char *bad[] = {"http://h/s",
                       "smb://",
                       "smb://host",
                       "smb://host/",
                       "smb://h:0/s",
                       "smb://h:65536/s",
                       "smb://h:12a/s",
                       "smb://u:p@/s",
                       "smb://h/s/%4",
                       "smb://h/s/%zz",
                       "smb://h/s/%00x",
                       "smb://[::1/s",
                       NULL};
  for (int i = 0; bad[i]; i++) {
    struct smb3_options o;
    char err[256] = "";
    smb3_options_init(&o);
    assert_int_equal(smb3_url_parse(&o, bad[i], err, sizeof err), SMB3_EURL);
    assert_true(strlen(err) > 0);
    smb3_options_free(&o);
  }
}

static void options_values(void **state) {
  (void)state;
  struct smb3_options o;
  char err[256];
  smb3_options_init(&o);
  assert_int_equal(smb3_options_parse(&o,
                                      "vers=3.0.2,sign,seal,rsize=1M,wsize=65536,port=99,nocompound,"
                                      "cache=none,actimeo=0.5,uid=7,gid=8,file_mode=0640,dir_mode=750,ro",
                                      0, err, sizeof err),
                   0);
  assert_int_equal(o.vers_min, 0x0302);
  assert_int_equal(o.vers_max, 0x0302);
  assert_true(o.sign && o.seal && o.nocompound && o.ro);
  assert_int_equal(o.rsize, 1u << 20);
  assert_int_equal(o.wsize, 65536);
  assert_int_equal(o.port, 99);
  assert_int_equal(o.cache, SMB3_CACHE_NONE);
  assert_true(o.actimeo > 0.49 && o.actimeo < 0.51);
  assert_int_equal(o.uid, 7);
  assert_int_equal(o.file_mode, 0640);
  assert_int_equal(o.dir_mode, 0750);
  smb3_options_free(&o);
}

static void options_bad(void **state) {
  (void)state;
  const char *bad[] = {"vers=4",      "rsize=abc",     "rsize=1k", "rsize=64M", "port=0", "port=70000",
                       "cache=maybe", "file_mode=999", "sign=1",   "nosuch",    "uid=-1", "actimeo=x",
                       NULL};
  for (int i = 0; bad[i]; i++) {
    struct smb3_options o;
    char err[256] = "";
    smb3_options_init(&o);
    assert_int_equal(smb3_options_parse(&o, bad[i], 0, err, sizeof err), SMB3_EURL);
    assert_non_null(strstr(err, "option"));
    smb3_options_free(&o);
  }
  struct smb3_options o;
  smb3_options_init(&o);
  assert_int_equal(smb3_options_parse(&o, "allow_other,vers=2.1", 1, NULL, 0), 0); /* unknown ones skipped */
  assert_int_equal(o.vers_max, 0x0210);
  smb3_options_free(&o);
}

static void credentials_file(void **state) {
  (void)state;
  char path[] = "/tmp/smb3credXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *text = "# comment\nusername = WG/bob\npassword=p=w d\n\ndomain=OTHER\n";
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  struct smb3_options o;
  char err[256];
  smb3_options_init(&o);
  assert_int_equal(smb3_options_credentials_file(&o, path, err, sizeof err), 0);
  assert_string_equal(o.username, "bob");
  assert_string_equal(o.password, "p=w d");
  assert_string_equal(o.domain, "OTHER");
  smb3_options_free(&o);
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_int_equal(write(fd, "junk\n", 5), 5);
  close(fd);
  smb3_options_init(&o);
  assert_int_equal(smb3_options_credentials_file(&o, path, err, sizeof err), SMB3_EURL);
  assert_non_null(strstr(err, "key=value"));
  smb3_options_free(&o);
  unlink(path);
  assert_int_equal(smb3_options_credentials_file(&o, path, err, sizeof err), SMB3_EURL);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(url_full),    cmocka_unit_test(url_minimal_and_ipv6),
                                     cmocka_unit_test(url_bad),     cmocka_unit_test(options_values),
                                     cmocka_unit_test(options_bad), cmocka_unit_test(credentials_file)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
