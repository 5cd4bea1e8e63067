/* test_posix.c - the SMB3 POSIX extensions' codecs: SIDs, the wire mode, smb3_posix_cc_info, the POSIX
 * information class and directory entries, security descriptors for chmod/chown, reparse buffers,
 * the negotiate context and the POSIX create context (Samba 4.22: librpc/idl/smb3posix.idl,
 * libcli/smb/util.c, source3/smbd/smb2_nttrans.c; MS-DTYP 2.4.2.2/2.4.6; MS-FSCC 2.1.2.4/2.1.2.6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto/crypto.h"
#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "wire/wire.h"
#include "wire_test.h"

/* S-1-22-1-1001 as Samba sends it */
static const uint8_t sid_unix_user[] = {1, 2, 0, 0, 0, 0, 0, 22, 1, 0, 0, 0, 0xE9, 3, 0, 0};
/* S-1-5-21-1-2-3-1000: a passdb user, not a Unix one */
static const uint8_t sid_domain[] = {1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0,    0, 1, 0,
                                     0, 0, 2, 0, 0, 0, 3, 0, 0,  0, 0xE8, 3, 0, 0};

static size_t put_cc(uint8_t *p, uint32_t nlink, uint32_t tag, uint32_t wire_mode, const uint8_t *owner,
                     size_t olen, uint32_t gid) {
  le32_put(p, nlink);
  le32_put(p + 4, tag);
  le32_put(p + 8, wire_mode);
  memcpy(p + 12, owner, olen);
  uint8_t g[16] = {1, 2, 0, 0, 0, 0, 0, 22, 2, 0, 0, 0};
  le32_put(g + 12, gid);
  memcpy(p + 12 + olen, g, 16);
  return 12 + olen + 16;
}

static void test_sid(void **state) {
  (void)state;
  struct fscc_sid s;
  size_t used;
  assert_int_equal(fscc_sid_decode(sid_unix_user, sizeof sid_unix_user, &s, &used), 0);
  assert_int_equal(used, 16);
  assert_int_equal(s.authority, 22);
  assert_int_equal(fscc_sid_unix_id(&s, 1), 1001);
  assert_int_equal(fscc_sid_unix_id(&s, 2), FSCC_NO_ID);
  assert_int_equal(fscc_sid_decode(sid_domain, sizeof sid_domain, &s, &used), 0);
  assert_int_equal(used, 28);
  assert_int_equal(fscc_sid_unix_id(&s, 1), FSCC_NO_ID);
  /* round trip */
  uint8_t out[FSCC_SID_MAX_LEN];
  fscc_sid_unix(&s, 1, 1001);
  assert_int_equal(fscc_sid_encode(out, sizeof out, &s), 16);
  assert_memory_equal(out, sid_unix_user, 16);
  assert_int_equal(fscc_sid_encode(out, 15, &s), SMB3_EINVAL);
  /* malformed: short, wrong revision, too many sub-authorities, sub-authorities past the end */
  uint8_t bad[16];
  memcpy(bad, sid_unix_user, 16);
  assert_int_equal(fscc_sid_decode(bad, 7, &s, &used), SMB3_EPROTO);
  assert_int_equal(fscc_sid_decode(bad, 15, &s, &used), SMB3_EPROTO);
  bad[0] = 2;
  assert_int_equal(fscc_sid_decode(bad, 16, &s, &used), SMB3_EPROTO);
  bad[0] = 1;
  bad[1] = 16;
  assert_int_equal(fscc_sid_decode(bad, 16, &s, &used), SMB3_EPROTO);
}

