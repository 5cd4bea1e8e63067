/* conn.c - the sans-I/O connection engine: queueing, message ids, the in-flight table, framing
 * of requests and compound chains (MS-SMB2 3.2.4.1.4), and dispatch of received frames. */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"
#include "smb3/smb3.h"
#include "smb3/smb3_errors.h"
#include "util/status.h"

static const uint8_t zero_pad[8];

struct smb3_core *core_new(const struct core_config *cfg) {
  struct smb3_core *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->cfg = *cfg;
  if (!c->cfg.credits_target) c->cfg.credits_target = 512;
  c->credits = 1;
  if (smb3_random(c->client_guid, sizeof c->client_guid) ||
      smb3_random(c->nonce_salt, sizeof c->nonce_salt)) {
    free(c);
    return NULL;
  }
  return c;
}

static void frames_free(struct smb3_core *c) {
  while (c->out_head) {
    struct out_frame *f = c->out_head;
    c->out_head = f->next;
    core_buf_put(c, f->owned, f->owned_cap);
    free(f);
  }
  c->out_tail = NULL;
}

/* Forget every in-flight entry (their chains are completed or failed by the caller). */
static void table_clear(struct smb3_core *c) {
  for (int i = 0; i < CORE_BUCKETS; i++)
    while (c->table[i]) {
      struct pending *p = c->table[i];
      c->table[i] = p->next;
      free(p);
    }
}

void core_free(struct smb3_core *c) {
  if (!c) return;
  frames_free(c);
  table_clear(c);
  smb3_aead_free(c->enc_aead);
  smb3_aead_free(c->dec_aead);
  for (int i = 0; i < CORE_SPARE_BUFS; i++)
    free(c->spare[i].p);
  while (c->ev_head) {
    struct core_event *e = c->ev_head;
    c->ev_head = e->next;
    core_event_free(e);
  }
  OPENSSL_cleanse(c, sizeof *c); /* the session key and the keys derived from it */
  free(c);
}

uint8_t *core_buf_get(struct smb3_core *c, size_t len, size_t *cap) {
  for (int i = 0; i < CORE_SPARE_BUFS; i++)
    if (c->spare[i].p && c->spare[i].cap >= len) {
      uint8_t *p = c->spare[i].p;
      *cap = c->spare[i].cap;
      c->spare[i].p = NULL;
      return p;
    }
  *cap = len;
  return malloc(len);
}

void core_buf_put(struct smb3_core *c, uint8_t *p, size_t cap) {
  if (!p) return;
  int k = 0; /* an empty slot, else the smallest spare if this one is bigger */
  for (int i = 0; i < CORE_SPARE_BUFS; i++) {
    if (!c->spare[i].p) {
      k = i;
      break;
    }
    if (c->spare[i].cap < c->spare[k].cap) k = i;
  }
  if (c->spare[k].p && c->spare[k].cap >= cap) {
    free(p);
    return;
  }
  free(c->spare[k].p);
  c->spare[k].p = p;
  c->spare[k].cap = cap;
}

/* ---- events ---- */
static void event_push(struct smb3_core *c, struct core_event *e) {
  e->next = NULL;
  if (c->ev_tail)
    c->ev_tail->next = e;
  else
    c->ev_head = e;
  c->ev_tail = e;
}

/* The in-flight list is doubly linked: completing one of hundreds of pipelined READs is O(1). */
static void inflight_add(struct smb3_core *c, struct smb3_chain *ch) {
  ch->prev = NULL;
  ch->next = c->inflight;
  if (c->inflight) c->inflight->prev = ch;
  c->inflight = ch;
  ch->linked = 1;
}

static void inflight_del(struct smb3_core *c, struct smb3_chain *ch) {
  if (!ch->linked) return;
  if (ch->prev)
    ch->prev->next = ch->next;
  else
    c->inflight = ch->next;
  if (ch->next) ch->next->prev = ch->prev;
  ch->linked = 0;
}

