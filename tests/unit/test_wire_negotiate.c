/* test_wire_negotiate.c - NEGOTIATE (MS-SMB2 2.2.3 / 2.2.4 with 3.1.1 contexts 2.2.3.1 /
 * 2.2.4.1), SESSION_SETUP (2.2.5 / 2.2.6) and TREE_CONNECT (2.2.9 / 2.2.10). Expected request
 * bytes are laid out by hand from the spec's field tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"
#include "wire_test.h"

static void neg_req_base(struct smb2_negotiate_req *r) {
  memset(r, 0, sizeof *r);
  r->security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
  r->capabilities = SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_ENCRYPTION;
  for (int i = 0; i < 16; i++)
    r->client_guid[i] = (uint8_t)i;
}

/* Without 0x0311 there are no contexts: offset/count stay 0 (ClientStartTime). */
static void test_negotiate_req_no_311(void **state) {
  (void)state;
  struct smb2_negotiate_req r;
  neg_req_base(&r);
  r.dialect_count = 4;
  r.dialects[0] = 0x0202;
  r.dialects[1] = 0x0210;
  r.dialects[2] = 0x0300;
  r.dialects[3] = 0x0302;
  r.cipher_count = 1; /* ignored without 3.1.1 */
  r.ciphers[0] = 1;
  uint8_t body[256];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "2400 0400 0100 0000 44000000 000102030405060708090a0b0c0d0e0f 00000000 0000 0000"
                        "0202 1002 0003 0203"));
}

/* 3.1.1: contexts from header offset 0x70, each 8-byte aligned; PREAUTH, ENCRYPTION, SIGNING
 * (HMAC-SHA256's crypto.h id 100 goes out as 0), NETNAME. */
static void test_negotiate_req_311(void **state) {
  (void)state;
  struct smb2_negotiate_req r;
  neg_req_base(&r);
  r.dialect_count = 3;
  r.dialects[0] = 0x0300;
  r.dialects[1] = 0x0302;
  r.dialects[2] = 0x0311;
  memset(r.preauth_salt, 0x5a, 32);
  r.cipher_count = 2;
  r.ciphers[0] = SMB3_CIPHER_AES128_GCM;
  r.ciphers[1] = SMB3_CIPHER_AES128_CCM;
  r.sign_alg_count = 3;
  r.sign_algs[0] = SMB3_SIGN_AES_GMAC;
  r.sign_algs[1] = SMB3_SIGN_AES_CMAC;
  r.sign_algs[2] = SMB3_SIGN_HMAC_SHA256;
  r.netname = "srv";
  uint8_t body[512];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), 0);
  assert_true(
      wt_hex_eq(body, w.off,
                "2400 0300 0100 0000 44000000 000102030405060708090a0b0c0d0e0f 70000000 0400 0000"
                "0003 0203 1103 000000000000"       /* dialects, pad to 48 */
                "0100 2600 00000000 0100 2000 0100" /* PREAUTH at 0x70 */
                "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a 0000" /* salt, pad */
                "0200 0600 00000000 0200 0200 0100 0000" /* ENCRYPTION at 0xa0 */
                "0800 0800 00000000 0300 0200 0100 0000" /* SIGNING at 0xb0 */
                "0500 0600 00000000 7300 7200 7600"));   /* NETNAME at 0xc0 */
}

static void test_negotiate_req_invalid(void **state) {
  (void)state;
  struct smb2_negotiate_req r;
  neg_req_base(&r);
  uint8_t body[512];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), SMB3_EINVAL); /* no dialects */
  r.dialect_count = 1;
  r.dialects[0] = 0x0311;
  r.cipher_count = SMB2_MAX_CIPHERS + 1;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), SMB3_EINVAL);
  r.cipher_count = 0;
  r.netname = "\xff\xfe"; /* invalid UTF-8 */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), SMB3_EINVAL);
  r.netname = NULL;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_negotiate_req_encode(&w, &r), 0);
  size_t full = w.off;
  for (size_t cap = 0; cap < full; cap++) { /* every short writer fails cleanly */
    le_wr_init(&w, body, cap);
    assert_int_equal(smb2_negotiate_req_encode(&w, &r), SMB3_EINVAL);
  }
}

