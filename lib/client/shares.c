/* shares.c - the server's list of shares: srvsvc NetrShareEnum level 1 (MS-SRVS 3.1.4.8) over
 * the srvsvc named pipe of IPC$ (MS-SMB2 3.2.4.20.x: FSCTL_PIPE_TRANSCEIVE, 2.2.31).
 *
 * Round trips (one chain each, all sent from completion callbacks on the I/O thread):
 *   1. [TREE_CONNECT \\host\IPC$] + CREATE srvsvc + IOCTL(TRANSCEIVE: bind), one related compound:
 *      a related request takes the TreeId the previous one generated (3.3.5.2.7.2), and the
 *      IOCTL the FileId the CREATE generated. The TREE_CONNECT is left out when c itself is on
 *      IPC$ (smb3_connect without a share).
 *   2. IOCTL(TRANSCEIVE: the NetrShareEnum request): its output is the response, or its start
 *      when the answer is longer (STATUS_BUFFER_OVERFLOW), or its first fragments;
 *   2'. a READ per further piece, until the last fragment (PFC_LAST_FRAG) is in: Samba answers
 *      pipe READs with STATUS_SUCCESS even when more is waiting, so the fragments, not the
 *      status, say when the response is complete;
 *   3. CLOSE [+ TREE_DISCONNECT], one compound.
 * The request is not compounded behind the bind: a DCE/RPC client sends no request on a context
 * before the bind_ack accepted it (C706 12.4). The CLOSE is not compounded behind the request
 * either: whether a READ must come first is only known from the answer, and Samba refuses a
 * compound whose non-last element goes asynchronous (a pipe IOCTL does). With `nocompound` every
 * request goes alone, with the real ids. ERROR_MORE_DATA repeats round trip 2 from the resume
 * handle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "rpc/rpc.h"
#include "util/status.h"

#define FSCTL_PIPE_TRANSCEIVE 0x0011C017u /* MS-FSCC 2.3.49 */
#define PIPE_IO_MAX (64u * 1024u)         /* IOCTL output / READ length asked for: one credit */
#define PIPE_ACCESS                                                                                          \
  (SMB2_FILE_READ_DATA | SMB2_FILE_WRITE_DATA | SMB2_FILE_READ_EA | SMB2_FILE_WRITE_EA |                     \
   SMB2_FILE_READ_ATTRIBUTES | SMB2_FILE_WRITE_ATTRIBUTES | SMB2_READ_CONTROL | SMB2_SYNCHRONIZE)
#define TREE_ID_RELATED 0xFFFFFFFFu /* a related request's TreeId: the previous one's (3.2.4.1.4) */
#define ENUM_ROUNDS_MAX 64          /* ERROR_MORE_DATA rounds before we call the server confused */
#define BIND_CALL_ID 1

enum kind { K_TCON, K_CREATE, K_BIND, K_ENUM, K_READ, K_CLOSE, K_TDIS };

struct shares_op {
  smb3_client *c;
  smb3_shares_cb cb;
  void *arg;
  int own_tree; /* we connect IPC$ (and disconnect it again) */
  uint32_t tid; /* IPC$'s TreeId, 0 until known */
  struct smb2_file_id fid;
  int opened, bound, listed, closed, tree_done;
  uint32_t call_id;
  uint16_t max_frag; /* the server's max_xmit_frag from the bind_ack */
  uint8_t *rsp;      /* the current response's bytes so far */
  size_t rsp_len, rsp_cap;
  uint32_t resume;
  int rounds;
  struct srvsvc_share *list;
  size_t n, cap;
  int rc; /* the first failure */
  enum kind kinds[CORE_MAX_CHAIN];
  uint8_t bind_pdu[128];
  size_t bind_len;
};

static uint32_t pipe_io_max(smb3_client *c) {
  uint32_t t = core_negotiated(c->core)->max_transact, r = c->rsize;
  uint32_t m = PIPE_IO_MAX;
  if (t && t < m) m = t;
  if (r && r < m) m = r;
  return m;
}

static int fail(struct shares_op *x, int rc, uint32_t status, const char *what) {
  if (!x->rc) x->rc = client_fail(x->c, rc, status, "list shares: %s", what);
  return x->rc;
}

static int fail_msg(struct shares_op *x, const struct smb3_msg *m, const char *what) {
  int rc = smb3_status_to_err(m->status);
  return fail(x, rc ? rc : SMB3_ESTATUS, m->status, what);
}

