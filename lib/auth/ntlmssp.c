/* ntlmssp.c - NTLMSSP client messages and NTLMv2 computations (MS-NLMP).
 *
 * Only what an SMB2/3 client needs: NEGOTIATE (2.2.1.1), CHALLENGE parsing (2.2.1.2),
 * AUTHENTICATE (2.2.1.3) with an NTLMv2 response (3.3.2), key exchange (3.1.5.1.2), the MIC
 * over all three messages, and the message signature used for the SPNEGO mechListMIC
 * (3.4.4.2). NTLMv1 and LM are not implemented: the CHALLENGE must offer extended session
 * security and Unicode, as every server since Windows 2000 (and Samba) does.
 */
#include "auth/ntlmssp.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "util/utf16.h"

static const uint8_t ntlmssp_signature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};

/* VERSION (2.2.2.10): the spec leaves the product version to the implementation; we report
 * 6.1 build 7601 and NTLMSSP_REVISION_W2K3 (0x0F), which every server accepts. */
static const uint8_t ntlmssp_version[8] = {6, 1, 0xb1, 0x1d, 0, 0, 0, 0x0f};

enum { NTLMSSP_TYPE_NEGOTIATE = 1, NTLMSSP_TYPE_CHALLENGE = 2, NTLMSSP_TYPE_AUTHENTICATE = 3 };

static struct iovec iov_c(const void *p, size_t n) {
  struct iovec v = {.iov_base = (void *)p, .iov_len = n};
  return v;
}

static char *dup_or_empty(const char *s) {
  return strdup(s ? s : "");
}

/* ---- AV pairs (2.2.2.1) ---------------------------------------------------------------- */

int ntlmssp_av_validate(const uint8_t *ti, size_t len, size_t *used) {
  size_t off = 0;
  for (;;) {
    if (len - off < 4) return SMB3_EPROTO; /* no room for a header: missing MsvAvEOL */
    uint16_t id = le16_at(ti + off);
    uint16_t vlen = le16_at(ti + off + 2);
    off += 4;
    if (vlen > len - off) return SMB3_EPROTO;
    off += vlen;
    if (id == MSV_AV_EOL) {
      if (vlen != 0) return SMB3_EPROTO;
      *used = off;
      return 0;
    }
  }
}

int ntlmssp_av_find(const uint8_t *ti, size_t len, uint16_t id, const uint8_t **val, size_t *vlen) {
  size_t off = 0;
  while (len - off >= 4) {
    uint16_t cur = le16_at(ti + off);
    size_t l = le16_at(ti + off + 2);
    if (cur == MSV_AV_EOL || l > len - off - 4) break;
    if (cur == id) {
      *val = ti + off + 4;
      *vlen = l;
      return 1;
    }
    off += 4 + l;
  }
  return 0;
}

/* ---- CHALLENGE_MESSAGE (2.2.1.2) -------------------------------------------------------- */

/* Read a len/maxlen/offset triple (2.2.1.2 "Fields") and check it lies inside the message and
 * after the fixed header. An empty field may carry any offset. */
static int read_field(struct le_rd *r, size_t total, const uint8_t *msg, const uint8_t **p, size_t *plen) {
  uint16_t len = le_u16(r);
  (void)le_u16(r); /* MaxLen: ignored on receipt */
  uint32_t off = le_u32(r);
  *p = NULL;
  *plen = 0;
  if (r->err) return SMB3_EPROTO;
  if (len == 0) return 0;
  if (off < NTLMSSP_CHALLENGE_MIN || !le_range_ok(off, len, total)) return SMB3_EPROTO;
  *p = msg + off;
  *plen = len;
  return 0;
}

static int challenge_target_info(struct ntlmssp_challenge *c) {
  size_t used;
  const uint8_t *v;
  size_t vlen;
  if (!c->target_info_len) return 0;
  if (ntlmssp_av_validate(c->target_info, c->target_info_len, &used) < 0) return SMB3_EPROTO;
  c->target_info_len = used;
  if (ntlmssp_av_find(c->target_info, used, MSV_AV_TIMESTAMP, &v, &vlen)) {
    if (vlen != 8) return SMB3_EPROTO;
    c->has_timestamp = 1;
    c->timestamp = le64_at(v);
  }
  if (ntlmssp_av_find(c->target_info, used, MSV_AV_FLAGS, &v, &vlen) && vlen != 4) return SMB3_EPROTO;
  return 0;
}

