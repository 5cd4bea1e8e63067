/* test_ntlmssp - NTLMSSP against the MS-NLMP 4.2.4 NTLMv2 example (user "User", domain
 * "Domain", password "Password", server challenge 0123456789abcdef, client challenge aa..aa,
 * time 0, RandomSessionKey 55..55), plus CHALLENGE validation and AUTHENTICATE layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>

#include "auth/ntlmssp.h"
#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"

/* MS-NLMP 4.2.4.3: the CHALLENGE_MESSAGE of the NTLMv2 example. */
static const uint8_t spec_challenge[] = {
    0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x0c,
    0x00, 0x38, 0x00, 0x00, 0x00, 0x33, 0x82, 0x8a, 0xe2, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
    0xcd, 0xef, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x24, 0x00, 0x44,
    0x00, 0x00, 0x00, 0x06, 0x00, 0x70, 0x17, 0x00, 0x00, 0x00, 0x0f, 0x53, 0x00, 0x65, 0x00,
    0x72, 0x00, 0x76, 0x00, 0x65, 0x00, 0x72, 0x00, 0x02, 0x00, 0x0c, 0x00, 0x44, 0x00, 0x6f,
    0x00, 0x6d, 0x00, 0x61, 0x00, 0x69, 0x00, 0x6e, 0x00, 0x01, 0x00, 0x0c, 0x00, 0x53, 0x00,
    0x65, 0x00, 0x72, 0x00, 0x76, 0x00, 0x65, 0x00, 0x72, 0x00, 0x00, 0x00, 0x00, 0x00};
#define SPEC_TI_OFF 0x44
#define SPEC_TI_LEN 0x24

