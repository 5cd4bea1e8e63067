/* connect.c - NEGOTIATE, SESSION_SETUP (NTLMSSP in SPNEGO), TREE_CONNECT and
 * VALIDATE_NEGOTIATE_INFO (MS-SMB2 3.2.4.2, 3.2.5.2, 3.2.5.3, 3.2.4.2.4, 3.2.5.14.12). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth/auth.h"
#include "client/client.h"
#include "util/status.h"

#define SETUP_ROUNDS_MAX 6

/* Core state changes made by the handshake run under the transport lock. */
struct core_call {
  int (*fn)(struct smb3_core *, void *);
  void *arg;
  int rc;
};
static void core_call_tramp(struct smb3_core *core, void *p) {
  struct core_call *cc = p;
  cc->rc = cc->fn(core, cc->arg);
}
static int with_core(smb3_client *c, int (*fn)(struct smb3_core *, void *), void *arg) {
  struct core_call cc = {fn, arg, 0};
  transport_with_core(c->tr, core_call_tramp, &cc);
  return cc.rc;
}

struct negotiate_arg {
  struct smb3_chain *ch;
  const char *why;
};
static int apply_negotiate(struct smb3_core *core, void *p) {
  struct negotiate_arg *a = p;
  return core_apply_negotiate(core, a->ch, &a->why);
}

static const char *dialect_name(uint16_t d) {
  switch (d) {
  case 0x0202:
    return "2.0.2";
  case 0x0210:
    return "2.1";
  case 0x0300:
    return "3.0";
  case 0x0302:
    return "3.0.2";
  case 0x0311:
    return "3.1.1";
  default:
    return "?";
  }
}

/* A copy of the SPNEGO hint in the NEGOTIATE response (MS-SMB2 2.2.4), which tells whether the
 * server offers Kerberos. *hint NULL when there is none. */
static int keep_hint(const struct smb3_chain *ch, uint8_t **hint, size_t *len) {
  struct smb2_negotiate_rsp r;
  if (smb2_negotiate_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &r) || !r.sec_buf || !r.sec_len)
    return 0;
  *hint = malloc(r.sec_len);
  if (!*hint) return SMB3_ENOMEM;
  memcpy(*hint, r.sec_buf, r.sec_len);
  *len = r.sec_len;
  return 0;
}

static int do_negotiate(smb3_client *c, uint8_t **hint, size_t *hint_len) {
  struct smb3_chain *ch = chain_new(1);
  if (!ch) return SMB3_ENOMEM;
  int rc = core_build_negotiate(c->core, ch);
  if (rc == SMB3_EDIALECT) {
    chain_free(ch);
    return client_fail(c, rc, 0, "no SMB dialect in the range asked for");
  }
  if (!rc && (rc = client_run(c, ch)) == SMB3_ECLOSED)
    rc = client_fail(c, SMB3_EDIALECT, 0,
                     "server closed the connection during NEGOTIATE (dialect %s..%s refused?)",
                     dialect_name(c->opts.vers_min), dialect_name(c->opts.vers_max));
  else if (rc == SMB3_EPROTO) /* an HTTP server, a proxy's error page, an SMB1-only server... */
    rc = client_fail(
        c, rc, 0,
        "the answer of %s port %d to NEGOTIATE is not a valid SMB2 message (not an SMB2/SMB3 server?)",
        c->opts.host ? c->opts.host : "?", c->opts.port);
  if (!rc && ch->msgs[0].status == NT_STATUS_NOT_SUPPORTED) /* Samba's answer when no dialect is shared */
    rc = client_fail(c, SMB3_EDIALECT, ch->msgs[0].status,
                     "server supports none of the dialects %s..%s asked for", dialect_name(c->opts.vers_min),
                     dialect_name(c->opts.vers_max));
  else if (!rc && ch->msgs[0].status != NT_STATUS_SUCCESS)
    rc = client_msg_result(c, ch, 0, "negotiate");
  if (!rc) {
    struct negotiate_arg na = {ch, NULL};
    rc = with_core(c, apply_negotiate, &na);
    if (rc == SMB3_EDIALECT)
      client_fail(c, rc, 0, "server chose a dialect that was not offered");
    else if (rc)
      client_fail(c, rc, 0, "bad NEGOTIATE response: %s", na.why ? na.why : smb3_strerror(rc));
  }
  if (!rc) rc = keep_hint(ch, hint, hint_len);
  chain_free(ch);
  return rc;
}