static void chain_complete(struct smb3_core *c, struct smb3_chain *ch) {
  struct core_event *e = &ch->ev;
  inflight_del(c, ch);
  ch->next = ch->prev = NULL;
  memset(e, 0, sizeof *e);
  e->chain = ch;
  event_push(c, e);
}

struct core_event *core_take_events(struct smb3_core *c) {
  struct core_event *e = c->ev_head;
  c->ev_head = c->ev_tail = NULL;
  return e;
}

void core_event_free(struct core_event *e) {
  if (e && !e->chain) free(e);
}

int core_is_dead(const struct smb3_core *c) {
  return c->dead != 0;
}
int core_dead_error(const struct smb3_core *c) {
  return c->dead;
}

/* ---- in-flight table ---- */
static struct pending **table_slot(struct smb3_core *c, uint64_t id) {
  return &c->table[id % CORE_BUCKETS];
}

static int table_add(struct smb3_core *c, struct smb3_chain *ch, struct smb3_msg *m) {
  struct pending *p = malloc(sizeof *p);
  if (!p) return SMB3_ENOMEM;
  p->msg = m;
  p->chain = ch;
  struct pending **slot = table_slot(c, m->msg_id);
  p->next = *slot;
  *slot = p;
  return 0;
}

static struct pending *table_take(struct smb3_core *c, uint64_t id, int remove) {
  for (struct pending **pp = table_slot(c, id); *pp; pp = &(*pp)->next) {
    struct pending *p = *pp;
    if (p->msg->msg_id != id) continue;
    if (remove) *pp = p->next;
    return p;
  }
  return NULL;
}

/* ---- sending ---- */
static uint32_t chain_charge(const struct smb3_core *c, struct smb3_chain *ch) {
  uint32_t sum = 0;
  for (int i = 0; i < ch->n; i++) {
    ch->msgs[i].credit_charge = credits_charge(c, &ch->msgs[i]);
    sum += ch->msgs[i].credit_charge;
  }
  return sum;
}

static void msg_header(struct smb3_core *c, struct smb3_chain *ch, int i, size_t elem_len) {
  struct smb3_msg *m = &ch->msgs[i];
  struct smb2_hdr h = {0};
  h.credit_charge = c->neg.dialect >= SMB2_DIALECT_210 ? m->credit_charge : 0;
  h.command = m->command;
  h.credits = credits_request(c, m->credit_charge);
  h.flags = (ch->related && i > ch->related_at) ? SMB2_FLAGS_RELATED_OPERATIONS : 0;
  h.next_command = (i + 1 < ch->n) ? (uint32_t)elem_len : 0;
  h.message_id = m->msg_id;
  h.process_id = 0xFEFF;
  h.tree_id = m->tree_id;
  h.session_id = ch->no_session == 1 ? 0 : c->session_id;
  smb2_hdr_encode(&h, m->hdr);
}

/* Sign one element (header..padding) in place. */
static int msg_sign(struct smb3_core *c, struct smb3_msg *m) {
  struct iovec iov[4] = {{m->hdr, SMB2_HDR_LEN},
                         {m->body, m->body_len},
                         {(void *)m->payload, m->payload_len},
                         {(void *)zero_pad, m->pad_len}};
  uint32_t flags = le32_at(m->hdr + SMB2_HDR_OFF_FLAGS) | SMB2_FLAGS_SIGNED;
  le32_put(m->hdr + SMB2_HDR_OFF_FLAGS, flags);
  memset(m->hdr + SMB2_HDR_OFF_SIG, 0, 16);
  return smb3_sign(c->sign_alg, c->sign_key, iov, 4, m->hdr + SMB2_HDR_OFF_SIG);
}

static void stats_on_send(struct smb3_core *c, const struct smb3_msg *m) {
  c->stats.requests++;
  if (m->command < SMB2_NCOMMANDS) c->stats.per_command[m->command]++;
  if (m->command == SMB2_WRITE) {
    c->stats.writes++;
    c->stats.bytes_written += m->payload_len;
    if (m->payload_len > c->stats.max_write_size) c->stats.max_write_size = (uint32_t)m->payload_len;
  } else if (m->command == SMB2_READ) {
    c->stats.reads++;
    if (m->expect_rsp_len > c->stats.max_read_size) c->stats.max_read_size = m->expect_rsp_len;
  }
}