static int dec_negotiate(const uint8_t *m, size_t n) {
  struct smb2_negotiate_rsp r;
  return smb2_negotiate_rsp_decode(m, n, &r);
}

static void test_negotiate_rsp_302(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = wt_negotiate_rsp(buf, sizeof buf, SMB2_DIALECT_302, 0);
  struct smb2_negotiate_rsp r;
  assert_int_equal(smb2_negotiate_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.dialect, 0x0302);
  assert_int_equal(r.security_mode, 1);
  assert_int_equal(r.max_transact_size, 8388608);
  assert_int_equal(r.max_read_size, 4194304);
  assert_int_equal(r.max_write_size, 2097152);
  assert_int_equal(r.server_guid[15], 0xaf);
  assert_int_equal(r.sec_len, 8);
  assert_ptr_equal(r.sec_buf, buf + 128);
  assert_int_equal(r.sign_alg, 0xFFFF);
  assert_int_equal(r.cipher, 0);
  assert_int_equal(r.preauth_hash_alg, 0);
  assert_true(wt_truncations_fail(dec_negotiate, buf, n));
  /* NegotiateContextOffset/Count are Reserved below 3.1.1: garbage there is ignored. */
  le16_put(buf + 70, 9);
  le32_put(buf + 124, 0xffffff00u);
  assert_int_equal(smb2_negotiate_rsp_decode(buf, n, &r), 0);
}

static void test_negotiate_rsp_311(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = wt_negotiate_rsp(buf, sizeof buf, SMB2_DIALECT_311, 1);
  struct smb2_negotiate_rsp r;
  assert_int_equal(smb2_negotiate_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.dialect, 0x0311);
  assert_int_equal(r.preauth_hash_alg, SMB2_PREAUTH_SHA512);
  assert_int_equal(r.cipher, SMB3_CIPHER_AES128_GCM);
  assert_int_equal(r.sign_alg, SMB3_SIGN_AES_GMAC);
  assert_true(wt_truncations_fail(dec_negotiate, buf, n));
  /* HMAC-SHA256 (wire 0) comes back as crypto.h's id. */
  le16_put(buf + n - 2, 0);
  assert_int_equal(smb2_negotiate_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.sign_alg, SMB3_SIGN_HMAC_SHA256);
}

/* Every offset and length the server controls, pointed outside the message or at the header. */
static void test_negotiate_rsp_reject(void **state) {
  (void)state;
  uint8_t good[512], buf[512];
  size_t n = wt_negotiate_rsp(good, sizeof good, SMB2_DIALECT_311, 1);
  struct smb2_negotiate_rsp r;
  struct {
    size_t off;
    int width;
    uint32_t val;
  } cases[] = {
      {64, 2, 64},          /* StructureSize */
      {12, 2, SMB2_CREATE}, /* Command */
      {120, 2, 0xfff0},     /* SecurityBufferOffset past the end */
      {120, 2, 64},         /* ... pointing into the header */
      {122, 2, 0xffff},     /* SecurityBufferLength past the end */
      {124, 4, 0xfffffff8}, /* NegotiateContextOffset past the end */
      {124, 4, 8},          /* ... into the header */
      {70, 2, 5},           /* one context more than present */
      {138, 2, 0xffff},     /* PREAUTH DataLength past the end */
      {144, 2, 0},          /* PREAUTH HashAlgorithmCount 0 */
      {146, 2, 200},        /* PREAUTH SaltLength beyond DataLength */
      {186, 2, 0xffff},     /* unknown context's DataLength past the end */
      {208, 2, 3},          /* CipherCount beyond DataLength */
      {224, 2, 0},          /* SigningAlgorithmCount 0 */
  };
  assert_int_equal(le16_at(good + 136), SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
  assert_int_equal(le16_at(good + 184), 0x0100);
  assert_int_equal(le16_at(good + 200), SMB2_ENCRYPTION_CAPABILITIES);
  assert_int_equal(le16_at(good + 216), SMB2_SIGNING_CAPABILITIES);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(buf, good, n);
    if (cases[i].width == 2)
      le16_put(buf + cases[i].off, (uint16_t)cases[i].val);
    else
      le32_put(buf + cases[i].off, cases[i].val);
    if (smb2_negotiate_rsp_decode(buf, n, &r) != SMB3_EPROTO) fail_msg("case %zu decoded", i);
  }
}

