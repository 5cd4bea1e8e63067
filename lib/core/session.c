/* session.c - dialect negotiation, the 3.1.1 preauth integrity hash, key derivation, signing
 * verification and sealing (MS-SMB2 3.2.4.2, 3.2.5.2, 3.2.5.3, 3.1.4). */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"
#include "smb3/smb3_errors.h"
#include "util/status.h"

static const uint16_t all_dialects[] = {SMB2_DIALECT_202, SMB2_DIALECT_210, SMB2_DIALECT_300,
                                        SMB2_DIALECT_302, SMB2_DIALECT_311};

int core_build_negotiate(struct smb3_core *c, struct smb3_chain *ch) {
  struct smb2_negotiate_req r = {0};
  c->client_security_mode =
      c->cfg.sign_wanted ? SMB2_NEGOTIATE_SIGNING_REQUIRED : SMB2_NEGOTIATE_SIGNING_ENABLED;
  c->client_caps = SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_LEASING | SMB2_GLOBAL_CAP_ENCRYPTION |
                   SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
  r.security_mode = c->client_security_mode;
  r.capabilities = c->client_caps;
  memcpy(r.client_guid, c->client_guid, 16);
  c->ndialects = 0;
  for (size_t i = 0; i < sizeof all_dialects / sizeof all_dialects[0]; i++)
    if (all_dialects[i] >= c->cfg.dialect_min && all_dialects[i] <= c->cfg.dialect_max)
      c->dialects[c->ndialects++] = all_dialects[i];
  if (!c->ndialects) return SMB3_EDIALECT;
  r.dialect_count = (uint16_t)c->ndialects;
  memcpy(r.dialects, c->dialects, sizeof(uint16_t) * c->ndialects);
  if (smb3_random(r.preauth_salt, sizeof r.preauth_salt)) return SMB3_EIO;
  r.cipher_count = 4;
  r.ciphers[0] = SMB3_CIPHER_AES128_GCM;
  r.ciphers[1] = SMB3_CIPHER_AES128_CCM;
  r.ciphers[2] = SMB3_CIPHER_AES256_GCM;
  r.ciphers[3] = SMB3_CIPHER_AES256_CCM;
  r.sign_alg_count = 2;
  r.sign_algs[0] = SMB3_SIGN_AES_GMAC;
  r.sign_algs[1] = SMB3_SIGN_AES_CMAC;
  r.posix = c->cfg.posix_wanted;
  struct le_wr w;
  struct smb3_msg *m = &ch->msgs[0];
  int rc = msg_body_begin(m, SMB2_NEGOTIATE, 0, 512, &w);
  if (!rc) rc = smb2_negotiate_req_encode(&w, &r);
  if (!rc) rc = msg_body_done(m, &w);
  ch->no_session = 1;
  c->preauth_active = c->cfg.dialect_max >= SMB2_DIALECT_311;
  memset(c->preauth, 0, sizeof c->preauth);
  return rc;
}

static int offered(const uint16_t *list, int n, uint16_t v) {
  for (int i = 0; i < n; i++)
    if (list[i] == v) return 1;
  return 0;
}