static void frame_add(struct out_frame *f, const void *p, size_t n) {
  if (!n) return;
  f->iov[f->iovcnt].iov_base = (void *)p;
  f->iov[f->iovcnt].iov_len = n;
  f->iovcnt++;
}

size_t out_frame_len(const struct out_frame *f, int from) {
  size_t n = 0;
  for (int i = from; i < f->iovcnt; i++)
    n += f->iov[i].iov_len;
  return n;
}

/* Signed: everything on a signing session, and on 3.1.1 the TREE_CONNECT of any authenticated
 * session (MS-SMB2 3.2.4.1.1). Encrypted messages are not signed (the transform authenticates). */
static int msg_must_sign(const struct smb3_core *c, const struct smb3_chain *ch, const struct smb3_msg *m) {
  if (!c->established || ch->no_session || c->sealing || c->anon) return 0;
  return c->signing || ch->must_sign ||
         (c->neg.dialect == SMB2_DIALECT_311 && m->command == SMB2_TREE_CONNECT);
}

/* Build headers, sign, and lay the chain out as one frame. */
static int chain_frame(struct smb3_core *c, struct smb3_chain *ch, struct out_frame *f) {
  frame_add(f, f->nbss, 4);
  for (int i = 0; i < ch->n; i++) {
    struct smb3_msg *m = &ch->msgs[i];
    size_t len = SMB2_HDR_LEN + m->body_len + m->payload_len;
    m->pad_len = (i + 1 < ch->n) ? ((8 - (len & 7)) & 7) : 0;
    msg_header(c, ch, i, len + m->pad_len);
    int rc = core_session_on_send(c, m);
    if (rc) return rc;
    int sign = msg_must_sign(c, ch, m);
    /* file data is never in memory here: it can be neither signed nor sealed, and one per frame */
    if (m->payload_in_fd && (sign || (c->sealing && !ch->no_session) || f->has_file || m->payload))
      return SMB3_EINVAL;
    if (sign && (rc = msg_sign(c, m))) return rc;
    m->sign_req = sign;
    frame_add(f, m->hdr, SMB2_HDR_LEN);
    frame_add(f, m->body, m->body_len);
    if (m->payload_in_fd && m->payload_len) {
      f->has_file = 1;
      f->file_iov = f->iovcnt;
      f->file_fd = m->payload_fd;
      f->file_off = m->payload_fd_off;
    }
    frame_add(f, m->payload, m->payload_len);
    frame_add(f, zero_pad, m->pad_len);
    stats_on_send(c, m);
  }
  return 0;
}

static void frame_set_nbss(struct out_frame *f, size_t len) {
  f->nbss[0] = 0;
  f->nbss[1] = (uint8_t)(len >> 16);
  f->nbss[2] = (uint8_t)(len >> 8);
  f->nbss[3] = (uint8_t)len;
}