/* ---- encoding one request of a chain ---- */
static uint32_t msg_tree(const struct shares_op *x, int related_after_tcon) {
  return related_after_tcon ? TREE_ID_RELATED : x->tid;
}

static int enc_tcon(struct shares_op *x, struct smb3_msg *m) {
  char unc[600];
  if ((size_t)snprintf(unc, sizeof unc, "\\\\%s\\IPC$", x->c->opts.host) >= sizeof unc)
    return SMB3_ENAMETOOLONG;
  struct smb2_tree_connect_req r = {.path = unc};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_TREE_CONNECT, 0, 64 + 4 * strlen(unc), &w);
  if (!rc) rc = smb2_tree_connect_req_encode(&w, &r);
  return rc ? rc : msg_body_done(m, &w);
}

static int enc_create(struct shares_op *x, struct smb3_msg *m, uint32_t tid) {
  /* A pipe is opened like a file (3.2.4.3), with no create contexts: nothing to ask of it. */
  struct smb2_create_req r = {.impersonation = 2,
                              .desired_access = PIPE_ACCESS,
                              .share_access = SMB2_FILE_SHARE_READ | SMB2_FILE_SHARE_WRITE,
                              .create_disposition = SMB2_FILE_OPEN,
                              .name = "srvsvc"};
  (void)x;
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_CREATE, tid, 256, &w);
  if (!rc) rc = smb2_create_req_encode(&w, &r);
  return rc ? rc : msg_body_done(m, &w);
}

static int enc_transceive(struct shares_op *x, struct smb3_msg *m, uint32_t tid, struct smb2_file_id fid,
                          const uint8_t *in, size_t in_len) {
  int rc = build_ioctl(x->c, m, fid, FSCTL_PIPE_TRANSCEIVE, in, (uint32_t)in_len, pipe_io_max(x->c));
  m->tree_id = tid;
  return rc;
}

static int enc_enum(struct shares_op *x, struct smb3_msg *m) {
  uint8_t stub[64], pdu[128];
  struct le_wr w;
  le_wr_init(&w, stub, sizeof stub);
  int rc = srvsvc_share_enum_encode(&w, x->resume);
  size_t stub_len = w.off;
  le_wr_init(&w, pdu, sizeof pdu);
  if (!rc) rc = dcerpc_request_encode(&w, ++x->call_id, SRVSVC_OPNUM_NETR_SHARE_ENUM, stub, stub_len);
  return rc ? rc : enc_transceive(x, m, x->tid, x->fid, pdu, w.off);
}

static int enc_read(struct shares_op *x, struct smb3_msg *m) {
  /* The whole answer lands in m->rsp (no destination buffer): a pipe READ is small. */
  int rc = build_read(x->c, m, x->fid, NULL, pipe_io_max(x->c), 0);
  m->tree_id = x->tid;
  return rc;
}

static int enc_close(struct shares_op *x, struct smb3_msg *m) {
  int rc = build_close(x->c, m, x->fid, 0);
  m->tree_id = x->tid;
  return rc;
}

static int enc_tdis(struct shares_op *x, struct smb3_msg *m) {
  int rc = build_simple(x->c, m, SMB2_TREE_DISCONNECT);
  m->tree_id = x->tid;
  return rc;
}

/* ---- handling one response ---- */
static int rsp_append(struct shares_op *x, const uint8_t *p, size_t n) {
  if (n > DCERPC_MAX_STUB + (DCERPC_MAX_STUB / 16) - x->rsp_len)
    return fail(x, SMB3_EPROTO, 0, "the srvsvc response is too long");
  if (x->rsp_len + n > x->rsp_cap) {
    size_t cap = x->rsp_cap ? x->rsp_cap : 4096;
    while (cap < x->rsp_len + n)
      cap *= 2;
    uint8_t *b = realloc(x->rsp, cap);
    if (!b) return fail(x, SMB3_ENOMEM, 0, "out of memory");
    x->rsp = b;
    x->rsp_cap = cap;
  }
  if (n) memcpy(x->rsp + x->rsp_len, p, n);
  x->rsp_len += n;
  return 0;
}

static int list_add(struct shares_op *x, struct srvsvc_enum *e) {
  if (e->n > x->cap - x->n) {
    size_t cap = x->n + e->n + 16;
    struct srvsvc_share *l = realloc(x->list, cap * sizeof *l);
    if (!l) return fail(x, SMB3_ENOMEM, 0, "out of memory");
    x->list = l;
    x->cap = cap;
  }
  memcpy(x->list + x->n, e->shares, e->n * sizeof *e->shares); /* the strings change owner */
  x->n += e->n;
  free(e->shares);
  e->shares = NULL;
  e->n = 0;
  return 0;
}

