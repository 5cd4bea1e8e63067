/* auth.h - NTLMSSP (NTLMv2, MS-NLMP) wrapped in SPNEGO (MS-SPNG / RFC 4178) for SMB2 SESSION_SETUP.
 *
 * Use: smb3_auth_new(); for each SESSION_SETUP round, smb3_auth_step() with the server's
 * security buffer (NULL/0 first, or the NEGOTIATE response's buffer) -> token to send. When the
 * server answers STATUS_SUCCESS, call smb3_auth_finish() with its final token (may be empty) to
 * verify the mechListMIC if one was sent. smb3_auth_session_key() then gives the 16-byte session
 * key for SMB signing/encryption key derivation.
 */
#ifndef SMB3_AUTH_H
#define SMB3_AUTH_H

#include <stddef.h>
#include <stdint.h>

struct smb3_auth;

/* user == NULL or "" -> anonymous (NTLMSSP anonymous: empty LM/NT responses). Strings are
 * UTF-8 and copied. workstation may be NULL. Returns NULL on out of memory. */
struct smb3_auth *smb3_auth_new(const char *user, const char *password, const char *domain,
                                const char *workstation);
void smb3_auth_free(struct smb3_auth *a);

/* Which mechanism (the sec= option). */
enum { SMB3_SEC_AUTO = 0, SMB3_SEC_NTLMSSP = 1, SMB3_SEC_KRB5 = 2 };

/* Kerberos settings; strings copied. host: the server's name (the target is cifs@host). ccache:
 * NULL for KRB5CCNAME / the default. keytab: get tickets from it for `user` (the principal). */
struct smb3_auth_sec {
  int sec; /* SMB3_SEC_AUTO: Kerberos when the server offers it and the cache has a ticket */
  const char *host, *ccache, *keytab;
};

/* smb3_auth_new with a choice of mechanism. smb3_auth_new is this with SMB3_SEC_NTLMSSP. */
struct smb3_auth *smb3_auth_new_sec(const char *user, const char *password, const char *domain,
                                    const char *workstation, const struct smb3_auth_sec *sec);

/* The one-line reason of the last failure, "" if there is none (then the return code says it).
 * Lives in a. */
const char *smb3_auth_error(const struct smb3_auth *a);

/* True once the first step chose Kerberos. Its session key is only known after
 * smb3_auth_finish (the server's AP-REP): verify the final response's signature then. */
int smb3_auth_is_kerberos(const struct smb3_auth *a);

/* True when the server's NEGOTIATE hint listed its mechanisms without NTLMSSP. */
int smb3_auth_server_lacks_ntlm(const struct smb3_auth *a);

/* One round. in/inlen: the server's SPNEGO token (NULL/0 for the first call). On success *out is
 * malloc'd (caller frees) with *outlen bytes to put in the SESSION_SETUP security buffer.
 * Returns 0, SMB3_EPROTO for a malformed/unsupported server token, SMB3_ENOMEM. */
int smb3_auth_step(struct smb3_auth *a, const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen);

/* Final server token after STATUS_SUCCESS (may be NULL/0). Verifies mechListMIC if present.
 * Returns 0, or SMB3_EPROTO / SMB3_ESIGNATURE. */
int smb3_auth_finish(struct smb3_auth *a, const uint8_t *in, size_t inlen);

/* The 16-byte session key (ExportedSessionKey), available once the AUTHENTICATE token was built
 * (SMB needs it to verify the final SESSION_SETUP response); SMB3_EINVAL before that or
 * for anonymous logons (which have no key). */
int smb3_auth_session_key(const struct smb3_auth *a, uint8_t key[16]);

/* True if this is an anonymous logon. */
int smb3_auth_is_anonymous(const struct smb3_auth *a);

#endif