struct key_arg {
  const uint8_t *key;
};
static int set_key(struct smb3_core *core, void *p) {
  core_set_session_key(core, ((struct key_arg *)p)->key);
  return 0;
}
static int established(struct smb3_core *core, void *p) {
  return core_session_established(core, *(uint16_t *)p);
}
struct late_arg {
  const uint8_t *key;
  const struct smb3_msg *m;
};
static int verify_late(struct smb3_core *core, void *p) {
  struct late_arg *la = p;
  return core_session_verify_final(core, la->key, la->m->rsp, la->m->rsp_len);
}

/* One SESSION_SETUP round trip with the given token; returns the completed chain. */
static int setup_round(smb3_client *c, const uint8_t *tok, size_t len, struct smb3_chain **out) {
  *out = NULL;
  if (len > 0xFFFF) return SMB3_EINVAL;
  struct smb2_session_setup_req r = {.security_mode = c->opts.sign ? SMB2_NEGOTIATE_SIGNING_REQUIRED
                                                                   : SMB2_NEGOTIATE_SIGNING_ENABLED,
                                     .sec_buf = tok,
                                     .sec_len = (uint16_t)len};
  struct smb3_chain *ch = chain_new(1);
  if (!ch) return SMB3_ENOMEM;
  struct le_wr w;
  int rc = msg_body_begin(&ch->msgs[0], SMB2_SESSION_SETUP, 0, 64 + len, &w);
  if (!rc) rc = smb2_session_setup_req_encode(&w, &r);
  if (!rc) rc = msg_body_done(&ch->msgs[0], &w);
  ch->no_session = 2; /* carries the session id, never signed */
  if (!rc) rc = client_run(c, ch);
  if (rc) {
    chain_free(ch);
    return rc;
  }
  *out = ch;
  return 0;
}

/* A refused SESSION_SETUP, named for the mechanism: NTLM refused by a server that allows only
 * Kerberos, a Kerberos ticket the server did not accept. */
static int setup_failed(smb3_client *c, struct smb3_auth *a, struct smb3_chain *ch) {
  uint32_t st = ch->msgs[0].status;
  if (!smb3_auth_is_kerberos(a) &&
      (st == NT_STATUS_NTLM_BLOCKED || (st == NT_STATUS_LOGON_FAILURE && smb3_auth_server_lacks_ntlm(a))))
    return client_fail(c, SMB3_ELOGON, st,
                       "the server refuses NTLM authentication (NTLM disabled?): use Kerberos (kinit, then "
                       "-k or sec=krb5)");
  if (smb3_auth_is_kerberos(a))
    return client_msg_result(c, ch, 0, "Kerberos session setup (the server did not accept the ticket)");
  return client_msg_result(c, ch, 0, "session setup");
}