/* The response bytes so far: complete (decode it), or more to READ. */
static void rsp_check(struct shares_op *x) {
  uint8_t *stub = NULL;
  size_t stub_len = 0;
  uint32_t fault = 0;
  int rc = dcerpc_response_collect(x->rsp, x->rsp_len, x->call_id, &stub, &stub_len, &fault);
  if (rc == 1) return; /* not yet: op_next READs */
  x->rsp_len = 0;
  if (rc) {
    fail(x, rc, 0, "malformed DCE/RPC response from the server");
    return;
  }
  if (fault) {
    char what[64];
    snprintf(what, sizeof what, "the server's srvsvc faulted (0x%08x)", fault);
    fail(x, SMB3_EPROTO, 0, what);
    return;
  }
  struct srvsvc_enum e;
  rc = srvsvc_share_enum_decode(stub, stub_len, &e);
  free(stub);
  if (rc) {
    fail(x, rc, 0, rc == SMB3_ENOMEM ? "out of memory" : "malformed NetrShareEnum response");
    return;
  }
  if (e.status != 0 && e.status != SRVSVC_ERROR_MORE_DATA) {
    char what[64];
    snprintf(what, sizeof what, "NetrShareEnum failed (WERROR 0x%08x)", e.status);
    srvsvc_enum_free(&e);
    fail(x, e.status == 5 ? SMB3_EACCES : SMB3_EIO, 0, what); /* 5: ERROR_ACCESS_DENIED */
    return;
  }
  int more = e.status == SRVSVC_ERROR_MORE_DATA;
  if (more && (!e.have_resume || !e.n || ++x->rounds >= ENUM_ROUNDS_MAX)) {
    srvsvc_enum_free(&e);
    fail(x, SMB3_EPROTO, 0, "NetrShareEnum: more data announced without a way to get it");
    return;
  }
  x->resume = e.resume;
  if (!list_add(x, &e) && !more) x->listed = 1;
  srvsvc_enum_free(&e);
}

static void on_bind(struct shares_op *x, const struct smb3_msg *m) {
  struct smb2_ioctl_rsp r;
  if (m->status != NT_STATUS_SUCCESS) {
    fail_msg(x, m, "bind to srvsvc");
    return;
  }
  if (smb2_ioctl_rsp_decode(m->rsp, m->rsp_len, &r)) {
    fail(x, SMB3_EPROTO, 0, "malformed IOCTL response");
    return;
  }
  struct dcerpc_bind_ack a;
  int rc = dcerpc_bind_ack_decode(r.output, r.output_len, BIND_CALL_ID, &a);
  if (rc == SMB3_ENOTSUP)
    fail(x, rc, 0, "the server refused the srvsvc interface");
  else if (rc)
    fail(x, rc, 0, "malformed DCE/RPC bind_ack from the server");
  else {
    x->bound = 1;
    x->max_frag = a.max_xmit_frag;
  }
}

static void on_data(struct shares_op *x, const struct smb3_msg *m, int is_read) {
  /* STATUS_BUFFER_OVERFLOW: the body is the normal one and holds the first part (2.2.32, 2.2.20). */
  if (m->status != NT_STATUS_SUCCESS && m->status != NT_STATUS_BUFFER_OVERFLOW) {
    fail_msg(x, m, is_read ? "reading the srvsvc response" : "NetrShareEnum");
    return;
  }
  const uint8_t *p;
  size_t n;
  if (is_read) {
    struct smb2_read_rsp r;
    if (smb2_read_rsp_decode(m->rsp, m->rsp_len, &r) || r.data_length > pipe_io_max(x->c)) {
      fail(x, SMB3_EPROTO, 0, "malformed READ response");
      return;
    }
    p = r.data;
    n = r.data_length;
  } else {
    struct smb2_ioctl_rsp r;
    if (smb2_ioctl_rsp_decode(m->rsp, m->rsp_len, &r) || r.output_len > pipe_io_max(x->c)) {
      fail(x, SMB3_EPROTO, 0, "malformed IOCTL response");
      return;
    }
    p = r.output;
    n = r.output_len;
  }
  if (n == 0) { /* nothing new: asking again could loop forever */
    fail(x, SMB3_EPROTO, 0, "the srvsvc response ended before its last fragment");
    return;
  }
  if (!rsp_append(x, p, n)) rsp_check(x);
}

