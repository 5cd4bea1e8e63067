/* test_spnego - SPNEGO encode/decode (RFC 4178, MS-SPNG) and the whole smb3_auth exchange
 * against a small in-test NTLMSSP "server" that checks what a real one checks: the NTLMv2
 * proof, the key exchange, the AUTHENTICATE MIC and the mechListMIC (MS-NLMP 3.2.5.1.2,
 * 3.4.4.2), and signs its own mechListMIC for smb3_auth_finish to verify. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>

#include "auth/auth.h"
#include "auth/ntlmssp.h"
#include "auth/spnego.h"
#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"

/* A NegTokenInit2 hint as Samba puts in the NEGOTIATE response (MS-SPNG 2.2.1): mechTypes
 * {MS-KRB5, KRB5, NTLMSSP}, negHints {hintName "not_defined_in_RFC4178@please_ignore"}. */
static const uint8_t samba_hint[] = {
    0x60, 0x5e, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02, 0xa0, 0x54, 0x30, 0x52, 0xa0, 0x24,
    0x30, 0x22, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x06, 0x09, 0x2a,
    0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82,
    0x37, 0x02, 0x02, 0x0a, 0xa3, 0x2a, 0x30, 0x28, 0xa0, 0x26, 0x1b, 0x24, 0x6e, 0x6f, 0x74, 0x5f,
    0x64, 0x65, 0x66, 0x69, 0x6e, 0x65, 0x64, 0x5f, 0x69, 0x6e, 0x5f, 0x52, 0x46, 0x43, 0x34, 0x31,
    0x37, 0x38, 0x40, 0x70, 0x6c, 0x65, 0x61, 0x73, 0x65, 0x5f, 0x69, 0x67, 0x6e, 0x6f, 0x72, 0x65};

/* MS-NLMP 4.2.4.3 CHALLENGE_MESSAGE, with an MsvAvTimestamp added as Samba and Windows send. */
static const uint8_t challenge_ts[] = {
    0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x0c, 0x00, 0x38,
    0x00, 0x00, 0x00, 0x33, 0x82, 0x8a, 0xe2, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x30, 0x00, 0x44, 0x00, 0x00, 0x00, 0x06, 0x00, 0x70,
    0x17, 0x00, 0x00, 0x00, 0x0f, 0x53, 0x00, 0x65, 0x00, 0x72, 0x00, 0x76, 0x00, 0x65, 0x00, 0x72, 0x00,
    0x02, 0x00, 0x0c, 0x00, 0x44, 0x00, 0x6f, 0x00, 0x6d, 0x00, 0x61, 0x00, 0x69, 0x00, 0x6e, 0x00, 0x01,
    0x00, 0x0c, 0x00, 0x53, 0x00, 0x65, 0x00, 0x72, 0x00, 0x76, 0x00, 0x65, 0x00, 0x72, 0x00, 0x07, 0x00,
    0x08, 0x00, 0x00, 0x80, 0x3e, 0xd5, 0xde, 0xb1, 0x9d, 0x01, 0x00, 0x00, 0x00, 0x00};

static const uint8_t ntlmssp_oid_der[] = {0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
                                          0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};

static struct iovec iov_c(const void *p, size_t n) {
  struct iovec v = {.iov_base = (void *)p, .iov_len = n};
  return v;
}

/* ---- Token encode/decode ---------------------------------------------------------------- */

