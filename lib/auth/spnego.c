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
 *
 * Kerberos (sec=krb5, or by default when the server offers it and the credential cache holds a
 * ticket): NegTokenInit { mechTypes {krb5}, mechToken AP-REQ from GSSAPI (gss.c) }; the server
 * answers accept-completed with the AP-REP, which completes the GSS context (mutual
 * authentication). Only then is the session key known, so the caller verifies the signature of
 * the final SESSION_SETUP response after smb3_auth_finish (MS-SMB2 3.2.5.3).
 */
#include "auth/spnego.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/asn1.h"
#include "auth/auth.h"
#include "auth/gss.h"
#include "auth/ntlmssp.h"
#include "smb3/smb3_errors.h"

/* OID contents (X.690 8.19): 1.3.6.1.5.5.2 and 1.3.6.1.4.1.311.2.2.10. */
static const uint8_t oid_spnego[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
static const uint8_t oid_ntlmssp[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
/* 1.2.840.113554.1.2.2 (RFC 1964) and Microsoft's 1.2.840.48018.1.2.2 (MS-SPNG 2.2). */
static const uint8_t oid_krb5[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02};
static const uint8_t oid_ms_krb5[] = {0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02};
/* MechTypeList holding only krb5. */
static const uint8_t krb5_mech_types[] = {0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48,
                                          0x86, 0xf7, 0x12, 0x01, 0x02, 0x02};
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

static int is_krb5_oid(const uint8_t *v, size_t n) {
  return is_oid(v, n, oid_krb5, sizeof oid_krb5) || is_oid(v, n, oid_ms_krb5, sizeof oid_ms_krb5);
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
    if (is_krb5_oid(oid, oidlen)) out->offers_krb5 = 1;
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
    out->supported_mech_is_krb5 = is_krb5_oid(x, xn);
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

static int encode_init(const uint8_t *types, size_t typeslen, const uint8_t *mech_token, size_t len,
                       uint8_t **out, size_t *outlen) {
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
  asn1_put_bytes(&w, types, typeslen);
  asn1_put_wrap(&w, ASN1_CONTEXT(0), m); /* mechTypes */
  asn1_put_wrap(&w, ASN1_SEQUENCE, 0);   /* NegTokenInit */
  asn1_put_wrap(&w, ASN1_CONTEXT(0), 0); /* NegotiationToken.negTokenInit */
  asn1_put_prim(&w, ASN1_OID, oid_spnego, sizeof oid_spnego);
  asn1_put_wrap(&w, ASN1_APPLICATION(0), 0); /* InitialContextToken, RFC 2743 3.1 */
  return wr_finish(&w, buf, out, outlen);
}

int spnego_encode_init(const uint8_t *mech_token, size_t len, uint8_t **out, size_t *outlen) {
  return encode_init(our_mech_types, sizeof our_mech_types, mech_token, len, out, outlen);
}

int spnego_encode_init_krb5(const uint8_t *mech_token, size_t len, uint8_t **out, size_t *outlen) {
  return encode_init(krb5_mech_types, sizeof krb5_mech_types, mech_token, len, out, outlen);
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

enum auth_state {
  AUTH_START,
  AUTH_NEGOTIATE_SENT,
  AUTH_AUTHENTICATE_SENT,
  AUTH_KRB5_SENT,
  AUTH_DONE,
  AUTH_FAILED
};

struct smb3_auth {
  struct ntlmssp ntlm;
  enum auth_state state;
  int sec;     /* SMB3_SEC_* asked for */
  int use_krb; /* the mechanism chosen: Kerberos */
  struct gss_krb5 *krb;
  int hint_lacks_ntlm; /* the NEGOTIATE hint listed mechanisms, NTLMSSP not among them */
  char *host, *ccache, *keytab, *principal;
  char err[512];
};

struct ntlmssp *spnego_auth_ntlmssp(struct smb3_auth *a) {
  return &a->ntlm;
}

static int dup_opt(char **dst, const char *s) {
  if (!s) return 0;
  *dst = strdup(s);
  return *dst ? 0 : SMB3_ENOMEM;
}

struct smb3_auth *smb3_auth_new_sec(const char *user, const char *password, const char *domain,
                                    const char *workstation, const struct smb3_auth_sec *sec) {
  struct smb3_auth *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (ntlmssp_init(&a->ntlm, user, password, domain, workstation) < 0) {
    free(a);
    return NULL;
  }
  a->state = AUTH_START;
  if (sec) {
    a->sec = sec->sec;
    if (dup_opt(&a->host, sec->host) || dup_opt(&a->ccache, sec->ccache) ||
        dup_opt(&a->keytab, sec->keytab) || (sec->keytab && dup_opt(&a->principal, user))) {
      smb3_auth_free(a);
      return NULL;
    }
  }
  return a;
}

struct smb3_auth *smb3_auth_new(const char *user, const char *password, const char *domain,
                                const char *workstation) {
  struct smb3_auth_sec sec = {.sec = SMB3_SEC_NTLMSSP};
  return smb3_auth_new_sec(user, password, domain, workstation, &sec);
}

void smb3_auth_free(struct smb3_auth *a) {
  if (!a) return;
  ntlmssp_clear(&a->ntlm);
  gss_krb5_free(a->krb);
  free(a->host);
  free(a->ccache);
  free(a->keytab);
  free(a->principal);
  free(a);
}

const char *smb3_auth_error(const struct smb3_auth *a) {
  return a ? a->err : "";
}

int smb3_auth_server_lacks_ntlm(const struct smb3_auth *a) {
  return a && a->hint_lacks_ntlm;
}

int smb3_auth_is_kerberos(const struct smb3_auth *a) {
  return a && a->use_krb;
}

static void krb_params(const struct smb3_auth *a, struct gss_krb5_params *p) {
  *p = (struct gss_krb5_params){
      .host = a->host, .ccache = a->ccache, .keytab = a->keytab, .principal = a->principal};
}

/* Round 1 with Kerberos: the AP-REQ in a NegTokenInit. */
static int step_krb5_start(struct smb3_auth *a, uint8_t **out, size_t *outlen) {
  struct gss_krb5_params p;
  uint8_t *tok = NULL;
  size_t toklen = 0;
  krb_params(a, &p);
  int rc = gss_krb5_start(&p, &a->krb, &tok, &toklen, a->err, sizeof a->err);
  if (rc == 0) rc = spnego_encode_init_krb5(tok, toklen, out, outlen);
  free(tok);
  if (rc == 0) a->state = AUTH_KRB5_SENT;
  return rc;
}

/* Kerberos by default (SMB3_SEC_AUTO) only when the server lists it in its NEGOTIATE hint and the
 * credential cache holds a live ticket; otherwise NTLMSSP as before. */
static int want_krb5(struct smb3_auth *a, const struct spnego_init *hint, int have_hint) {
  struct gss_krb5_params p;
  if (a->sec == SMB3_SEC_KRB5) return 1;
  if (a->sec != SMB3_SEC_AUTO || !have_hint || !hint->offers_krb5) return 0;
  krb_params(a, &p);
  return gss_krb5_have_ticket(&p);
}

/* Round 1: an optional NegTokenInit2 hint from the NEGOTIATE response is only sanity-checked
 * (MS-SMB2 3.2.5.2 lets the client ignore it) and tells whether Kerberos is offered; with NTLM
 * we answer with NTLMSSP NEGOTIATE. */
static int step_negotiate(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **out,
                          size_t *outlen) {
  struct spnego_init hint;
  uint8_t *neg = NULL;
  size_t neglen = 0;
  memset(&hint, 0, sizeof hint);
  if (inlen && spnego_decode_init(in, inlen, &hint) < 0) return SMB3_EPROTO;
  a->hint_lacks_ntlm = inlen && !hint.offers_ntlmssp;
  if (want_krb5(a, &hint, inlen > 0)) {
    a->use_krb = 1;
    int rc = step_krb5_start(a, out, outlen);
    if (rc == 0 || a->sec == SMB3_SEC_KRB5 || rc == SMB3_ENOMEM) return rc;
    /* SMB3_SEC_AUTO: the ticket did not get us a service ticket; NTLM may still work. */
    a->use_krb = 0;
    a->err[0] = 0;
  }
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

/* A server token on the Kerberos path: negState must not be reject, the mechanism must be ours,
 * and its responseToken goes to GSSAPI. */
static int krb5_feed(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **tok, size_t *toklen,
                     struct spnego_resp *resp) {
  int complete = 0;
  *tok = NULL;
  *toklen = 0;
  if (spnego_decode_resp(in, inlen, resp) < 0) return SMB3_EPROTO;
  if (resp->neg_state == SPNEGO_REJECT) {
    snprintf(a->err, sizeof a->err, "the server rejected Kerberos for cifs/%s", a->host ? a->host : "?");
    return SMB3_ELOGON;
  }
  if (resp->has_supported_mech && !resp->supported_mech_is_krb5) {
    snprintf(a->err, sizeof a->err, "the server chose a mechanism other than Kerberos");
    return SMB3_EPROTO;
  }
  if (!resp->has_response_token) return 0;
  return gss_krb5_step(a->krb, resp->response_token, resp->response_token_len, tok, toklen, &complete, a->err,
                       sizeof a->err);
}

/* A further Kerberos round (MORE_PROCESSING_REQUIRED after the AP-REQ; rare). */
static int step_krb5_more(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **out,
                          size_t *outlen) {
  struct spnego_resp resp;
  uint8_t *tok;
  size_t toklen;
  int rc = krb5_feed(a, in, inlen, &tok, &toklen, &resp);
  if (rc == 0) rc = spnego_encode_resp(SPNEGO_NEGSTATE_ABSENT, 0, tok, toklen, NULL, 0, out, outlen);
  free(tok);
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
  case AUTH_KRB5_SENT:
    rc = step_krb5_more(a, in, inlen, out, outlen);
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

/* Kerberos: the final token carries the AP-REP; the context must complete with it (we asked for
 * mutual authentication). A mechListMIC, if sent, is the GSS MIC over our mechTypes. */
static int finish_krb5(struct smb3_auth *a, const uint8_t *in, size_t inlen) {
  struct spnego_resp resp;
  uint8_t *tok = NULL;
  size_t toklen = 0;
  int rc = inlen ? krb5_feed(a, in, inlen, &tok, &toklen, &resp) : 0;
  free(tok);
  if (rc) return rc;
  if (inlen && resp.neg_state != SPNEGO_NEGSTATE_ABSENT && resp.neg_state != SPNEGO_ACCEPT_COMPLETED)
    return SMB3_EPROTO;
  uint8_t key[16];
  if (gss_krb5_session_key(a->krb, key) < 0) {
    snprintf(a->err, sizeof a->err,
             "Kerberos: %s accepted the logon without authenticating itself (no AP-REP): refused",
             a->host ? a->host : "the server");
    return SMB3_ESIGNATURE;
  }
  memset(key, 0, sizeof key);
  if (inlen && resp.has_mech_list_mic &&
      gss_krb5_verify_mic(a->krb, krb5_mech_types, sizeof krb5_mech_types, resp.mech_list_mic,
                          resp.mech_list_mic_len) < 0) {
    snprintf(a->err, sizeof a->err, "Kerberos: the server's SPNEGO mechListMIC does not verify");
    return SMB3_ESIGNATURE;
  }
  return 0;
}

int smb3_auth_finish(struct smb3_auth *a, const uint8_t *in, size_t inlen) {
  if (!a || (!in && inlen)) return SMB3_EINVAL;
  if (a->state != AUTH_AUTHENTICATE_SENT && a->state != AUTH_KRB5_SENT) {
    a->state = AUTH_FAILED;
    return SMB3_EPROTO;
  }
  int rc = a->state == AUTH_KRB5_SENT ? finish_krb5(a, in, inlen) : finish_check(a, in, inlen);
  a->state = rc < 0 ? AUTH_FAILED : AUTH_DONE;
  return rc;
}

/* NTLM: the key exists once AUTHENTICATE is built: the caller needs it to check the signature of
 * the final SESSION_SETUP response (MS-SMB2 3.2.5.3.1) before it calls smb3_auth_finish.
 * Kerberos: only once smb3_auth_finish processed the AP-REP (the acceptor's subkey). A failed
 * step or finish makes it unavailable (AUTH_FAILED). */
int smb3_auth_session_key(const struct smb3_auth *a, uint8_t key[16]) {
  if (!a || !key) return SMB3_EINVAL;
  if (a->use_krb) return a->state == AUTH_DONE ? gss_krb5_session_key(a->krb, key) : SMB3_EINVAL;
  if ((a->state != AUTH_DONE && a->state != AUTH_AUTHENTICATE_SENT) || !a->ntlm.have_key) return SMB3_EINVAL;
  memcpy(key, a->ntlm.session_key, 16);
  return 0;
}

int smb3_auth_is_anonymous(const struct smb3_auth *a) {
  return a && !a->use_krb && a->ntlm.anonymous;
}
