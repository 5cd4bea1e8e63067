/* test_wire_dfs.c - DFS referrals (MS-DFSC 2.2.2 REQ_GET_DFS_REFERRAL, 2.2.4 RESP_GET_DFS_REFERRAL,
 * 2.2.5 entries v1..v4): the request's bytes, Samba 4.17's answers as captured (a link with two
 * targets, the root), hand-built v1/v2/v4 and name-list entries, and malformed answers (every
 * truncation, offsets outside, no terminator, mixed versions, sizes too small). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "smb3/smb3_errors.h"
#include "wire_test.h"

/* Samba 4.17, msdfs root share "test", link fo -> "msdfs:127.0.0.9\x,127.0.0.1\public", asked for
 * \127.0.0.1\test\fo\x with MaxReferralLevel 4: two v3 entries, TTL 600. */
static const char SAMBA_FAILOVER[] =
    "240002000200000003002200000000005802000044006a00900000000000000000000000000000000000030022000000"
    "0000580200008800ae00d400000000000000000000000000000000005c003100320037002e0030002e0030002e003100"
    "5c0074006500730074005c0066006f0000005c003100320037002e0030002e0030002e0031005c007400650073007400"
    "5c0066006f0000005c003100320037002e0030002e0030002e0039005c00780000005c003100320037002e0030002e00"
    "30002e0031005c0074006500730074005c0066006f0000005c003100320037002e0030002e0030002e0031005c007400"
    "6500730074005c0066006f0000005c003100320037002e0030002e0030002e0031005c007000750062006c0069006300"
    "0000";
/* The same server asked for \127.0.0.1\test: a root referral (ServerType 1) to the share itself. */
static const char SAMBA_ROOT[] =
    "1e00010003000000030022000100000058020000220042006200000000000000000000000000000000005c0031003200"
    "37002e0030002e0030002e0031005c00740065007300740000005c003100320037002e0030002e0030002e0031005c00"
    "740065007300740000005c003100320037002e0030002e0030002e0031005c0074006500730074000000";

static size_t unhex(const char *h, uint8_t *out, size_t cap) {
  size_t n = wt_unhex(h, out, cap);
  assert_true(n != (size_t)-1);
  return n;
}

static void test_req_encode(void **state) {
  (void)state;
  uint8_t b[64];
  struct le_wr w;
  le_wr_init(&w, b, sizeof b);
  assert_int_equal(smb2_dfs_referral_req_encode(&w, "\\h/s", 4), 0);
  assert_true(wt_hex_eq(b, w.off, "0400 5c00 6800 5c00 7300 0000"));
  le_wr_init(&w, b, sizeof b);
  assert_int_equal(smb2_dfs_referral_req_encode(&w, "", 4), SMB3_EINVAL);
  le_wr_init(&w, b, 6); /* no room for the terminator */
  assert_int_equal(smb2_dfs_referral_req_encode(&w, "\\h", 4), SMB3_EINVAL);
}

static void test_samba_failover(void **state) {
  (void)state;
  uint8_t b[512];
  size_t n = unhex(SAMBA_FAILOVER, b, sizeof b);
  struct smb2_dfs_referral r;
  assert_int_equal(smb2_dfs_referral_decode(b, n, &r), 0);
  assert_int_equal(r.path_consumed, 36); /* "\127.0.0.1\test\fo": 18 UTF-16 units */
  assert_int_equal(r.version, 3);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.header_flags, DFS_HDR_STORAGE_SERVERS);
  assert_int_equal(r.t[0].ttl, 600);
  assert_int_equal(r.t[0].server_type, 0);
  assert_string_equal(r.t[0].path, "\\127.0.0.1\\test\\fo");
  assert_string_equal(r.t[0].address, "\\127.0.0.9\\x");
  assert_string_equal(r.t[1].address, "\\127.0.0.1\\public");
  smb2_dfs_referral_free(&r);
  assert_int_equal(r.n, 0);
  /* every truncation is refused (the last string's terminator is the last byte) */
  for (size_t len = 0; len < n; len++) {
    assert_int_equal(smb2_dfs_referral_decode(b, len, &r), SMB3_EPROTO);
    assert_int_equal(r.n, 0);
  }
}