static int auth_loop(smb3_client *c, struct smb3_auth *a, const uint8_t *hint, size_t hint_len) {
  const uint8_t *in = hint;
  size_t inlen = hint_len;
  struct smb3_chain *prev = NULL;
  int rc = SMB3_EPROTO;
  for (int round = 0; round < SETUP_ROUNDS_MAX; round++) {
    uint8_t *tok = NULL;
    size_t toklen = 0;
    rc = smb3_auth_step(a, in, inlen, &tok, &toklen);
    chain_free(prev);
    prev = NULL;
    if (rc && smb3_auth_error(a)[0]) return client_fail(c, rc, 0, "%s", smb3_auth_error(a));
    if (rc) return client_fail(c, rc, 0, "authentication: cannot process the server's security token");
    uint8_t key[16];
    struct key_arg ka = {smb3_auth_session_key(a, key) == 0 ? key : NULL};
    with_core(c, set_key, &ka);
    explicit_bzero(key, sizeof key); /* the core has its copy */
    struct smb3_chain *ch;
    rc = setup_round(c, tok, toklen, &ch);
    free(tok);
    if (rc)
      return rc == SMB3_ESIGNATURE ? client_fail(c, rc, 0, "session setup: bad signature from server") : rc;
    struct smb3_msg *m = &ch->msgs[0];
    struct smb2_session_setup_rsp r;
    if (m->status == NT_STATUS_MORE_PROCESSING_REQUIRED || m->status == NT_STATUS_SUCCESS) {
      if (smb2_session_setup_rsp_decode(m->rsp, m->rsp_len, &r)) {
        chain_free(ch);
        return client_fail(c, SMB3_EPROTO, 0, "malformed SESSION_SETUP response");
      }
    }
    if (m->status == NT_STATUS_SUCCESS) {
      rc = smb3_auth_finish(a, r.sec_buf, r.sec_len);
      if (!rc && !ka.key && smb3_auth_session_key(a, key) == 0) {
        /* Kerberos: the key came with the AP-REP in this very response, which the core could
         * not verify on arrival; derive the keys and check its signature now (3.2.5.3.1). */
        struct late_arg la = {key, m};
        rc = with_core(c, verify_late, &la);
        memset(key, 0, sizeof key);
        if (rc) {
          chain_free(ch);
          return client_fail(c, rc, 0, "session setup: bad signature from server");
        }
      }
      chain_free(ch);
      if (rc && smb3_auth_error(a)[0]) return client_fail(c, rc, 0, "%s", smb3_auth_error(a));
      if (rc) return client_fail(c, rc, 0, "authentication: server's final token failed verification");
      uint16_t flags = r.session_flags;
      if (smb3_auth_is_anonymous(a) && !(flags & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL)))
        flags |= SMB2_SESSION_FLAG_IS_NULL;
      c->guest = (flags & SMB2_SESSION_FLAG_IS_GUEST) && c->opts.username && c->opts.username[0];
      rc = with_core(c, established, &flags);
      if (rc == SMB3_ENCRYPT)
        return client_fail(c, rc, 0, "encryption required but not available on this session");
      if (rc) return client_fail(c, rc, 0, "signing required but the session is a guest session");
      return 0;
    }
    if (m->status != NT_STATUS_MORE_PROCESSING_REQUIRED) {
      rc = setup_failed(c, a, ch);
      chain_free(ch);
      return rc;
    }
    in = r.sec_buf;
    inlen = r.sec_len;
    prev = ch; /* in points into it */
  }
  chain_free(prev);
  return client_fail(c, SMB3_EPROTO, 0, "session setup did not finish after %d rounds", SETUP_ROUNDS_MAX);
}

/* cruid=UID: that user's credential cache, not the mounting one's (KRB5CCNAME is the caller's):
 * MIT's default for the uid, FILE:/tmp/krb5cc_UID, as the kernel client's cifs.upcall finds it.
 * It must exist and belong to UID: cruid must not lend one user's tickets to another. */
static int cruid_ccache(smb3_client *c, char *out, size_t outlen) {
  snprintf(out, outlen, "FILE:/tmp/krb5cc_%d", c->opts.cruid);
  struct stat st;
  if (lstat(out + 5, &st) != 0)
    return client_fail(c, SMB3_ELOGON, 0,
                       "cruid=%d: no Kerberos ticket: %s does not exist (run kinit as uid %d)", c->opts.cruid,
                       out + 5, c->opts.cruid);
  if (!S_ISREG(st.st_mode) || st.st_uid != (uid_t)c->opts.cruid)
    return client_fail(c, SMB3_ELOGON, 0, "cruid=%d: credential cache %s is not a file of uid %d (owner %d)",
                       c->opts.cruid, out + 5, c->opts.cruid, (int)st.st_uid);
  return 0;
}

