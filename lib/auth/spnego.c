/* spnego.c - SPNEGO (RFC 4178, MS-SPNG) around NTLMSSP, and the smb3_auth_* API (auth.h).
 *
 * Exchange (MS-SPNG 3.1.5, MS-SMB2 3.2.5.3):
 *   client: InitialContextToken { NegTokenInit { mechTypes {NTLMSSP}, mechToken NEGOTIATE } }
 *   server: NegTokenResp { accept-incomplete, supportedMech NTLMSSP, responseToken CHALLENGE }
 *   client: NegTokenResp { responseToken AUTHENTICATE, mechListMIC }
 *   server: NegTokenResp { accept-completed, mechListMIC }   (with STATUS_SUCCESS)
 * The mechListMIC is the NTLMSSP signature (MS-NLMP 3.4.4.2, sequence number 0) over the DER
 * MechTypeList we sent (RFC 4178 5). We always send one because our AUTHENTICATE carries a MIC
 * (MS-SPNG 3.1.5.1); Samba then requires it and answers with its own, which we verify.
 */
#include "auth/spnego.h"

#include <stdlib.h>
#include <string.h>

#include "auth/asn1.h"
#include "auth/auth.h"
#include "auth/ntlmssp.h"
#include "smb3/smb3_errors.h"

