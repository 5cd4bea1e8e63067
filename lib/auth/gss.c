/* gss.c - Kerberos 5 through MIT krb5's GSSAPI (RFC 2743, RFC 4121) for SMB2 SESSION_SETUP.
 *
 * The target is the host-based service cifs@HOST (the SPN cifs/HOST, MS-SMB2 3.2.4.2.3:
 * "cifs/" + ServerName), HOST being the name the user typed: the address it connects to may
 * come from elsewhere (ip=), so the name needs no DNS. Errors are told from the minor status,
 * which for the krb5 mechanism is a krb5 error code (krb5.h), into one line each.
 */
#include "auth/gss.h"

#include <errno.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smb3/smb3_errors.h"

struct gss_krb5 {
  gss_ctx_id_t ctx;
  gss_cred_id_t cred;
  gss_name_t target;
  int complete;
  char spn[300];        /* cifs/HOST, for messages */
  char memcc[64];       /* the private MEMORY: cache of a keytab logon */
  char realm[256];      /* the realm we expect to log on to, for messages ("" unknown) */
  char host_realm[256]; /* the realm krb5.conf maps the host to ("" none) */
  char client[300];     /* the client principal, once known */
};

static gss_OID_desc *krb5_mech(void) {
  return (gss_OID_desc *)gss_mech_krb5;
}

/* The realm a message should name: the principal's, else the one the host maps to
 * ([domain_realm] in krb5.conf), else the default realm. Best effort, "" when unknown. */
static void guess_realm(const struct gss_krb5_params *p, char *out, size_t outlen, char *host_realm,
                        size_t hrlen) {
  out[0] = host_realm[0] = 0;
  krb5_context kc;
  if (krb5_init_context(&kc)) return;
  char **realms = NULL;
  if (p->host && !krb5_get_host_realm(kc, p->host, &realms) && realms && realms[0] && realms[0][0])
    snprintf(host_realm, hrlen, "%s", realms[0]);
  if (realms) krb5_free_host_realm(kc, realms);
  const char *at = p->principal ? strrchr(p->principal, '@') : NULL;
  if (at && at[1])
    snprintf(out, outlen, "%s", at + 1);
  else
    snprintf(out, outlen, "%s", host_realm);
  char *def = NULL;
  if (!out[0] && !krb5_get_default_realm(kc, &def)) snprintf(out, outlen, "%s", def);
  if (def) krb5_free_default_realm(kc, def);
  krb5_free_context(kc);
}

/* The text of one status code (GSS_C_GSS_CODE or GSS_C_MECH_CODE), first message only. */
static void status_text(OM_uint32 code, int type, char *out, size_t outlen) {
  OM_uint32 min, ctx = 0;
  gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
  out[0] = 0;
  if (gss_display_status(&min, code, type, type == GSS_C_MECH_CODE ? krb5_mech() : GSS_C_NO_OID, &ctx, &b) ==
      GSS_S_COMPLETE) {
    snprintf(out, outlen, "%.*s", (int)b.length, (const char *)b.value);
    gss_release_buffer(&min, &b);
  }
}

/* "... 'REALM' ..." or "... realm REALM": the realm a krb5 message names, for our own message. */
static void realm_in_text(const char *text, char *out, size_t outlen) {
  const char *q = strchr(text, '\'');
  const char *e = q ? strchr(q + 1, '\'') : NULL;
  if (q && e && e > q + 1) snprintf(out, outlen, "%.*s", (int)(e - q - 1), q + 1);
}

/* A keytab logon that failed on the cache side: is the keytab readable, does it hold the
 * principal? 1 and err written when that explains it. */