static int chain_send(struct smb3_core *c, struct smb3_chain *ch) {
  struct out_frame *f = calloc(1, sizeof *f);
  if (!f) return SMB3_ENOMEM;
  uint32_t charge = 0;
  uint64_t first_id = c->next_msg_id;
  for (int i = 0; i < ch->n; i++) {
    struct smb3_msg *m = &ch->msgs[i];
    m->msg_id = c->next_msg_id;
    c->next_msg_id += m->credit_charge ? m->credit_charge : 1;
    charge += m->credit_charge;
  }
  int rc = chain_frame(c, ch, f);
  if (!rc && c->sealing && !ch->no_session) rc = core_seal_frame(c, f);
  size_t len = out_frame_len(f, 1);
  if (!rc && len > 0xFFFFFF) rc = SMB3_EINVAL;
  for (int i = 0; !rc && i < ch->n; i++)
    rc = table_add(c, ch, &ch->msgs[i]);
  if (rc) {
    for (int i = 0; i < ch->n; i++)
      free(table_take(c, ch->msgs[i].msg_id, 1));
    core_buf_put(c, f->owned, f->owned_cap);
    free(f);
    /* Nothing left: the ids go to the next chain (a hole in the sequence would hold back the
     * server's window, MS-SMB2 3.3.1.1, until it fills and the server drops the connection). */
    c->next_msg_id = first_id;
    return rc;
  }
  frame_set_nbss(f, len);
  c->credits -= charge;
  c->in_flight_charge += charge;
  if (c->in_flight_charge > c->stats.credits_max_in_flight)
    c->stats.credits_max_in_flight = c->in_flight_charge;
  c->stats.round_trips++;
  ch->remaining = ch->n;
  inflight_add(c, ch);
  if (c->out_tail)
    c->out_tail->next = f;
  else
    c->out_head = f;
  c->out_tail = f;
  return 0;
}

/* Send waiting chains, in order, while credits last. */
static void wait_queue_run(struct smb3_core *c) {
  while (c->wait_head && !c->dead) {
    struct smb3_chain *ch = c->wait_head;
    uint32_t need = chain_charge(c, ch);
    if (need > c->credits && c->in_flight_charge) return; /* answers in flight will grant more */
    c->wait_head = ch->next;
    if (!c->wait_head) c->wait_tail = NULL;
    ch->next = NULL;
    /* Nothing in flight and still too few credits: the server's whole window is smaller than this
     * request. Fail it alone (callers size requests with core_window()); the connection lives. */
    int rc = need > c->credits ? SMB3_ERANGE : chain_send(c, ch);
    if (rc) {
      ch->error = rc;
      chain_complete(c, ch);
    }
  }
}

int core_submit(struct smb3_core *c, struct smb3_chain *ch, uint64_t now_ns) {
  if (c->dead) return c->dead;
  if (!ch || ch->n < 1 || ch->queued) return SMB3_EINVAL;
  ch->queued = 1;
  ch->error = 0;
  ch->deadline_ns = c->cfg.timeout_ms ? now_ns + (uint64_t)c->cfg.timeout_ms * 1000000u : UINT64_MAX;
  ch->deadline_extended = 0;
  ch->next = NULL;
  if (c->wait_tail)
    c->wait_tail->next = ch;
  else
    c->wait_head = ch;
  c->wait_tail = ch;
  wait_queue_run(c);
  return 0;
}

int core_want_write(const struct smb3_core *c) {
  return c->out_head != NULL && !c->dead;
}

int core_output(struct smb3_core *c, struct iovec *iov, int max) {
  int file_next;
  return core_output_upto_file(c, iov, max, &file_next);
}

int core_output_upto_file(struct smb3_core *c, struct iovec *iov, int max, int *file_next) {
  int n = 0;
  *file_next = 0;
  if (c->dead) return 0;
  for (struct out_frame *f = c->out_head; f && n < max; f = f->next) {
    int i = (f == c->out_head) ? f->cur : 0;
    for (; i < f->iovcnt && n < max; i++) {
      if (f->has_file && i == f->file_iov) {
        *file_next = 1; /* core_output_file() */
        return n;
      }
      size_t skip = (f == c->out_head && i == f->cur) ? f->cur_off : 0;
      iov[n].iov_base = (uint8_t *)f->iov[i].iov_base + skip;
      iov[n].iov_len = f->iov[i].iov_len - skip;
      n++;
    }
  }
  return n;
}

int core_output_file(const struct smb3_core *c, int *fd, uint64_t *off, size_t *len) {
  const struct out_frame *f = c->out_head;
  if (c->dead || !f || !f->has_file || f->cur != f->file_iov) return 0;
  *fd = f->file_fd;
  *off = f->file_off + f->cur_off;
  *len = f->iov[f->cur].iov_len - f->cur_off;
  return 1;
}

