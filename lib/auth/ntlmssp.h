/* ntlmssp.h - NTLMSSP client (MS-NLMP), NTLMv2 only, with extended session security, key
 * exchange and the AUTHENTICATE MIC. Internal to lib/auth; exposed for the unit tests and for
 * spnego.c, which wraps the messages in SPNEGO (auth.h is the public entry point).
 */
#ifndef SMB3_NTLMSSP_H
#define SMB3_NTLMSSP_H

#include <stddef.h>
#include <stdint.h>

/* NegotiateFlags, MS-NLMP 2.2.2.5. */
#define NTLMSSP_NEGOTIATE_UNICODE 0x00000001u
#define NTLMSSP_NEGOTIATE_OEM 0x00000002u
#define NTLMSSP_REQUEST_TARGET 0x00000004u
#define NTLMSSP_NEGOTIATE_SIGN 0x00000010u
#define NTLMSSP_NEGOTIATE_SEAL 0x00000020u
#define NTLMSSP_NEGOTIATE_LM_KEY 0x00000080u
#define NTLMSSP_NEGOTIATE_NTLM 0x00000200u
#define NTLMSSP_NEGOTIATE_ANONYMOUS 0x00000800u
#define NTLMSSP_NEGOTIATE_ALWAYS_SIGN 0x00008000u
#define NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY 0x00080000u
#define NTLMSSP_NEGOTIATE_TARGET_INFO 0x00800000u
#define NTLMSSP_NEGOTIATE_VERSION 0x02000000u
#define NTLMSSP_NEGOTIATE_128 0x20000000u
#define NTLMSSP_NEGOTIATE_KEY_EXCH 0x40000000u
#define NTLMSSP_NEGOTIATE_56 0x80000000u

/* What we ask for in NEGOTIATE (and the most we accept in AUTHENTICATE). */
#define NTLMSSP_CLIENT_FLAGS                                                                                 \
  (NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN | NTLMSSP_NEGOTIATE_SEAL |    \
   NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN | NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |     \
   NTLMSSP_NEGOTIATE_TARGET_INFO | NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 |                       \
   NTLMSSP_NEGOTIATE_KEY_EXCH | NTLMSSP_NEGOTIATE_56)

/* AV_PAIR AvId values, MS-NLMP 2.2.2.1. */
enum {
  MSV_AV_EOL = 0,
  MSV_AV_NB_COMPUTER_NAME = 1,
  MSV_AV_NB_DOMAIN_NAME = 2,
  MSV_AV_DNS_COMPUTER_NAME = 3,
  MSV_AV_DNS_DOMAIN_NAME = 4,
  MSV_AV_DNS_TREE_NAME = 5,
  MSV_AV_FLAGS = 6,
  MSV_AV_TIMESTAMP = 7,
  MSV_AV_SINGLE_HOST = 8,
  MSV_AV_TARGET_NAME = 9,
  MSV_AV_CHANNEL_BINDINGS = 10,
};
#define MSV_AV_FLAG_MIC_PRESENT 0x00000002u

#define NTLMSSP_NEGOTIATE_LEN 40   /* 2.2.1.1 with Version */
#define NTLMSSP_CHALLENGE_MIN 48   /* 2.2.1.2 up to and including TargetInfoFields */
#define NTLMSSP_AUTH_MIC_OFFSET 72 /* 2.2.1.3: MIC follows the 8-byte Version */
#define NTLMSSP_AUTH_HEADER_LEN 88 /* payload starts after the MIC */
#define NTLMSSP_MAX_MESSAGE 65535u /* we never accept or build a bigger message */

/* A decoded CHALLENGE_MESSAGE (2.2.1.2). Pointers refer into the message buffer. */
struct ntlmssp_challenge {
  uint32_t flags;
  uint8_t server_challenge[8];
  const uint8_t *target_name; /* UTF-16LE, not validated as text */
  size_t target_name_len;
  const uint8_t *target_info; /* validated AV_PAIR list up to and including MsvAvEOL */
  size_t target_info_len;     /* 0 if the server sent none */
  int has_timestamp;          /* MsvAvTimestamp present */
  uint64_t timestamp;
};

/* Decode and validate a CHALLENGE_MESSAGE. Returns 0 or SMB3_EPROTO. */
int ntlmssp_parse_challenge(const uint8_t *msg, size_t len, struct ntlmssp_challenge *c);

/* Validate an AV_PAIR list (2.2.2.1): pairs must lie inside len and end with MsvAvEOL. Sets
 * *used to the length up to and including the EOL pair (bytes after it are ignored). Returns 0
 * or SMB3_EPROTO. */
int ntlmssp_av_validate(const uint8_t *ti, size_t len, size_t *used);

/* Find AvId id in a validated list. Returns 1 and sets *val and *vlen if found, 0 if absent. */
int ntlmssp_av_find(const uint8_t *ti, size_t len, uint16_t id, const uint8_t **val, size_t *vlen);

/* --- NTLMv2 computations (MS-NLMP 3.3.2) ------------------------------------------------- */