static int keytab_problem(const struct gss_krb5_params *p, char *err, size_t errlen) {
  krb5_context kc;
  krb5_keytab kt = NULL;
  krb5_principal pr = NULL;
  krb5_keytab_entry e;
  int found = 0;
  if (access(p->keytab, R_OK) != 0) {
    snprintf(err, errlen, "Kerberos: cannot read keytab %s: %s", p->keytab, strerror(errno));
    return 1;
  }
  if (!p->principal || krb5_init_context(&kc)) return 0;
  if (!krb5_kt_resolve(kc, p->keytab, &kt) && !krb5_parse_name(kc, p->principal, &pr)) {
    krb5_error_code rc = krb5_kt_get_entry(kc, kt, pr, 0, 0, &e);
    if (rc == 0)
      krb5_free_keytab_entry_contents(kc, &e);
    else if (rc == KRB5_KT_NOTFOUND || rc == KRB5_KT_END) {
      snprintf(err, errlen, "Kerberos: principal %s not found in keytab %s", p->principal, p->keytab);
      found = 1;
    }
  }
  if (pr) krb5_free_principal(kc, pr);
  if (kt) krb5_kt_close(kc, kt);
  krb5_free_context(kc);
  return found;
}

/* The principal an expired ticket belongs to, for the message: from the cache itself (GSSAPI does
 * not name the owner of credentials it refuses as expired). "" when unknown. */
static void cache_principal(const struct gss_krb5_params *p, char *out, size_t outlen) {
  krb5_context kc;
  krb5_ccache cc = NULL;
  krb5_principal pr = NULL;
  char *name = NULL;
  out[0] = 0;
  if (p->keytab || krb5_init_context(&kc)) return;
  if (!(p->ccache ? krb5_cc_resolve(kc, p->ccache, &cc) : krb5_cc_default(kc, &cc)) &&
      !krb5_cc_get_principal(kc, cc, &pr) && !krb5_unparse_name(kc, pr, &name))
    snprintf(out, outlen, "%s", name);
  if (name) krb5_free_unparsed_name(kc, name);
  if (pr) krb5_free_principal(kc, pr);
  if (cc) krb5_cc_close(kc, cc);
  krb5_free_context(kc);
}

/* "the Kerberos ticket for WHO has expired: run kinit" */
static void expired(const struct gss_krb5 *k, const struct gss_krb5_params *p, char *err, size_t errlen) {
  char who[300];
  if (k->client[0])
    snprintf(who, sizeof who, "%s", k->client);
  else
    cache_principal(p, who, sizeof who);
  snprintf(err, errlen, "the Kerberos ticket for %s has expired: run kinit",
           who[0]        ? who
           : k->realm[0] ? k->realm
                         : "the realm");
}

