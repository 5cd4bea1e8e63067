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
  assert_false(o.forceuid || o.forcegid); /* default: the server's owners where it names them */
  assert_int_equal(smb3_options_parse(&o, "credits=32", 0, err, sizeof err), 0);
  assert_int_equal(o.credits, 32);
  assert_int_equal(smb3_options_parse(&o, "forceuid,forcegid", 0, err, sizeof err), 0);
  assert_true(o.forceuid && o.forcegid);
  assert_int_equal(smb3_options_parse(&o, "noforcegid", 0, err, sizeof err), 0);
  assert_true(o.forceuid && !o.forcegid);
  assert_int_equal(o.directio_min, 0); /* the default: never */
  assert_int_equal(smb3_options_parse(&o, "directio_min=64M", 0, err, sizeof err), 0);
  assert_int_equal(o.directio_min, 64u << 20);
  assert_int_equal(smb3_options_parse(&o, "directio_min=0", 0, err, sizeof err), 0);
  assert_int_equal(o.directio_min, 0);
  assert_int_equal(smb3_options_parse(&o, "noforceuid", 0, err, sizeof err), 0);
  assert_false(o.forceuid);
  assert_int_not_equal(smb3_options_parse(&o, "forceuid=1", 0, err, sizeof err), 0);
  /* symlink files where the share has no POSIX extensions, unless told; names mapped unless told */
  assert_int_equal(o.mfsymlinks, -1);
  assert_int_equal(smb3_options_parse(&o, "nomfsymlinks", 0, err, sizeof err), 0);
  assert_int_equal(o.mfsymlinks, 0);
  assert_int_equal(smb3_options_parse(&o, "mfsymlinks", 0, err, sizeof err), 0);
  assert_int_equal(o.mfsymlinks, 1);
  assert_int_equal(o.nomapposix, 0);
  assert_int_equal(smb3_options_parse(&o, "nomapposix", 0, err, sizeof err), 0);
  assert_int_equal(o.nomapposix, 1);
  assert_int_equal(smb3_options_parse(&o, "mapposix", 0, err, sizeof err), 0);
  assert_int_equal(o.nomapposix, 0);
  assert_int_not_equal(smb3_options_parse(&o, "mapposix=1", 0, err, sizeof err), 0);
  smb3_options_free(&o);
}