static void test_mode(void **state) {
  (void)state;
  /* Samba: perms as POSIX octal, type number << 12 (FILE 0 ... SOCKET 6) */
  assert_int_equal(fscc_posix_mode_from_wire(0644), S_IFREG | 0644);
  assert_int_equal(fscc_posix_mode_from_wire(0x1000 | 0755), S_IFDIR | 0755);
  assert_int_equal(fscc_posix_mode_from_wire(0x2000 | 0777), S_IFLNK | 0777);
  assert_int_equal(fscc_posix_mode_from_wire(0x3000 | 0600), S_IFCHR | 0600);
  assert_int_equal(fscc_posix_mode_from_wire(0x4000 | 0600), S_IFBLK | 0600);
  assert_int_equal(fscc_posix_mode_from_wire(0x5000 | 0600), S_IFIFO | 0600);
  assert_int_equal(fscc_posix_mode_from_wire(0x6000 | 0600), S_IFSOCK | 0600);
  assert_int_equal(fscc_posix_mode_from_wire(0x7000 | 0600), 0600); /* unknown type: none */
  assert_int_equal(fscc_posix_mode_from_wire(07777), S_IFREG | 07777);
  uint32_t types[] = {S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK};
  for (size_t i = 0; i < 7; i++)
    assert_int_equal(fscc_posix_mode_from_wire(fscc_posix_mode_to_wire(types[i] | 04751)), types[i] | 04751);
  assert_int_equal(fscc_posix_mode_to_wire(S_IFDIR | 01777), 0x1000 | 01777);
}

static void test_cc(void **state) {
  (void)state;
  uint8_t b[64];
  size_t n = put_cc(b, 3, 0, 0x1000 | 0750, sid_unix_user, sizeof sid_unix_user, 100);
  struct fscc_posix_cc cc;
  size_t used;
  assert_int_equal(fscc_posix_cc_decode(b, n, &cc, &used), 0);
  assert_int_equal(used, n);
  assert_int_equal(cc.nlink, 3);
  struct fscc_stat st = {.attributes = 0x10};
  fscc_stat_from_posix_cc(&cc, &st);
  assert_int_equal(st.posix, 1);
  assert_int_equal(st.mode, S_IFDIR | 0750);
  assert_int_equal(st.uid, 1001);
  assert_int_equal(st.gid, 100);
  /* every truncation fails */
  for (size_t k = 0; k < n; k++)
    if (fscc_posix_cc_decode(b, k, &cc, &used) != SMB3_EPROTO) fail_msg("cc truncated to %zu decoded", k);
  /* a domain owner maps to no uid */
  n = put_cc(b, 1, 0, 0644, sid_domain, sizeof sid_domain, 5);
  assert_int_equal(fscc_posix_cc_decode(b, n, &cc, &used), 0);
  fscc_stat_from_posix_cc(&cc, &st);
  assert_int_equal(st.uid, FSCC_NO_ID);
  assert_int_equal(st.gid, 5);
}

/* a POSIX information blob (68 fixed bytes + cc) at p */
static size_t put_info(uint8_t *p, uint64_t inode, uint32_t wire_mode) {
  memset(p, 0, 68);
  for (int i = 0; i < 4; i++)
    le64_put(p + 8 * i, 130000000000000000ull + (uint64_t)i);
  le64_put(p + 32, 12345); /* EndOfFile */
  le64_put(p + 40, 16384); /* AllocationSize */
  le32_put(p + 48, 0x20);  /* attributes */
  le64_put(p + 52, inode);
  le32_put(p + 60, 64769); /* device */
  return 68 + put_cc(p + 68, 2, 0, wire_mode, sid_unix_user, sizeof sid_unix_user, 1001);
}

static void test_info(void **state) {
  (void)state;
  uint8_t b[128];
  size_t n = put_info(b, 777, 0x5000 | 0640);
  struct fscc_stat st;
  assert_int_equal(fscc_posix_info_decode(b, n, &st), 0);
  assert_int_equal(st.end_of_file, 12345);
  assert_int_equal(st.allocation_size, 16384);
  assert_int_equal(st.file_id, 777);
  assert_int_equal(st.device, 64769);
  assert_int_equal(st.nlink, 2);
  assert_int_equal(st.mode, S_IFIFO | 0640);
  assert_int_equal(st.last_write_time, 130000000000000002ull);
  for (size_t k = 0; k < n; k++)
    if (fscc_posix_info_decode(b, k, &st) != SMB3_EPROTO || st.posix) fail_msg("info truncated to %zu", k);
}