/* One line naming the cause of a failure (see gss.h). */
static void describe(const struct gss_krb5 *k, const struct gss_krb5_params *p, OM_uint32 maj, OM_uint32 min,
                     char *err, size_t errlen) {
  char text[400], realm[256];
  status_text(min, GSS_C_MECH_CODE, text, sizeof text);
  snprintf(realm, sizeof realm, "%s", k->realm[0] ? k->realm : "the realm");
  long code = (long)(int32_t)min;
  const char *kt = p->keytab ? p->keytab : "";
  if (p->keytab && keytab_problem(p, err, errlen)) return;
  switch (code) {
  case KRB5_FCC_NOFILE:
  case KRB5_CC_NOTFOUND:
  case KRB5_CC_END:
  case KRB5_CC_BADNAME:
  case KRB5_FCC_PERM:
    snprintf(err, errlen, "no Kerberos ticket for %s: run kinit (%s)", realm, text);
    return;
  case KRB5KRB_AP_ERR_TKT_EXPIRED:
  case KRB5KDC_ERR_TGT_REVOKED:
    expired(k, p, err, errlen);
    return;
  case KRB5KRB_AP_ERR_SKEW:
    snprintf(err, errlen,
             "Kerberos: clock skew too great between this machine and the KDC or server %s: "
             "check the time (Kerberos allows 5 minutes; set the clock, e.g. with NTP)",
             p->host);
    return;
  case KRB5_KDC_UNREACH:
  case KRB5_REALM_CANT_RESOLVE:
    realm_in_text(text, realm, sizeof realm);
    snprintf(err, errlen, "Kerberos: cannot reach a KDC for realm %s (check kdc in krb5.conf or KRB5_CONFIG)",
             realm);
    return;
  case KRB5_REALM_UNKNOWN:
    realm_in_text(text, realm, sizeof realm);
    snprintf(err, errlen, "Kerberos: wrong realm: no KDC is known for realm %s (krb5.conf [realms])", realm);
    return;
  case KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN: {
    /* The host maps to a realm other than the client's (or the KDC lacks a cross-realm krbtgt/):
     * this KDC cannot give tickets for it. */
    const char *crealm = strchr(k->client, '@');
    int other = k->host_realm[0] && crealm && strcmp(k->host_realm, crealm + 1);
    if (strstr(text, "krbtgt/") || other)
      snprintf(err, errlen,
               "Kerberos: wrong realm: %s is in realm %s, for which the KDC of %s has no tickets (no trust; "
               "check [domain_realm] in krb5.conf)",
               p->host, k->host_realm[0] ? k->host_realm : "?", crealm ? crealm + 1 : realm);
    else
      snprintf(err, errlen,
               "Kerberos: the KDC does not know the service principal %s (give the server's own name "
               "in the URL, and its address with ip=)",
               k->spn);
    return;
  }
  case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
    snprintf(err, errlen, "Kerberos: the KDC does not know the client principal %s",
             p->principal ? p->principal : k->client);
    return;
  case KRB5_KT_NOTFOUND:
  case KRB5_KT_END:
    snprintf(err, errlen, "Kerberos: principal %s not found in keytab %s", p->principal ? p->principal : "?",
             kt);
    return;
  case ENOENT:
    if (p->keytab) {
      snprintf(err, errlen, "Kerberos: cannot read keytab %s: %s", kt, strerror(ENOENT));
      return;
    }
    break;
  case KRB5KDC_ERR_PREAUTH_FAILED:
  case KRB5KRB_AP_ERR_BAD_INTEGRITY:
    if (p->keytab)
      snprintf(err, errlen, "Kerberos: the key in keytab %s is wrong for %s (password changed?)", kt,
               p->principal ? p->principal : "the principal");
    else
      snprintf(err, errlen,
               "Kerberos: the KDC cannot decrypt the ticket in the cache (from another KDC, or "
               "the account's keys changed): run kinit");
    return;
  default:
    break;
  }
  if (maj == GSS_S_CREDENTIALS_EXPIRED) {
    expired(k, p, err, errlen);
    return;
  }
  if (maj == GSS_S_NO_CRED) {
    snprintf(err, errlen, "no Kerberos ticket for %s: run kinit%s%s%s", realm, text[0] ? " (" : "", text,
             text[0] ? ")" : "");
    return;
  }
  char mtext[200];
  status_text(maj, GSS_C_GSS_CODE, mtext, sizeof mtext);
  snprintf(err, errlen, "Kerberos logon to %s failed: %s%s%s", k->spn, mtext, text[0] ? ": " : "", text);
}

static int import_name(const char *s, gss_OID type, gss_name_t *out) {
  OM_uint32 min;
  gss_buffer_desc b = {strlen(s), (void *)s};
  return gss_import_name(&min, &b, type, out) == GSS_S_COMPLETE ? 0 : SMB3_EINVAL;
}

static void name_text(gss_name_t n, char *out, size_t outlen) {
  OM_uint32 min;
  gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
  if (gss_display_name(&min, n, &b, NULL) == GSS_S_COMPLETE) {
    snprintf(out, outlen, "%.*s", (int)b.length, (const char *)b.value);
    gss_release_buffer(&min, &b);
  }
}