/* sec=, ip=, krb5_keytab=, cruid= (Kerberos; names as mount.cifs's). */
static void options_kerberos(void **state) {
  (void)state;
  struct smb3_options o;
  char err[256];
  smb3_options_init(&o);
  assert_int_equal(o.sec, 0);
  assert_int_equal(o.cruid, -1);
  assert_int_equal(
      smb3_options_parse(&o, "sec=krb5,ip=10.0.0.5,krb5_keytab=/etc/k.keytab,cruid=1000", 0, err, sizeof err),
      0);
  assert_int_equal(o.sec, 2);
  assert_false(o.sign);
  assert_string_equal(o.ip, "10.0.0.5");
  assert_string_equal(o.krb5_keytab, "/etc/k.keytab");
  assert_int_equal(o.cruid, 1000);
  assert_int_equal(smb3_options_parse(&o, "sec=ntlmsspi,addr=::1", 0, err, sizeof err), 0);
  assert_int_equal(o.sec, 1);
  assert_true(o.sign);
  assert_string_equal(o.ip, "::1");
  assert_int_equal(smb3_options_parse(&o, "sec=auto", 0, err, sizeof err), 0);
  assert_int_equal(o.sec, 0);
  const char *bad[] = {"sec=kerberos", "sec", "ip=", "ip", "cruid=-1", "cruid=x", "krb5_keytab="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(smb3_options_parse(&o, bad[i], 0, err, sizeof err), SMB3_EURL);
  smb3_options_free(&o);
  assert_null(o.ip);
  assert_null(o.krb5_keytab);
}

static void options_bad(void **state) {
  (void)state;
  const char *bad[] = {"vers=4",       "rsize=abc",  "rsize=1k",        "rsize=64M",
                       "port=0",       "port=70000", "cache=maybe",     "file_mode=999",
                       "sign=1",       "nosuch",     "uid=-1",          "actimeo=x",
                       "min_vers",     "min_vers=4", "directio_min=-1", "directio_min=1X",
                       "directio_min", "credits=31", /* under one compound of 32 requests */
                       "credits=8193", NULL};
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

/* min_vers= raises the lowest dialect and keeps the highest that vers= (or the default) allows. */
static void options_min_vers(void **state) {
  (void)state;
  struct smb3_options o;
  smb3_options_init(&o);
  assert_int_equal(smb3_options_parse(&o, "min_vers=3.0", 0, NULL, 0), 0);
  assert_int_equal(o.vers_min, 0x0300);
  assert_int_equal(o.vers_max, 0x0311);
  assert_int_equal(smb3_options_parse(&o, "vers=3.0.2,min_vers=3.1.1", 0, NULL, 0), 0);
  assert_int_equal(o.vers_min, 0x0311); /* an empty range: smb3_connect says "no SMB dialect" */
  assert_int_equal(o.vers_max, 0x0302);
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

/* argv as the kernel lays it out: the strings back to back in one block, as /proc/PID/cmdline
 * reads them. */
struct argblock {
  char mem[512];
  char *argv[16];
  int argc;
};
static void argblock_make(struct argblock *b, const char *const *args) {
  memset(b, 0, sizeof *b);
  size_t off = 0;
  for (; args[b->argc]; b->argc++) {
    size_t n = strlen(args[b->argc]) + 1;
    assert_true(off + n <= sizeof b->mem);
    memcpy(b->mem + off, args[b->argc], n);
    b->argv[b->argc] = b->mem + off;
    off += n;
  }
}
/* Whether needle is anywhere in the block, behind the strings' new ends included (a secret must
 * not survive in the bytes a shortened string freed: ps shows them). */
static int block_has(const struct argblock *b, const char *needle) {
  size_t len = sizeof b->mem;
  for (size_t i = 0; i + strlen(needle) <= len; i++)
    if (!memcmp(b->mem + i, needle, strlen(needle))) return 1;
  return 0;
}

static void argv_secrets_hidden(void **s) {
  (void)s;
  const char *const args[] = {"smb3fs",
                              "//alice:s3cr3t@127.0.0.1/share",
                              "/mnt",
                              "-o",
                              "password=hunter2,username=bob,port=445",
                              "-ouid=0, pass=p4ss",
                              "--options=vers=3.1.1,password=zz9",
                              "smb://dom;carol:c0l0n@host/share/dir",
                              "password=plain",
                              NULL};
  struct argblock b;
  argblock_make(&b, args);
  char **copy = smb3_argv_hide_secrets(b.argc, b.argv);
  assert_non_null(copy);
  /* the copy is what the program parses: untouched */
  for (int i = 0; i < b.argc; i++)
    assert_string_equal(copy[i], args[i]);
  assert_null(copy[b.argc]);
  /* the originals: no secret anywhere in the block, everything else kept */
  const char *secrets[] = {"s3cr3t", "hunter2", "p4ss", "zz9", "c0l0n"};
  for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
    if (block_has(&b, secrets[i])) fail_msg("'%s' still in the command line", secrets[i]);
  assert_string_equal(b.argv[1], "//alice@127.0.0.1/share");
  assert_string_equal(b.argv[4], "username=bob,port=445");
  assert_string_equal(b.argv[5], "-ouid=0");
  assert_string_equal(b.argv[6], "--options=vers=3.1.1");
  assert_string_equal(b.argv[7], "smb://dom;carol@host/share/dir");
  assert_string_equal(b.argv[8], "password=plain"); /* not an option list: a file name, say */
  smb3_argv_free(copy);
  /* nothing to hide: nothing changes */
  const char *const plain[] = {"smb3", "-o", "vers=3.0", "ls", "smb://bob@host/share", NULL};
  argblock_make(&b, plain);
  copy = smb3_argv_hide_secrets(b.argc, b.argv);
  assert_non_null(copy);
  for (int i = 0; i < b.argc; i++)
    assert_string_equal(b.argv[i], plain[i]);
  smb3_argv_free(copy);
  /* an option list that is only a password becomes empty */
  const char *const only[] = {"smb3fs", "-o", "password=x1y2", NULL};
  argblock_make(&b, only);
  copy = smb3_argv_hide_secrets(b.argc, b.argv);
  assert_non_null(copy);
  assert_string_equal(b.argv[2], "");
  assert_false(block_has(&b, "x1y2"));
  smb3_argv_free(copy);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(url_full),
                                     cmocka_unit_test(url_minimal_and_ipv6),
                                     cmocka_unit_test(url_bad),
                                     cmocka_unit_test(options_values),
                                     cmocka_unit_test(options_kerberos),
                                     cmocka_unit_test(options_bad),
                                     cmocka_unit_test(options_min_vers),
                                     cmocka_unit_test(credentials_file),
                                     cmocka_unit_test(argv_secrets_hidden)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