void core_output_done(struct smb3_core *c, size_t n) {
  while (n && c->out_head) {
    struct out_frame *f = c->out_head;
    size_t left = f->iov[f->cur].iov_len - f->cur_off;
    if (n < left) {
      f->cur_off += n;
      return;
    }
    n -= left;
    f->cur++;
    f->cur_off = 0;
    if (f->cur == f->iovcnt) {
      c->out_head = f->next;
      if (!c->out_head) c->out_tail = NULL;
      core_buf_put(c, f->owned, f->owned_cap);
      free(f);
    }
  }
}

/* ---- failure ---- */
void core_fail_all(struct smb3_core *c, int err) {
  if (!c->dead) c->dead = err;
  frames_free(c);
  table_clear(c);
  while (c->inflight) {
    struct smb3_chain *ch = c->inflight;
    ch->error = err;
    chain_complete(c, ch);
  }
  while (c->wait_head) {
    struct smb3_chain *ch = c->wait_head;
    c->wait_head = ch->next;
    ch->error = err;
    chain_complete(c, ch);
  }
  c->wait_tail = NULL;
  c->in_flight_charge = 0;
}

int core_check_timeouts(struct smb3_core *c, uint64_t now_ns) {
  for (struct smb3_chain *ch = c->inflight; ch; ch = ch->next)
    if (ch->deadline_ns <= now_ns) {
      core_fail_all(c, SMB3_ETIMEDOUT);
      return 1;
    }
  return 0;
}

/* ---- receiving ---- */
static void msg_finish(struct smb3_core *c, struct pending *p, uint32_t status) {
  struct smb3_msg *m = p->msg;
  struct smb3_chain *ch = p->chain;
  m->done = 1;
  m->status = status;
  c->in_flight_charge -= m->credit_charge <= c->in_flight_charge ? m->credit_charge : c->in_flight_charge;
  free(p);
  if (--ch->remaining == 0) chain_complete(c, ch);
}

static int on_break(struct smb3_core *c, const uint8_t *msg, size_t len) {
  struct core_event *e = calloc(1, sizeof *e);
  if (!e) return SMB3_ENOMEM;
  int rc = smb2_break_decode(msg, len, &e->brk);
  if (rc) {
    free(e);
    return rc;
  }
  event_push(c, e);
  return 0;
}

/* A response body must have its command's StructureSize (and at least its fixed
 * part), or be a well-formed error response (MS-SMB2 2.2.2) when the status is not success. */
static int rsp_body_check(const uint8_t *msg, size_t len, const struct smb2_hdr *h) {
  if (len < SMB2_HDR_LEN + 2) return SMB3_EPROTO;
  /* OPLOCK_BREAK answers come in three layouts (24, 36, 44); smb2_break_decode checks them. */
  if (h->command == SMB2_OPLOCK_BREAK) return 0;
  uint16_t ss = le16_at(msg + SMB2_HDR_LEN);
  uint16_t want = smb2_rsp_structure_size(h->command);
  if (want && ss == want) return len - SMB2_HDR_LEN >= (size_t)(want & ~1u) ? 0 : SMB3_EPROTO;
  struct smb2_error_rsp e;
  if (h->status != NT_STATUS_SUCCESS && ss == 9) return smb2_error_rsp_decode(msg, len, &e) ? SMB3_EPROTO : 0;
  return SMB3_EPROTO;
}

/* A probe's response that did not verify (3.2.5.1.3: "discard the received message"): nothing of
 * it is kept or believed. The credit its request spent comes back (at most one, whatever the
 * header says: an ECHO costs one), so that a probe cannot shrink or grow the window. */
static int probe_discard(struct smb3_core *c, struct pending *p, const struct smb2_hdr *h) {
  credits_grant(c, h->credits ? 1 : 0);
  p->chain->bad_sigs++;
  table_take(c, h->message_id, 1);
  msg_finish(c, p, NT_STATUS_INVALID_SIGNATURE);
  return 0;
}

