/* test_lib_posix.c - the SMB3 POSIX extensions against Samba 4.22 ('smb3 unix extensions = yes' in
 * [global] and on the share), every result checked on the server's disk too:
 *  - smb3_posix() is 1; stat reports the disk's mode, nlink, inode and gid (st.posix = 1);
 *  - names that differ only in case are two files, and names with ':' '*' '?' '<' '>' '|' '"' work;
 *  - chmod changes the mode on disk (and setuid/sticky are refused, not dropped); chown to the
 *    user's own group works and shows on disk; chown to root's group is refused (smbd runs the
 *    session as the test user, who may not);
 *  - symlink: readlink returns the target, stat says S_IFLNK, a second connection sees the same;
 *    on disk Samba 4.22 keeps it as a regular file with the reparse point in user.SmbReparse;
 *  - mknod FIFO: S_IFIFO over SMB on a second connection, a regular file with user.SmbReparse on
 *    disk; a FIFO and a symlink made on disk read back as S_IFIFO / S_IFLNK with readlink;
 *  - listings carry the same POSIX fields; noposix gives today's synthesised ones.
 * Exit 77 (not run) when the server does not speak the extensions (Samba 4.17: compiled out).
 * Runs under tests/harness/with-smbd --samba 4.22 (integration.lib_posix). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "fscc/fscc.h"
#include "util/le.h"

#include "libtest.h"

static smb3_client *connect_posix(void) {
  smb3_client *c = lt_connect(NULL);
  if (!smb3_posix(c)) fail_msg("the share does not speak POSIX: %s", smb3_last_error(c));
  return c;
}

static void put_file(smb3_client *c, const char *path, const char *data) {
  ssize_t n = smb3_write_file(c, path, data, strlen(data));
  if (n != (ssize_t)strlen(data)) fail_msg("write_file %s = %zd: %s", path, n, smb3_last_error(c));
}

static void test_stat_matches_disk(void **state) {
  (void)state;
  smb3_client *c = connect_posix();
  put_file(c, "st.txt", "hello");
  struct stat d = lt_stat_local("st.txt");
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, "st.txt", &st), 0);
  assert_int_equal(st.posix, 1);
  assert_int_equal(st.mode, d.st_mode);
  assert_int_equal(st.nlink, d.st_nlink);
  assert_int_equal(st.gid, d.st_gid);
  assert_int_equal(st.size, 5);
  assert_int_equal(st.ino, d.st_ino);
  lt_mkdir_local("sd");
  d = lt_stat_local("sd");
  assert_int_equal(smb3_stat(c, "sd", &st), 0);
  assert_int_equal(st.mode, d.st_mode);
  assert_true(st.is_dir);
}

static void test_case_and_chars(void **state) {
  (void)state;
  smb3_client *c = connect_posix();
  put_file(c, "xt_connmark.h", "lower");
  put_file(c, "xt_CONNMARK.h", "upper");
  size_t n;
  uint8_t *a = lt_read_local("xt_connmark.h", &n);
  assert_non_null(a);
  assert_string_equal((char *)a, "lower");
  uint8_t *b = lt_read_local("xt_CONNMARK.h", &n);
  assert_non_null(b);
  assert_string_equal((char *)b, "upper");
  const char *odd = "a:b*c?d<e>f|g\"h";
  put_file(c, odd, "odd");
  assert_true(lt_exists(odd));
  smb3_dir *dir;
  assert_int_equal(smb3_opendir(c, "", &dir), 0);
  struct smb3_dirent e;
  int seen = 0;
  while (smb3_readdir(dir, &e) > 0) {
    /* Samba 4.22 lists a name with Windows-reserved characters mangled (8.3, e.g. 'AJ32N5~2') even
     * to a POSIX handle (fixed after 4.22: "smbd: avoid mangling names in
     * smbd_dirptr_lanman2_match_fn() for POSIX"); by its name it opens and stats. */
    if (!strcmp(e.name, "xt_connmark.h") || !strcmp(e.name, "xt_CONNMARK.h")) {
      seen++;
      assert_int_equal(e.st.posix, 1);
      struct stat d = lt_stat_local(e.name);
      assert_int_equal(e.st.mode, d.st_mode);
      assert_int_equal(e.st.ino, d.st_ino);
    }
  }
  smb3_closedir(dir);
  assert_int_equal(seen, 2);
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, odd, &st), 0);
  assert_int_equal(st.ino, lt_stat_local(odd).st_ino);
}