static void test_samba_root(void **state) {
  (void)state;
  uint8_t b[512];
  size_t n = unhex(SAMBA_ROOT, b, sizeof b);
  struct smb2_dfs_referral r;
  assert_int_equal(smb2_dfs_referral_decode(b, n, &r), 0);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.t[0].server_type, DFS_SERVER_TYPE_ROOT);
  assert_int_equal(r.header_flags, DFS_HDR_REFERRAL_SERVERS | DFS_HDR_STORAGE_SERVERS);
  assert_string_equal(r.t[0].address, "\\127.0.0.1\\test");
  smb2_dfs_referral_free(&r);
}

/* v1: ShareName inline; v2: Proximity before TimeToLive; v4 with a name list (domain referral). */
static void test_other_versions(void **state) {
  (void)state;
  uint8_t b[256];
  struct smb2_dfs_referral r;
  /* header (consumed 4, 1 entry, flags 2) + v1 entry of size 14: "\a" NUL */
  size_t n = unhex("0400 0100 02000000 | 0100 0e00 0100 ffff 5c00 6100 0000", b, sizeof b);
  assert_int_equal(smb2_dfs_referral_decode(b, n, &r), 0);
  assert_int_equal(r.version, 1);
  assert_int_equal(r.t[0].flags, 0); /* ignored on receipt */
  assert_string_equal(r.t[0].address, "\\a");
  assert_string_equal(r.t[0].path, "");
  smb2_dfs_referral_free(&r);
  /* v1 whose ShareName runs past its Size */
  n = unhex("0400 0100 02000000 | 0100 0c00 0100 0000 5c00 6100 0000", b, sizeof b);
  assert_int_equal(smb2_dfs_referral_decode(b, n, &r), SMB3_EPROTO);
  /* v2, size 22: ttl 300, path at +22 "\p", no alternate, address at +28 "\s" */
  n = unhex("0400 0100 00000000 | 0200 1600 0000 0000 00000000 2c010000 1600 0000 1c00 |"
            " 5c00 7000 0000 5c00 7300 0000",
            b, sizeof b);
  assert_int_equal(smb2_dfs_referral_decode(b, n, &r), 0);
  assert_int_equal(r.t[0].ttl, 300);
  assert_string_equal(r.t[0].path, "\\p");
  assert_string_equal(r.t[0].address, "\\s");
  smb2_dfs_referral_free(&r);
  /* v4 name list: SpecialName at +18 "\d", 1 expanded name at +24 "\e" */
  n = unhex(
      "0000 0100 00000000 | 0400 1200 0000 0200 10000000 1200 0100 1800 | 5c00 6400 0000 5c00 6500 0000", b,
      sizeof b);
  assert_int_equal(smb2_dfs_referral_decode(b, n, &r), 0);
  assert_true(r.t[0].flags & DFS_ENTRY_NAME_LIST);
  assert_string_equal(r.t[0].path, "\\d");
  assert_string_equal(r.t[0].address, "\\e");
  smb2_dfs_referral_free(&r);
}

static void test_malformed(void **state) {
  (void)state;
  uint8_t b[512];
  struct smb2_dfs_referral r;
  size_t n = unhex(SAMBA_FAILOVER, b, sizeof b);
  uint8_t m[512];
  /* no entries; an odd PathConsumed */
  memcpy(m, b, n);
  m[2] = 0;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  memcpy(m, b, n);
  m[0] = 35;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  /* the second entry of another version */
  memcpy(m, b, n);
  m[8 + 34] = 4;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  assert_int_equal(r.n, 0);
  /* an entry Size too small for v3, or past the end */
  memcpy(m, b, n);
  m[8 + 2] = 16;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  memcpy(m, b, n);
  m[8 + 2] = 0xff;
  m[8 + 3] = 0x7f;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  /* a NetworkAddressOffset outside the buffer; an unknown version */
  memcpy(m, b, n);
  m[8 + 16] = 0xff;
  m[8 + 17] = 0xff;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  memcpy(m, b, n);
  m[8] = m[8 + 34] = 5;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  /* the last string without its terminator: its NUL turned into a character */
  memcpy(m, b, n);
  m[n - 2] = 'x';
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  /* an unpaired surrogate in a string */
  memcpy(m, b, n);
  m[n - 4] = 0x00;
  m[n - 3] = 0xd8;
  assert_int_equal(smb2_dfs_referral_decode(m, n, &r), SMB3_EPROTO);
  assert_int_equal(smb2_dfs_referral_decode(NULL, 0, &r), SMB3_EPROTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_req_encode), cmocka_unit_test(test_samba_failover),
      cmocka_unit_test(test_samba_root), cmocka_unit_test(test_other_versions),
      cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