int core_apply_negotiate(struct smb3_core *c, struct smb3_chain *ch, const char **why) {
  static const uint16_t ciphers[] = {SMB3_CIPHER_AES128_GCM, SMB3_CIPHER_AES128_CCM, SMB3_CIPHER_AES256_GCM,
                                     SMB3_CIPHER_AES256_CCM};
  static const uint16_t sign_algs[] = {SMB3_SIGN_AES_GMAC, SMB3_SIGN_AES_CMAC};
  const char *dummy;
  if (!why) why = &dummy;
  *why = "malformed";
  struct smb3_msg *m = &ch->msgs[0];
  if (ch->error) return ch->error;
  if (m->status != NT_STATUS_SUCCESS) return smb3_status_to_err(m->status);
  struct smb2_negotiate_rsp r;
  int rc = smb2_negotiate_rsp_decode(m->rsp, m->rsp_len, &r);
  if (rc) return rc;
  int known = 0;
  for (int i = 0; i < c->ndialects; i++)
    known |= c->dialects[i] == r.dialect;
  if (!known) return *why = "server chose a dialect that was not offered", SMB3_EDIALECT;
  c->neg.dialect = r.dialect;
  c->neg.security_mode = r.security_mode;
  c->neg.capabilities = r.capabilities;
  c->neg.max_read = r.max_read_size;
  c->neg.max_write = r.max_write_size;
  c->neg.max_transact = r.max_transact_size;
  memcpy(c->neg.server_guid, r.server_guid, 16);
  if (r.dialect == SMB2_DIALECT_311) {
    /* 3.2.5.2: exactly the preauth hash, cipher and signing algorithm offered (someone on the path
     * may have rewritten them; the preauth hash only catches that once the session is signed). */
    if (!r.preauth_hash_alg) return *why = "3.1.1 response without a preauth integrity context", SMB3_EPROTO;
    if (r.preauth_hash_alg != SMB2_PREAUTH_SHA512)
      return *why = "server chose a preauth hash algorithm that was not offered", SMB3_EPROTO;
    if (r.cipher && !offered(ciphers, 4, r.cipher))
      return *why = "server chose a cipher that was not offered", SMB3_EPROTO;
    if (r.sign_alg != 0xFFFF && !offered(sign_algs, 2, r.sign_alg))
      return *why = "server chose a signing algorithm that was not offered", SMB3_EPROTO;
    c->neg.cipher = r.cipher;
    c->neg.sign_alg = r.sign_alg == SMB3_SIGN_AES_GMAC ? SMB3_SIGN_AES_GMAC : SMB3_SIGN_AES_CMAC;
    c->neg.posix = c->cfg.posix_wanted && r.posix; /* an answer we did not ask for is ignored */
  } else {
    c->preauth_active = 0;
    c->neg.cipher = (r.dialect >= SMB2_DIALECT_300 && (r.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION))
                        ? SMB3_CIPHER_AES128_CCM
                        : 0;
    c->neg.sign_alg = r.dialect >= SMB2_DIALECT_300 ? SMB3_SIGN_AES_CMAC : SMB3_SIGN_HMAC_SHA256;
  }
  c->sign_alg = c->neg.sign_alg;
  return 0;
}

const struct core_negotiated *core_negotiated(const struct smb3_core *c) {
  return &c->neg;
}

void core_validate_negotiate_info(const struct smb3_core *c, struct smb2_validate_negotiate *v) {
  memset(v, 0, sizeof *v);
  v->capabilities = c->client_caps;
  memcpy(v->guid, c->client_guid, 16);
  v->security_mode = c->client_security_mode;
  v->dialect_count = (uint16_t)c->ndialects;
  memcpy(v->dialects, c->dialects, sizeof(uint16_t) * c->ndialects);
}

void core_set_session_id(struct smb3_core *c, uint64_t sid) {
  c->session_id = sid;
}
uint64_t core_session_id(const struct smb3_core *c) {
  return c->session_id;
}

void core_set_session_key(struct smb3_core *c, const uint8_t *key) {
  c->have_key = key != NULL;
  if (key)
    memcpy(c->session_key, key, 16);
  else
    OPENSSL_cleanse(c->session_key, sizeof c->session_key);
}