static void test_chmod(void **state) {
  (void)state;
  smb3_client *c = connect_posix();
  put_file(c, "m.sh", "#!/bin/sh\n");
  static const uint32_t modes[] = {0755, 0600, 0640, 0444, 0700, 0};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (smb3_chmod(c, "m.sh", modes[i])) fail_msg("chmod %o: %s", modes[i], smb3_last_error(c));
    assert_int_equal(lt_stat_local("m.sh").st_mode & 07777, modes[i]);
    if (!(modes[i] & 0400)) continue; /* Samba refuses the owner a CREATE of a file it may not read */
    struct smb3_stat st;
    assert_int_equal(smb3_stat(c, "m.sh", &st), 0);
    assert_int_equal(st.mode, S_IFREG | modes[i]);
  }
  assert_int_equal(smb3_chmod(c, "m.sh", 04755), SMB3_EINVAL);
  assert_int_equal(lt_stat_local("m.sh").st_mode & 07777, 0);
  lt_mkdir_local("md");
  assert_int_equal(smb3_chmod(c, "md", 0711), 0);
  assert_int_equal(lt_stat_local("md").st_mode & 07777, 0711);
  assert_int_equal(smb3_chmod(c, "no-such", 0644), SMB3_ENOENT);
}

/* Samba asks WRITE_OWNER of the CREATE that sets owner or group, which a plain user does not get
 * (a file's owner is granted READ_CONTROL and WRITE_DAC only): chown and even chgrp to the user's
 * own group are refused. With 'admin users' (the session acts as root, TESTARGS admin) they work
 * for any ids: the SIDs S-1-22-1-UID / S-1-22-2-GID are what Samba maps back. */
static int admin_run;
static void test_chown(void **state) {
  (void)state;
  smb3_client *c = connect_posix();
  put_file(c, "o.txt", "x");
  struct stat d = lt_stat_local("o.txt");
  assert_int_equal(smb3_chown(c, "o.txt", SMB3_NO_ID, SMB3_NO_ID), SMB3_EINVAL);
  if (!admin_run) {
    assert_int_equal(smb3_chown(c, "o.txt", SMB3_NO_ID, (uint32_t)d.st_gid), SMB3_EACCES);
    assert_int_equal(smb3_chown(c, "o.txt", 0, 0), SMB3_EACCES);
    assert_int_equal(lt_stat_local("o.txt").st_uid, d.st_uid);
    return;
  }
  if (smb3_chown(c, "o.txt", 4321, 8765)) fail_msg("chown: %s", smb3_last_error(c));
  d = lt_stat_local("o.txt");
  assert_int_equal(d.st_uid, 4321);
  assert_int_equal(d.st_gid, 8765);
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, "o.txt", &st), 0);
  assert_int_equal(st.gid, 8765);
  if (smb3_chown(c, "o.txt", SMB3_NO_ID, 0)) fail_msg("chgrp: %s", smb3_last_error(c));
  assert_int_equal(lt_stat_local("o.txt").st_gid, 0);
  assert_int_equal(lt_stat_local("o.txt").st_uid, 4321);
}

static void assert_reparse_xattr(const char *rel, uint32_t tag) {
  char *p = lt_local(rel);
  uint8_t buf[256];
  ssize_t n = getxattr(p, "user.SmbReparse", buf, sizeof buf);
  if (n < 8) fail_msg("%s: no user.SmbReparse (%zd): %s", p, n, strerror(errno));
  assert_int_equal(le32_at(buf), tag);
  free(p);
}

static void test_symlink(void **state) {
  (void)state;
  smb3_client *c = connect_posix();
  put_file(c, "target.txt", "t");
  assert_int_equal(smb3_symlink(c, "target.txt", "lnk"), 0);
  assert_int_equal(smb3_symlink(c, "../up/and/away", "lnk2"), 0);
  assert_int_equal(smb3_symlink(c, "x", "lnk"), SMB3_EEXIST);
  smb3_client *c2 = connect_posix(); /* what another client sees */
  char t[256];
  assert_int_equal(smb3_readlink(c2, "lnk", t, sizeof t), 10);
  assert_string_equal(t, "target.txt");
  assert_int_equal(smb3_readlink(c2, "lnk2", t, sizeof t), 14);
  assert_string_equal(t, "../up/and/away");
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c2, "lnk", &st), 0);
  assert_int_equal(st.mode & S_IFMT, S_IFLNK);
  assert_int_equal(st.reparse_tag, FSCC_IO_REPARSE_TAG_SYMLINK);
  /* Samba 4.22 stores it as a regular file with the reparse point in an xattr */
  assert_true(S_ISREG(lt_stat_local("lnk").st_mode));
  assert_reparse_xattr("lnk", FSCC_IO_REPARSE_TAG_SYMLINK);
  assert_int_equal(smb3_readlink(c2, "target.txt", t, sizeof t), SMB3_EINVAL); /* NOT_A_REPARSE_POINT */
  /* a symlink made on the server's disk reads back as one */
  char *p = lt_local("disk_lnk");
  if (symlink("target.txt", p)) fail_msg("symlink: %s", strerror(errno));
  free(p);
  assert_int_equal(smb3_stat(c2, "disk_lnk", &st), 0);
  assert_int_equal(st.mode & S_IFMT, S_IFLNK);
  assert_int_equal(smb3_readlink(c2, "disk_lnk", t, sizeof t), 10);
  assert_string_equal(t, "target.txt");
  assert_int_equal(smb3_unlink(c, "lnk"), 0);
  assert_false(lt_exists("lnk"));
}

