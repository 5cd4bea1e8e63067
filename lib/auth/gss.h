/* gss.h - the Kerberos mechanism through MIT krb5's GSSAPI (RFC 4121), for SPNEGO (spnego.c).
 * Internal to lib/auth. No Kerberos is done here by hand: tickets, the AP-REQ/AP-REP exchange
 * and the keys all come from libgssapi_krb5.
 */
#ifndef SMB3_GSS_H
#define SMB3_GSS_H

#include <stddef.h>
#include <stdint.h>

/* Where the client's credentials come from. All strings borrowed for the call. */
struct gss_krb5_params {
  const char *host;      /* the server's name: the target is the host-based service cifs@host */
  const char *ccache;    /* credential cache name, NULL: KRB5CCNAME or the default one */
  const char *keytab;    /* client keytab (unattended): initial tickets come from its keys */
  const char *principal; /* with keytab (or to pick a cache entry): the client principal */
};

struct gss_krb5;

/* 1 when the credentials named in p hold a ticket-granting ticket that has not expired (or a
 * keytab entry for p->principal), 0 otherwise. Does no network I/O. */
int gss_krb5_have_ticket(const struct gss_krb5_params *p);

/* Acquire the credentials and make the first token (the AP-REQ, RFC 4121 4.1) into *out
 * (malloc'd, caller frees). Asks for mutual authentication, integrity and confidentiality.
 * On failure *ctx is NULL, and err gets one line that names the cause ("no Kerberos ticket for
 * REALM: run kinit", clock skew, KDC unreachable, principal unknown, wrong realm).
 * Returns 0, SMB3_ELOGON or SMB3_ENOMEM. */
int gss_krb5_start(const struct gss_krb5_params *p, struct gss_krb5 **ctx, uint8_t **out, size_t *outlen,
                   char *err, size_t errlen);

/* Feed the server's token (the AP-REP, which mutual authentication requires). *complete is set
 * once the context is established; a further token (rare) goes into *out. Returns 0 or
 * SMB3_ELOGON (err written: e.g. the server's reply failed to verify). */
int gss_krb5_step(struct gss_krb5 *k, const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen,
                  int *complete, char *err, size_t errlen);

/* The session key of an established context (GSS_C_INQ_SSPI_SESSION_KEY: the acceptor subkey
 * when the server sent one), cut or zero-padded to 16 bytes (MS-SMB2 3.2.5.3). 0 or
 * SMB3_EINVAL. */
int gss_krb5_session_key(struct gss_krb5 *k, uint8_t key[16]);

/* Check the server's SPNEGO mechListMIC over msg (RFC 4178 5). 0 or SMB3_ESIGNATURE. */
int gss_krb5_verify_mic(struct gss_krb5 *k, const uint8_t *msg, size_t len, const uint8_t *mic,
                        size_t miclen);

void gss_krb5_free(struct gss_krb5 *k);

#endif