/* MS-SMB2 3.2.5.3.1: SigningKey, EncryptionKey (client->server) and DecryptionKey. */
static int derive_keys(struct smb3_core *c) {
  uint16_t d = c->neg.dialect;
  if (d < SMB2_DIALECT_300) {
    memcpy(c->sign_key, c->session_key, 16);
    return 0;
  }
  size_t klen = c->neg.cipher ? smb3_cipher_keylen(c->neg.cipher) : 16;
  int rc;
  if (d == SMB2_DIALECT_311) {
    rc = smb3_kdf(c->session_key, 16, "SMBSigningKey", 14, c->preauth, 64, c->sign_key, 16);
    if (!rc) rc = smb3_kdf(c->session_key, 16, "SMBC2SCipherKey", 16, c->preauth, 64, c->enc_key, klen);
    if (!rc) rc = smb3_kdf(c->session_key, 16, "SMBS2CCipherKey", 16, c->preauth, 64, c->dec_key, klen);
  } else {
    rc = smb3_kdf(c->session_key, 16, "SMB2AESCMAC", 12, "SmbSign", 8, c->sign_key, 16);
    if (!rc) rc = smb3_kdf(c->session_key, 16, "SMB2AESCCM", 11, "ServerIn ", 10, c->enc_key, 16);
    if (!rc) rc = smb3_kdf(c->session_key, 16, "SMB2AESCCM", 11, "ServerOut", 10, c->dec_key, 16);
  }
  if (!rc && c->neg.cipher) { /* the ciphers' key schedules, once per session */
    smb3_aead_free(c->enc_aead);
    smb3_aead_free(c->dec_aead);
    c->enc_aead = smb3_aead_new(c->neg.cipher, c->enc_key, 1);
    c->dec_aead = smb3_aead_new(c->neg.cipher, c->dec_key, 0);
    if (!c->enc_aead || !c->dec_aead) rc = SMB3_ENOMEM;
  }
  return rc;
}

/* Preauth hash over requests of NEGOTIATE and SESSION_SETUP (3.2.4.2.2.2, 3.2.4.2.3). */
int core_session_on_send(struct smb3_core *c, struct smb3_msg *m) {
  if (!c->preauth_active || (m->command != SMB2_NEGOTIATE && m->command != SMB2_SESSION_SETUP)) return 0;
  struct iovec iov[3] = {
      {m->hdr, SMB2_HDR_LEN}, {m->body, m->body_len}, {(void *)m->payload, m->payload_len}};
  return smb3_preauth_update(c->preauth, iov, 3);
}

/* Responses: hash NEGOTIATE and non-final SESSION_SETUP; on the final SESSION_SETUP success
 * derive the keys so that its signature can be verified (3.2.5.3.1). */
int core_session_on_recv(struct smb3_core *c, struct smb3_msg *m, const uint8_t *msg, size_t len,
                         const struct smb2_hdr *h) {
  (void)m;
  struct iovec iov = {(void *)msg, len};
  if (h->command == SMB2_NEGOTIATE) {
    if (c->preauth_active && h->status == NT_STATUS_SUCCESS) return smb3_preauth_update(c->preauth, &iov, 1);
    return 0;
  }
  if (h->command != SMB2_SESSION_SETUP) return 0;
  if (h->status == NT_STATUS_MORE_PROCESSING_REQUIRED) {
    if (!c->session_id) c->session_id = h->session_id;
    return c->preauth_active ? smb3_preauth_update(c->preauth, &iov, 1) : 0;
  }
  if (h->status == NT_STATUS_SUCCESS && c->have_key && !c->established) {
    if (!c->session_id) c->session_id = h->session_id;
    return derive_keys(c);
  }
  return 0;
}

/* Verify a response's signature when signing is on (3.2.5.1.3). A final SESSION_SETUP response
 * is verified as soon as keys exist. Encrypted frames are authenticated by their transform. */
int core_verify(struct smb3_core *c, const struct iovec *iov, int iovcnt, const struct smb2_hdr *h) {
  int keyed = c->have_key && (c->established || h->command == SMB2_SESSION_SETUP);
  int expect = c->signing && c->established;
  if (!(h->flags & SMB2_FLAGS_SIGNED)) {
    /* Samba answers some failures before a session exists unsigned; anything on an established
     * signed session must be signed. */
    if (expect && h->status != NT_STATUS_PENDING) return SMB3_ESIGNATURE;
    return 0;
  }
  if (!keyed) return 0; /* signed with a key we do not have yet (e.g. guest): nothing to check */
  if (h->session_id != c->session_id) return SMB3_ESIGNATURE;
  uint8_t hdr[SMB2_HDR_LEN], sig[16];
  if (iov[0].iov_len < SMB2_HDR_LEN) return SMB3_EPROTO;
  memcpy(hdr, iov[0].iov_base, SMB2_HDR_LEN);
  memset(hdr + SMB2_HDR_OFF_SIG, 0, 16);
  struct iovec v[4];
  if (iovcnt > 3) return SMB3_EINVAL;
  v[0] = (struct iovec){hdr, SMB2_HDR_LEN};
  v[1] = (struct iovec){(uint8_t *)iov[0].iov_base + SMB2_HDR_LEN, iov[0].iov_len - SMB2_HDR_LEN};
  for (int i = 1; i < iovcnt; i++)
    v[i + 1] = iov[i];
  int rc = smb3_sign(c->sign_alg, c->sign_key, v, iovcnt + 1, sig);
  if (rc) return rc;
  return memcmp(sig, h->signature, 16) ? SMB3_ESIGNATURE : 0;
}