static void test_init_encoding(void **state) {
  (void)state;
  uint8_t tok[40], *out;
  size_t outlen;
  memset(tok, 0x11, sizeof tok);
  assert_int_equal(spnego_encode_init(tok, sizeof tok, &out, &outlen), 0);
  static const uint8_t head[] = {0x60, 0x48, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02, 0xa0, 0x3e,
                                 0x30, 0x3c, 0xa0, 0x0e, 0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
                                 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a, 0xa2, 0x2a, 0x04, 0x28};
  assert_int_equal(outlen, sizeof head + sizeof tok);
  assert_memory_equal(out, head, sizeof head);
  assert_memory_equal(out + sizeof head, tok, sizeof tok);
  struct spnego_init in;
  assert_int_equal(spnego_decode_init(out, outlen, &in), 0);
  assert_true(in.offers_ntlmssp);
  assert_true(in.has_mech_token);
  assert_int_equal(in.mech_token_len, sizeof tok);
  assert_memory_equal(in.mech_token, tok, sizeof tok);
  size_t mtlen;
  const uint8_t *mt = spnego_our_mech_types(&mtlen);
  assert_int_equal(in.mech_types_len, mtlen);
  assert_memory_equal(in.mech_types, mt, mtlen);
  /* Every proper prefix is rejected, and so is trailing data. */
  for (size_t n = 0; n < outlen; n++) {
    uint8_t *c = malloc(n ? n : 1);
    memcpy(c, out, n);
    assert_int_equal(spnego_decode_init(c, n, &in), SMB3_EPROTO);
    free(c);
  }
  uint8_t *longer = malloc(outlen + 1);
  memcpy(longer, out, outlen);
  longer[outlen] = 0;
  assert_int_equal(spnego_decode_init(longer, outlen + 1, &in), SMB3_EPROTO);
  free(longer);
  free(out);
}

/* Our Kerberos NegTokenInit: mechTypes {1.2.840.113554.1.2.2} and the GSS token as mechToken. */
static void test_init_krb5_encoding(void **state) {
  (void)state;
  uint8_t tok[300], *out;
  size_t outlen;
  memset(tok, 0x6e, sizeof tok);
  assert_int_equal(spnego_encode_init_krb5(tok, sizeof tok, &out, &outlen), 0);
  struct spnego_init in;
  assert_int_equal(spnego_decode_init(out, outlen, &in), 0);
  assert_true(in.offers_krb5);
  assert_false(in.offers_ntlmssp);
  static const uint8_t types[] = {0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48,
                                  0x86, 0xf7, 0x12, 0x01, 0x02, 0x02};
  assert_int_equal(in.mech_types_len, sizeof types);
  assert_memory_equal(in.mech_types, types, sizeof types);
  assert_int_equal(in.mech_token_len, sizeof tok);
  assert_memory_equal(in.mech_token, tok, sizeof tok);
  free(out);
  /* An NTLM-only init does not offer Kerberos. */
  assert_int_equal(spnego_encode_init(tok, 8, &out, &outlen), 0);
  assert_int_equal(spnego_decode_init(out, outlen, &in), 0);
  assert_false(in.offers_krb5);
  free(out);
}

/* The mechanism choice: the default takes NTLM when the cache has no ticket, even when the
 * server offers Kerberos; sec=krb5 fails the first step with one line that says kinit. */
static void test_sec_choice_without_ticket(void **state) {
  (void)state;
  setenv("KRB5CCNAME", "FILE:/nonexistent/smb3-test-cc", 1);
  setenv("KRB5_CONFIG", "/dev/null", 1);
  uint8_t *out;
  size_t outlen;
  struct smb3_auth_sec sec = {.sec = SMB3_SEC_AUTO, .host = "srv.example.com"};
  struct smb3_auth *a = smb3_auth_new_sec("User", "Password", "Domain", NULL, &sec);
  assert_int_equal(smb3_auth_step(a, samba_hint, sizeof samba_hint, &out, &outlen), 0);
  assert_false(smb3_auth_is_kerberos(a));
  assert_false(smb3_auth_server_lacks_ntlm(a));
  struct spnego_init in;
  assert_int_equal(spnego_decode_init(out, outlen, &in), 0);
  assert_true(in.offers_ntlmssp);
  assert_memory_equal(in.mech_token, "NTLMSSP", 8);
  free(out);
  smb3_auth_free(a);
  sec.sec = SMB3_SEC_KRB5;
  a = smb3_auth_new_sec("User", "Password", "Domain", NULL, &sec);
  assert_int_equal(smb3_auth_step(a, samba_hint, sizeof samba_hint, &out, &outlen), SMB3_ELOGON);
  assert_null(out);
  assert_true(smb3_auth_is_kerberos(a));
  assert_non_null(strstr(smb3_auth_error(a), "no Kerberos ticket for"));
  assert_non_null(strstr(smb3_auth_error(a), "run kinit"));
  assert_null(strchr(smb3_auth_error(a), '\n'));
  uint8_t key[16];
  assert_int_equal(smb3_auth_session_key(a, key), SMB3_EINVAL);
  smb3_auth_free(a);
  unsetenv("KRB5CCNAME");
  unsetenv("KRB5_CONFIG");
}