static void test_fifo(void **state) {
  (void)state;
  smb3_client *c = connect_posix();
  assert_int_equal(smb3_mknod(c, "fifo", S_IFIFO | 0640, 0), 0);
  assert_int_equal(smb3_mknod(c, "sock", S_IFSOCK | 0600, 0), 0);
  assert_int_equal(smb3_mknod(c, "bad", S_IFREG | 0600, 0), SMB3_EINVAL);
  smb3_client *c2 = connect_posix();
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c2, "fifo", &st), 0);
  assert_int_equal(st.mode & S_IFMT, S_IFIFO);
  assert_int_equal(st.reparse_tag, FSCC_IO_REPARSE_TAG_NFS);
  assert_int_equal(smb3_stat(c2, "sock", &st), 0);
  assert_int_equal(st.mode & S_IFMT, S_IFSOCK);
  assert_true(S_ISREG(lt_stat_local("fifo").st_mode)); /* Samba 4.22's way of keeping it */
  assert_reparse_xattr("fifo", FSCC_IO_REPARSE_TAG_NFS);
  /* a FIFO made on the server's disk is reported as one */
  char *p = lt_local("disk_fifo");
  if (mkfifo(p, 0644)) fail_msg("mkfifo: %s", strerror(errno));
  free(p);
  assert_int_equal(smb3_stat(c2, "disk_fifo", &st), 0);
  assert_int_equal(st.mode, S_IFIFO | 0644);
  assert_int_equal(smb3_unlink(c2, "disk_fifo"), 0);
  assert_false(lt_exists("disk_fifo"));
  /* a device's numbers, from its reparse point */
  assert_int_equal(smb3_mknod(c, "cdev", S_IFCHR | 0600, makedev(5, 7)), 0);
  uint64_t dev = 0;
  assert_int_equal(smb3_readdev(c2, "cdev", &dev), 0);
  assert_int_equal(major(dev), 5);
  assert_int_equal(minor(dev), 7);
  assert_int_equal(smb3_readdev(c2, "fifo", &dev), SMB3_EINVAL); /* not a device */
  assert_int_equal(smb3_readdev(c2, "nothing", &dev), SMB3_ENOENT);
  /* Samba 4.22's rename loses the reparse attribute (a regular file then); restore sets it again */
  assert_int_equal(smb3_rename(c, "fifo", "fifo2", 1), 0);
  assert_int_equal(smb3_mknod_restore(c, "fifo2", S_IFIFO | 0640, 0), 0);
  assert_int_equal(smb3_stat(c2, "fifo2", &st), 0);
  assert_int_equal(st.mode & S_IFMT, S_IFIFO);
  assert_int_equal(smb3_mknod_restore(c, "nothing", S_IFIFO | 0640, 0), SMB3_ENOENT);
}

static void test_noposix(void **state) {
  (void)state;
  smb3_client *c = lt_connect("noposix");
  assert_int_equal(smb3_posix(c), 0);
  put_file(c, "np.txt", "x");
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, "np.txt", &st), 0);
  assert_int_equal(st.posix, 0);
  assert_int_equal(st.mode, S_IFREG | 0644);
  assert_int_equal(st.uid, SMB3_NO_ID);
  assert_int_equal(smb3_chmod(c, "np.txt", 0600), SMB3_ENOTSUP);
}

int main(int argc, char **argv) {
  admin_run = argc > 1 && !strcmp(argv[1], "admin");
  /* skip (77) on a server without the extensions; any other failure to connect fails */
  smb3_client *probe = lt_connect(NULL);
  int posix = smb3_posix(probe);
  lt_disconnect(probe);
  if (!posix) {
    fprintf(stderr, "test_lib_posix: the server does not speak the SMB3 POSIX extensions: not run\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_stat_matches_disk, lt_teardown),
      cmocka_unit_test_teardown(test_case_and_chars, lt_teardown),
      cmocka_unit_test_teardown(test_chmod, lt_teardown),
      cmocka_unit_test_teardown(test_chown, lt_teardown),
      cmocka_unit_test_teardown(test_symlink, lt_teardown),
      cmocka_unit_test_teardown(test_fifo, lt_teardown),
      cmocka_unit_test_teardown(test_noposix, lt_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