/* 3.2.5.3.1: the final SESSION_SETUP response of a session that is neither guest nor anonymous is
 * signed on 3.1.1, and whenever the session will sign; unsigned, someone on the path may have
 * changed its SessionFlags (ENCRYPT_DATA) or, on 3.1.1, the NEGOTIATE response before it. */
int core_setup_must_be_signed(const struct smb3_core *c, const uint8_t *msg, const struct smb2_hdr *h) {
  if (h->command != SMB2_SESSION_SETUP || h->status != NT_STATUS_SUCCESS || !c->have_key || c->established)
    return 0;
  uint16_t flags = le16_at(msg + SMB2_HDR_LEN + 2);
  if (flags & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL)) return 0;
  return c->neg.dialect == SMB2_DIALECT_311 || c->cfg.sign_wanted ||
         (c->neg.security_mode & SMB2_NEGOTIATE_SIGNING_REQUIRED);
}

int core_session_verify_final(struct smb3_core *c, const uint8_t *key, const uint8_t *rsp, size_t len) {
  struct smb2_hdr h;
  if (c->established || smb2_hdr_decode(rsp, len, &h) || h.command != SMB2_SESSION_SETUP) return SMB3_EINVAL;
  core_set_session_key(c, key);
  if (!c->session_id) c->session_id = h.session_id;
  int rc = derive_keys(c);
  struct iovec iov = {(void *)rsp, len};
  if (!rc) rc = core_verify(c, &iov, 1, &h);
  return rc;
}

int core_session_established(struct smb3_core *c, uint16_t session_flags) {
  c->established = 1;
  c->preauth_active = 0;
  int anon = !c->have_key || (session_flags & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL));
  c->anon = anon;
  int required = (c->neg.security_mode & SMB2_NEGOTIATE_SIGNING_REQUIRED) || c->cfg.sign_wanted;
  if (!anon && required) c->signing = 1;
  if (session_flags & SMB2_SESSION_FLAG_ENCRYPT_DATA || c->cfg.seal_wanted) return core_require_encryption(c);
  if (anon && c->cfg.sign_wanted) return SMB3_ESIGNATURE; /* asked to sign, but a guest session has no key */
  return 0;
}

int core_require_encryption(struct smb3_core *c) {
  if (!c->have_key || c->anon || c->neg.dialect < SMB2_DIALECT_300 || !c->neg.cipher) return SMB3_ENCRYPT;
  c->sealing = 1;
  return 0;
}

int core_responses_signed(const struct smb3_core *c) {
  return c->signing || __atomic_load_n(&c->signed_unasked, __ATOMIC_ACQUIRE);
}

int core_signing_active(const struct smb3_core *c) {
  return c->signing;
}
int core_session_anonymous(const struct smb3_core *c) {
  return c->anon;
}
int core_encryption_active(const struct smb3_core *c) {
  return c->sealing;
}

/* Encrypt a laid-out frame into one owned buffer behind a transform header (3.1.4.3): one pass
 * from the frame's pieces (headers, the caller's payload) into the buffer (GCM); CCM takes its
 * data in one piece, so it is gathered first and encrypted there. */