static void test_init_long_token(void **state) {
  (void)state;
  size_t n = 1000; /* needs two-octet lengths at every level */
  uint8_t *tok = malloc(n), *out;
  size_t outlen;
  for (size_t i = 0; i < n; i++)
    tok[i] = (uint8_t)i;
  assert_int_equal(spnego_encode_init(tok, n, &out, &outlen), 0);
  assert_int_equal(out[1], 0x82);
  struct spnego_init in;
  assert_int_equal(spnego_decode_init(out, outlen, &in), 0);
  assert_int_equal(in.mech_token_len, n);
  assert_memory_equal(in.mech_token, tok, n);
  free(out);
  free(tok);
}

static void test_samba_hint(void **state) {
  (void)state;
  struct spnego_init in;
  assert_int_equal(spnego_decode_init(samba_hint, sizeof samba_hint, &in), 0);
  assert_true(in.offers_ntlmssp);
  assert_true(in.offers_krb5);
  assert_false(in.has_mech_token);
  assert_int_equal(in.mech_types_len, 0x24);
  for (size_t n = 0; n < sizeof samba_hint; n++)
    assert_int_equal(spnego_decode_init(samba_hint, n, &in), SMB3_EPROTO);
  /* A bare NegotiationToken (no RFC 2743 framing) is accepted too. */
  assert_int_equal(spnego_decode_init(samba_hint + 10, sizeof samba_hint - 10, &in), 0);
  /* Wrong framing OID. */
  uint8_t bad[sizeof samba_hint];
  memcpy(bad, samba_hint, sizeof bad);
  bad[9] = 0x03;
  assert_int_equal(spnego_decode_init(bad, sizeof bad, &in), SMB3_EPROTO);
}

static void test_resp_roundtrip(void **state) {
  (void)state;
  uint8_t tok[300], mic[16], *out;
  size_t outlen;
  memset(tok, 0x22, sizeof tok);
  memset(mic, 0x33, sizeof mic);
  assert_int_equal(spnego_encode_resp(SPNEGO_ACCEPT_INCOMPLETE, 1, tok, sizeof tok, mic, 16, &out, &outlen),
                   0);
  struct spnego_resp r;
  assert_int_equal(spnego_decode_resp(out, outlen, &r), 0);
  assert_int_equal(r.neg_state, SPNEGO_ACCEPT_INCOMPLETE);
  assert_true(r.has_supported_mech);
  assert_true(r.supported_mech_is_ntlmssp);
  assert_true(r.has_response_token);
  assert_int_equal(r.response_token_len, sizeof tok);
  assert_memory_equal(r.response_token, tok, sizeof tok);
  assert_true(r.has_mech_list_mic);
  assert_int_equal(r.mech_list_mic_len, 16);
  assert_memory_equal(r.mech_list_mic, mic, 16);
  for (size_t n = 0; n < outlen; n++) {
    uint8_t *c = malloc(n ? n : 1);
    memcpy(c, out, n);
    assert_int_equal(spnego_decode_resp(c, n, &r), SMB3_EPROTO);
    free(c);
  }
  free(out);
  /* Minimal forms: nothing but negState; nothing at all. */
  assert_int_equal(spnego_encode_resp(SPNEGO_ACCEPT_COMPLETED, 0, NULL, 0, NULL, 0, &out, &outlen), 0);
  static const uint8_t completed[] = {0xa1, 0x07, 0x30, 0x05, 0xa0, 0x03, 0x0a, 0x01, 0x00};
  assert_int_equal(outlen, sizeof completed);
  assert_memory_equal(out, completed, sizeof completed);
  free(out);
  assert_int_equal(spnego_encode_resp(SPNEGO_NEGSTATE_ABSENT, 0, NULL, 0, NULL, 0, &out, &outlen), 0);
  assert_int_equal(spnego_decode_resp(out, outlen, &r), 0);
  assert_int_equal(r.neg_state, SPNEGO_NEGSTATE_ABSENT);
  assert_false(r.has_response_token || r.has_mech_list_mic || r.has_supported_mech);
  free(out);
}

