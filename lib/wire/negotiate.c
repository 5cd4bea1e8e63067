/* negotiate.c - SMB2 NEGOTIATE: request MS-SMB2 2.2.3, response 2.2.4, and the SMB 3.1.1
 * negotiate contexts (request 2.2.3.1, response 2.2.4.1). */
#include <string.h>

#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_NEGOTIATE_REQ_SIZE 36
#define SMB2_NEGOTIATE_REQ_OFF_CTX 28  /* NegotiateContextOffset within the request body */
#define SMB2_NEGOTIATE_REQ_OFF_NCTX 32 /* NegotiateContextCount */
#define SMB2_NEGOTIATE_RSP_FIXED 64    /* StructureSize 65 minus the first Buffer byte */
#define NEGCTX_HDR_LEN 8               /* ContextType, DataLength, Reserved (2.2.3.1) */
#define NEGCTX_SALT_LEN 32
#define WIRE_SIGN_HMAC_SHA256 0x0000 /* 2.2.3.1.7 SigningAlgorithm id on the wire */

const uint8_t smb2_posix_tag[SMB2_POSIX_TAG_LEN] = {0x93, 0xAD, 0x25, 0x50, 0x9C, 0xB4, 0x11, 0xE7,
                                                    0xB4, 0x23, 0x83, 0xDE, 0x96, 0x8B, 0xCD, 0x7C};

static int offers_311(const struct smb2_negotiate_req *r) {
  for (int i = 0; i < r->dialect_count; i++)
    if (r->dialects[i] == SMB2_DIALECT_311) return 1;
  return 0;
}

/* 2.2.3.1: every context starts 8-byte aligned (header offset 64 is aligned, so aligning the
 * writer position aligns the header offset). Returns the writer position of the data. */
static size_t negctx_begin(struct le_wr *w, uint16_t type) {
  le_put_align(w, 8);
  le_put_u16(w, type);
  le_put_u16(w, 0); /* DataLength, patched by negctx_end */
  le_put_u32(w, 0); /* Reserved */
  return w->off;
}

static void negctx_end(struct le_wr *w, size_t data_pos) {
  if (w->err) return;
  size_t n = w->off - data_pos;
  if (n > UINT16_MAX)
    w->err = 1;
  else
    le16_put(w->p + data_pos - 6, (uint16_t)n);
}