static void test_session_setup(void **state) {
  (void)state;
  uint8_t body[128];
  struct le_wr w;
  struct smb2_session_setup_req q = {.flags = 0,
                                     .security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED,
                                     .capabilities = SMB2_GLOBAL_CAP_DFS,
                                     .previous_session_id = 0x0102,
                                     .sec_buf = (const uint8_t *)"\x60\x48\x06\x06",
                                     .sec_len = 4};
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_session_setup_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off, "1900 00 01 01000000 00000000 5800 0400 0201000000000000 60480606"));
  q.sec_len = 0; /* still one Buffer byte */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_session_setup_req_encode(&w, &q), 0);
  assert_int_equal(w.off, 25);
  q.sec_buf = NULL;
  q.sec_len = 3;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_session_setup_req_encode(&w, &q), SMB3_EINVAL);

  uint8_t buf[256];
  size_t n = wt_session_setup_rsp(buf, sizeof buf);
  struct smb2_session_setup_rsp r;
  assert_int_equal(smb2_session_setup_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.session_flags, SMB2_SESSION_FLAG_IS_GUEST);
  assert_int_equal(r.sec_len, 5);
  assert_ptr_equal(r.sec_buf, buf + 72);
  for (size_t k = 0; k < n; k++)
    assert_int_equal(smb2_session_setup_rsp_decode(buf, k, &r), SMB3_EPROTO);
  le16_put(buf + 68, 70); /* offset into the fixed part */
  assert_int_equal(smb2_session_setup_rsp_decode(buf, n, &r), SMB3_EPROTO);
  le16_put(buf + 68, 73); /* one byte too far */
  assert_int_equal(smb2_session_setup_rsp_decode(buf, n, &r), SMB3_EPROTO);
  le16_put(buf + 68, 0); /* empty buffer: offset not looked at */
  le16_put(buf + 70, 0);
  assert_int_equal(smb2_session_setup_rsp_decode(buf, n, &r), 0);
  assert_null(r.sec_buf);
}

static void test_tree_connect(void **state) {
  (void)state;
  uint8_t body[128];
  struct le_wr w;
  struct smb2_tree_connect_req q = {.path = "\\\\h\\s"};
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_tree_connect_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off, "0900 0000 4800 0a00 5c005c0068005c007300"));
  q.path = "";
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_tree_connect_req_encode(&w, &q), SMB3_EINVAL);

  uint8_t buf[128];
  size_t n = wt_tree_connect_rsp(buf, sizeof buf);
  struct smb2_tree_connect_rsp r;
  assert_int_equal(smb2_tree_connect_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.share_type, SMB2_SHARE_TYPE_DISK);
  assert_int_equal(r.share_flags, SMB2_SHAREFLAG_ENCRYPT_DATA);
  assert_int_equal(r.capabilities, SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY);
  assert_int_equal(r.maximal_access, 0x001f01ff);
  for (size_t k = 0; k < n; k++)
    assert_int_equal(smb2_tree_connect_rsp_decode(buf, k, &r), SMB3_EPROTO);
  buf[64] = 17;
  assert_int_equal(smb2_tree_connect_rsp_decode(buf, n, &r), SMB3_EPROTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_negotiate_req_no_311),  cmocka_unit_test(test_negotiate_req_311),
      cmocka_unit_test(test_negotiate_req_invalid), cmocka_unit_test(test_negotiate_rsp_302),
      cmocka_unit_test(test_negotiate_rsp_311),     cmocka_unit_test(test_negotiate_rsp_reject),
      cmocka_unit_test(test_session_setup),         cmocka_unit_test(test_tree_connect),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