static void expect_bad_resp(const uint8_t *p, size_t n) {
  struct spnego_resp r;
  uint8_t *c = malloc(n ? n : 1);
  memcpy(c, p, n);
  assert_int_equal(spnego_decode_resp(c, n, &r), SMB3_EPROTO);
  free(c);
}

static void test_resp_malformed(void **state) {
  (void)state;
  /* Unknown negState value. */
  expect_bad_resp((const uint8_t *)"\xa1\x07\x30\x05\xa0\x03\x0a\x01\x04", 9);
  /* negState of two octets. */
  expect_bad_resp((const uint8_t *)"\xa1\x08\x30\x06\xa0\x04\x0a\x02\x00\x00", 10);
  /* Fields out of order ([2] before [0]). */
  expect_bad_resp((const uint8_t *)"\xa1\x0b\x30\x09\xa2\x02\x04\x00\xa0\x03\x0a\x01\x00", 13);
  /* Repeated field. */
  expect_bad_resp((const uint8_t *)"\xa1\x0a\x30\x08\xa0\x03\x0a\x01\x00\xa0\x03\x0a", 12);
  /* Unknown field [4]. */
  expect_bad_resp((const uint8_t *)"\xa1\x06\x30\x04\xa4\x02\x04\x00", 8);
  /* Wrong inner type for responseToken. */
  expect_bad_resp((const uint8_t *)"\xa1\x06\x30\x04\xa2\x02\x05\x00", 8);
  /* Two elements inside one explicit tag. */
  expect_bad_resp((const uint8_t *)"\xa1\x08\x30\x06\xa2\x04\x04\x00\x04\x00", 10);
  /* Indefinite length (BER only). */
  expect_bad_resp((const uint8_t *)"\xa1\x80\x30\x00\x00\x00", 6);
  /* Length larger than the cap, and 5-octet length. */
  expect_bad_resp((const uint8_t *)"\xa1\x84\x7f\xff\xff\xff\x30\x00", 8);
  expect_bad_resp((const uint8_t *)"\xa1\x85\x00\x00\x00\x00\x02\x30\x00", 9);
  /* Length octets missing. */
  expect_bad_resp((const uint8_t *)"\xa1\x82\x00", 3);
  /* High tag number form. */
  expect_bad_resp((const uint8_t *)"\xbf\x01\x02\x30\x00", 5);
  /* NegTokenInit where a NegTokenResp is expected, and a GSS-framed token. */
  expect_bad_resp((const uint8_t *)"\xa0\x02\x30\x00", 4);
  expect_bad_resp(samba_hint, sizeof samba_hint);
  /* Empty, garbage. */
  expect_bad_resp((const uint8_t *)"", 0);
  expect_bad_resp((const uint8_t *)"NTLMSSP\0\x02\0\0\0", 12);
  /* Non-minimal long-form length is tolerated. */
  struct spnego_resp r;
  assert_int_equal(spnego_decode_resp((const uint8_t *)"\xa1\x81\x07\x30\x05\xa0\x03\x0a\x01\x00", 10, &r),
                   0);
  assert_int_equal(r.neg_state, SPNEGO_ACCEPT_COMPLETED);
}

/* ---- The in-test server --------------------------------------------------------------------- */