int ntlmssp_parse_challenge(const uint8_t *msg, size_t len, struct ntlmssp_challenge *c) {
  struct le_rd r;
  memset(c, 0, sizeof *c);
  if (!msg || len < NTLMSSP_CHALLENGE_MIN || len > NTLMSSP_MAX_MESSAGE) return SMB3_EPROTO;
  le_rd_init(&r, msg, len);
  if (memcmp(le_rd_take(&r, 8), ntlmssp_signature, 8) != 0) return SMB3_EPROTO;
  if (le_u32(&r) != NTLMSSP_TYPE_CHALLENGE) return SMB3_EPROTO;
  if (read_field(&r, len, msg, &c->target_name, &c->target_name_len) < 0) return SMB3_EPROTO;
  c->flags = le_u32(&r);
  le_bytes(&r, c->server_challenge, 8);
  le_skip(&r, 8); /* Reserved */
  if (read_field(&r, len, msg, &c->target_info, &c->target_info_len) < 0) return SMB3_EPROTO;
  if (r.err) return SMB3_EPROTO;
  return challenge_target_info(c);
}

/* ---- NTLMv2 computations (3.3.2) -------------------------------------------------------- */

int ntlmssp_ntowfv2(const char *user, const char *password, const char *domain, uint8_t key[16]) {
  uint8_t *pw = NULL, *u = NULL, *d = NULL;
  size_t pwlen = 0, ulen = 0, dlen = 0;
  uint8_t nthash[16];
  int rc = smb3_utf8_to_utf16le(password ? password : "", password ? strlen(password) : 0, &pw, &pwlen);
  if (rc == 0) rc = smb3_utf8_to_utf16le(user ? user : "", user ? strlen(user) : 0, &u, &ulen);
  if (rc == 0) rc = smb3_utf8_to_utf16le(domain ? domain : "", domain ? strlen(domain) : 0, &d, &dlen);
  if (rc == 0) rc = smb3_md4(pw, pwlen, nthash); /* NTOWFv1 = MD4(UNICODE(Passwd)) */
  if (rc == 0) {
    smb3_utf16le_upper(u, ulen);
    struct iovec iov[2] = {iov_c(u, ulen), iov_c(d, dlen)};
    rc = smb3_hmac_md5(nthash, 16, iov, 2, key);
  }
  if (pw) explicit_bzero(pw, pwlen);
  explicit_bzero(nthash, sizeof nthash);
  free(pw);
  free(u);
  free(d);
  return rc;
}

int ntlmssp_make_temp(uint64_t time, const uint8_t client_challenge[8], const uint8_t *av, size_t avlen,
                      uint8_t **out, size_t *outlen) {
  size_t n = 28 + avlen + 4;
  uint8_t *t = calloc(1, n);
  if (!t) return SMB3_ENOMEM;
  t[0] = 1; /* RespType */
  t[1] = 1; /* HiRespType */
  le64_put(t + 8, time);
  memcpy(t + 16, client_challenge, 8);
  if (avlen) memcpy(t + 28, av, avlen);
  *out = t;
  *outlen = n;
  return 0;
}

int ntlmssp_nt_proof(const uint8_t key[16], const uint8_t server_challenge[8], const uint8_t *temp,
                     size_t templen, uint8_t proof[16]) {
  struct iovec iov[2] = {iov_c(server_challenge, 8), iov_c(temp, templen)};
  return smb3_hmac_md5(key, 16, iov, 2, proof);
}

int ntlmssp_lmv2_response(const uint8_t key[16], const uint8_t server_challenge[8],
                          const uint8_t client_challenge[8], uint8_t out[24]) {
  struct iovec iov[2] = {iov_c(server_challenge, 8), iov_c(client_challenge, 8)};
  int rc = smb3_hmac_md5(key, 16, iov, 2, out);
  if (rc == 0) memcpy(out + 16, client_challenge, 8);
  return rc;
}

int ntlmssp_session_base_key(const uint8_t key[16], const uint8_t proof[16], uint8_t out[16]) {
  struct iovec iov = iov_c(proof, 16);
  return smb3_hmac_md5(key, 16, &iov, 1, out);
}

/* ---- Session security keys and signatures (3.4.4.2, 3.4.5.2, 3.4.5.3) ------------------ */