/* 2.2.3.1.1: one hash algorithm (SHA-512) and the client's salt. */
static void negctx_put_preauth(struct le_wr *w, const struct smb2_negotiate_req *r) {
  size_t d = negctx_begin(w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
  le_put_u16(w, 1);
  le_put_u16(w, NEGCTX_SALT_LEN);
  le_put_u16(w, SMB2_PREAUTH_SHA512);
  le_put_bytes(w, r->preauth_salt, NEGCTX_SALT_LEN);
  negctx_end(w, d);
}

/* 2.2.3.1.2 (ciphers) and 2.2.3.1.7 (signing algorithms): a count and a list of u16 ids. */
static void negctx_put_list(struct le_wr *w, uint16_t type, const uint16_t *ids, uint16_t n) {
  size_t d = negctx_begin(w, type);
  le_put_u16(w, n);
  for (uint16_t i = 0; i < n; i++) {
    uint16_t id = ids[i];
    if (type == SMB2_SIGNING_CAPABILITIES && id == SMB3_SIGN_HMAC_SHA256) id = WIRE_SIGN_HMAC_SHA256;
    le_put_u16(w, id);
  }
  negctx_end(w, d);
}

/* 2.2.3.1.4: the server name the client connects to, UTF-16LE without terminator. */
static int negctx_put_netname(struct le_wr *w, const char *netname) {
  size_t n, d = negctx_begin(w, SMB2_NETNAME_NEGOTIATE_CONTEXT_ID);
  int rc = wire_put_utf16(w, netname, 0, UINT16_MAX, &n);
  negctx_end(w, d);
  return rc;
}

/* Samba's POSIX extensions: the data is a list of 16-byte variant tags; Samba knows one
 * (source3/smbd/smb2_negprot.c smb2_negotiate_context_process_posix). */
static void negctx_put_posix(struct le_wr *w) {
  size_t d = negctx_begin(w, SMB2_POSIX_EXTENSIONS_AVAILABLE);
  le_put_bytes(w, smb2_posix_tag, SMB2_POSIX_TAG_LEN);
  negctx_end(w, d);
}

/* Emits the contexts and patches NegotiateContextOffset / NegotiateContextCount. */
static int negctx_put_all(struct le_wr *w, size_t start, const struct smb2_negotiate_req *r) {
  uint16_t count = 1;
  le_put_align(w, 8);
  size_t ctx_pos = w->off;
  negctx_put_preauth(w, r);
  if (r->cipher_count) {
    negctx_put_list(w, SMB2_ENCRYPTION_CAPABILITIES, r->ciphers, r->cipher_count);
    count++;
  }
  if (r->sign_alg_count) {
    negctx_put_list(w, SMB2_SIGNING_CAPABILITIES, r->sign_algs, r->sign_alg_count);
    count++;
  }
  if (r->netname && r->netname[0]) {
    int rc = negctx_put_netname(w, r->netname);
    if (rc) return rc;
    count++;
  }
  if (r->posix) {
    negctx_put_posix(w);
    count++;
  }
  if (w->err) return SMB3_EINVAL;
  le32_put(w->p + start + SMB2_NEGOTIATE_REQ_OFF_CTX, (uint32_t)WIRE_HDR_OFF(ctx_pos));
  le16_put(w->p + start + SMB2_NEGOTIATE_REQ_OFF_NCTX, count);
  return 0;
}

int smb2_negotiate_req_encode(struct le_wr *w, const struct smb2_negotiate_req *r) {
  if (!r->dialect_count || r->dialect_count > SMB2_MAX_DIALECTS || r->cipher_count > SMB2_MAX_CIPHERS ||
      r->sign_alg_count > SMB2_MAX_SIGN_ALGS)
    return SMB3_EINVAL;
  size_t start = w->off;
  le_put_u16(w, SMB2_NEGOTIATE_REQ_SIZE);
  le_put_u16(w, r->dialect_count);
  le_put_u16(w, r->security_mode);
  le_put_u16(w, 0); /* Reserved */
  le_put_u32(w, r->capabilities);
  le_put_bytes(w, r->client_guid, 16);
  le_put_u32(w, 0); /* NegotiateContextOffset (3.1.1) / ClientStartTime (others): 0 */
  le_put_u16(w, 0); /* NegotiateContextCount */
  le_put_u16(w, 0); /* Reserved2 */
  for (int i = 0; i < r->dialect_count; i++)
    le_put_u16(w, r->dialects[i]);
  if (w->err) return SMB3_EINVAL;
  if (!offers_311(r)) return 0;
  return negctx_put_all(w, start, r);
}

/* One response context (2.2.4.1.x). Unknown types are ignored (2.2.4: the client MUST ignore
 * contexts it does not understand); the known ones must hold what their counts announce. */
static int negctx_parse(uint16_t type, const uint8_t *p, size_t len, struct smb2_negotiate_rsp *rsp) {
  struct le_rd r;
  le_rd_init(&r, p, len);
  uint16_t count = le_u16(&r);
  switch (type) {
  case SMB2_PREAUTH_INTEGRITY_CAPABILITIES: { /* 2.2.3.1.1 */
    uint16_t salt_len = le_u16(&r);
    rsp->preauth_hash_alg = le_u16(&r);
    le_skip(&r, 2 * (size_t)(count ? count - 1 : 0) + salt_len);
    break;
  }
  case SMB2_ENCRYPTION_CAPABILITIES: /* 2.2.3.1.2: the server returns exactly one (0 = none) */
    rsp->cipher = le_u16(&r);
    le_skip(&r, 2 * (size_t)(count ? count - 1 : 0));
    break;
  case SMB2_SIGNING_CAPABILITIES: { /* 2.2.3.1.7: exactly one */
    uint16_t alg = le_u16(&r);
    rsp->sign_alg = alg == WIRE_SIGN_HMAC_SHA256 ? SMB3_SIGN_HMAC_SHA256 : alg;
    le_skip(&r, 2 * (size_t)(count ? count - 1 : 0));
    break;
  }
  case SMB2_POSIX_EXTENSIONS_AVAILABLE:
    /* The tag(s) the server accepted, no count field. Data that holds no whole tag of ours is a
     * variant we do not understand: ignored like an unknown context, never an error. */
    for (size_t off = 0; off + SMB2_POSIX_TAG_LEN <= len; off += SMB2_POSIX_TAG_LEN)
      if (!memcmp(p + off, smb2_posix_tag, SMB2_POSIX_TAG_LEN)) rsp->posix = 1;
    return 0;
  default:
    return 0;
  }
  return r.err || count == 0 ? SMB3_EPROTO : 0;
}

/* 2.2.4: NegotiateContextCount contexts from NegotiateContextOffset (header-relative), each
 * after the first at the next 8-byte boundary; every one must lie inside the message. */
static int negctx_parse_all(const uint8_t *msg, size_t len, uint32_t ctx_off, uint16_t count,
                            struct smb2_negotiate_rsp *rsp) {
  size_t off = ctx_off;
  if (off < SMB2_HDR_LEN + SMB2_NEGOTIATE_RSP_FIXED) return SMB3_EPROTO;
  for (uint16_t i = 0; i < count; i++) {
    if (i) off = (off + 7) & ~(size_t)7; /* off <= len here, no overflow */
    if (!le_range_ok(off, NEGCTX_HDR_LEN, len)) return SMB3_EPROTO;
    uint16_t type = le16_at(msg + off);
    uint16_t dlen = le16_at(msg + off + 2);
    off += NEGCTX_HDR_LEN;
    if (!le_range_ok(off, dlen, len)) return SMB3_EPROTO;
    int rc = negctx_parse(type, msg + off, dlen, rsp);
    if (rc) return rc;
    off += dlen;
  }
  return 0;
}

int smb2_negotiate_rsp_decode(const uint8_t *msg, size_t len, struct smb2_negotiate_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  rsp->sign_alg = 0xFFFF;
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_NEGOTIATE);
  if (rc) return rc;
  rsp->security_mode = le_u16(&r);
  rsp->dialect = le_u16(&r);
  uint16_t ctx_count = le_u16(&r);
  le_bytes(&r, rsp->server_guid, 16);
  rsp->capabilities = le_u32(&r);
  rsp->max_transact_size = le_u32(&r);
  rsp->max_read_size = le_u32(&r);
  rsp->max_write_size = le_u32(&r);
  rsp->system_time = le_u64(&r);
  rsp->server_start_time = le_u64(&r);
  uint16_t sec_off = le_u16(&r);
  rsp->sec_len = le_u16(&r);
  uint32_t ctx_off = le_u32(&r);
  if (r.err) return SMB3_EPROTO;
  const uint8_t *sec;
  if (wire_rsp_buf(msg, len, SMB2_HDR_LEN + SMB2_NEGOTIATE_RSP_FIXED, sec_off, rsp->sec_len, &sec))
    return SMB3_EPROTO;
  rsp->sec_buf = rsp->sec_len ? sec : NULL;
  /* NegotiateContextCount/Offset are Reserved unless the dialect is 3.1.1. */
  if (rsp->dialect == SMB2_DIALECT_311 && ctx_count)
    return negctx_parse_all(msg, len, ctx_off, ctx_count, rsp);
  return 0;
}