/* The credentials named by p; *lifetime in seconds (0: expired). */
static OM_uint32 acquire(struct gss_krb5 *k, const struct gss_krb5_params *p, OM_uint32 *minor,
                         OM_uint32 *lifetime) {
  static atomic_uint counter;
  gss_name_t name = GSS_C_NO_NAME;
  gss_OID_set_desc mechs = {1, krb5_mech()};
  gss_key_value_element_desc el[2];
  gss_key_value_set_desc store = {0, el};
  OM_uint32 maj, min;
  *minor = 0;
  if (p->principal && p->principal[0] &&
      import_name(p->principal, (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME, &name) < 0)
    return GSS_S_BAD_NAME;
  if (p->keytab) {
    /* Tickets got with the keytab's keys go into a cache of our own, never the user's. */
    snprintf(k->memcc, sizeof k->memcc, "MEMORY:smb3-%ld-%u", (long)getpid(), atomic_fetch_add(&counter, 1));
    el[store.count++] = (gss_key_value_element_desc){"client_keytab", p->keytab};
    el[store.count++] = (gss_key_value_element_desc){"ccache", k->memcc};
  } else if (p->ccache) {
    el[store.count++] = (gss_key_value_element_desc){"ccache", p->ccache};
  }
  maj = gss_acquire_cred_from(minor, name, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                              store.count ? &store : GSS_C_NO_CRED_STORE, &k->cred, NULL, lifetime);
  if (name != GSS_C_NO_NAME) gss_release_name(&min, &name);
  if (maj != GSS_S_COMPLETE) return maj;
  gss_name_t who = GSS_C_NO_NAME;
  /* The lifetime acquire reports for a keytab is what it could get, not a ticket we hold. */
  OM_uint32 iq = gss_inquire_cred(&min, k->cred, &who, p->keytab ? NULL : lifetime, NULL, NULL);
  if ((iq == GSS_S_COMPLETE || GSS_ROUTINE_ERROR(iq) == GSS_S_CREDENTIALS_EXPIRED) && who != GSS_C_NO_NAME)
    name_text(who, k->client, sizeof k->client);
  /* (an expired ticket: the answer is CREDENTIALS_EXPIRED, with the name filled in all the same) */
  if (who != GSS_C_NO_NAME) gss_release_name(&min, &who);
  if (p->keytab) *lifetime = GSS_C_INDEFINITE;
  return GSS_S_COMPLETE;
}

int gss_krb5_have_ticket(const struct gss_krb5_params *p) {
  struct gss_krb5 k;
  memset(&k, 0, sizeof k);
  k.cred = GSS_C_NO_CREDENTIAL;
  OM_uint32 minor, lifetime = 0, min;
  OM_uint32 maj = acquire(&k, p, &minor, &lifetime);
  if (k.cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&min, &k.cred);
  return maj == GSS_S_COMPLETE && lifetime > 0;
}

void gss_krb5_free(struct gss_krb5 *k) {
  OM_uint32 min;
  if (!k) return;
  if (k->ctx != GSS_C_NO_CONTEXT) gss_delete_sec_context(&min, &k->ctx, GSS_C_NO_BUFFER);
  if (k->cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&min, &k->cred);
  if (k->target != GSS_C_NO_NAME) gss_release_name(&min, &k->target);
  free(k);
}

static int take_token(gss_buffer_desc *b, uint8_t **out, size_t *outlen) {
  OM_uint32 min;
  *out = NULL;
  *outlen = 0;
  if (b->length) {
    *out = malloc(b->length);
    if (!*out) {
      gss_release_buffer(&min, b);
      return SMB3_ENOMEM;
    }
    memcpy(*out, b->value, b->length);
    *outlen = b->length;
  }
  gss_release_buffer(&min, b);
  return 0;
}

/* One gss_init_sec_context call. */
static int init_step(struct gss_krb5 *k, const struct gss_krb5_params *p, const uint8_t *in, size_t inlen,
                     uint8_t **out, size_t *outlen, char *err, size_t errlen) {
  OM_uint32 maj, min = 0, ret_flags = 0;
  gss_buffer_desc ib = {inlen, (void *)in}, ob = GSS_C_EMPTY_BUFFER;
  const OM_uint32 req =
      GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG | GSS_C_SEQUENCE_FLAG | GSS_C_REPLAY_FLAG;
  maj = gss_init_sec_context(&min, k->cred, &k->ctx, k->target, krb5_mech(), req, GSS_C_INDEFINITE,
                             GSS_C_NO_CHANNEL_BINDINGS, in ? &ib : GSS_C_NO_BUFFER, NULL, &ob, &ret_flags,
                             NULL);
  if (GSS_ERROR(maj)) {
    OM_uint32 m2;
    gss_release_buffer(&m2, &ob);
    describe(k, p, maj, min, err, errlen);
    return SMB3_ELOGON;
  }
  if (maj == GSS_S_COMPLETE) {
    /* We asked for mutual authentication: a context that completes without the server's
     * AP-REP would let anyone who can answer on the address pass for the server. */
    if (!(ret_flags & GSS_C_MUTUAL_FLAG)) {
      gss_release_buffer(&min, &ob);
      snprintf(err, errlen, "Kerberos: %s did not authenticate itself (no mutual authentication)", k->spn);
      return SMB3_ELOGON;
    }
    k->complete = 1;
  }
  return take_token(&ob, out, outlen);
}

int gss_krb5_start(const struct gss_krb5_params *p, struct gss_krb5 **ctx, uint8_t **out, size_t *outlen,
                   char *err, size_t errlen) {
  *ctx = NULL;
  *out = NULL;
  *outlen = 0;
  if (!p->host || !p->host[0]) {
    snprintf(err, errlen, "Kerberos needs the server's host name");
    return SMB3_EINVAL;
  }
  struct gss_krb5 *k = calloc(1, sizeof *k);
  if (!k) return SMB3_ENOMEM;
  k->ctx = GSS_C_NO_CONTEXT;
  k->cred = GSS_C_NO_CREDENTIAL;
  k->target = GSS_C_NO_NAME;
  snprintf(k->spn, sizeof k->spn, "cifs/%s", p->host);
  guess_realm(p, k->realm, sizeof k->realm, k->host_realm, sizeof k->host_realm);
  char svc[300];
  snprintf(svc, sizeof svc, "cifs@%s", p->host);
  OM_uint32 minor = 0, lifetime = 0;
  OM_uint32 maj = acquire(k, p, &minor, &lifetime);
  int rc = 0;
  if (maj != GSS_S_COMPLETE) {
    describe(k, p, maj, minor, err, errlen);
    rc = SMB3_ELOGON;
  } else if (lifetime == 0) {
    expired(k, p, err, errlen);
    rc = SMB3_ELOGON;
  } else if (import_name(svc, GSS_C_NT_HOSTBASED_SERVICE, &k->target) < 0) {
    snprintf(err, errlen, "Kerberos: bad service name %s", svc);
    rc = SMB3_EINVAL;
  } else {
    rc = init_step(k, p, NULL, 0, out, outlen, err, errlen);
  }
  if (rc) {
    gss_krb5_free(k);
    return rc;
  }
  *ctx = k;
  return 0;
}

int gss_krb5_step(struct gss_krb5 *k, const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen,
                  int *complete, char *err, size_t errlen) {
  struct gss_krb5_params p = {.host = k->spn + 5};
  *out = NULL;
  *outlen = 0;
  int rc = k->complete ? 0 : init_step(k, &p, in, inlen, out, outlen, err, errlen);
  *complete = k->complete;
  return rc;
}

int gss_krb5_session_key(struct gss_krb5 *k, uint8_t key[16]) {
  OM_uint32 min;
  gss_buffer_set_t set = GSS_C_NO_BUFFER_SET;
  if (!k || !k->complete) return SMB3_EINVAL;
  if (gss_inquire_sec_context_by_oid(&min, k->ctx, GSS_C_INQ_SSPI_SESSION_KEY, &set) != GSS_S_COMPLETE ||
      !set || set->count < 1 || set->elements[0].length == 0) {
    if (set) gss_release_buffer_set(&min, &set);
    return SMB3_EINVAL;
  }
  /* MS-SMB2 3.2.5.3: the first 16 bytes of the key; a shorter one is padded with zeros. */
  size_t n = set->elements[0].length < 16 ? set->elements[0].length : 16;
  memset(key, 0, 16);
  memcpy(key, set->elements[0].value, n);
  gss_release_buffer_set(&min, &set);
  return 0;
}

int gss_krb5_verify_mic(struct gss_krb5 *k, const uint8_t *msg, size_t len, const uint8_t *mic,
                        size_t miclen) {
  OM_uint32 min;
  gss_buffer_desc m = {len, (void *)msg}, t = {miclen, (void *)mic};
  if (!k || !k->complete) return SMB3_ESIGNATURE;
  return gss_verify_mic(&min, k->ctx, &m, &t, NULL) == GSS_S_COMPLETE ? 0 : SMB3_ESIGNATURE;
}