static int do_session_setup(smb3_client *c, const uint8_t *hint, size_t hint_len) {
  char host[256], cc[512];
  if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "smb3fs");
  host[sizeof host - 1] = 0;
  struct smb3_auth_sec sec = {
      .sec = c->opts.sec, .host = c->opts.host, .keytab = c->opts.krb5_keytab, .ccache = c->opts.krb5_ccache};
  if (!sec.ccache && c->opts.cruid >= 0) {
    int rc = cruid_ccache(c, cc, sizeof cc);
    if (rc) return rc;
    sec.ccache = cc;
  }
  if (sec.keytab && (!c->opts.username || !c->opts.username[0]))
    return client_fail(c, SMB3_EINVAL, 0, "krb5_keytab= needs username= (the principal to log on as)");
  if (sec.keytab && sec.sec == SMB3_SEC_AUTO) sec.sec = SMB3_SEC_KRB5; /* a keytab is for Kerberos */
  struct smb3_auth *a = smb3_auth_new_sec(c->opts.username, c->opts.password ? c->opts.password : "",
                                          c->opts.domain, host, &sec);
  if (!a) return client_fail(c, SMB3_ENOMEM, 0, "out of memory");
  int rc = auth_loop(c, a, hint, hint_len);
  smb3_auth_free(a);
  return rc;
}

static int do_tree_connect(smb3_client *c) {
  char unc[1024];
  /* No share: the session goes on IPC$, the share every server has for its named pipes, so that
   * the connection is validated (VALIDATE_NEGOTIATE_INFO below) and smb3_list_shares works. */
  const char *share = c->ipc ? "IPC$" : c->opts.share;
  if ((size_t)snprintf(unc, sizeof unc, "\\\\%s\\%s", c->opts.host, share) >= sizeof unc)
    return client_fail(c, SMB3_ENAMETOOLONG, 0, "share name too long");
  struct smb2_tree_connect_req r = {.path = unc};
  struct smb3_chain *ch = chain_new(1);
  if (!ch) return SMB3_ENOMEM;
  struct le_wr w;
  int rc = msg_body_begin(&ch->msgs[0], SMB2_TREE_CONNECT, 0, 64 + 4 * strlen(unc), &w);
  if (!rc) rc = smb2_tree_connect_req_encode(&w, &r);
  if (!rc) rc = msg_body_done(&ch->msgs[0], &w);
  if (!rc) rc = client_run(c, ch);
  struct smb2_tree_connect_rsp tr;
  if (!rc && ch->msgs[0].status != NT_STATUS_SUCCESS) {
    char what[400];
    /* An unknown user may be logged on as guest ("map to guest = bad user"); say so. */
    snprintf(what, sizeof what, "tree connect to share '%s'%s", share,
             c->guest ? " (server logged user on as guest: unknown user name?)" : "");
    rc = client_msg_result(c, ch, 0, what);
  } else if (!rc && smb2_tree_connect_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &tr)) {
    rc = client_fail(c, SMB3_EPROTO, 0, "malformed TREE_CONNECT response");
  } else if (!rc) {
    c->tree_id = le32_at(ch->msgs[0].rsp + SMB2_HDR_OFF_TREEID);
    c->share_flags = tr.share_flags;
    if (tr.share_type != (c->ipc ? SMB2_SHARE_TYPE_PIPE : SMB2_SHARE_TYPE_DISK))
      rc = client_fail(c, SMB3_ENOTSUP, 0, "share '%s' is not a %s share", share, c->ipc ? "pipe" : "disk");
    else if (tr.share_flags & SMB2_SHAREFLAG_ENCRYPT_DATA) {
      rc = with_core(c, (int (*)(struct smb3_core *, void *))(void *)core_require_encryption, NULL);
      if (rc) client_fail(c, rc, 0, "share '%s' requires encryption, which this session cannot do", share);
    }
  }
  chain_free(ch);
  return rc;
}