static const uint8_t server_challenge[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
static const uint8_t client_challenge[8] = {0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
static const uint8_t random_session_key[16] = {0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
                                               0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55};

/* 4.2.4.1.1 NTOWFv2 / ResponseKeyNT. */
static const uint8_t want_ntowfv2[16] = {0x0c, 0x86, 0x8a, 0x40, 0x3b, 0xfd, 0x7a, 0x93,
                                         0xa3, 0x00, 0x1e, 0xf2, 0x2e, 0xf0, 0x2e, 0x3f};
/* 4.2.4.1.2 Session base key. */
static const uint8_t want_session_base_key[16] = {0x8d, 0xe4, 0x0c, 0xca, 0xdb, 0xc1, 0x4a, 0x82,
                                                  0xf1, 0x5c, 0xb0, 0xad, 0x0d, 0xe9, 0x5c, 0xa3};
/* 4.2.4.2.1 LMv2 response. */
static const uint8_t want_lmv2[24] = {0x86, 0xc3, 0x50, 0x97, 0xac, 0x9c, 0xec, 0x10, 0x25, 0x54, 0x76, 0x4a,
                                      0x57, 0xcc, 0xcc, 0x19, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
/* 4.2.4.2.2 NTLMv2 response: NTProofStr. */
static const uint8_t want_proof[16] = {0x68, 0xcd, 0x0a, 0xb8, 0x51, 0xe5, 0x1c, 0x96,
                                       0xaa, 0xbc, 0x92, 0x7b, 0xeb, 0xef, 0x6a, 0x1c};
/* 4.2.4.2.3 Encrypted session key. */
static const uint8_t want_enc_key[16] = {0xc5, 0xda, 0xd2, 0x54, 0x4f, 0xc9, 0x79, 0x90,
                                         0x94, 0xce, 0x1c, 0xe9, 0x0b, 0xc9, 0xd0, 0x3e};
/* 4.2.4.4 GSS_WrapEx: sealing key, signing key, sealed "Plaintext" and its signature. */
static const uint8_t want_seal_key[16] = {0x59, 0xf6, 0x00, 0x97, 0x3c, 0xc4, 0x96, 0x0a,
                                          0x25, 0x48, 0x0a, 0x7c, 0x19, 0x6e, 0x4c, 0x58};
static const uint8_t want_sign_key[16] = {0x47, 0x88, 0xdc, 0x86, 0x1b, 0x47, 0x82, 0xf3,
                                          0x5d, 0x43, 0xfd, 0x98, 0xfe, 0x1a, 0x2d, 0x39};
static const uint8_t plaintext[18] = {0x50, 0x00, 0x6c, 0x00, 0x61, 0x00, 0x69, 0x00, 0x6e,
                                      0x00, 0x74, 0x00, 0x65, 0x00, 0x78, 0x00, 0x74, 0x00};
static const uint8_t want_sealed[18] = {0x54, 0xe5, 0x01, 0x65, 0xbf, 0x19, 0x36, 0xdc, 0x99,
                                        0x60, 0x20, 0xc1, 0x81, 0x1b, 0x0f, 0x06, 0xfb, 0x5f};
static const uint8_t want_wrap_sig[16] = {0x01, 0x00, 0x00, 0x00, 0x7f, 0xb3, 0x8e, 0xc5,
                                          0xc5, 0x5d, 0x49, 0x76, 0x00, 0x00, 0x00, 0x00};

static struct iovec iov_c(const void *p, size_t n) {
  struct iovec v = {.iov_base = (void *)p, .iov_len = n};
  return v;
}

/* ---- NTLMv2 computations ---------------------------------------------------------------- */

static void test_ntowfv2(void **state) {
  (void)state;
  uint8_t key[16];
  assert_int_equal(ntlmssp_ntowfv2("User", "Password", "Domain", key), 0);
  assert_memory_equal(key, want_ntowfv2, 16);
  /* The user name is upper-cased, the domain is not. */
  assert_int_equal(ntlmssp_ntowfv2("user", "Password", "Domain", key), 0);
  assert_memory_equal(key, want_ntowfv2, 16);
  assert_int_equal(ntlmssp_ntowfv2("User", "Password", "DOMAIN", key), 0);
  assert_memory_not_equal(key, want_ntowfv2, 16);
}

static void test_lmv2(void **state) {
  (void)state;
  uint8_t lm[24];
  assert_int_equal(ntlmssp_lmv2_response(want_ntowfv2, server_challenge, client_challenge, lm), 0);
  assert_memory_equal(lm, want_lmv2, 24);
}

/* 4.2.4.1.3 temp and 4.2.4.2.2 NTProofStr, then the session base key and the encrypted key. */
static void test_proof_and_keys(void **state) {
  (void)state;
  uint8_t *temp = NULL, proof[16], sbk[16], enc[16];
  size_t templen = 0;
  assert_int_equal(
      ntlmssp_make_temp(0, client_challenge, spec_challenge + SPEC_TI_OFF, SPEC_TI_LEN, &temp, &templen), 0);
  assert_int_equal(templen, 28 + SPEC_TI_LEN + 4);
  static const uint8_t head[28] = {1, 1, 0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0,
                                   0, 0, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0, 0, 0, 0};
  assert_memory_equal(temp, head, 28);
  assert_memory_equal(temp + 28, spec_challenge + SPEC_TI_OFF, SPEC_TI_LEN);
  assert_int_equal(ntlmssp_nt_proof(want_ntowfv2, server_challenge, temp, templen, proof), 0);
  assert_memory_equal(proof, want_proof, 16);
  assert_int_equal(ntlmssp_session_base_key(want_ntowfv2, proof, sbk), 0);
  assert_memory_equal(sbk, want_session_base_key, 16);
  /* KEY_EXCH: EncryptedRandomSessionKey = RC4(KeyExchangeKey = SessionBaseKey, 55..55). */
  assert_int_equal(smb3_rc4(sbk, 16, random_session_key, enc, 16), 0);
  assert_memory_equal(enc, want_enc_key, 16);
  free(temp);
}

static void test_sign_seal_keys(void **state) {
  (void)state;
  uint32_t flags = 0xe28a8233; /* 4.2.4 flags: 128 + 56 + KEY_EXCH + ESS */
  uint8_t sign[16], seal[16], ssign[16], sseal[16];
  assert_int_equal(ntlmssp_sign_key(random_session_key, 0, sign), 0);
  assert_int_equal(ntlmssp_seal_key(random_session_key, flags, 0, seal), 0);
  assert_memory_equal(sign, want_sign_key, 16);
  assert_memory_equal(seal, want_seal_key, 16);
  /* Server-to-client keys use different constants. */
  assert_int_equal(ntlmssp_sign_key(random_session_key, 1, ssign), 0);
  assert_int_equal(ntlmssp_seal_key(random_session_key, flags, 1, sseal), 0);
  assert_memory_not_equal(ssign, sign, 16);
  assert_memory_not_equal(sseal, seal, 16);
  /* Weaker keys use fewer bytes of the session key (3.4.5.3). */
  uint8_t s56[16], s40[16];
  assert_int_equal(ntlmssp_seal_key(random_session_key, flags & ~NTLMSSP_NEGOTIATE_128, 0, s56), 0);
  assert_int_equal(
      ntlmssp_seal_key(random_session_key, flags & ~(NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_56), 0, s40),
      0);
  assert_memory_not_equal(s56, seal, 16);
  assert_memory_not_equal(s40, s56, 16);
}

/* 4.2.4.4: Seal "Plaintext" then encrypt the checksum with the same RC4 stream. A one-shot RC4
 * over plaintext || checksum is the same stream. */
static void test_wrap_signature(void **state) {
  (void)state;
  uint8_t cks[8], buf[26], sig[16];
  assert_int_equal(ntlmssp_checksum(want_sign_key, 0, plaintext, sizeof plaintext, cks), 0);
  memcpy(buf, plaintext, 18);
  memcpy(buf + 18, cks, 8);
  assert_int_equal(smb3_rc4(want_seal_key, 16, buf, buf, sizeof buf), 0);
  assert_memory_equal(buf, want_sealed, 18);
  assert_memory_equal(buf + 18, want_wrap_sig + 4, 8);
  /* ntlmssp_make_signature is the GetMIC form: checksum sealed with a fresh handle. */
  assert_int_equal(ntlmssp_make_signature(want_sign_key, want_seal_key, NTLMSSP_NEGOTIATE_KEY_EXCH, 0,
                                          plaintext, sizeof plaintext, sig),
                   0);
  uint8_t fresh[8];
  assert_int_equal(smb3_rc4(want_seal_key, 16, cks, fresh, 8), 0);
  assert_int_equal(le32_at(sig), 1);
  assert_memory_equal(sig + 4, fresh, 8);
  assert_int_equal(le32_at(sig + 12), 0);
  /* Without KEY_EXCH the checksum is not encrypted. */
  assert_int_equal(
      ntlmssp_make_signature(want_sign_key, want_seal_key, 0, 5, plaintext, sizeof plaintext, sig), 0);
  assert_int_equal(le32_at(sig + 12), 5);
  assert_int_equal(ntlmssp_checksum(want_sign_key, 5, plaintext, sizeof plaintext, cks), 0);
  assert_memory_equal(sig + 4, cks, 8);
}

/* ---- CHALLENGE parsing ------------------------------------------------------------------ */

static void test_parse_spec_challenge(void **state) {
  (void)state;
  struct ntlmssp_challenge c;
  assert_int_equal(ntlmssp_parse_challenge(spec_challenge, sizeof spec_challenge, &c), 0);
  assert_int_equal(c.flags, 0xe28a8233);
  assert_memory_equal(c.server_challenge, server_challenge, 8);
  assert_int_equal(c.target_name_len, 12);
  assert_memory_equal(c.target_name, "S\0e\0r\0v\0e\0r\0", 12);
  assert_ptr_equal(c.target_info, spec_challenge + SPEC_TI_OFF);
  assert_int_equal(c.target_info_len, SPEC_TI_LEN);
  assert_false(c.has_timestamp);
  const uint8_t *v;
  size_t vlen;
  assert_int_equal(ntlmssp_av_find(c.target_info, c.target_info_len, MSV_AV_NB_DOMAIN_NAME, &v, &vlen), 1);
  assert_int_equal(vlen, 12);
  assert_memory_equal(v, "D\0o\0m\0a\0i\0n\0", 12);
  assert_int_equal(ntlmssp_av_find(c.target_info, c.target_info_len, MSV_AV_TIMESTAMP, &v, &vlen), 0);
}

static void test_parse_truncated(void **state) {
  (void)state;
  struct ntlmssp_challenge c;
  for (size_t n = 0; n < sizeof spec_challenge; n++) {
    uint8_t *copy = malloc(n ? n : 1); /* exact size so ASan catches over-reads */
    memcpy(copy, spec_challenge, n);
    assert_int_equal(ntlmssp_parse_challenge(copy, n, &c), SMB3_EPROTO);
    free(copy);
  }
  assert_int_equal(ntlmssp_parse_challenge(NULL, 0, &c), SMB3_EPROTO);
}

/* Apply `patch` (len bytes at off) to a copy of the spec CHALLENGE and expect rejection. */
static void expect_bad(size_t off, const void *patch, size_t len) {
  uint8_t m[sizeof spec_challenge];
  struct ntlmssp_challenge c;
  memcpy(m, spec_challenge, sizeof m);
  memcpy(m + off, patch, len);
  assert_int_equal(ntlmssp_parse_challenge(m, sizeof m, &c), SMB3_EPROTO);
}

static void test_parse_malformed(void **state) {
  (void)state;
  expect_bad(0, "NTLMSSX", 7);                            /* signature */
  expect_bad(8, "\x03\0\0\0", 4);                         /* MessageType */
  expect_bad(12, "\xff\xff", 2);                          /* TargetName length past the end */
  expect_bad(16, "\xff\xff\xff\xff", 4);                  /* TargetName offset overflow */
  expect_bad(16, "\x10\0\0\0", 4);                        /* TargetName offset inside the header */
  expect_bad(40, "\x25\0", 2);                            /* TargetInfo 1 byte too long */
  expect_bad(44, "\xfd\xff\xff\xff", 4);                  /* TargetInfo offset + length wraps */
  expect_bad(SPEC_TI_OFF + 2, "\x40\0", 2);               /* AV pair runs past the list */
  expect_bad(SPEC_TI_OFF + SPEC_TI_LEN - 4, "\x05\0", 2); /* no MsvAvEOL */
  expect_bad(SPEC_TI_OFF + SPEC_TI_LEN - 2, "\x01\0", 2); /* EOL with a length */
  /* MsvAvTimestamp and MsvAvFlags must have their fixed sizes. */
  expect_bad(SPEC_TI_OFF, "\x07\0", 2);
  expect_bad(SPEC_TI_OFF, "\x06\0", 2);
  /* A message larger than any NTLMSSP message is refused before parsing. */
  uint8_t *big = calloc(1, NTLMSSP_MAX_MESSAGE + 1);
  struct ntlmssp_challenge c;
  memcpy(big, spec_challenge, sizeof spec_challenge);
  assert_int_equal(ntlmssp_parse_challenge(big, NTLMSSP_MAX_MESSAGE + 1, &c), SMB3_EPROTO);
  free(big);
}

static void test_parse_no_target_info(void **state) {
  (void)state;
  uint8_t m[sizeof spec_challenge];
  struct ntlmssp_challenge c;
  memcpy(m, spec_challenge, sizeof m);
  memset(m + 40, 0, 8); /* TargetInfoFields empty */
  assert_int_equal(ntlmssp_parse_challenge(m, sizeof m, &c), 0);
  assert_int_equal(c.target_info_len, 0);
  /* Old 48-byte form without Version and payload. */
  assert_int_equal(ntlmssp_parse_challenge(m, 48, &c), SMB3_EPROTO); /* target name now out of range */
  memset(m + 12, 0, 8);
  assert_int_equal(ntlmssp_parse_challenge(m, 48, &c), 0);
}

/* ---- NEGOTIATE and AUTHENTICATE ------------------------------------------------------------ */

static void test_negotiate_layout(void **state) {
  (void)state;
  struct ntlmssp n;
  uint8_t *m = NULL;
  size_t len = 0;
  assert_int_equal(ntlmssp_init(&n, "User", "Password", "Domain", NULL), 0);
  assert_int_equal(ntlmssp_negotiate(&n, &m, &len), 0);
  assert_int_equal(len, 40);
  assert_memory_equal(m, "NTLMSSP\0\x01\0\0\0", 12);
  assert_int_equal(le32_at(m + 12), 0xe2888235);
  assert_int_equal(le32_at(m + 12), NTLMSSP_CLIENT_FLAGS);
  assert_int_equal(le16_at(m + 16), 0); /* DomainNameLen */
  assert_int_equal(le16_at(m + 24), 0); /* WorkstationLen */
  assert_int_equal(m[39], 0x0f);        /* NTLMSSP_REVISION_W2K3 */
  assert_int_equal(n.negotiate_len, 40);
  assert_memory_equal(n.negotiate, m, 40);
  free(m);
  ntlmssp_clear(&n);
}

/* Field i (0 LM, 1 NT, 2 Domain, 3 User, 4 Workstation, 5 EncryptedRandomSessionKey). */
static const uint8_t *auth_field(const uint8_t *m, size_t mlen, int i, size_t *len) {
  const uint8_t *f = m + 12 + 8 * i;
  *len = le16_at(f);
  uint32_t off = le32_at(f + 4);
  assert_int_equal(le16_at(f + 2), *len);
  assert_true(off >= NTLMSSP_AUTH_HEADER_LEN && off + *len <= mlen);
  return m + off;
}

static void init_fixed(struct ntlmssp *n, const char *user) {
  assert_int_equal(ntlmssp_init(n, user, "Password", "Domain", "COMPUTER"), 0);
  n->fixed = 1;
  memcpy(n->fixed_client_challenge, client_challenge, 8);
  memcpy(n->fixed_session_key, random_session_key, 16);
  n->fixed_time = 0;
}

/* Build an AUTHENTICATE for the spec CHALLENGE and check it the way a server would. */
static void test_authenticate_spec(void **state) {
  (void)state;
  struct ntlmssp n;
  uint8_t *neg = NULL, *m = NULL;
  size_t neglen, mlen, len;
  init_fixed(&n, "User");
  assert_int_equal(ntlmssp_negotiate(&n, &neg, &neglen), 0);
  assert_int_equal(ntlmssp_authenticate(&n, spec_challenge, sizeof spec_challenge, &m, &mlen), 0);
  assert_memory_equal(m, "NTLMSSP\0\x03\0\0\0", 12);
  assert_int_equal(le32_at(m + 60), NTLMSSP_CLIENT_FLAGS & 0xe28a8233); /* ours and the server's */
  assert_int_equal(n.flags, le32_at(m + 60));
  assert_memory_equal(auth_field(m, mlen, 2, &len), "D\0o\0m\0a\0i\0n\0", 12);
  assert_memory_equal(auth_field(m, mlen, 3, &len), "U\0s\0e\0r\0", 8);
  assert_int_equal(len, 8);
  assert_memory_equal(auth_field(m, mlen, 4, &len), "C\0O\0M\0P\0U\0T\0E\0R\0", 16);
  /* No MsvAvTimestamp: the LMv2 response of 4.2.4.2.1 is sent. */
  const uint8_t *lm = auth_field(m, mlen, 0, &len);
  assert_int_equal(len, 24);
  assert_memory_equal(lm, want_lmv2, 24);
  /* NT response = NTProofStr + temp; temp echoes the server AV pairs plus MsvAvFlags(MIC). */
  const uint8_t *nt = auth_field(m, mlen, 1, &len);
  assert_int_equal(len, 16 + 28 + (SPEC_TI_LEN - 4) + 8 + 4 + 4);
  assert_memory_equal(nt + 16 + 28, spec_challenge + SPEC_TI_OFF, SPEC_TI_LEN - 4);
  static const uint8_t av_tail[] = {6, 0, 4, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_memory_equal(nt + 16 + 28 + SPEC_TI_LEN - 4, av_tail, sizeof av_tail);
  uint8_t proof[16], sbk[16], esk[16];
  assert_int_equal(ntlmssp_nt_proof(want_ntowfv2, server_challenge, nt + 16, len - 16, proof), 0);
  assert_memory_equal(proof, nt, 16);
  assert_int_equal(ntlmssp_session_base_key(want_ntowfv2, proof, sbk), 0);
  /* The server recovers the exported session key from EncryptedRandomSessionKey. */
  const uint8_t *ek = auth_field(m, mlen, 5, &len);
  assert_int_equal(len, 16);
  assert_int_equal(smb3_rc4(sbk, 16, ek, esk, 16), 0);
  assert_memory_equal(esk, random_session_key, 16);
  assert_true(n.have_key);
  assert_memory_equal(n.session_key, random_session_key, 16);
  assert_memory_equal(n.client_sign_key, want_sign_key, 16);
  assert_memory_equal(n.client_seal_key, want_seal_key, 16);
  /* MIC over NEGOTIATE + CHALLENGE + AUTHENTICATE with the MIC field zeroed. */
  uint8_t *copy = malloc(mlen), mic[16];
  memcpy(copy, m, mlen);
  memset(copy + NTLMSSP_AUTH_MIC_OFFSET, 0, 16);
  struct iovec iov[3] = {iov_c(neg, neglen), iov_c(spec_challenge, sizeof spec_challenge), iov_c(copy, mlen)};
  assert_int_equal(smb3_hmac_md5(random_session_key, 16, iov, 3, mic), 0);
  assert_memory_equal(m + NTLMSSP_AUTH_MIC_OFFSET, mic, 16);
  free(copy);
  free(neg);
  free(m);
  ntlmssp_clear(&n);
}

/* With MsvAvTimestamp the blob carries the server's time and LmChallengeResponse is Z(24);
 * an existing MsvAvFlags is merged, not duplicated. */
static void test_authenticate_timestamp(void **state) {
  (void)state;
  uint8_t m[sizeof spec_challenge + 20];
  memcpy(m, spec_challenge, sizeof spec_challenge);
  uint8_t *p = m + SPEC_TI_OFF + SPEC_TI_LEN - 4;
  static const uint8_t extra[] = {7, 0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 6, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  memcpy(p, extra, sizeof extra);
  le16_put(m + 40, SPEC_TI_LEN + 20);
  le16_put(m + 42, SPEC_TI_LEN + 20);
  struct ntlmssp n;
  uint8_t *neg, *a;
  size_t neglen, alen, len;
  init_fixed(&n, "User");
  assert_int_equal(ntlmssp_negotiate(&n, &neg, &neglen), 0);
  assert_int_equal(ntlmssp_authenticate(&n, m, sizeof m, &a, &alen), 0);
  const uint8_t *lm = auth_field(a, alen, 0, &len);
  static const uint8_t z24[24];
  assert_int_equal(len, 24);
  assert_memory_equal(lm, z24, 24);
  const uint8_t *nt = auth_field(a, alen, 1, &len);
  assert_int_equal(le64_at(nt + 16 + 8), 0x0807060504030201ull);
  const uint8_t *v;
  size_t vlen;
  const uint8_t *av = nt + 16 + 28;
  size_t avlen = len - 16 - 28 - 4, used;
  assert_int_equal(ntlmssp_av_validate(av, avlen, &used), 0);
  assert_int_equal(used, avlen);
  assert_int_equal(ntlmssp_av_find(av, avlen, MSV_AV_FLAGS, &v, &vlen), 1);
  assert_int_equal(le32_at(v), 0x3);
  free(neg);
  free(a);
  ntlmssp_clear(&n);
}

static void test_authenticate_anonymous(void **state) {
  (void)state;
  struct ntlmssp n;
  uint8_t *neg, *a;
  size_t neglen, alen, len;
  init_fixed(&n, "");
  assert_true(n.anonymous);
  assert_int_equal(ntlmssp_negotiate(&n, &neg, &neglen), 0);
  assert_int_equal(ntlmssp_authenticate(&n, spec_challenge, sizeof spec_challenge, &a, &alen), 0);
  const uint8_t *lm = auth_field(a, alen, 0, &len);
  assert_int_equal(len, 1); /* LmChallengeResponse = Z(1) (3.3.2 anonymous special case) */
  assert_int_equal(lm[0], 0);
  (void)auth_field(a, alen, 1, &len);
  assert_int_equal(len, 0);
  (void)auth_field(a, alen, 2, &len);
  assert_int_equal(len, 0);
  (void)auth_field(a, alen, 3, &len);
  assert_int_equal(len, 0);
  assert_true(le32_at(a + 60) & NTLMSSP_NEGOTIATE_ANONYMOUS);
  static const uint8_t z16[16];
  assert_memory_equal(a + NTLMSSP_AUTH_MIC_OFFSET, z16, 16);
  assert_false(n.have_key);
  uint8_t sig[16];
  assert_int_equal(ntlmssp_sign_first(&n, plaintext, 4, sig), SMB3_EINVAL);
  free(neg);
  free(a);
  ntlmssp_clear(&n);
}

static void test_authenticate_rejects(void **state) {
  (void)state;
  struct ntlmssp n;
  uint8_t *neg, *a = (uint8_t *)1, m[sizeof spec_challenge];
  size_t neglen, alen;
  init_fixed(&n, "User");
  /* Before NEGOTIATE. */
  assert_int_equal(ntlmssp_authenticate(&n, spec_challenge, sizeof spec_challenge, &a, &alen), SMB3_EINVAL);
  assert_null(a);
  assert_int_equal(ntlmssp_negotiate(&n, &neg, &neglen), 0);
  /* Server without extended session security or Unicode. */
  memcpy(m, spec_challenge, sizeof m);
  le32_put(m + 20, 0xe28a8233 & ~NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY);
  assert_int_equal(ntlmssp_authenticate(&n, m, sizeof m, &a, &alen), SMB3_EPROTO);
  le32_put(m + 20, 0xe28a8233 & ~NTLMSSP_NEGOTIATE_UNICODE);
  assert_int_equal(ntlmssp_authenticate(&n, m, sizeof m, &a, &alen), SMB3_EPROTO);
  assert_int_equal(ntlmssp_authenticate(&n, m, 3, &a, &alen), SMB3_EPROTO);
  assert_null(a);
  free(neg);
  ntlmssp_clear(&n);
}

static void test_verify(void **state) {
  (void)state;
  struct ntlmssp n;
  uint8_t *neg, *a, sig[16];
  size_t neglen, alen;
  init_fixed(&n, "User");
  assert_int_equal(ntlmssp_negotiate(&n, &neg, &neglen), 0);
  assert_int_equal(ntlmssp_authenticate(&n, spec_challenge, sizeof spec_challenge, &a, &alen), 0);
  /* What the server would send: its own keys, sequence 0. */
  assert_int_equal(ntlmssp_make_signature(n.server_sign_key, n.server_seal_key, n.flags, 0, plaintext,
                                          sizeof plaintext, sig),
                   0);
  assert_int_equal(ntlmssp_verify_first(&n, plaintext, sizeof plaintext, sig, 16), 0);
  assert_int_equal(ntlmssp_verify_first(&n, plaintext, sizeof plaintext, sig, 15), SMB3_ESIGNATURE);
  assert_int_equal(ntlmssp_verify_first(&n, plaintext, sizeof plaintext - 1, sig, 16), SMB3_ESIGNATURE);
  sig[5] ^= 1;
  assert_int_equal(ntlmssp_verify_first(&n, plaintext, sizeof plaintext, sig, 16), SMB3_ESIGNATURE);
  /* Our own (client) signature is not a valid server signature. */
  assert_int_equal(ntlmssp_sign_first(&n, plaintext, sizeof plaintext, sig), 0);
  assert_int_equal(ntlmssp_verify_first(&n, plaintext, sizeof plaintext, sig, 16), SMB3_ESIGNATURE);
  free(neg);
  free(a);
  ntlmssp_clear(&n);
}

/* Random client values: two runs differ, and the key is not the fixed one. */
static void test_random_values(void **state) {
  (void)state;
  uint8_t *neg, *a1, *a2;
  size_t neglen, l1, l2;
  struct ntlmssp n1, n2;
  assert_int_equal(ntlmssp_init(&n1, "User", "Password", "Domain", NULL), 0);
  assert_int_equal(ntlmssp_init(&n2, "User", "Password", "Domain", NULL), 0);
  assert_int_equal(ntlmssp_negotiate(&n1, &neg, &neglen), 0);
  free(neg);
  assert_int_equal(ntlmssp_negotiate(&n2, &neg, &neglen), 0);
  free(neg);
  assert_int_equal(ntlmssp_authenticate(&n1, spec_challenge, sizeof spec_challenge, &a1, &l1), 0);
  assert_int_equal(ntlmssp_authenticate(&n2, spec_challenge, sizeof spec_challenge, &a2, &l2), 0);
  assert_int_equal(l1, l2);
  assert_memory_not_equal(a1, a2, l1);
  assert_memory_not_equal(n1.session_key, n2.session_key, 16);
  free(a1);
  free(a2);
  ntlmssp_clear(&n1);
  ntlmssp_clear(&n2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ntowfv2),
      cmocka_unit_test(test_lmv2),
      cmocka_unit_test(test_proof_and_keys),
      cmocka_unit_test(test_sign_seal_keys),
      cmocka_unit_test(test_wrap_signature),
      cmocka_unit_test(test_parse_spec_challenge),
      cmocka_unit_test(test_parse_truncated),
      cmocka_unit_test(test_parse_malformed),
      cmocka_unit_test(test_parse_no_target_info),
      cmocka_unit_test(test_negotiate_layout),
      cmocka_unit_test(test_authenticate_spec),
      cmocka_unit_test(test_authenticate_timestamp),
      cmocka_unit_test(test_authenticate_anonymous),
      cmocka_unit_test(test_authenticate_rejects),
      cmocka_unit_test(test_verify),
      cmocka_unit_test(test_random_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