int core_seal_frame(struct smb3_core *c, struct out_frame *f) {
  size_t len = out_frame_len(f, 1);
  if (!c->enc_aead || !len) return SMB3_ENCRYPT;
  size_t cap;
  uint8_t *buf = core_buf_get(c, len, &cap);
  if (!buf) return SMB3_ENOMEM;
  struct smb2_transform_hdr t = {0};
  uint64_t ctr = ++c->nonce_ctr;
  memcpy(t.nonce, &ctr, 8); /* unique per session key: counter + random salt */
  memcpy(t.nonce + 8, c->nonce_salt, smb3_cipher_noncelen(c->neg.cipher) - 8);
  t.orig_msg_size = (uint32_t)len;
  t.flags = 0x0001;
  t.session_id = c->session_id;
  smb2_transform_hdr_encode(&t, f->transform);
  int streams = smb3_aead_streams(c->enc_aead);
  int rc = smb3_aead_begin(c->enc_aead, t.nonce, f->transform + 20, 32, len, NULL);
  size_t off = 0;
  for (int i = 1; !rc && i < f->iovcnt; i++) {
    const struct iovec *v = &f->iov[i];
    if (streams)
      rc = smb3_aead_update(c->enc_aead, buf + off, v->iov_base, v->iov_len);
    else if (v->iov_len)
      memcpy(buf + off, v->iov_base, v->iov_len);
    off += v->iov_len;
  }
  if (!rc && !streams) rc = smb3_aead_update(c->enc_aead, buf, buf, len);
  if (!rc) rc = smb3_aead_finish(c->enc_aead, f->transform + 4);
  if (rc) {
    OPENSSL_cleanse(buf, len); /* CCM: it may hold plaintext */
    core_buf_put(c, buf, cap);
    return rc;
  }
  f->owned = buf;
  f->owned_cap = cap;
  f->iovcnt = 1;
  f->iov[f->iovcnt++] = (struct iovec){f->transform, SMB2_TRANSFORM_HDR_LEN};
  f->iov[f->iovcnt++] = (struct iovec){buf, len};
  return 0;
}

/* The transform header of a received frame: ours, for this session, the length it says. */
static int transform_check(struct smb3_core *c, const uint8_t *frame, size_t len,
                           struct smb2_transform_hdr *t) {
  int rc = smb2_transform_hdr_decode(frame, len, t);
  if (rc) return rc;
  if (!c->dec_aead || t->session_id != c->session_id) return SMB3_ENCRYPT;
  return 0;
}

int core_unseal_frame(struct smb3_core *c, uint8_t *frame, size_t len, uint8_t **plain, size_t *plain_len) {
  struct smb2_transform_hdr t;
  int rc = transform_check(c, frame, len, &t);
  if (rc) return rc;
  uint8_t *body = frame + SMB2_TRANSFORM_HDR_LEN;
  rc = smb3_aead_begin(c->dec_aead, t.nonce, frame + 20, 32, t.orig_msg_size, t.signature);
  if (!rc) rc = smb3_aead_update(c->dec_aead, body, body, t.orig_msg_size);
  if (!rc) rc = smb3_aead_finish(c->dec_aead, t.signature);
  if (rc == SMB3_ESIGNATURE) /* never hand out plaintext that failed authentication (3.2.5.1.1.1) */
    OPENSSL_cleanse(body, t.orig_msg_size);
  if (rc) return rc;
  *plain = body;
  *plain_len = t.orig_msg_size;
  return 0;
}

int core_unseal_head(struct smb3_core *c, const uint8_t *frame, size_t len, size_t frame_len, uint8_t *out,
                     size_t outlen) {
  struct smb2_transform_hdr t;
  if (len < SMB2_TRANSFORM_HDR_LEN + outlen || !smb3_aead_streams(c->dec_aead)) return 0;
  if (transform_check(c, frame, frame_len, &t)) return 0; /* the frame path says what is wrong */
  if (smb3_aead_begin(c->dec_aead, t.nonce, frame + 20, 32, t.orig_msg_size, NULL) ||
      smb3_aead_update(c->dec_aead, out, frame + SMB2_TRANSFORM_HDR_LEN, outlen))
    return 0;
  return 1;
}