/* One response message (an element of a possibly compound frame). */
static int recv_msg(struct smb3_core *c, const uint8_t *msg, size_t len, int encrypted) {
  struct smb2_hdr h;
  int rc = smb2_hdr_decode(msg, len, &h);
  if (rc) return rc;
  if (!(h.flags & SMB2_FLAGS_SERVER_TO_REDIR)) return SMB3_EPROTO;
  if (h.message_id == UINT64_MAX) {
    if (h.command != SMB2_OPLOCK_BREAK) return SMB3_EPROTO;
    return on_break(c, msg, len);
  }
  struct pending *p = table_take(c, h.message_id, 0);
  if (!p || p->msg->command != h.command) return SMB3_EPROTO; /* unknown id: a confused or hostile server */
  int interim = h.status == NT_STATUS_PENDING && (h.flags & SMB2_FLAGS_ASYNC_COMMAND);
  if (interim) { /* 3.2.5.1.5: remember AsyncId, keep waiting (no signature check on interim) */
    credits_grant(c, h.credits);
    p->msg->async_id = h.async_id;
    p->msg->got_interim = 1;
    /* The server is working on it: one more full timeout from the original deadline, once per
     * chain. Not forever: every request we send ends (locks are FAIL_IMMEDIATELY, no
     * CHANGE_NOTIFY), and a server that answers STATUS_PENDING and then nothing must not hang
     * the caller (MS-SMB2 3.2.5.1.5 leaves the wait to the client). */
    struct smb3_chain *ch = p->chain;
    if (!ch->deadline_extended && ch->deadline_ns != UINT64_MAX && c->cfg.timeout_ms) {
      uint64_t more = (uint64_t)c->cfg.timeout_ms * 1000000u;
      ch->deadline_ns = ch->deadline_ns > UINT64_MAX - more ? UINT64_MAX : ch->deadline_ns + more;
      ch->deadline_extended = 1;
    }
    return 0;
  }
  if ((rc = rsp_body_check(msg, len, &h))) return rc;
  rc = core_session_on_recv(c, p->msg, msg, len, &h);
  if (rc) return rc;
  if (!encrypted) {
    struct iovec iov = {(void *)msg, len};
    rc = core_verify(c, &iov, 1, &h);
    /* A signed request gets a signed answer (3.3.4.1.1): the TREE_CONNECT of 3.1.1 and
     * VALIDATE_NEGOTIATE_INFO are signed on sessions that do not sign otherwise, and someone on the
     * path must not be able to strip the signature from their answers. */
    if (!rc && !(h.flags & SMB2_FLAGS_SIGNED) && (p->msg->sign_req || core_setup_must_be_signed(c, msg, &h)))
      rc = SMB3_ESIGNATURE;
    if (rc == SMB3_ESIGNATURE && p->chain->probe) return probe_discard(c, p, &h);
    if (rc) return rc;
    if ((h.flags & SMB2_FLAGS_SIGNED) && !p->msg->sign_req && c->established && c->have_key)
      __atomic_store_n(&c->signed_unasked, 1, __ATOMIC_RELEASE);
  }
  credits_grant(c, h.credits);
  struct smb3_msg *m = p->msg;
  /* A READ with a destination keeps only header + fixed part: the data goes to the caller. */
  size_t keep = (h.command == SMB2_READ && m->rd_buf && len > SMB2_HDR_LEN + SMB2_READ_RSP_FIXED)
                    ? SMB2_HDR_LEN + SMB2_READ_RSP_FIXED
                    : len;
  m->rsp = malloc(keep);
  if (!m->rsp) return SMB3_ENOMEM; /* still in the table: core_fail_all() frees it */
  memcpy(m->rsp, msg, keep);
  m->rsp_len = keep;
  if (h.command == SMB2_READ && h.status == NT_STATUS_SUCCESS) {
    struct smb2_read_rsp r;
    if (smb2_read_rsp_decode(msg, len, &r) || r.data_length > m->expect_rsp_len) {
      free(m->rsp); /* a READ answer we cannot trust must not pass for a short read */
      m->rsp = NULL;
      return SMB3_EPROTO;
    }
    c->stats.bytes_read += r.data_length;
    if (m->rd_buf) {
      memcpy(m->rd_buf, r.data, r.data_length);
      m->rd_len = r.data_length;
    }
  }
  table_take(c, h.message_id, 1);
  msg_finish(c, p, h.status);
  return 0;
}