/* 3.0/3.0.2 downgrade protection (3.2.5.14.12); 3.1.1 uses the preauth hash instead. */
static int do_validate_negotiate(smb3_client *c) {
  const struct core_negotiated *n = core_negotiated(c->core);
  if (n->dialect != SMB2_DIALECT_300 && n->dialect != SMB2_DIALECT_302) return 0;
  if (core_session_anonymous(c->core)) return 0; /* no key: its answer could not be trusted */
  struct smb2_validate_negotiate v;
  core_validate_negotiate_info(c->core, &v);
  uint8_t in[128];
  struct le_wr iw;
  le_wr_init(&iw, in, sizeof in);
  int rc = smb2_validate_negotiate_encode(&iw, &v);
  struct smb3_chain *ch = chain_new(1);
  if (!ch) return SMB3_ENOMEM;
  if (!rc)
    rc = build_ioctl(c, &ch->msgs[0], (struct smb2_file_id){UINT64_MAX, UINT64_MAX},
                     SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO, in, (uint32_t)iw.off, 24);
  /* Signed even on a session that does not sign otherwise (3.2.4.2.4), so the answer must be signed
   * too: an unsigned one (a forged NOT_SUPPORTED included) is refused by the core. */
  ch->must_sign = 1;
  if (!rc) rc = client_run(c, ch);
  struct smb2_ioctl_rsp ir;
  struct smb2_validate_negotiate got;
  if (!rc && ch->msgs[0].status == NT_STATUS_SUCCESS &&
      !smb2_ioctl_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &ir) &&
      !smb2_validate_negotiate_decode(ir.output, ir.output_len, &got)) {
    if (got.dialect != n->dialect || got.security_mode != n->security_mode ||
        got.capabilities != n->capabilities || memcmp(got.guid, n->server_guid, 16))
      rc = client_fail(c, SMB3_ESIGNATURE, 0, "VALIDATE_NEGOTIATE_INFO mismatch: possible downgrade attack");
  } else if (!rc && (ch->msgs[0].status == NT_STATUS_NOT_SUPPORTED ||
                     ch->msgs[0].status == NT_STATUS_INVALID_DEVICE_REQUEST)) {
    rc = 0; /* servers that do not implement it answer so; signing still protects the session */
  } else if (!rc) {
    rc = client_fail(c, SMB3_ESIGNATURE, ch->msgs[0].status, "VALIDATE_NEGOTIATE_INFO failed");
  }
  chain_free(ch);
  return rc;
}

/* Does the server sign compounded responses so that they verify? MS-SMB2 3.3.4.1.1: each response
 * of a compound is signed on its own, over its header and body up to the next one (NextCommand set,
 * the padding included). impacket's smbserver (0.10) signs each response before it sets NextCommand
 * and pads, so every one but the last fails verification. Asked only when responses come signed (a
 * signing session, or a server that signs unasked): two ECHOs as one compound, which change nothing
 * on the server. If one does not verify, the core discards it (ch->probe: nothing of it is believed),
 * and this connection sends every compoundable operation one request at a time, each response still
 * verified. That is no security downgrade: someone on the path who spoils the probe gets more round
 * trips, not one unverified byte accepted, and could as well cut the connection. One round trip,
 * at connect only, and never on an unsigned session (Samba's default: nothing to get wrong). */
static int compound_probe(smb3_client *c) {
  if (c->opts.nocompound || !core_responses_signed(c->core)) return 0;
  struct smb3_chain *ch = chain_new(2);
  if (!ch) return SMB3_ENOMEM;
  ch->probe = 1;
  int rc = build_simple(c, &ch->msgs[0], SMB2_ECHO);
  if (!rc) rc = build_simple(c, &ch->msgs[1], SMB2_ECHO);
  if (!rc) rc = client_run(c, ch);
  if (!rc && ch->bad_sigs) {
    c->opts.nocompound = 1; /* before smb3_connect returns: no other thread reads opts yet */
    c->compound_fallback = 1;
  }
  chain_free(ch);
  return rc ? client_fail(c, rc, 0, "compound probe (two ECHOs): %s", smb3_strerror(rc)) : 0;
}

static void sizes_from_negotiate(smb3_client *c) {
  const struct core_negotiated *n = core_negotiated(c->core);
  c->multi_credit = n->dialect >= SMB2_DIALECT_210 && (n->capabilities & SMB2_GLOBAL_CAP_LARGE_MTU);
  uint32_t cap = c->multi_credit ? 8u << 20 : 65536;
  c->rsize = c->opts.rsize < cap ? c->opts.rsize : cap;
  c->wsize = c->opts.wsize < cap ? c->opts.wsize : cap;
  if (n->max_read && c->rsize > n->max_read) c->rsize = n->max_read;
  if (n->max_write && c->wsize > n->max_write) c->wsize = n->max_write;
  if (c->rsize < 4096) c->rsize = 4096;
  if (c->wsize < 4096) c->wsize = 4096;
}