/* OID contents (X.690 8.19): 1.3.6.1.5.5.2 and 1.3.6.1.4.1.311.2.2.10. */
static const uint8_t oid_spnego[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
static const uint8_t oid_ntlmssp[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
/* MechTypeList ::= SEQUENCE OF MechType, holding only NTLMSSP. */
static const uint8_t our_mech_types[] = {0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01,
                                         0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};

#define SPNEGO_OVERHEAD 64 /* bound on the DER framing we add around one or two tokens */

const uint8_t *spnego_our_mech_types(size_t *len) {
  *len = sizeof our_mech_types;
  return our_mech_types;
}

static int is_oid(const uint8_t *v, size_t n, const uint8_t *oid, size_t oidlen) {
  return n == oidlen && memcmp(v, oid, n) == 0;
}

/* ---- Decoding ----------------------------------------------------------------------------- */

/* Read the next element, which must carry `tag`. */
static int read_tagged(struct asn1_rd *r, uint8_t tag, const uint8_t **val, size_t *vlen) {
  uint8_t t;
  if (asn1_read_any(r, &t, val, vlen) < 0 || t != tag) return SMB3_EPROTO;
  return 0;
}

/* The contents of an explicit context tag: exactly one element carrying `tag`. */
static int read_explicit(const uint8_t *ctx, size_t ctxlen, uint8_t tag, const uint8_t **val, size_t *vlen) {
  struct asn1_rd r;
  asn1_rd_init(&r, ctx, ctxlen);
  if (read_tagged(&r, tag, val, vlen) < 0 || !asn1_rd_done(&r)) return SMB3_EPROTO;
  return 0;
}

/* MechTypeList: SEQUENCE OF OID, at least one. v/n is the whole SEQUENCE element. */
static int parse_mech_types(const uint8_t *v, size_t n, struct spnego_init *out) {
  const uint8_t *seqv, *oid;
  size_t seqn, oidlen;
  struct asn1_rd seq;
  if (read_explicit(v, n, ASN1_SEQUENCE, &seqv, &seqn) < 0 || seqn == 0) return SMB3_EPROTO;
  asn1_rd_init(&seq, seqv, seqn);
  while (!asn1_rd_done(&seq)) {
    if (read_tagged(&seq, ASN1_OID, &oid, &oidlen) < 0 || oidlen == 0) return SMB3_EPROTO;
    if (is_oid(oid, oidlen, oid_ntlmssp, sizeof oid_ntlmssp)) out->offers_ntlmssp = 1;
  }
  out->mech_types = v;
  out->mech_types_len = n;
  return 0;
}

/* One [n] field of NegTokenInit (RFC 4178 4.2.1) / NegTokenInit2 (MS-SPNG 2.2.1). */
static int parse_init_field(uint8_t tag, const uint8_t *v, size_t n, struct spnego_init *out) {
  const uint8_t *x;
  size_t xn;
  switch (tag) {
  case ASN1_CONTEXT(0): /* mechTypes */
    return parse_mech_types(v, n, out);
  case ASN1_CONTEXT(1): /* reqFlags: ignored */
    return read_explicit(v, n, ASN1_BIT_STRING, &x, &xn);
  case ASN1_CONTEXT(2): /* mechToken */
    if (read_explicit(v, n, ASN1_OCTET_STRING, &out->mech_token, &out->mech_token_len) < 0)
      return SMB3_EPROTO;
    out->has_mech_token = 1;
    return 0;
  case ASN1_CONTEXT(3): /* mechListMIC (NegTokenInit) or negHints (NegTokenInit2): ignored */
    if (read_explicit(v, n, ASN1_OCTET_STRING, &x, &xn) == 0) return 0;
    return read_explicit(v, n, ASN1_SEQUENCE, &x, &xn);
  case ASN1_CONTEXT(4): /* mechListMIC (NegTokenInit2): ignored */
    return read_explicit(v, n, ASN1_OCTET_STRING, &x, &xn);
  default:
    return SMB3_EPROTO;
  }
}

/* The fields of a SEQUENCE must come in increasing tag order, each at most once (X.690 8.9). */
typedef int (*field_fn)(uint8_t tag, const uint8_t *v, size_t n, void *out);

static int parse_fields(const uint8_t *v, size_t n, field_fn fn, void *out) {
  struct asn1_rd r;
  int last = -1;
  asn1_rd_init(&r, v, n);
  while (!asn1_rd_done(&r)) {
    uint8_t tag;
    const uint8_t *fv;
    size_t fn_len;
    if (asn1_read_any(&r, &tag, &fv, &fn_len) < 0) return SMB3_EPROTO;
    if ((tag & 0xe0) != 0xa0 || (int)(tag & 0x1f) <= last) return SMB3_EPROTO;
    last = tag & 0x1f;
    if (fn(tag, fv, fn_len, out) < 0) return SMB3_EPROTO;
  }
  return 0;
}

static int init_field_cb(uint8_t tag, const uint8_t *v, size_t n, void *out) {
  return parse_init_field(tag, v, n, out);
}

/* Unwrap `outer_tag` { SEQUENCE { fields } } and require nothing after it. */
static int choice_sequence(struct asn1_rd *r, uint8_t choice_tag, const uint8_t **v, size_t *n) {
  const uint8_t *cv;
  size_t cn;
  if (read_tagged(r, choice_tag, &cv, &cn) < 0 || !asn1_rd_done(r)) return SMB3_EPROTO;
  return read_explicit(cv, cn, ASN1_SEQUENCE, v, n);
}

int spnego_decode_init(const uint8_t *p, size_t len, struct spnego_init *out) {
  struct asn1_rd r, app;
  const uint8_t *v;
  size_t n;
  memset(out, 0, sizeof *out);
  asn1_rd_init(&r, p, len);
  if (asn1_peek_tag(&r) == ASN1_APPLICATION(0)) { /* RFC 2743 3.1 framing */
    if (asn1_read(&r, ASN1_APPLICATION(0), &app) < 0 || !asn1_rd_done(&r)) return SMB3_EPROTO;
    if (read_tagged(&app, ASN1_OID, &v, &n) < 0 || !is_oid(v, n, oid_spnego, sizeof oid_spnego))
      return SMB3_EPROTO;
    r = app;
  }
  if (choice_sequence(&r, ASN1_CONTEXT(0), &v, &n) < 0) return SMB3_EPROTO;
  if (parse_fields(v, n, init_field_cb, out) < 0 || !out->mech_types) return SMB3_EPROTO;
  return 0;
}

/* One [n] field of NegTokenResp (RFC 4178 4.2.2). */
static int resp_field_cb(uint8_t tag, const uint8_t *v, size_t n, void *arg) {
  struct spnego_resp *out = arg;
  const uint8_t *x;
  size_t xn;
  switch (tag) {
  case ASN1_CONTEXT(0): /* negState ENUMERATED */
    if (read_explicit(v, n, ASN1_ENUMERATED, &x, &xn) < 0 || xn != 1 || x[0] > SPNEGO_REQUEST_MIC)
      return SMB3_EPROTO;
    out->neg_state = x[0];
    return 0;
  case ASN1_CONTEXT(1): /* supportedMech */
    if (read_explicit(v, n, ASN1_OID, &x, &xn) < 0 || xn == 0) return SMB3_EPROTO;
    out->has_supported_mech = 1;
    out->supported_mech_is_ntlmssp = is_oid(x, xn, oid_ntlmssp, sizeof oid_ntlmssp);
    return 0;
  case ASN1_CONTEXT(2): /* responseToken */
    out->has_response_token = 1;
    return read_explicit(v, n, ASN1_OCTET_STRING, &out->response_token, &out->response_token_len);
  case ASN1_CONTEXT(3): /* mechListMIC */
    out->has_mech_list_mic = 1;
    return read_explicit(v, n, ASN1_OCTET_STRING, &out->mech_list_mic, &out->mech_list_mic_len);
  default:
    return SMB3_EPROTO;
  }
}

int spnego_decode_resp(const uint8_t *p, size_t len, struct spnego_resp *out) {
  struct asn1_rd r;
  const uint8_t *v;
  size_t n;
  memset(out, 0, sizeof *out);
  out->neg_state = SPNEGO_NEGSTATE_ABSENT;
  asn1_rd_init(&r, p, len);
  if (choice_sequence(&r, ASN1_CONTEXT(1), &v, &n) < 0) return SMB3_EPROTO;
  return parse_fields(v, n, resp_field_cb, out);
}

/* ---- Encoding (back to front, see asn1.h) -------------------------------------------------- */

static int wr_finish(struct asn1_wr *w, uint8_t *buf, uint8_t **out, size_t *outlen) {
  if (w->err) {
    free(buf);
    return SMB3_EINVAL;
  }
  size_t n = asn1_wr_len(w);
  memmove(buf, asn1_wr_data(w), n);
  *out = buf;
  *outlen = n;
  return 0;
}

int spnego_encode_init(const uint8_t *mech_token, size_t len, uint8_t **out, size_t *outlen) {
  struct asn1_wr w;
  *out = NULL;
  *outlen = 0;
  if (len > ASN1_MAX_LEN - SPNEGO_OVERHEAD) return SMB3_EINVAL;
  uint8_t *buf = malloc(len + SPNEGO_OVERHEAD);
  if (!buf) return SMB3_ENOMEM;
  asn1_wr_init(&w, buf, len + SPNEGO_OVERHEAD);
  asn1_put_prim(&w, ASN1_OCTET_STRING, mech_token, len);
  asn1_put_wrap(&w, ASN1_CONTEXT(2), 0); /* mechToken */
  size_t m = asn1_wr_len(&w);
  asn1_put_bytes(&w, our_mech_types, sizeof our_mech_types);
  asn1_put_wrap(&w, ASN1_CONTEXT(0), m); /* mechTypes */
  asn1_put_wrap(&w, ASN1_SEQUENCE, 0);   /* NegTokenInit */
  asn1_put_wrap(&w, ASN1_CONTEXT(0), 0); /* NegotiationToken.negTokenInit */
  asn1_put_prim(&w, ASN1_OID, oid_spnego, sizeof oid_spnego);
  asn1_put_wrap(&w, ASN1_APPLICATION(0), 0); /* InitialContextToken, RFC 2743 3.1 */
  return wr_finish(&w, buf, out, outlen);
}

/* Prepend [tag] { prim_tag val }. */
static void put_explicit(struct asn1_wr *w, uint8_t tag, uint8_t prim_tag, const void *val, size_t n) {
  size_t m = asn1_wr_len(w);
  asn1_put_prim(w, prim_tag, val, n);
  asn1_put_wrap(w, tag, m);
}

int spnego_encode_resp(int neg_state, int with_mech, const uint8_t *tok, size_t toklen, const uint8_t *mic,
                       size_t miclen, uint8_t **out, size_t *outlen) {
  struct asn1_wr w;
  *out = NULL;
  *outlen = 0;
  if (!tok) toklen = 0;
  if (!mic) miclen = 0;
  if (toklen > ASN1_MAX_LEN / 2 || miclen > ASN1_MAX_LEN / 2 - SPNEGO_OVERHEAD) return SMB3_EINVAL;
  size_t cap = toklen + miclen + SPNEGO_OVERHEAD;
  uint8_t *buf = malloc(cap);
  if (!buf) return SMB3_ENOMEM;
  asn1_wr_init(&w, buf, cap);
  if (mic) put_explicit(&w, ASN1_CONTEXT(3), ASN1_OCTET_STRING, mic, miclen);
  if (tok) put_explicit(&w, ASN1_CONTEXT(2), ASN1_OCTET_STRING, tok, toklen);
  if (with_mech) put_explicit(&w, ASN1_CONTEXT(1), ASN1_OID, oid_ntlmssp, sizeof oid_ntlmssp);
  if (neg_state >= 0) {
    uint8_t st = (uint8_t)neg_state;
    put_explicit(&w, ASN1_CONTEXT(0), ASN1_ENUMERATED, &st, 1);
  }
  asn1_put_wrap(&w, ASN1_SEQUENCE, 0);
  asn1_put_wrap(&w, ASN1_CONTEXT(1), 0); /* NegotiationToken.negTokenResp */
  return wr_finish(&w, buf, out, outlen);
}

/* ---- smb3_auth (auth.h) ---------------------------------------------------------------------- */

enum auth_state { AUTH_START, AUTH_NEGOTIATE_SENT, AUTH_AUTHENTICATE_SENT, AUTH_DONE, AUTH_FAILED };

struct smb3_auth {
  struct ntlmssp ntlm;
  enum auth_state state;
};

struct ntlmssp *spnego_auth_ntlmssp(struct smb3_auth *a) {
  return &a->ntlm;
}

struct smb3_auth *smb3_auth_new(const char *user, const char *password, const char *domain,
                                const char *workstation) {
  struct smb3_auth *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (ntlmssp_init(&a->ntlm, user, password, domain, workstation) < 0) {
    free(a);
    return NULL;
  }
  a->state = AUTH_START;
  return a;
}

void smb3_auth_free(struct smb3_auth *a) {
  if (!a) return;
  ntlmssp_clear(&a->ntlm);
  free(a);
}

/* Round 1: an optional NegTokenInit2 hint from the NEGOTIATE response is only sanity-checked
 * (MS-SMB2 3.2.5.2 lets the client ignore it); we answer with NTLMSSP NEGOTIATE. */
static int step_negotiate(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **out,
                          size_t *outlen) {
  struct spnego_init hint;
  uint8_t *neg = NULL;
  size_t neglen = 0;
  if (inlen && spnego_decode_init(in, inlen, &hint) < 0) return SMB3_EPROTO;
  int rc = ntlmssp_negotiate(&a->ntlm, &neg, &neglen);
  if (rc == 0) rc = spnego_encode_init(neg, neglen, out, outlen);
  free(neg);
  if (rc == 0) a->state = AUTH_NEGOTIATE_SENT;
  return rc;
}

/* Round 2: NegTokenResp with the CHALLENGE -> NegTokenResp with AUTHENTICATE + mechListMIC. */
static int step_authenticate(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **out,
                             size_t *outlen) {
  struct spnego_resp resp;
  uint8_t *auth = NULL, mic[16];
  size_t authlen = 0, mtlen;
  if (spnego_decode_resp(in, inlen, &resp) < 0 || !resp.has_response_token) return SMB3_EPROTO;
  if (resp.neg_state != SPNEGO_NEGSTATE_ABSENT && resp.neg_state != SPNEGO_ACCEPT_INCOMPLETE &&
      resp.neg_state != SPNEGO_REQUEST_MIC)
    return SMB3_EPROTO;
  if (resp.has_supported_mech && !resp.supported_mech_is_ntlmssp) return SMB3_EPROTO;
  int rc = ntlmssp_authenticate(&a->ntlm, resp.response_token, resp.response_token_len, &auth, &authlen);
  const uint8_t *mt = spnego_our_mech_types(&mtlen);
  int with_mic = rc == 0 && !a->ntlm.anonymous;
  if (with_mic) rc = ntlmssp_sign_first(&a->ntlm, mt, mtlen, mic);
  if (rc == 0)
    rc = spnego_encode_resp(SPNEGO_NEGSTATE_ABSENT, 0, auth, authlen, with_mic ? mic : NULL, 16, out, outlen);
  free(auth);
  if (rc == 0) a->state = AUTH_AUTHENTICATE_SENT;
  return rc;
}

int smb3_auth_step(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen) {
  if (!a || !out || !outlen || (!in && inlen)) return SMB3_EINVAL;
  *out = NULL;
  *outlen = 0;
  int rc;
  switch (a->state) {
  case AUTH_START:
    rc = step_negotiate(a, in, inlen, out, outlen);
    break;
  case AUTH_NEGOTIATE_SENT:
    rc = step_authenticate(a, in, inlen, out, outlen);
    break;
  default: /* NTLMSSP has exactly two client legs; a third request is a protocol error */
    rc = SMB3_EPROTO;
    break;
  }
  if (rc < 0) a->state = AUTH_FAILED;
  return rc;
}

/* The server's last token: negState must be accept-completed (or absent), and its mechListMIC,
 * if any, must be the server-to-client NTLMSSP signature of our mechTypes (RFC 4178 5). An
 * anonymous logon has no key, so nothing can be verified and a MIC is ignored. */
static int finish_check(struct smb3_auth *a, const uint8_t *in, size_t inlen) {
  struct spnego_resp resp;
  size_t mtlen;
  if (inlen == 0) return 0;
  if (spnego_decode_resp(in, inlen, &resp) < 0) return SMB3_EPROTO;
  if (resp.neg_state != SPNEGO_NEGSTATE_ABSENT && resp.neg_state != SPNEGO_ACCEPT_COMPLETED)
    return SMB3_EPROTO;
  if (resp.has_supported_mech && !resp.supported_mech_is_ntlmssp) return SMB3_EPROTO;
  if (!resp.has_mech_list_mic || a->ntlm.anonymous) return 0;
  const uint8_t *mt = spnego_our_mech_types(&mtlen);
  return ntlmssp_verify_first(&a->ntlm, mt, mtlen, resp.mech_list_mic, resp.mech_list_mic_len);
}

int smb3_auth_finish(struct smb3_auth *a, const uint8_t *in, size_t inlen) {
  if (!a || (!in && inlen)) return SMB3_EINVAL;
  if (a->state != AUTH_AUTHENTICATE_SENT) {
    a->state = AUTH_FAILED;
    return SMB3_EPROTO;
  }
  int rc = finish_check(a, in, inlen);
  a->state = rc < 0 ? AUTH_FAILED : AUTH_DONE;
  return rc;
}

/* The key exists once AUTHENTICATE is built: the caller needs it to check the signature of the
 * final SESSION_SETUP response (MS-SMB2 3.2.5.3.1) before it calls smb3_auth_finish. A failed
 * step or finish makes it unavailable (AUTH_FAILED). */
int smb3_auth_session_key(const struct smb3_auth *a, uint8_t key[16]) {
  if (!a || !key || (a->state != AUTH_DONE && a->state != AUTH_AUTHENTICATE_SENT) || !a->ntlm.have_key)
    return SMB3_EINVAL;
  memcpy(key, a->ntlm.session_key, 16);
  return 0;
}

int smb3_auth_is_anonymous(const struct smb3_auth *a) {
  return a && a->ntlm.anonymous;
}