static void on_msg(struct shares_op *x, enum kind k, const struct smb3_msg *m) {
  switch (k) {
  case K_TCON: {
    struct smb2_tree_connect_rsp tr;
    if (m->status != NT_STATUS_SUCCESS)
      fail_msg(x, m, "tree connect to IPC$");
    else if (smb2_tree_connect_rsp_decode(m->rsp, m->rsp_len, &tr))
      fail(x, SMB3_EPROTO, 0, "malformed TREE_CONNECT response");
    else {
      x->tid = le32_at(m->rsp + SMB2_HDR_OFF_TREEID);
      if (tr.share_type != SMB2_SHARE_TYPE_PIPE) fail(x, SMB3_EPROTO, 0, "IPC$ is not a pipe share");
    }
    break;
  }
  case K_CREATE: {
    struct smb2_create_rsp cr;
    if (m->status != NT_STATUS_SUCCESS) {
      if (!x->rc) fail_msg(x, m, "open of the srvsvc pipe");
    } else if (smb2_create_rsp_decode(m->rsp, m->rsp_len, &cr)) {
      fail(x, SMB3_EPROTO, 0, "malformed CREATE response");
    } else {
      x->fid = cr.file_id;
      x->opened = 1;
    }
    break;
  }
  case K_BIND:
    if (!x->rc) on_bind(x, m);
    break;
  case K_ENUM:
  case K_READ:
    if (!x->rc) on_data(x, m, k == K_READ);
    break;
  case K_CLOSE: /* best effort: the list is what counts; the handle goes with the tree anyway */
    x->closed = 1;
    break;
  case K_TDIS:
    x->tree_done = 1;
    break;
  }
}

/* ---- the sequence ---- */
static void op_next(struct shares_op *x);

static void op_finish(struct shares_op *x) {
  struct smb3_share *v = NULL;
  if (!x->rc && x->n && !(v = calloc(x->n, sizeof *v)))
    x->rc = client_fail(x->c, SMB3_ENOMEM, 0, "out of memory");
  for (size_t i = 0; v && i < x->n; i++)
    v[i] = (struct smb3_share){x->list[i].name, x->list[i].comment, x->list[i].type};
  x->cb(x->rc, x->rc ? NULL : v, x->rc ? 0 : x->n, x->arg);
  free(v);
  for (size_t i = 0; i < x->n; i++) {
    free(x->list[i].name);
    free(x->list[i].comment);
  }
  free(x->list);
  free(x->rsp);
  free(x);
}

static void chain_done(struct smb3_chain *ch, void *arg) {
  struct shares_op *x = arg;
  if (ch->error) { /* the connection is gone: nothing more can be sent */
    if (!x->rc) fail(x, ch->error, 0, smb3_strerror(ch->error));
    chain_free(ch);
    op_finish(x);
    return;
  }
  for (int i = 0; i < ch->n; i++)
    on_msg(x, x->kinds[i], &ch->msgs[i]);
  chain_free(ch);
  op_next(x);
}

/* Build the next chain into ch (kinds in x->kinds); returns its length, 0 when nothing is left. */
static int plan(struct shares_op *x, struct smb3_chain *ch, int *rc) {
  int n = 0, compound = !x->c->opts.nocompound;
  struct smb3_msg *m = ch->msgs;
  *rc = 0;
  if (!x->rc && !x->listed) {
    if (x->own_tree && !x->tid) {
      x->kinds[n] = K_TCON;
      *rc = enc_tcon(x, &m[n++]);
      if (!compound) return n;
    }
    if (!x->opened) {
      x->kinds[n] = K_CREATE;
      if (!*rc) *rc = enc_create(x, &m[n], msg_tree(x, n > 0));
      n++;
      if (!compound) return n;
    }
    if (!x->bound) {
      x->kinds[n] = K_BIND;
      if (!*rc)
        *rc = enc_transceive(x, &m[n], msg_tree(x, n > 0 && m[0].command == SMB2_TREE_CONNECT),
                             n > 0 ? SMB2_FILE_ID_RELATED : x->fid, x->bind_pdu, x->bind_len);
      n++;
      ch->related = n > 1;
      return n;
    }
    x->kinds[n] = x->rsp_len ? K_READ : K_ENUM;
    *rc = x->rsp_len ? enc_read(x, &m[n]) : enc_enum(x, &m[n]);
    return n + 1;
  }
  /* Done or failed: put back what we opened. */
  if (x->opened && !x->closed) {
    x->kinds[n] = K_CLOSE;
    *rc = enc_close(x, &m[n++]);
    if (!compound) return n;
  }
  if (x->own_tree && x->tid && !x->tree_done) {
    x->kinds[n] = K_TDIS;
    if (!*rc) *rc = enc_tdis(x, &m[n]);
    n++;
  }
  return n; /* unrelated: each carries its own ids */
}