struct fake_server {
  const char *user, *password, *domain;
  const uint8_t *challenge;
  size_t challenge_len;
  uint8_t negotiate[64];
  size_t negotiate_len;
  uint8_t session_key[16];
  uint32_t flags;
};

/* Turn our first token into the server's NegTokenResp carrying the CHALLENGE. */
static uint8_t *server_challenge(struct fake_server *s, const uint8_t *tok, size_t len, size_t *outlen) {
  struct spnego_init in;
  assert_int_equal(spnego_decode_init(tok, len, &in), 0);
  assert_true(in.offers_ntlmssp);
  assert_true(in.has_mech_token);
  assert_true(in.mech_token_len <= sizeof s->negotiate);
  assert_memory_equal(in.mech_token, "NTLMSSP\0\x01\0\0\0", 12);
  memcpy(s->negotiate, in.mech_token, in.mech_token_len);
  s->negotiate_len = in.mech_token_len;
  uint8_t *out;
  assert_int_equal(
      spnego_encode_resp(SPNEGO_ACCEPT_INCOMPLETE, 1, s->challenge, s->challenge_len, NULL, 0, &out, outlen),
      0);
  return out;
}

/* Check the AUTHENTICATE + mechListMIC as a server would; return the final NegTokenResp. */
static uint8_t *server_accept(struct fake_server *s, const uint8_t *tok, size_t len, size_t *outlen) {
  struct spnego_resp r;
  assert_int_equal(spnego_decode_resp(tok, len, &r), 0);
  assert_true(r.has_response_token);
  assert_true(r.has_mech_list_mic);
  assert_int_equal(r.mech_list_mic_len, 16);
  const uint8_t *a = r.response_token;
  size_t alen = r.response_token_len;
  s->flags = le32_at(a + 60);
  /* NTLMv2 proof with the password the server knows. */
  const uint8_t *nt = a + le32_at(a + 24);
  size_t ntlen = le16_at(a + 20);
  uint8_t key[16], proof[16], sbk[16];
  assert_int_equal(ntlmssp_ntowfv2(s->user, s->password, s->domain, key), 0);
  assert_int_equal(ntlmssp_nt_proof(key, s->challenge + 24, nt + 16, ntlen - 16, proof), 0);
  assert_memory_equal(proof, nt, 16);
  assert_int_equal(ntlmssp_session_base_key(key, proof, sbk), 0);
  assert_int_equal(le16_at(a + 52), 16);
  assert_int_equal(smb3_rc4(sbk, 16, a + le32_at(a + 56), s->session_key, 16), 0);
  /* AUTHENTICATE MIC. */
  uint8_t *copy = malloc(alen), mic[16];
  memcpy(copy, a, alen);
  memset(copy + NTLMSSP_AUTH_MIC_OFFSET, 0, 16);
  struct iovec iov[3] = {iov_c(s->negotiate, s->negotiate_len), iov_c(s->challenge, s->challenge_len),
                         iov_c(copy, alen)};
  assert_int_equal(smb3_hmac_md5(s->session_key, 16, iov, 3, mic), 0);
  assert_memory_equal(a + NTLMSSP_AUTH_MIC_OFFSET, mic, 16);
  free(copy);
  /* mechListMIC over the DER mechTypes, client-to-server keys, sequence 0. */
  size_t mtlen;
  const uint8_t *mt = spnego_our_mech_types(&mtlen);
  uint8_t sk[16], ek[16], sig[16];
  assert_int_equal(ntlmssp_sign_key(s->session_key, 0, sk), 0);
  assert_int_equal(ntlmssp_seal_key(s->session_key, s->flags, 0, ek), 0);
  assert_int_equal(ntlmssp_make_signature(sk, ek, s->flags, 0, mt, mtlen, sig), 0);
  assert_memory_equal(r.mech_list_mic, sig, 16);
  /* Our own mechListMIC with the server-to-client keys. */
  assert_int_equal(ntlmssp_sign_key(s->session_key, 1, sk), 0);
  assert_int_equal(ntlmssp_seal_key(s->session_key, s->flags, 1, ek), 0);
  assert_int_equal(ntlmssp_make_signature(sk, ek, s->flags, 0, mt, mtlen, sig), 0);
  uint8_t *out;
  assert_int_equal(spnego_encode_resp(SPNEGO_ACCEPT_COMPLETED, 0, NULL, 0, sig, 16, &out, outlen), 0);
  return out;
}