/* one directory entry: NextEntryOffset, FileIndex, info, FileNameLength, name (ASCII as UTF-16) */
static size_t put_dirent(uint8_t *p, const char *name, uint64_t inode, uint32_t next_pad) {
  le32_put(p + 4, 0);
  size_t n = 8 + put_info(p + 8, inode, 0644);
  size_t nl = strlen(name);
  le32_put(p + n, (uint32_t)(2 * nl));
  for (size_t i = 0; i < nl; i++) {
    p[n + 4 + 2 * i] = (uint8_t)name[i];
    p[n + 5 + 2 * i] = 0;
  }
  size_t len = n + 4 + 2 * nl;
  size_t next = next_pad ? (len + 7) & ~(size_t)7 : 0;
  le32_put(p, (uint32_t)next);
  return next ? next : len;
}

static void test_dir(void **state) {
  (void)state;
  uint8_t b[512];
  memset(b, 0, sizeof b);
  size_t a = put_dirent(b, "abc", 1, 1);
  size_t n = a + put_dirent(b + a, "Abc", 2, 0);
  struct fscc_dir_iter it;
  struct fscc_dirent e;
  fscc_dir_iter_init_posix(&it, b, n);
  assert_int_equal(fscc_dir_next(&it, &e), 1);
  assert_string_equal(e.name, "abc");
  assert_int_equal(e.st.file_id, 1);
  assert_int_equal(e.st.mode, S_IFREG | 0644);
  assert_int_equal(e.st.uid, 1001);
  assert_int_equal(fscc_dir_next(&it, &e), 1);
  assert_string_equal(e.name, "Abc");
  assert_int_equal(e.st.file_id, 2);
  assert_int_equal(fscc_dir_next(&it, &e), 0);
  fscc_dir_iter_free(&it);
  /* every truncation of the last entry is malformed, never read past */
  for (size_t k = a + 1; k < n; k++) {
    fscc_dir_iter_init_posix(&it, b, k);
    assert_int_equal(fscc_dir_next(&it, &e), 1);
    if (fscc_dir_next(&it, &e) != SMB3_EPROTO) fail_msg("entry truncated to %zu decoded", k);
    fscc_dir_iter_free(&it);
  }
  /* NextEntryOffset inside the first entry's name */
  uint8_t bad[512];
  memcpy(bad, b, n);
  le32_put(bad, (uint32_t)(a - 8));
  fscc_dir_iter_init_posix(&it, bad, n);
  assert_int_equal(fscc_dir_next(&it, &e), SMB3_EPROTO);
  fscc_dir_iter_free(&it);
  /* a name length past the buffer */
  memcpy(bad, b, n);
  le32_put(bad + 8 + 68 + 44, 4000);
  fscc_dir_iter_init_posix(&it, bad, n);
  assert_int_equal(fscc_dir_next(&it, &e), SMB3_EPROTO);
  fscc_dir_iter_free(&it);
}

static void test_sd(void **state) {
  (void)state;
  uint8_t b[128];
  int n = fscc_sd_mode_encode(b, sizeof b, 0750);
  assert_int_equal(n, 20 + 8 + 8 + 20);
  assert_int_equal(b[0], 1);
  assert_int_equal(le16_at(b + 2), 0x8004); /* SELF_RELATIVE | DACL_PRESENT */
  assert_int_equal(le32_at(b + 16), 20);    /* OffsetDacl */
  assert_int_equal(le16_at(b + 20 + 4), 1); /* AceCount */
  const uint8_t *sid = b + 20 + 8 + 8;      /* S-1-5-88-3-0750 */
  static const uint8_t want[] = {1, 3, 0, 0, 0, 0, 0, 5, 88, 0, 0, 0, 3, 0, 0, 0, 0xE8, 1, 0, 0};
  assert_memory_equal(sid, want, 20);
  assert_int_equal(fscc_sd_mode_encode(b, (size_t)n - 1, 0750), SMB3_EINVAL);

  n = fscc_sd_owner_encode(b, sizeof b, 1001, 100);
  assert_int_equal(n, 20 + 16 + 16);
  assert_int_equal(le16_at(b + 2), 0x8000);
  assert_int_equal(le32_at(b + 4), 20);
  assert_int_equal(le32_at(b + 8), 36);
  assert_memory_equal(b + 20, sid_unix_user, 16);
  n = fscc_sd_owner_encode(b, sizeof b, FSCC_NO_ID, 100);
  assert_int_equal(n, 36);
  assert_int_equal(le32_at(b + 4), 0);
  assert_int_equal(le32_at(b + 8), 20);
  assert_int_equal(fscc_sd_owner_encode(b, sizeof b, FSCC_NO_ID, FSCC_NO_ID), SMB3_EINVAL);
  assert_int_equal(fscc_sd_owner_encode(b, 30, 1, 1), SMB3_EINVAL);
}