/* The magic constants include their terminating NUL (3.4.5.2, 3.4.5.3). */
static const char sign_c2s[] = "session key to client-to-server signing key magic constant";
static const char sign_s2c[] = "session key to server-to-client signing key magic constant";
static const char seal_c2s[] = "session key to client-to-server sealing key magic constant";
static const char seal_s2c[] = "session key to server-to-client sealing key magic constant";

static int md5_key_magic(const uint8_t *key, size_t keylen, const char *magic, size_t magiclen,
                         uint8_t out[16]) {
  uint8_t buf[16 + 64];
  memcpy(buf, key, keylen);
  memcpy(buf + keylen, magic, magiclen);
  int rc = smb3_md5(buf, keylen + magiclen, out);
  explicit_bzero(buf, sizeof buf);
  return rc;
}

int ntlmssp_sign_key(const uint8_t exported_session_key[16], int server_to_client, uint8_t out[16]) {
  const char *m = server_to_client ? sign_s2c : sign_c2s;
  return md5_key_magic(exported_session_key, 16, m, sizeof sign_c2s, out);
}

int ntlmssp_seal_key(const uint8_t exported_session_key[16], uint32_t flags, int server_to_client,
                     uint8_t out[16]) {
  /* Extended session security: key strength from NEGOTIATE_128 / NEGOTIATE_56 (3.4.5.3). */
  size_t keylen = (flags & NTLMSSP_NEGOTIATE_128) ? 16 : (flags & NTLMSSP_NEGOTIATE_56) ? 7 : 5;
  const char *m = server_to_client ? seal_s2c : seal_c2s;
  return md5_key_magic(exported_session_key, keylen, m, sizeof seal_c2s, out);
}

int ntlmssp_checksum(const uint8_t sign_key[16], uint32_t seq, const uint8_t *msg, size_t len,
                     uint8_t out[8]) {
  uint8_t seqle[4], mac[16];
  le32_put(seqle, seq);
  struct iovec iov[2] = {iov_c(seqle, 4), iov_c(msg, len)};
  int rc = smb3_hmac_md5(sign_key, 16, iov, 2, mac);
  if (rc == 0) memcpy(out, mac, 8);
  return rc;
}

int ntlmssp_make_signature(const uint8_t sign_key[16], const uint8_t seal_key[16], uint32_t flags,
                           uint32_t seq, const uint8_t *msg, size_t len, uint8_t sig[16]) {
  uint8_t cks[8];
  int rc = ntlmssp_checksum(sign_key, seq, msg, len, cks);
  if (rc == 0 && (flags & NTLMSSP_NEGOTIATE_KEY_EXCH)) rc = smb3_rc4(seal_key, 16, cks, cks, 8);
  if (rc < 0) return rc;
  le32_put(sig, 1); /* Version */
  memcpy(sig + 4, cks, 8);
  le32_put(sig + 12, seq);
  return 0;
}

static int ct_equal(const uint8_t *a, const uint8_t *b, size_t n) {
  uint8_t d = 0;
  for (size_t i = 0; i < n; i++)
    d |= (uint8_t)(a[i] ^ b[i]);
  return d == 0;
}

int ntlmssp_sign_first(const struct ntlmssp *n, const uint8_t *msg, size_t len, uint8_t sig[16]) {
  if (!n->have_key) return SMB3_EINVAL;
  return ntlmssp_make_signature(n->client_sign_key, n->client_seal_key, n->flags, 0, msg, len, sig);
}

int ntlmssp_verify_first(const struct ntlmssp *n, const uint8_t *msg, size_t len, const uint8_t *sig,
                         size_t siglen) {
  uint8_t want[16];
  if (!n->have_key) return SMB3_EINVAL;
  int rc = ntlmssp_make_signature(n->server_sign_key, n->server_seal_key, n->flags, 0, msg, len, want);
  if (rc < 0) return rc;
  return siglen == 16 && ct_equal(want, sig, 16) ? 0 : SMB3_ESIGNATURE;
}

/* ---- Client context --------------------------------------------------------------------- */

int ntlmssp_init(struct ntlmssp *n, const char *user, const char *password, const char *domain,
                 const char *workstation) {
  memset(n, 0, sizeof *n);
  n->anonymous = !user || !*user;
  n->user = dup_or_empty(user);
  n->password = dup_or_empty(n->anonymous ? NULL : password);
  n->domain = dup_or_empty(n->anonymous ? NULL : domain);
  n->workstation = dup_or_empty(workstation);
  if (!n->user || !n->password || !n->domain || !n->workstation) {
    ntlmssp_clear(n);
    return SMB3_ENOMEM;
  }
  return 0;
}