static struct fake_server server_for(const char *user, const char *password, const char *domain) {
  struct fake_server s = {.user = user, .password = password, .domain = domain};
  s.challenge = challenge_ts;
  s.challenge_len = sizeof challenge_ts;
  return s;
}

/* Runs rounds 1 and 2; returns the server's final token. */
static uint8_t *run_exchange(struct smb3_auth *a, struct fake_server *s, const uint8_t *hint, size_t hintlen,
                             size_t *finlen) {
  uint8_t *t1, *c, *t2;
  size_t t1len, clen, t2len;
  assert_int_equal(smb3_auth_step(a, hint, hintlen, &t1, &t1len), 0);
  c = server_challenge(s, t1, t1len, &clen);
  assert_int_equal(smb3_auth_step(a, c, clen, &t2, &t2len), 0);
  uint8_t *fin = server_accept(s, t2, t2len, finlen);
  free(t1);
  free(c);
  free(t2);
  return fin;
}

static void test_full_exchange(void **state) {
  (void)state;
  struct smb3_auth *a = smb3_auth_new("user", "Password", "Domain", "WS");
  struct fake_server s = server_for("USER", "Password", "Domain");
  uint8_t key[16], *fin;
  size_t finlen;
  assert_non_null(a);
  assert_false(smb3_auth_is_anonymous(a));
  fin = run_exchange(a, &s, NULL, 0, &finlen);
  /* Known once AUTHENTICATE is out, so the final response's signature can be checked. */
  assert_int_equal(smb3_auth_session_key(a, key), 0);
  assert_memory_equal(key, s.session_key, 16);
  assert_int_equal(smb3_auth_finish(a, fin, finlen), 0);
  assert_int_equal(smb3_auth_session_key(a, key), 0);
  assert_memory_equal(key, s.session_key, 16);
  /* A further round or finish is a protocol error. */
  uint8_t *out;
  size_t outlen;
  assert_int_equal(smb3_auth_step(a, fin, finlen, &out, &outlen), SMB3_EPROTO);
  assert_null(out);
  free(fin);
  smb3_auth_free(a);
}

static void test_full_exchange_with_hint_and_utf8(void **state) {
  (void)state;
  /* "José" / "pässwörd": non-ASCII names go through UTF-16 and upper-casing (é -> É). */
  struct smb3_auth *a = smb3_auth_new("Jos\xc3\xa9", "p\xc3\xa4ssw\xc3\xb6rd", "Domain", NULL);
  struct fake_server s = server_for("JOS\xc3\x89", "p\xc3\xa4ssw\xc3\xb6rd", "Domain");
  uint8_t key[16], *fin;
  size_t finlen;
  fin = run_exchange(a, &s, samba_hint, sizeof samba_hint, &finlen);
  assert_int_equal(smb3_auth_finish(a, fin, finlen), 0);
  assert_int_equal(smb3_auth_session_key(a, key), 0);
  free(fin);
  smb3_auth_free(a);
}

static void test_finish_bad_mic(void **state) {
  (void)state;
  struct smb3_auth *a = smb3_auth_new("User", "Password", "Domain", NULL);
  struct fake_server s = server_for("User", "Password", "Domain");
  uint8_t key[16], *fin;
  size_t finlen;
  fin = run_exchange(a, &s, NULL, 0, &finlen);
  fin[finlen - 3] ^= 0x40; /* inside the 16-byte MIC */
  assert_int_equal(smb3_auth_finish(a, fin, finlen), SMB3_ESIGNATURE);
  assert_int_equal(smb3_auth_session_key(a, key), SMB3_EINVAL);
  free(fin);
  smb3_auth_free(a);
}