/* Walk the elements of a (compound) frame of plain SMB2 messages. */
static int recv_plain(struct smb3_core *c, const uint8_t *frame, size_t len, int encrypted) {
  size_t off = 0;
  for (;;) {
    if (len - off < SMB2_HDR_LEN) return SMB3_EPROTO;
    uint32_t next = le32_at(frame + off + SMB2_HDR_OFF_NEXT);
    size_t elen = next ? next : len - off;
    if (next && (next < SMB2_HDR_LEN || (next & 7) || next > len - off)) return SMB3_EPROTO;
    int rc = recv_msg(c, frame + off, elen, encrypted);
    if (rc) return rc;
    if (!next) return 0;
    off += next;
  }
}

int core_recv_frame(struct smb3_core *c, uint8_t *frame, size_t len) {
  if (c->dead) return c->dead;
  int rc;
  if (len >= 4 && le32_at(frame) == SMB2_TRANSFORM_ID) {
    uint8_t *plain;
    size_t plain_len;
    rc = core_unseal_frame(c, frame, len, &plain, &plain_len);
    if (!rc) rc = recv_plain(c, plain, plain_len, 1);
  } else if (len >= 4 && le32_at(frame) == SMB2_PROTO_ID) {
    if (c->sealing && c->established)
      rc = SMB3_ENCRYPT; /* 3.2.5.1.1: plaintext after encryption is on */
    else
      rc = recv_plain(c, frame, len, 0);
  } else {
    rc = SMB3_EPROTO;
  }
  if (rc)
    core_fail_all(c, rc);
  else
    wait_queue_run(c);
  return rc;
}

/* Does the READ response whose plaintext head is head (80 bytes) in a message of msg_len bytes
 * go straight to its caller's buffer? */
static int direct_match(struct smb3_core *c, const uint8_t *head, size_t msg_len, int sealed,
                        struct core_direct *d) {
  const size_t fixed = SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
  if (msg_len <= fixed || le32_at(head) != SMB2_PROTO_ID || le16_at(head + SMB2_HDR_OFF_COMMAND) != SMB2_READ)
    return 0;
  if (le32_at(head + SMB2_HDR_OFF_STATUS) != NT_STATUS_SUCCESS || le32_at(head + SMB2_HDR_OFF_NEXT) != 0)
    return 0;
  /* The final response of a request that went async (Samba's threaded reads do) carries the
   * ASYNC flag too; MessageId sits at the same offset in both header forms. */
  struct pending *p = table_take(c, le64_at(head + SMB2_HDR_OFF_MSGID), 0);
  if (!p || !p->msg->rd_buf || p->msg->command != SMB2_READ) return 0;
  struct smb2_read_rsp r;
  if (smb2_read_rsp_decode_head(head, fixed, msg_len, &r)) return 0;
  size_t pad = r.data_offset - fixed;
  if (pad > sizeof d->pad || r.data_length > p->msg->rd_cap ||
      r.data_offset + (size_t)r.data_length != msg_len)
    return 0;
  memcpy(d->head, head, fixed);
  d->msg = p->msg;
  d->frame_len = msg_len;
  d->iovcnt = 0;
  if (pad) d->iov[d->iovcnt++] = (struct iovec){d->pad, pad};
  d->iov[d->iovcnt++] = (struct iovec){p->msg->rd_buf, r.data_length};
  /* Spliced into the caller's pipes only when no byte of it has to be seen here: not sealed (the
   * data is decrypted here), not signed (the signature covers it), no padding in front. The pipes
   * hold rd_cap bytes or more (smb3_pread_pipe_async checks it) and data_length <= rd_cap. */
  d->pipe =
      p->msg->rd_use_pipe && !sealed && !pad && !(le32_at(head + SMB2_HDR_OFF_FLAGS) & SMB2_FLAGS_SIGNED);
  return 1;
}