static void test_reparse(void **state) {
  (void)state;
  uint8_t b[256];
  int n = fscc_reparse_symlink_encode(b, sizeof b, "../x/y");
  assert_int_equal(n, 8 + 12 + 2 * 12);
  assert_int_equal(le32_at(b), FSCC_IO_REPARSE_TAG_SYMLINK);
  assert_int_equal(le16_at(b + 4), n - 8);
  assert_int_equal(le32_at(b + 16), FSCC_SYMLINK_FLAG_RELATIVE);
  struct fscc_reparse r;
  assert_int_equal(fscc_reparse_decode(b, (size_t)n, &r), 0);
  assert_string_equal(r.target, "../x/y");
  free(r.target);
  n = fscc_reparse_symlink_encode(b, sizeof b, "/abs");
  assert_int_equal(le32_at(b + 16), 0);
  for (int k = 0; k < n; k++) { /* truncations never decode */
    assert_int_equal(fscc_reparse_decode(b, (size_t)k, &r), SMB3_EPROTO);
    assert_null(r.target);
  }
  /* a SubstituteName past the data */
  le16_put(b + 10, 200);
  assert_int_equal(fscc_reparse_decode(b, (size_t)n, &r), SMB3_EPROTO);
  assert_int_equal(fscc_reparse_symlink_encode(b, 20, "abcdef"), SMB3_EINVAL);
  assert_int_equal(fscc_reparse_symlink_encode(b, sizeof b, ""), SMB3_EINVAL);

  n = fscc_reparse_nfs_encode(b, sizeof b, FSCC_NFS_SPECFILE_FIFO, 0, 0);
  assert_int_equal(n, 16);
  assert_int_equal(le32_at(b), FSCC_IO_REPARSE_TAG_NFS);
  assert_int_equal(fscc_reparse_decode(b, (size_t)n, &r), 0);
  assert_true(r.nfs_type == FSCC_NFS_SPECFILE_FIFO);
  assert_null(r.target);
  n = fscc_reparse_nfs_encode(b, sizeof b, FSCC_NFS_SPECFILE_CHR, 4, 64);
  assert_int_equal(n, 24);
  assert_int_equal(fscc_reparse_decode(b, (size_t)n, &r), 0);
  assert_int_equal(r.major, 4);
  assert_int_equal(r.minor, 64);
  le16_put(b + 4, 8); /* a device without its numbers */
  assert_int_equal(fscc_reparse_decode(b, 16, &r), SMB3_EPROTO);
  assert_int_equal(fscc_reparse_nfs_encode(b, sizeof b, FSCC_NFS_SPECFILE_LNK, 0, 0), SMB3_EINVAL);
  assert_int_equal(fscc_reparse_nfs_encode(b, 15, FSCC_NFS_SPECFILE_SOCK, 0, 0), SMB3_EINVAL);
}

/* The negotiate request carries context 0x100 with the tag; the create request the POSIX context. */
static const uint8_t *find(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m) {
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp(hay + i, needle, m)) return hay + i;
  return NULL;
}

static void test_negotiate_ctx(void **state) {
  (void)state;
  uint8_t buf[1024];
  struct le_wr w;
  struct smb2_negotiate_req r = {.dialect_count = 1, .dialects = {SMB2_DIALECT_311}, .posix = 1};
  le_wr_init(&w, buf, sizeof buf);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), 0);
  const uint8_t *t = find(buf, w.off, smb2_posix_tag, 16);
  assert_non_null(t);
  assert_int_equal(le16_at(t - 8), SMB2_POSIX_EXTENSIONS_AVAILABLE);
  assert_int_equal(le16_at(t - 6), 16);
  assert_int_equal(le16_at(buf + 32), 2); /* preauth + POSIX */
  size_t with = w.off;
  r.posix = 0;
  le_wr_init(&w, buf, sizeof buf);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), 0);
  assert_null(find(buf, w.off, smb2_posix_tag, 16));
  assert_true(w.off < with);
}