static void test_finish_variants(void **state) {
  (void)state;
  struct fake_server s = server_for("User", "Password", "Domain");
  uint8_t *fin, key[16];
  size_t finlen;
  /* Empty final token. */
  struct smb3_auth *a = smb3_auth_new("User", "Password", "Domain", NULL);
  fin = run_exchange(a, &s, NULL, 0, &finlen);
  assert_int_equal(smb3_auth_finish(a, NULL, 0), 0);
  assert_int_equal(smb3_auth_session_key(a, key), 0);
  free(fin);
  smb3_auth_free(a);
  /* Reject from the server. */
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  fin = run_exchange(a, &s, NULL, 0, &finlen);
  assert_int_equal(smb3_auth_finish(a, (const uint8_t *)"\xa1\x07\x30\x05\xa0\x03\x0a\x01\x02", 9),
                   SMB3_EPROTO);
  free(fin);
  smb3_auth_free(a);
  /* Garbage final token. */
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  fin = run_exchange(a, &s, NULL, 0, &finlen);
  assert_int_equal(smb3_auth_finish(a, fin, finlen - 1), SMB3_EPROTO);
  free(fin);
  smb3_auth_free(a);
  /* The final token of another session (a different random session key) is refused. */
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  fin = run_exchange(a, &s, NULL, 0, &finlen);
  struct smb3_auth *b = smb3_auth_new("User", "Password", "Domain", NULL);
  uint8_t *fin2;
  size_t fin2len;
  fin2 = run_exchange(b, &s, NULL, 0, &fin2len);
  assert_int_equal(smb3_auth_finish(a, fin2, fin2len), SMB3_ESIGNATURE); /* b's session, a's keys */
  free(fin);
  free(fin2);
  smb3_auth_free(a);
  smb3_auth_free(b);
}

static void test_anonymous_exchange(void **state) {
  (void)state;
  struct smb3_auth *a = smb3_auth_new(NULL, NULL, NULL, NULL);
  uint8_t *t1, *c, *t2, key[16];
  size_t t1len, clen, t2len;
  struct fake_server s = server_for("", "", "");
  assert_true(smb3_auth_is_anonymous(a));
  assert_int_equal(smb3_auth_step(a, NULL, 0, &t1, &t1len), 0);
  c = server_challenge(&s, t1, t1len, &clen);
  assert_int_equal(smb3_auth_step(a, c, clen, &t2, &t2len), 0);
  struct spnego_resp r;
  assert_int_equal(spnego_decode_resp(t2, t2len, &r), 0);
  assert_true(r.has_response_token);
  assert_false(r.has_mech_list_mic);
  assert_int_equal(le16_at(r.response_token + 20), 0); /* empty NtChallengeResponse */
  assert_int_equal(le16_at(r.response_token + 12), 1); /* LmChallengeResponse Z(1) */
  assert_int_equal(smb3_auth_finish(a, (const uint8_t *)"\xa1\x07\x30\x05\xa0\x03\x0a\x01\x00", 9), 0);
  assert_int_equal(smb3_auth_session_key(a, key), SMB3_EINVAL);
  free(t1);
  free(c);
  free(t2);
  smb3_auth_free(a);
  a = smb3_auth_new("", "ignored", "ignored", NULL);
  assert_true(smb3_auth_is_anonymous(a));
  smb3_auth_free(a);
}