int core_recv_direct(struct smb3_core *c, const uint8_t *head, size_t head_len, size_t frame_len,
                     struct core_direct *d) {
  const size_t fixed = SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
  d->aead = NULL;
  if (c->dead || head_len < 4) return 0;
  if (le32_at(head) == SMB2_TRANSFORM_ID) {
    /* Decrypt the head (out of place: on a mismatch the frame path starts again from the
     * ciphertext), then the rest as it arrives. */
    uint8_t plain[SMB2_HDR_LEN + SMB2_READ_RSP_FIXED];
    if (!c->established || frame_len <= SMB2_TRANSFORM_HDR_LEN + fixed ||
        !core_unseal_head(c, head, head_len, frame_len, plain, fixed) ||
        !direct_match(c, plain, frame_len - SMB2_TRANSFORM_HDR_LEN, 1, d))
      return 0;
    memcpy(d->tag, head + 4, sizeof d->tag); /* the transform header's Signature */
    d->aead = c->dec_aead;
    d->head_len = SMB2_TRANSFORM_HDR_LEN + fixed;
    return 1;
  }
  /* A plaintext answer on an encrypted session goes the frame way, which refuses it (3.2.5.1.1). */
  if (head_len < fixed || (c->sealing && c->established) || !direct_match(c, head, frame_len, 0, d)) return 0;
  d->head_len = fixed;
  return 1;
}

int core_recv_direct_decrypt(struct core_direct *d, uint8_t *p, size_t len) {
  return d->aead ? smb3_aead_update(d->aead, p, p, len) : 0;
}

static void direct_wipe(struct core_direct *d) {
  for (int i = 0; i < d->iovcnt; i++)
    OPENSSL_cleanse(d->iov[i].iov_base, d->iov[i].iov_len);
}

void core_recv_direct_abort(struct core_direct *d) {
  if (d->aead) direct_wipe(d);
}

int core_recv_direct_done(struct smb3_core *c, struct core_direct *d) {
  struct smb2_hdr h;
  const size_t fixed = SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
  int rc = 0;
  if (d->aead && (rc = smb3_aead_finish(d->aead, d->tag)))
    direct_wipe(d); /* never hand out plaintext that failed authentication (3.2.5.1.1.1) */
  if (!rc) rc = smb2_hdr_decode(d->head, fixed, &h);
  struct pending *p = rc ? NULL : table_take(c, h.message_id, 0);
  if (!rc && (!p || p->msg != d->msg || !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR))) rc = SMB3_EPROTO;
  if (!rc) {
    credits_grant(c, h.credits);
    struct iovec iov[3] = {{d->head, fixed}};
    int n = 1;
    for (int i = 0; i < d->iovcnt && !d->pipe; i++)
      iov[n++] = d->iov[i];
    /* encrypted messages are not signed; a piped answer is unsigned (direct_match), which
     * core_verify refuses on a session that signs without looking at the data */
    if (!d->aead) rc = core_verify(c, iov, n, &h);
  }
  if (!rc) {
    struct smb3_msg *m = d->msg;
    size_t data_len = d->iov[d->iovcnt - 1].iov_len;
    m->rsp = malloc(fixed);
    if (!m->rsp)
      rc = SMB3_ENOMEM;
    else {
      /* Keep header + fixed part; data lives in the caller's buffer. */
      memcpy(m->rsp, d->head, fixed);
      m->rsp_len = fixed;
      m->rd_len = data_len;
      m->rd_piped = d->pipe;
      c->stats.bytes_read += data_len;
      table_take(c, h.message_id, 1);
      msg_finish(c, p, h.status);
    }
  }
  if (rc)
    core_fail_all(c, rc);
  else
    wait_queue_run(c);
  return rc;
}

void core_get_stats(const struct smb3_core *c, struct core_stats *s) {
  *s = c->stats;
}

uint32_t core_window(const struct smb3_core *c) {
  return c->credits + c->in_flight_charge;
}