static void test_create_ctx(void **state) {
  (void)state;
  uint8_t buf[512];
  struct le_wr w;
  struct smb2_create_req r = {.name = "a", .posix = 1, .posix_mode = S_IFREG | 0640};
  le_wr_init(&w, buf, sizeof buf);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  const uint8_t *t = find(buf, w.off, smb2_posix_tag, 16);
  assert_non_null(t);
  const uint8_t *ctx = t - 16;
  assert_int_equal(le16_at(ctx + 4), 16);    /* NameOffset */
  assert_int_equal(le16_at(ctx + 6), 16);    /* NameLength */
  assert_int_equal(le16_at(ctx + 10), 32);   /* DataOffset, 8-aligned */
  assert_int_equal(le32_at(ctx + 12), 4);    /* DataLength */
  assert_int_equal(le32_at(ctx + 32), 0640); /* the permission bits only */
  assert_int_equal((size_t)(ctx - buf) % 8, 0);
}

/* The name of a CREATE: '/' becomes '\\' for a Windows share; on a POSIX share (posix_paths) Samba
 * parses '/' as the separator and keeps '\\' as a character (it made "d\\x" in the share's root). */
static void test_create_posix_paths(void **state) {
  (void)state;
  uint8_t buf[512];
  struct le_wr w;
  struct smb2_create_req r = {.name = "/d/a\\b", .posix = 1, .posix_mode = 0644};
  le_wr_init(&w, buf, sizeof buf);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  const uint8_t win[] = {'d', 0, '\\', 0, 'a', 0, '\\', 0, 'b', 0};
  assert_int_equal(le16_at(buf + 46), sizeof win); /* NameLength */
  assert_memory_equal(buf + 56, win, sizeof win);  /* right after the 56-byte fixed part */
  r.posix_paths = 1;
  le_wr_init(&w, buf, sizeof buf);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  const uint8_t px[] = {'d', 0, '/', 0, 'a', 0, '\\', 0, 'b', 0};
  assert_int_equal(le16_at(buf + 46), sizeof px);
  assert_memory_equal(buf + 56, px, sizeof px);
  r.name = "\\lead"; /* a leading '\\' is a POSIX name's first character */
  le_wr_init(&w, buf, sizeof buf);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  assert_int_equal(le16_at(buf + 46), 10);
  assert_int_equal(buf[56], '\\');
}

/* A NEGOTIATE response's POSIX context: the tag makes posix 1; other data is ignored. */
static void test_negotiate_rsp_posix(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = wt_negotiate_rsp(buf, sizeof buf, SMB2_DIALECT_311, 1);
  struct smb2_negotiate_rsp r;
  assert_int_equal(smb2_negotiate_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.posix, 0); /* the builder's 0x0100 context holds "xyz" */
  const uint8_t *x = find(buf, n, (const uint8_t *)"xyz", 3);
  assert_non_null(x);
  /* the same message with a 16-byte context of the tag in place of "xyz" (3 -> 16 bytes: rebuild) */
  uint8_t b2[600];
  size_t head = (size_t)(x - buf);
  memcpy(b2, buf, head);
  le16_put(b2 + head - 6, 16);
  memcpy(b2 + head, smb2_posix_tag, 16);
  size_t tail_from = (head + 3 + 7) & ~(size_t)7, tail_to = head + 16;
  memcpy(b2 + tail_to, buf + tail_from, n - tail_from);
  size_t n2 = tail_to + (n - tail_from);
  assert_int_equal(smb2_negotiate_rsp_decode(b2, n2, &r), 0);
  assert_int_equal(r.posix, 1);
  assert_int_equal(r.cipher, SMB3_CIPHER_AES128_GCM); /* the contexts after it still read */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sid),
      cmocka_unit_test(test_mode),
      cmocka_unit_test(test_cc),
      cmocka_unit_test(test_info),
      cmocka_unit_test(test_dir),
      cmocka_unit_test(test_sd),
      cmocka_unit_test(test_reparse),
      cmocka_unit_test(test_negotiate_ctx),
      cmocka_unit_test(test_create_ctx),
      cmocka_unit_test(test_create_posix_paths),
      cmocka_unit_test(test_negotiate_rsp_posix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