static int copy_opt(char **dst, const char *src) {
  if (!src) return 0;
  *dst = strdup(src);
  return *dst ? 0 : SMB3_ENOMEM;
}

static int copy_options(struct smb3_options *d, const struct smb3_options *s) {
  *d = *s;
  d->host = d->share = d->path = d->username = d->password = d->domain = NULL;
  d->ip = d->krb5_keytab = d->krb5_ccache = NULL;
  if (copy_opt(&d->host, s->host) || copy_opt(&d->share, s->share) || copy_opt(&d->path, s->path) ||
      copy_opt(&d->username, s->username) || copy_opt(&d->password, s->password) ||
      copy_opt(&d->domain, s->domain) || copy_opt(&d->ip, s->ip) ||
      copy_opt(&d->krb5_keytab, s->krb5_keytab) || copy_opt(&d->krb5_ccache, s->krb5_ccache))
    return SMB3_ENOMEM;
  return 0;
}

static int handshake(smb3_client *c) {
  uint8_t *hint = NULL;
  size_t hint_len = 0;
  int rc = do_negotiate(c, &hint, &hint_len);
  if (rc) {
    free(hint);
    return rc;
  }
  sizes_from_negotiate(c);
  /* The SPNEGO hint in the NEGOTIATE response says whether the server offers Kerberos. */
  rc = do_session_setup(c, hint, hint_len);
  free(hint);
  if (!rc) rc = do_tree_connect(c);
  if (!rc) rc = do_validate_negotiate(c);
  c->posix_neg = core_negotiated(c->core)->posix;
  if (!rc && c->posix_neg) rc = client_posix_probe(c);
  if (!rc) rc = compound_probe(c);
  return rc;
}

int smb3_connect(const struct smb3_options *o, smb3_client **out, char *err, size_t errlen) {
  *out = NULL;
  if (err && errlen) err[0] = 0;
  if (!o || !o->host || !o->host[0]) {
    if (err) snprintf(err, errlen, "no host given");
    return SMB3_EINVAL;
  }
  smb3_client *c = calloc(1, sizeof *c);
  if (!c) return SMB3_ENOMEM;
  c->refs = 1;
  c->ipc = !o->share || !o->share[0];
  pthread_mutex_init(&c->err_lock, NULL);
  pthread_mutex_init(&c->root_lock, NULL);
  pthread_mutex_init(&c->ol_lock, NULL);
  pthread_mutex_init(&c->dfs_lock, NULL);
  int rc = copy_options(&c->opts, o);
  struct core_config cfg = {.dialect_min = o->vers_min,
                            .dialect_max = o->vers_max,
                            .sign_wanted = o->sign,
                            .seal_wanted = o->seal,
                            .credits_target = o->credits,
                            .timeout_ms = o->timeout_ms,
                            .posix_wanted = !o->noposix};
  if (!rc) c->core = core_new(&cfg);
  if (!rc && !c->core) rc = SMB3_ENOMEM;
  /* large pipelined writes stall unless the socket buffers hold twice the bytes in flight */
  size_t inflight = o->max_inflight ? (size_t)o->max_inflight * (o->rsize > o->wsize ? o->rsize : o->wsize)
                                    : 24u << 20; /* bulk.c's write window, the larger one */
  size_t sockbuf = 2 * inflight;
  if (!rc)
    rc = transport_connect(o->ip ? o->ip : o->host, o->port, (int)o->connect_timeout_ms, sockbuf, c->core,
                           &c->tr, c->last_error, sizeof c->last_error);
  if (!rc) {
    c->io_thread = transport_thread(c->tr);
    c->have_io_thread = 1;
    client_install_handlers(c);
  }
  if (!rc) rc = handshake(c);
  if (rc) {
    if (err) snprintf(err, errlen, "%s", c->last_error[0] ? c->last_error : smb3_strerror(rc));
    smb3_disconnect(c);
    return rc;
  }
  *out = c;
  return 0;
}