static void op_next(struct shares_op *x) {
  struct smb3_chain *ch = chain_new(3);
  if (!ch) {
    fail(x, SMB3_ENOMEM, 0, "out of memory");
    op_finish(x);
    return;
  }
  int rc;
  int n = plan(x, ch, &rc);
  ch->n = n;
  if (!rc && n) {
    ch->cb = chain_done;
    ch->arg = x;
    rc = client_submit(x->c, ch);
    if (!rc) return;
  }
  chain_free(ch);
  if (rc) fail(x, rc, 0, smb3_strerror(rc));
  op_finish(x); /* nothing left, or a request could not be sent (then neither can a CLOSE) */
}

int smb3_list_shares_async(smb3_client *c, smb3_shares_cb cb, void *arg) {
  if (!c || !cb) return SMB3_EINVAL;
  if (__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) return SMB3_ECLOSED;
  struct shares_op *x = calloc(1, sizeof *x);
  if (!x) return SMB3_ENOMEM;
  x->c = c;
  x->cb = cb;
  x->arg = arg;
  x->own_tree = !c->ipc;
  x->tid = c->ipc ? c->tree_id : 0;
  x->call_id = BIND_CALL_ID;
  struct le_wr w;
  le_wr_init(&w, x->bind_pdu, sizeof x->bind_pdu);
  int rc = dcerpc_bind_encode(&w, BIND_CALL_ID, &dcerpc_syntax_srvsvc, &dcerpc_syntax_ndr);
  x->bind_len = w.off;
  /* The first chain goes out from here so that a failure to send it is the call's return. */
  struct smb3_chain *ch = rc ? NULL : chain_new(3);
  if (!rc && !ch) rc = SMB3_ENOMEM;
  int n = 0;
  if (!rc) n = plan(x, ch, &rc);
  if (!rc) {
    ch->n = n;
    ch->cb = chain_done;
    ch->arg = x;
    rc = client_submit(c, ch);
  }
  if (rc) {
    chain_free(ch);
    free(x);
    return rc;
  }
  return 0;
}

/* ---- synchronous form: one block holding the array and its strings ---- */
struct shares_wait {
  sem_t done;
  int rc;
  struct smb3_share *out;
};

static void wait_cb(int rc, const struct smb3_share *s, size_t n, void *arg) {
  struct shares_wait *w = arg;
  w->rc = rc;
  if (!rc && n) {
    size_t bytes = n * sizeof *s;
    for (size_t i = 0; i < n; i++)
      bytes += strlen(s[i].name) + strlen(s[i].comment) + 2;
    struct smb3_share *out = malloc(bytes);
    if (!out) {
      w->rc = SMB3_ENOMEM;
    } else {
      char *p = (char *)(out + n);
      for (size_t i = 0; i < n; i++) {
        out[i].type = s[i].type;
        out[i].name = strcpy(p, s[i].name);
        p += strlen(p) + 1;
        out[i].comment = strcpy(p, s[i].comment);
        p += strlen(p) + 1;
      }
      w->out = out;
      w->rc = (int)(n > INT32_MAX ? INT32_MAX : n);
    }
  }
  sem_post(&w->done);
}

int smb3_list_shares(smb3_client *c, struct smb3_share **out) {
  if (out) *out = NULL;
  if (!c || !out) return SMB3_EINVAL;
  int rc = client_sync_check(c, "smb3_list_shares");
  if (rc) return rc;
  struct shares_wait w = {.rc = 0};
  sem_init(&w.done, 0, 0);
  rc = smb3_list_shares_async(c, wait_cb, &w);
  if (!rc) {
    client_sem_wait(&w.done);
    rc = w.rc;
  }
  sem_destroy(&w.done);
  if (rc == SMB3_ENOMEM && !w.out) client_fail(c, rc, 0, "list shares: out of memory");
  if (rc >= 0) *out = w.out;
  return rc;
}

void smb3_shares_free(struct smb3_share *s) {
  free(s);
}