void ntlmssp_clear(struct ntlmssp *n) {
  if (n->password) explicit_bzero(n->password, strlen(n->password));
  free(n->user);
  free(n->password);
  free(n->domain);
  free(n->workstation);
  free(n->negotiate);
  explicit_bzero(n, sizeof *n);
}

/* NEGOTIATE_MESSAGE (2.2.1.1, 3.1.5.1.1): no domain or workstation (both zero-length when
 * NEGOTIATE_VERSION is set), Version present. */
int ntlmssp_negotiate(struct ntlmssp *n, uint8_t **out, size_t *outlen) {
  uint8_t *buf = malloc(NTLMSSP_NEGOTIATE_LEN);
  uint8_t *copy = malloc(NTLMSSP_NEGOTIATE_LEN);
  struct le_wr w;
  if (!buf || !copy) {
    free(buf);
    free(copy);
    return SMB3_ENOMEM;
  }
  le_wr_init(&w, buf, NTLMSSP_NEGOTIATE_LEN);
  le_put_bytes(&w, ntlmssp_signature, 8);
  le_put_u32(&w, NTLMSSP_TYPE_NEGOTIATE);
  le_put_u32(&w, NTLMSSP_CLIENT_FLAGS);
  for (int i = 0; i < 2; i++) { /* DomainNameFields, WorkstationFields: empty */
    le_put_u32(&w, 0);
    le_put_u32(&w, NTLMSSP_NEGOTIATE_LEN);
  }
  le_put_bytes(&w, ntlmssp_version, 8);
  memcpy(copy, buf, NTLMSSP_NEGOTIATE_LEN);
  free(n->negotiate);
  n->negotiate = copy;
  n->negotiate_len = NTLMSSP_NEGOTIATE_LEN;
  *out = buf;
  *outlen = NTLMSSP_NEGOTIATE_LEN;
  return 0;
}

/* Current time as a FILETIME (100 ns ticks since 1601-01-01 UTC). */
static uint64_t filetime_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ((uint64_t)ts.tv_sec + 11644473600ull) * 10000000ull + (uint64_t)ts.tv_nsec / 100;
}

/* The AV pairs we echo in the NTLMv2 blob: the server's pairs, with MsvAvFlags (added, or
 * merged into the server's) carrying MIC_PRESENT (3.1.5.1.2), then MsvAvEOL. */
static int client_av_pairs(const struct ntlmssp_challenge *c, uint8_t **out, size_t *outlen) {
  uint32_t avflags = MSV_AV_FLAG_MIC_PRESENT;
  uint8_t *buf = malloc(c->target_info_len + 12);
  struct le_wr w;
  if (!buf) return SMB3_ENOMEM;
  le_wr_init(&w, buf, c->target_info_len + 12);
  for (size_t off = 0; off + 4 <= c->target_info_len;) {
    uint16_t id = le16_at(c->target_info + off);
    uint16_t len = le16_at(c->target_info + off + 2);
    if (id == MSV_AV_EOL) break;
    if (id == MSV_AV_FLAGS)
      avflags |= le32_at(c->target_info + off + 4); /* length 4 checked by the parser */
    else
      le_put_bytes(&w, c->target_info + off, 4u + len);
    off += 4u + len;
  }
  le_put_u16(&w, MSV_AV_FLAGS);
  le_put_u16(&w, 4);
  le_put_u32(&w, avflags);
  le_put_u32(&w, 0); /* MsvAvEOL */
  *out = buf;
  *outlen = w.off;
  return 0;
}

/* Everything computed for one AUTHENTICATE_MESSAGE. */
struct auth_parts {
  uint8_t *domain, *user, *ws; /* UTF-16LE */
  size_t domain_len, user_len, ws_len;
  uint8_t lm[24];
  size_t lm_len;
  uint8_t *nt; /* NTProofStr + temp */
  size_t nt_len;
  uint8_t enc_key[16];
  size_t enc_key_len;
  uint8_t key_exchange_key[16];
};

static void auth_parts_free(struct auth_parts *p) {
  free(p->domain);
  free(p->user);
  free(p->ws);
  free(p->nt);
  explicit_bzero(p, sizeof *p);
}

static int to_utf16(const char *s, uint8_t **out, size_t *outlen) {
  return smb3_utf8_to_utf16le(s, strlen(s), out, outlen);
}