static void test_step_errors(void **state) {
  (void)state;
  uint8_t *out, *t1, key[16];
  size_t outlen, t1len;
  struct smb3_auth *a = smb3_auth_new("User", "Password", "Domain", NULL);
  assert_int_equal(smb3_auth_step(NULL, NULL, 0, &out, &outlen), SMB3_EINVAL);
  assert_int_equal(smb3_auth_step(a, NULL, 5, &out, &outlen), SMB3_EINVAL);
  assert_int_equal(smb3_auth_step(a, NULL, 0, NULL, &outlen), SMB3_EINVAL);
  assert_int_equal(smb3_auth_finish(NULL, NULL, 0), SMB3_EINVAL);
  assert_int_equal(smb3_auth_session_key(NULL, key), SMB3_EINVAL);
  assert_false(smb3_auth_is_anonymous(NULL));
  /* A garbage hint fails the first round, and the object stays failed. */
  assert_int_equal(smb3_auth_step(a, (const uint8_t *)"\x60\x03\x06\x01\x00", 5, &out, &outlen), SMB3_EPROTO);
  assert_null(out);
  assert_int_equal(smb3_auth_step(a, NULL, 0, &out, &outlen), SMB3_EPROTO);
  smb3_auth_free(a);
  /* finish (and the key) before the exchange. */
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  assert_int_equal(smb3_auth_session_key(a, key), SMB3_EINVAL);
  assert_int_equal(smb3_auth_finish(a, NULL, 0), SMB3_EPROTO);
  smb3_auth_free(a);
  /* Round 2 with a reject, an early accept-completed, no token; then raw NTLMSSP. */
  const struct {
    int state, mech;
    int with_token;
  } cases[] = {{SPNEGO_REJECT, 1, 1}, {SPNEGO_ACCEPT_COMPLETED, 1, 1}, {SPNEGO_ACCEPT_INCOMPLETE, 1, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    a = smb3_auth_new("User", "Password", "Domain", NULL);
    assert_int_equal(smb3_auth_step(a, NULL, 0, &t1, &t1len), 0);
    uint8_t *c;
    size_t clen;
    assert_int_equal(spnego_encode_resp(cases[i].state, cases[i].mech,
                                        cases[i].with_token ? challenge_ts : NULL, sizeof challenge_ts, NULL,
                                        0, &c, &clen),
                     0);
    assert_int_equal(smb3_auth_step(a, c, clen, &out, &outlen), SMB3_EPROTO);
    free(c);
    free(t1);
    smb3_auth_free(a);
  }
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  assert_int_equal(smb3_auth_step(a, NULL, 0, &t1, &t1len), 0);
  assert_int_equal(smb3_auth_step(a, challenge_ts, sizeof challenge_ts, &out, &outlen), SMB3_EPROTO);
  free(t1);
  smb3_auth_free(a);
  /* supportedMech other than NTLMSSP: patch the OID of an encoded response. */
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  assert_int_equal(smb3_auth_step(a, NULL, 0, &t1, &t1len), 0);
  uint8_t *c;
  size_t clen;
  assert_int_equal(
      spnego_encode_resp(SPNEGO_ACCEPT_INCOMPLETE, 1, challenge_ts, sizeof challenge_ts, NULL, 0, &c, &clen),
      0);
  uint8_t *p = memmem(c, clen, ntlmssp_oid_der, sizeof ntlmssp_oid_der);
  assert_non_null(p);
  p[11] = 0x0b; /* 1.3.6.1.4.1.311.2.2.11 */
  struct spnego_resp r;
  assert_int_equal(spnego_decode_resp(c, clen, &r), 0);
  assert_false(r.supported_mech_is_ntlmssp);
  assert_int_equal(smb3_auth_step(a, c, clen, &out, &outlen), SMB3_EPROTO);
  free(c);
  free(t1);
  smb3_auth_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_encoding),
      cmocka_unit_test(test_init_long_token),
      cmocka_unit_test(test_init_krb5_encoding),
      cmocka_unit_test(test_sec_choice_without_ticket),
      cmocka_unit_test(test_samba_hint),
      cmocka_unit_test(test_resp_roundtrip),
      cmocka_unit_test(test_resp_malformed),
      cmocka_unit_test(test_full_exchange),
      cmocka_unit_test(test_full_exchange_with_hint_and_utf8),
      cmocka_unit_test(test_finish_bad_mic),
      cmocka_unit_test(test_finish_variants),
      cmocka_unit_test(test_anonymous_exchange),
      cmocka_unit_test(test_step_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