/* NTOWFv2 = HMAC_MD5(MD4(UNICODE(password)), UNICODE(UPPER(user) + domain)); UTF-8 inputs. */
int ntlmssp_ntowfv2(const char *user, const char *password, const char *domain, uint8_t key[16]);

/* temp = 0x01 0x01 Z(6) time client_challenge Z(4) av_pairs Z(4). *out malloc'd. */
int ntlmssp_make_temp(uint64_t time, const uint8_t client_challenge[8], const uint8_t *av, size_t avlen,
                      uint8_t **out, size_t *outlen);

/* NTProofStr = HMAC_MD5(ResponseKeyNT, ServerChallenge + temp). */
int ntlmssp_nt_proof(const uint8_t key[16], const uint8_t server_challenge[8], const uint8_t *temp,
                     size_t templen, uint8_t proof[16]);

/* LMv2 response = HMAC_MD5(ResponseKeyLM, ServerChallenge + ClientChallenge) + ClientChallenge. */
int ntlmssp_lmv2_response(const uint8_t key[16], const uint8_t server_challenge[8],
                          const uint8_t client_challenge[8], uint8_t out[24]);

/* SessionBaseKey = HMAC_MD5(ResponseKeyNT, NTProofStr) (also the KeyExchangeKey for NTLMv2). */
int ntlmssp_session_base_key(const uint8_t key[16], const uint8_t proof[16], uint8_t out[16]);

/* SIGNKEY / SEALKEY with extended session security (3.4.5.2, 3.4.5.3). server_to_client
 * selects the "server-to-client" magic constant. */
int ntlmssp_sign_key(const uint8_t exported_session_key[16], int server_to_client, uint8_t out[16]);
int ntlmssp_seal_key(const uint8_t exported_session_key[16], uint32_t flags, int server_to_client,
                     uint8_t out[16]);

/* HMAC_MD5(SigningKey, ConcatenationOf(SeqNum, Message))[0..7], before any sealing (3.4.4.2). */
int ntlmssp_checksum(const uint8_t sign_key[16], uint32_t seq, const uint8_t *msg, size_t len,
                     uint8_t out[8]);

/* The 16-byte NTLMSSP_MESSAGE_SIGNATURE (2.2.2.9.2) for the first use of a sealing handle:
 * Version 1, Checksum (RC4-encrypted with seal_key if KEY_EXCH is in flags), SeqNum. */
int ntlmssp_make_signature(const uint8_t sign_key[16], const uint8_t seal_key[16], uint32_t flags,
                           uint32_t seq, const uint8_t *msg, size_t len, uint8_t sig[16]);

/* --- Client context ---------------------------------------------------------------------- */

struct ntlmssp {
  char *user, *password, *domain, *workstation; /* UTF-8 copies ("" if not given) */
  int anonymous;
  uint8_t *negotiate; /* our NEGOTIATE_MESSAGE, kept for the MIC */
  size_t negotiate_len;
  uint32_t flags;          /* NegotiateFlags sent in AUTHENTICATE */
  int have_key;            /* exported session key and the keys below are valid */
  uint8_t session_key[16]; /* ExportedSessionKey */
  uint8_t client_sign_key[16], server_sign_key[16];
  uint8_t client_seal_key[16], server_seal_key[16];
  /* Test hook: fixed client challenge, random session key and time instead of random/now. */
  int fixed;
  uint8_t fixed_client_challenge[8];
  uint8_t fixed_session_key[16];
  uint64_t fixed_time;
};

/* Copies the strings; user NULL or "" means anonymous. Returns 0 or SMB3_ENOMEM. */
int ntlmssp_init(struct ntlmssp *n, const char *user, const char *password, const char *domain,
                 const char *workstation);
/* Frees and wipes everything (the struct itself is not freed). */
void ntlmssp_clear(struct ntlmssp *n);

/* Build NEGOTIATE_MESSAGE (2.2.1.1); a copy is kept in n. *out malloc'd. */
int ntlmssp_negotiate(struct ntlmssp *n, uint8_t **out, size_t *outlen);

/* Consume the server's CHALLENGE_MESSAGE and build AUTHENTICATE_MESSAGE (2.2.1.3, 3.1.5.1.2).
 * Must follow ntlmssp_negotiate. *out malloc'd. Returns 0, SMB3_EPROTO, SMB3_EINVAL (bad
 * state or credentials not convertible to UTF-16), SMB3_ENOMEM, or a crypto error. */
int ntlmssp_authenticate(struct ntlmssp *n, const uint8_t *chal, size_t chal_len, uint8_t **out,
                         size_t *outlen);

/* Sign msg with our (client) keys / verify a server signature (3.4.4.2), as used for the SPNEGO
 * mechListMIC: each direction's first signature (seq 0, fresh RC4 handle). Verify returns 0 or
 * SMB3_ESIGNATURE. Both return SMB3_EINVAL if there is no session key. */
int ntlmssp_sign_first(const struct ntlmssp *n, const uint8_t *msg, size_t len, uint8_t sig[16]);
int ntlmssp_verify_first(const struct ntlmssp *n, const uint8_t *msg, size_t len, const uint8_t *sig,
                         size_t siglen);

#endif