/* NTLMv2 responses and SessionBaseKey (3.3.2) for a named user. */
static int auth_ntlmv2(const struct ntlmssp *n, const struct ntlmssp_challenge *c, struct auth_parts *p) {
  uint8_t key[16], proof[16], cc[8];
  uint8_t *av = NULL, *temp = NULL;
  size_t avlen = 0, templen = 0;
  int rc = 0;
  if (n->fixed)
    memcpy(cc, n->fixed_client_challenge, 8);
  else
    rc = smb3_random(cc, 8);
  uint64_t t = c->has_timestamp ? c->timestamp : n->fixed ? n->fixed_time : filetime_now();
  if (rc == 0) rc = ntlmssp_ntowfv2(n->user, n->password, n->domain, key);
  if (rc == 0) rc = client_av_pairs(c, &av, &avlen);
  if (rc == 0) rc = ntlmssp_make_temp(t, cc, av, avlen, &temp, &templen);
  if (rc == 0) rc = ntlmssp_nt_proof(key, c->server_challenge, temp, templen, proof);
  if (rc == 0) rc = ntlmssp_session_base_key(key, proof, p->key_exchange_key);
  /* With MsvAvTimestamp the client sends Z(24) instead of an LMv2 response (3.1.5.1.2). */
  p->lm_len = 24;
  if (rc == 0 && !c->has_timestamp) rc = ntlmssp_lmv2_response(key, c->server_challenge, cc, p->lm);
  if (rc == 0) {
    p->nt = malloc(16 + templen);
    if (!p->nt) rc = SMB3_ENOMEM;
  }
  if (rc == 0) {
    memcpy(p->nt, proof, 16);
    memcpy(p->nt + 16, temp, templen);
    p->nt_len = 16 + templen;
  }
  explicit_bzero(key, sizeof key);
  free(av);
  free(temp);
  return rc;
}

/* Fill in responses, names and (with KEY_EXCH) the encrypted random session key. For an
 * anonymous logon (3.3.2 special case) NtChallengeResponse is empty, LmChallengeResponse is
 * Z(1) and the SessionBaseKey is Z(16); the resulting key is not reported to the caller. */
static int auth_compute(struct ntlmssp *n, const struct ntlmssp_challenge *c, struct auth_parts *p) {
  int rc = to_utf16(n->domain, &p->domain, &p->domain_len);
  if (rc == 0) rc = to_utf16(n->user, &p->user, &p->user_len);
  if (rc == 0) rc = to_utf16(n->workstation, &p->ws, &p->ws_len);
  if (rc < 0) return rc == SMB3_ENOMEM ? rc : SMB3_EINVAL;
  if (n->anonymous)
    p->lm_len = 1;
  else
    rc = auth_ntlmv2(n, c, p);
  if (rc < 0) return rc;
  /* KXKEY for NTLMv2 is the SessionBaseKey (3.4.5.1). */
  if (n->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
    if (n->fixed)
      memcpy(n->session_key, n->fixed_session_key, 16);
    else
      rc = smb3_random(n->session_key, 16);
    if (rc == 0) rc = smb3_rc4(p->key_exchange_key, 16, n->session_key, p->enc_key, 16);
    p->enc_key_len = 16;
  } else {
    memcpy(n->session_key, p->key_exchange_key, 16);
  }
  return rc;
}

enum { F_LM, F_NT, F_DOMAIN, F_USER, F_WS, F_KEY, F_COUNT };

/* Lay out AUTHENTICATE_MESSAGE (2.2.1.3): header fields in the order above, Version, a zero MIC,
 * then the payload (domain, user, workstation, LM, NT, key as Windows orders it). */
