/* spnego.h - SPNEGO tokens (RFC 4178, MS-SPNG) carrying NTLMSSP. Internal to lib/auth; the
 * public entry point is auth.h. Decoders are bounded (asn1.h) and return SMB3_EPROTO on any
 * malformed input; pointers in decoded structs refer into the caller's buffer.
 */
#ifndef SMB3_SPNEGO_H
#define SMB3_SPNEGO_H

#include <stddef.h>
#include <stdint.h>

struct smb3_auth;
struct ntlmssp;

/* negState values, RFC 4178 4.2.2. */
enum {
  SPNEGO_ACCEPT_COMPLETED = 0,
  SPNEGO_ACCEPT_INCOMPLETE = 1,
  SPNEGO_REJECT = 2,
  SPNEGO_REQUEST_MIC = 3,
  SPNEGO_NEGSTATE_ABSENT = -1,
};

/* A NegTokenInit (RFC 4178 4.2.1) or NegTokenInit2 (MS-SPNG 2.2.1), e.g. the hint in the
 * SMB2 NEGOTIATE response. */
struct spnego_init {
  const uint8_t *mech_types; /* whole DER MechTypeList (SEQUENCE OF OID), as hashed by the MIC */
  size_t mech_types_len;
  int offers_ntlmssp; /* NTLMSSP is among mechTypes */
  int offers_krb5;    /* Kerberos 5 (either OID) is among mechTypes */
  int has_mech_token;
  const uint8_t *mech_token;
  size_t mech_token_len;
};

/* A NegTokenResp (RFC 4178 4.2.2). */
struct spnego_resp {
  int neg_state; /* SPNEGO_* or SPNEGO_NEGSTATE_ABSENT */
  int has_supported_mech;
  int supported_mech_is_ntlmssp;
  int supported_mech_is_krb5;
  int has_response_token;
  const uint8_t *response_token;
  size_t response_token_len;
  int has_mech_list_mic;
  const uint8_t *mech_list_mic;
  size_t mech_list_mic_len;
};

/* Decode an InitialContextToken (RFC 2743 3.1: [APPLICATION 0] { SPNEGO OID, NegTokenInit })
 * or a bare NegotiationToken [0] NegTokenInit. Returns 0 or SMB3_EPROTO. */
int spnego_decode_init(const uint8_t *p, size_t len, struct spnego_init *out);

/* Decode a NegotiationToken [1] NegTokenResp. Returns 0 or SMB3_EPROTO. */
int spnego_decode_resp(const uint8_t *p, size_t len, struct spnego_resp *out);

/* The DER MechTypeList we send: SEQUENCE { NTLMSSP OID 1.3.6.1.4.1.311.2.2.10 }. */
const uint8_t *spnego_our_mech_types(size_t *len);

/* Our first token: InitialContextToken with NegTokenInit { mechTypes, mechToken }.
 * *out malloc'd. Returns 0, SMB3_EINVAL (token too big) or SMB3_ENOMEM. */
int spnego_encode_init(const uint8_t *mech_token, size_t len, uint8_t **out, size_t *outlen);

/* The same with mechTypes {krb5} around a GSSAPI krb5 token (the AP-REQ). */
int spnego_encode_init_krb5(const uint8_t *mech_token, size_t len, uint8_t **out, size_t *outlen);

/* NegTokenResp { negState (omitted if SPNEGO_NEGSTATE_ABSENT), supportedMech NTLMSSP if
 * with_mech, responseToken if tok != NULL, mechListMIC if mic != NULL }. *out malloc'd. */
int spnego_encode_resp(int neg_state, int with_mech, const uint8_t *tok, size_t toklen, const uint8_t *mic,
                       size_t miclen, uint8_t **out, size_t *outlen);

/* Test hook: the NTLMSSP context inside an auth object (for fixing its random values). */
struct ntlmssp *spnego_auth_ntlmssp(struct smb3_auth *a);

#endif