static int auth_assemble(const struct ntlmssp *n, const struct auth_parts *p, uint8_t **out, size_t *outlen) {
  const uint8_t *ptr[F_COUNT] = {p->lm, p->nt, p->domain, p->user, p->ws, p->enc_key};
  size_t len[F_COUNT] = {p->lm_len, p->nt_len, p->domain_len, p->user_len, p->ws_len, p->enc_key_len};
  static const int order[F_COUNT] = {F_DOMAIN, F_USER, F_WS, F_LM, F_NT, F_KEY};
  size_t off[F_COUNT], total = NTLMSSP_AUTH_HEADER_LEN;
  for (int i = 0; i < F_COUNT; i++) {
    if (len[i] > NTLMSSP_MAX_MESSAGE) return SMB3_EINVAL;
    total += len[i];
  }
  if (total > NTLMSSP_MAX_MESSAGE) return SMB3_EINVAL; /* absurdly long user/domain names */
  size_t o = NTLMSSP_AUTH_HEADER_LEN;
  for (int i = 0; i < F_COUNT; i++) {
    off[order[i]] = o;
    o += len[order[i]];
  }
  uint8_t *buf = calloc(1, total);
  struct le_wr w;
  if (!buf) return SMB3_ENOMEM;
  le_wr_init(&w, buf, total);
  le_put_bytes(&w, ntlmssp_signature, 8);
  le_put_u32(&w, NTLMSSP_TYPE_AUTHENTICATE);
  for (int i = 0; i < F_COUNT; i++) {
    le_put_u16(&w, (uint16_t)len[i]);
    le_put_u16(&w, (uint16_t)len[i]);
    le_put_u32(&w, (uint32_t)off[i]);
  }
  le_put_u32(&w, n->flags);
  le_put_bytes(&w, ntlmssp_version, 8);
  le_put_zero(&w, 16); /* MIC, filled in afterwards */
  for (int i = 0; i < F_COUNT; i++)
    le_put_bytes(&w, ptr[order[i]], len[order[i]]);
  if (w.err || w.off != total) {
    free(buf);
    return SMB3_EINVAL;
  }
  *out = buf;
  *outlen = total;
  return 0;
}

/* MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE + CHALLENGE + AUTHENTICATE) (3.1.5.1.2). */
static int auth_mic(const struct ntlmssp *n, const uint8_t *chal, size_t chal_len, uint8_t *auth,
                    size_t auth_len) {
  struct iovec iov[3] = {iov_c(n->negotiate, n->negotiate_len), iov_c(chal, chal_len), iov_c(auth, auth_len)};
  uint8_t mic[16];
  int rc = smb3_hmac_md5(n->session_key, 16, iov, 3, mic);
  if (rc == 0) memcpy(auth + NTLMSSP_AUTH_MIC_OFFSET, mic, 16);
  return rc;
}

static int derive_session_keys(struct ntlmssp *n) {
  int rc = ntlmssp_sign_key(n->session_key, 0, n->client_sign_key);
  if (rc == 0) rc = ntlmssp_sign_key(n->session_key, 1, n->server_sign_key);
  if (rc == 0) rc = ntlmssp_seal_key(n->session_key, n->flags, 0, n->client_seal_key);
  if (rc == 0) rc = ntlmssp_seal_key(n->session_key, n->flags, 1, n->server_seal_key);
  return rc;
}

/* Negotiated flags (3.1.5.1.2): what both sides support. We insist on Unicode and extended
 * session security: without them only NTLMv1-era signing would be possible. */
static int negotiate_flags(struct ntlmssp *n, uint32_t server_flags) {
  uint32_t need = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY;
  if ((server_flags & need) != need) return SMB3_EPROTO;
  n->flags = NTLMSSP_CLIENT_FLAGS & server_flags;
  if (n->anonymous) n->flags |= NTLMSSP_NEGOTIATE_ANONYMOUS;
  return 0;
}

int ntlmssp_authenticate(struct ntlmssp *n, const uint8_t *chal, size_t chal_len, uint8_t **out,
                         size_t *outlen) {
  struct ntlmssp_challenge c;
  struct auth_parts p;
  uint8_t *msg = NULL;
  size_t msglen = 0;
  *out = NULL;
  *outlen = 0;
  if (!n->negotiate) return SMB3_EINVAL;
  if (ntlmssp_parse_challenge(chal, chal_len, &c) < 0) return SMB3_EPROTO;
  int rc = negotiate_flags(n, c.flags);
  if (rc < 0) return rc;
  memset(&p, 0, sizeof p);
  rc = auth_compute(n, &c, &p);
  if (rc == 0) rc = auth_assemble(n, &p, &msg, &msglen);
  if (rc == 0 && !n->anonymous) rc = auth_mic(n, chal, chal_len, msg, msglen);
  if (rc == 0 && !n->anonymous) rc = derive_session_keys(n);
  auth_parts_free(&p);
  if (rc < 0) {
    free(msg);
    explicit_bzero(n->session_key, 16);
    return rc;
  }
  n->have_key = !n->anonymous;
  *out = msg;
  *outlen = msglen;
  return 0;
}
