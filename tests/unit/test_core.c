/* test_core.c - the sans-I/O connection engine (lib/core) driven with hand-built server frames,
 * no server and no sockets: what the core sends is read back from core_output(), what the
 * "server" answers is fed to core_recv_frame() / core_recv_direct(), and completed chains are
 * taken from core_take_events() and their callbacks run here, as net/ does.
 *
 *  - a response to an unknown MessageId (or with the wrong command) kills the connection: every
 *    queued and in-flight chain fails with SMB3_EPROTO, each callback runs exactly once, and
 *    nothing is accepted or sent afterwards;
 *  - credits are honoured: a chain needing more credits than available waits (is not sent) until
 *    a response grants more, on 2.0.2-style single-credit and on 2.1 multi-credit requests;
 *  - STATUS_PENDING interim responses keep the request waiting (one more timeout, once);
 *  - a compound response completes all elements of the chain, in one frame or several;
 *  - truncated, garbage or inconsistent frames are rejected without crashing;
 *  - a lease break notification becomes a break event; a READ response received "direct" lands
 *    in the caller's buffer;
 *  - a compound answer whose first element is signed the way impacket's smbserver signs it (before
 *    NextCommand and the padding are set) fails the connection, except on the compound probe,
 *    which discards that element alone; a compound signed as MS-SMB2 3.3.4.1.1 says verifies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/core.h"
#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"
#include "util/status.h"
#include "wire_test.h"

#define NOW 1000000000ull
#define TIMEOUT_MS 1000u

/* ---- the engine and its events ---- */
static struct smb3_core *core_make_signing(uint16_t dmin, uint16_t dmax, int sign) {
  struct core_config cfg = {.dialect_min = dmin,
                            .dialect_max = dmax,
                            .credits_target = 64,
                            .timeout_ms = TIMEOUT_MS,
                            .sign_wanted = sign};
  struct smb3_core *c = core_new(&cfg);
  assert_non_null(c);
  return c;
}
static struct smb3_core *core_make(uint16_t dmin, uint16_t dmax) {
  return core_make_signing(dmin, dmax, 0);
}

struct cbrec {
  int calls;
  int error;
};
static void chain_cb(struct smb3_chain *ch, void *arg) {
  struct cbrec *r = arg;
  r->calls++;
  r->error = ch->error;
}

struct events {
  int chains, breaks;
  struct smb2_break brk;
};
/* Take the queued events and run chain callbacks, as net/ does (no lock held here). */
static struct events pump(struct smb3_core *c) {
  struct events ev = {0};
  struct core_event *e = core_take_events(c);
  while (e) {
    struct core_event *next = e->next; /* a chain's event lives in the chain */
    if (e->chain) {
      ev.chains++;
      e->chain->cb(e->chain, e->chain->arg);
    } else {
      ev.breaks++;
      ev.brk = e->brk;
      core_event_free(e);
    }
    e = next;
  }
  return ev;
}

/* ---- requests ---- */
static void msg_echo(struct smb3_msg *m) {
  struct le_wr w;
  assert_int_equal(msg_body_begin(m, SMB2_ECHO, 0, 16, &w), 0);
  assert_int_equal(smb2_simple_req_encode(&w), 0);
  assert_int_equal(msg_body_done(m, &w), 0);
}

static void msg_read(struct smb3_msg *m, void *buf, uint32_t len, uint64_t off) {
  struct smb2_read_req r = {.length = len, .offset = off, .file_id = {1, 2}};
  struct le_wr w;
  assert_int_equal(msg_body_begin(m, SMB2_READ, 7, 64, &w), 0);
  assert_int_equal(smb2_read_req_encode(&w, &r), 0);
  assert_int_equal(msg_body_done(m, &w), 0);
  m->expect_rsp_len = len;
  m->rd_buf = buf;
  m->rd_cap = len;
}

static void msg_create(struct smb3_msg *m, const char *name) {
  struct smb2_create_req r = {.impersonation = 2,
                              .desired_access = SMB2_FILE_READ_ATTRIBUTES,
                              .share_access = SMB2_FILE_SHARE_ALL,
                              .create_disposition = SMB2_FILE_OPEN,
                              .name = name};
  struct le_wr w;
  assert_int_equal(msg_body_begin(m, SMB2_CREATE, 7, 512, &w), 0);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  assert_int_equal(msg_body_done(m, &w), 0);
}

static void msg_query_info(struct smb3_msg *m) {
  struct smb2_query_info_req r = {.info_type = SMB2_0_INFO_FILE,
                                  .file_info_class = 18,
                                  .output_buffer_length = 4096,
                                  .file_id = SMB2_FILE_ID_RELATED};
  struct le_wr w;
  assert_int_equal(msg_body_begin(m, SMB2_QUERY_INFO, 7, 64, &w), 0);
  assert_int_equal(smb2_query_info_req_encode(&w, &r), 0);
  assert_int_equal(msg_body_done(m, &w), 0);
  m->expect_rsp_len = 4096;
}

static void msg_close(struct smb3_msg *m) {
  struct smb2_close_req r = {.file_id = SMB2_FILE_ID_RELATED};
  struct le_wr w;
  assert_int_equal(msg_body_begin(m, SMB2_CLOSE, 7, 64, &w), 0);
  assert_int_equal(smb2_close_req_encode(&w, &r), 0);
  assert_int_equal(msg_body_done(m, &w), 0);
}

static struct smb3_chain *chain_echo(int n, struct cbrec *rec) {
  struct smb3_chain *ch = chain_new(n);
  assert_non_null(ch);
  for (int i = 0; i < n; i++)
    msg_echo(&ch->msgs[i]);
  ch->cb = chain_cb;
  ch->arg = rec;
  return ch;
}

/* One READ of len bytes at off into buf. */
static struct smb3_chain *chain_read(void *buf, uint32_t len, uint64_t off, struct cbrec *rec) {
  struct smb3_chain *ch = chain_new(1);
  assert_non_null(ch);
  msg_read(&ch->msgs[0], buf, len, off);
  ch->cb = chain_cb;
  ch->arg = rec;
  return ch;
}

/* CREATE + QUERY_INFO + CLOSE, related (MS-SMB2 3.2.4.1.4) */
static struct smb3_chain *chain_cqc(struct cbrec *rec) {
  struct smb3_chain *ch = chain_new(3);
  assert_non_null(ch);
  msg_create(&ch->msgs[0], "dir\\file.txt");
  msg_query_info(&ch->msgs[1]);
  msg_close(&ch->msgs[2]);
  ch->related = 1;
  ch->cb = chain_cb;
  ch->arg = rec;
  return ch;
}

/* ---- what the core sends ---- */
struct sent {
  uint64_t mid;
  uint16_t cmd, charge, creq;
  uint32_t flags, next;
  int frame; /* index of the frame it travelled in */
};

/* Drain core_output into sent[]; returns the number of messages, *frames the number of frames. */
static int drain(struct smb3_core *c, struct sent *out, int max, int *frames) {
  static uint8_t buf[1 << 20];
  size_t len = 0;
  for (;;) {
    struct iovec iov[64];
    int n = core_output(c, iov, 64);
    if (n <= 0) break;
    size_t chunk = 0;
    for (int i = 0; i < n; i++) {
      assert_true(len + iov[i].iov_len <= sizeof buf);
      memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
      len += iov[i].iov_len;
      chunk += iov[i].iov_len;
    }
    core_output_done(c, chunk);
  }
  assert_int_equal(core_want_write(c), 0);
  int nmsg = 0, nf = 0;
  size_t off = 0;
  while (off < len) {
    assert_true(len - off >= 4);
    assert_int_equal(buf[off], 0);
    size_t flen = (size_t)buf[off + 1] << 16 | (size_t)buf[off + 2] << 8 | buf[off + 3];
    off += 4;
    assert_true(flen <= len - off);
    size_t moff = 0;
    for (;;) {
      struct smb2_hdr h;
      assert_int_equal(smb2_hdr_decode(buf + off + moff, flen - moff, &h), 0);
      assert_true(nmsg < max);
      out[nmsg++] =
          (struct sent){h.message_id, h.command, h.credit_charge, h.credits, h.flags, h.next_command, nf};
      if (!h.next_command) break;
      assert_int_equal(h.next_command % 8, 0); /* 3.2.4.1.4: 8-byte aligned */
      moff += h.next_command;
      assert_true(moff < flen);
    }
    off += flen;
    nf++;
  }
  if (frames) *frames = nf;
  return nmsg;
}

/* Submit ch and drain: exactly one message must go out; returns it. */
static struct sent submit_one(struct smb3_core *c, struct smb3_chain *ch) {
  assert_int_equal(core_submit(c, ch, NOW), 0);
  struct sent sent[2];
  assert_int_equal(drain(c, sent, 2, NULL), 1);
  return sent[0];
}

/* ---- what the "server" answers ---- */
/* Patch a response built by wire_test.h: MessageId, credits granted, status, extra flags. */
static void rsp_hdr(uint8_t *msg, uint64_t mid, uint16_t credits, uint32_t status, uint32_t flags,
                    uint64_t async_id) {
  struct smb2_hdr h;
  assert_int_equal(smb2_hdr_decode(msg, SMB2_HDR_LEN, &h), 0);
  h.message_id = mid;
  h.credits = credits;
  h.status = status;
  h.flags = SMB2_FLAGS_SERVER_TO_REDIR | flags;
  h.async_id = async_id;
  h.session_id = 0;
  smb2_hdr_encode(&h, msg);
}

static size_t echo_rsp(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_ECHO);
  le_put_u16(&w, 4);
  le_put_u16(&w, 0);
  return w.err ? 0 : w.off;
}

static size_t status_rsp(uint8_t *buf, size_t cap, uint16_t cmd, uint32_t status) {
  size_t n = wt_error_rsp(buf, cap, cmd, NULL, 0);
  le32_put(buf + SMB2_HDR_OFF_STATUS, status);
  return n;
}

/* Feed one frame (a heap copy of exactly len bytes, so ASan sees any overread). */
static int feed(struct smb3_core *c, const uint8_t *frame, size_t len) {
  uint8_t *copy = malloc(len ? len : 1);
  assert_non_null(copy);
  memcpy(copy, frame, len);
  int rc = core_recv_frame(c, copy, len);
  free(copy);
  return rc;
}

static void feed_ok(struct smb3_core *c, const uint8_t *frame, size_t len) {
  int rc = feed(c, frame, len);
  if (rc) fail_msg("core_recv_frame rejected a valid frame: %d (%s)", rc, smb3_strerror(rc));
}

/* Answer message `mid` of an ECHO with `credits` granted. */
static void answer_echo(struct smb3_core *c, uint64_t mid, uint16_t credits) {
  uint8_t b[128];
  size_t n = echo_rsp(b, sizeof b);
  rsp_hdr(b, mid, credits, 0, 0, 0);
  feed_ok(c, b, n);
}

/* Append element msg to a compound frame (previous element's NextCommand is set, 8-aligned). */
struct cframe {
  uint8_t buf[8192];
  size_t len, last;
  int n;
};
static void cframe_add(struct cframe *f, const uint8_t *msg, size_t n) {
  if (f->n) {
    size_t pad = (8 - (f->len - f->last) % 8) % 8;
    memset(f->buf + f->len, 0, pad);
    f->len += pad;
    le32_put(f->buf + f->last + SMB2_HDR_OFF_NEXT, (uint32_t)(f->len - f->last));
  }
  assert_true(f->len + n <= sizeof f->buf);
  memcpy(f->buf + f->len, msg, n);
  f->last = f->len;
  f->len += n;
  f->n++;
}

/* ---- tests ---- */
static void test_unknown_msgid_kills_connection(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  struct cbrec ra = {0}, rb = {0}, rc_ = {0};
  struct smb3_chain *a = chain_echo(1, &ra), *b = chain_echo(1, &rb);
  assert_int_equal(core_submit(c, a, NOW), 0);
  assert_int_equal(core_submit(c, b, NOW), 0); /* waits: one credit only */
  struct sent sent[8];
  assert_int_equal(drain(c, sent, 8, NULL), 1);
  uint8_t m[128];
  size_t n = echo_rsp(m, sizeof m);
  rsp_hdr(m, sent[0].mid + 77, 5, 0, 0, 0);
  int rc = feed(c, m, n);
  assert_int_equal(rc, SMB3_EPROTO);
  assert_true(core_is_dead(c));
  assert_int_equal(core_dead_error(c), SMB3_EPROTO);
  struct events ev = pump(c);
  assert_int_equal(ev.chains, 2);
  assert_int_equal(ra.calls, 1);
  assert_int_equal(rb.calls, 1);
  assert_int_equal(ra.error, SMB3_EPROTO);
  assert_int_equal(rb.error, SMB3_EPROTO);
  /* nothing more: not the real answer, not a new chain, not a second failure */
  rsp_hdr(m, sent[0].mid, 5, 0, 0, 0);
  assert_true(feed(c, m, n) < 0);
  struct smb3_chain *d = chain_echo(1, &rc_);
  assert_true(core_submit(c, d, NOW) < 0);
  core_fail_all(c, SMB3_ECLOSED);
  ev = pump(c);
  assert_int_equal(ev.chains, 0);
  assert_int_equal(ra.calls, 1);
  assert_int_equal(rb.calls, 1);
  assert_int_equal(rc_.calls, 0);
  struct sent none[2];
  assert_int_equal(drain(c, none, 2, NULL), 0);
  chain_free(a);
  chain_free(b);
  chain_free(d);
  core_free(c);
}

static void test_wrong_command_kills_connection(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  struct cbrec ra = {0};
  struct smb3_chain *a = chain_echo(1, &ra);
  struct sent sent = submit_one(c, a);
  uint8_t m[256];
  size_t n = wt_close_rsp(m, sizeof m); /* a CLOSE response to our ECHO's MessageId */
  rsp_hdr(m, sent.mid, 1, 0, 0, 0);
  assert_int_equal(feed(c, m, n), SMB3_EPROTO);
  pump(c);
  assert_int_equal(ra.calls, 1);
  assert_int_equal(ra.error, SMB3_EPROTO);
  chain_free(a);
  core_free(c);
}

/* The credit tests' start, on single-credit requests (no multi-credit before a 2.1 NEGOTIATE: the
 * core starts with 1): ECHO a answered with a grant of 3, then ECHO cc (sent: 2 credits left) and
 * the 3-request chain b, which must wait. */
struct credit_fixture {
  struct smb3_core *c;
  struct smb3_chain *a, *b, *cc;
  struct cbrec ra, rb, rcc;
  uint64_t mid_a, mid_cc;
};
static void credit_setup(struct credit_fixture *x) {
  *x = (struct credit_fixture){.c = core_make(0x0202, 0x0311)};
  x->a = chain_echo(1, &x->ra);
  x->mid_a = submit_one(x->c, x->a).mid;
  answer_echo(x->c, x->mid_a, 3); /* now 3 credits */
  pump(x->c);
  assert_int_equal(x->ra.calls, 1);
  assert_int_equal(x->ra.error, 0);
  x->cc = chain_echo(1, &x->rcc); /* takes 1: 2 left */
  assert_int_equal(core_submit(x->c, x->cc, NOW), 0);
  x->b = chain_echo(3, &x->rb); /* needs 3: must wait */
  assert_int_equal(core_submit(x->c, x->b, NOW), 0);
  struct sent sent[16];
  int n = drain(x->c, sent, 16, NULL);
  if (n != 1) fail_msg("with 2 credits left, %d messages were sent; a 3-request chain must wait", n);
  x->mid_cc = sent[0].mid;
  assert_true(x->mid_cc > x->mid_a);
  assert_int_equal(x->rb.calls, 0);
}
static void credit_teardown(struct credit_fixture *x) {
  chain_free(x->a);
  chain_free(x->b);
  chain_free(x->cc);
  core_free(x->c);
}

static void test_credits_wait_for_grant(void **s) {
  (void)s;
  struct credit_fixture x;
  credit_setup(&x);
  answer_echo(x.c, x.mid_cc,
              0); /* grants nothing: still 2 < 3, but nothing in flight would ever grant more */
  pump(x.c);
  assert_int_equal(x.rcc.calls, 1);
  /* the core must not send B on 2 credits */
  struct sent sent[16];
  assert_int_equal(drain(x.c, sent, 16, NULL), 0);
  /* whatever it decided for B (fail it, or keep it waiting), its callback runs at most once */
  core_fail_all(x.c, SMB3_ECLOSED);
  pump(x.c);
  assert_int_equal(x.rb.calls, 1);
  credit_teardown(&x);
}

static void test_credits_granted_release_waiting_chain(void **s) {
  (void)s;
  struct credit_fixture x;
  credit_setup(&x);
  answer_echo(x.c, x.mid_cc, 1); /* 2 + 1 = 3: now B fits */
  pump(x.c);
  struct sent sent[16];
  int frames;
  int n = drain(x.c, sent, 16, &frames);
  if (n != 3 || frames != 1)
    fail_msg("after the grant: %d messages in %d frames, want the 3-request chain in 1", n, frames);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(sent[i].cmd, SMB2_ECHO);
    assert_int_equal(sent[i].mid, x.mid_cc + 1 + (uint64_t)i); /* consecutive, never reused */
  }
  /* a compound answer completes B once */
  struct cframe f = {0};
  for (int i = 0; i < 3; i++) {
    uint8_t m[128];
    size_t k = echo_rsp(m, sizeof m);
    rsp_hdr(m, sent[i].mid, 1, 0, 0, 0);
    cframe_add(&f, m, k);
  }
  feed_ok(x.c, f.buf, f.len);
  struct events ev = pump(x.c);
  assert_int_equal(ev.chains, 1);
  assert_int_equal(x.rb.calls, 1);
  assert_int_equal(x.rb.error, 0);
  for (int i = 0; i < 3; i++)
    assert_true(x.b->msgs[i].done);
  credit_teardown(&x);
}

/* Negotiate 2.1 (LARGE_MTU) with a hand-built response so that requests cost ceil(len / 64K). */
static struct smb3_core *core_21_signing(uint16_t grant, int sign) {
  struct smb3_core *c = core_make_signing(0x0210, 0x0210, sign);
  struct smb3_chain *ch = chain_new(1);
  assert_non_null(ch);
  assert_int_equal(core_build_negotiate(c, ch), 0);
  struct cbrec r = {0};
  ch->cb = chain_cb;
  ch->arg = &r;
  struct sent sent = submit_one(c, ch);
  assert_int_equal(sent.cmd, SMB2_NEGOTIATE);
  uint8_t m[512];
  size_t n = wt_negotiate_rsp(m, sizeof m, 0x0210, 0);
  rsp_hdr(m, sent.mid, grant, 0, 0, 0);
  feed_ok(c, m, n);
  pump(c);
  assert_int_equal(r.calls, 1);
  assert_int_equal(core_apply_negotiate(c, ch, NULL), 0);
  assert_int_equal(core_negotiated(c)->dialect, 0x0210);
  chain_free(ch);
  return c;
}
static struct smb3_core *core_21(uint16_t grant) {
  return core_21_signing(grant, 0);
}

static void test_multicredit_read_waits_for_credits(void **s) {
  (void)s;
  struct smb3_core *c = core_21(5); /* 5 credits */
  static uint8_t buf1[256 * 1024], buf2[256 * 1024];
  struct cbrec r1 = {0}, r2 = {0};
  struct smb3_chain *a = chain_read(buf1, sizeof buf1, 0, &r1),
                    *b = chain_read(buf2, sizeof buf2, sizeof buf1, &r2);
  assert_int_equal(core_submit(c, a, NOW), 0); /* charge 4: 1 left */
  assert_int_equal(core_submit(c, b, NOW), 0); /* charge 4: waits */
  struct sent sent[4];
  int n = drain(c, sent, 4, NULL);
  if (n != 1) fail_msg("two 256 KiB READs (4 credits each) on 5 credits: %d sent, want 1", n);
  assert_int_equal(sent[0].charge, 4);
  assert_true(sent[0].creq >= 4);
  uint64_t mid_a = sent[0].mid;
  /* the READ answer (64 bytes of data) grants 4: B goes */
  uint8_t *m = malloc(1024);
  assert_non_null(m);
  size_t k = wt_read_rsp(m, 1024, 80, 64);
  rsp_hdr(m, mid_a, 4, 0, 0, 0);
  feed_ok(c, m, k);
  pump(c);
  assert_int_equal(r1.calls, 1);
  assert_int_equal(r1.error, 0);
  assert_int_equal(a->msgs[0].rd_len, 64);
  for (int i = 0; i < 64; i++)
    assert_int_equal(buf1[i], (uint8_t)i);
  n = drain(c, sent, 4, NULL);
  assert_int_equal(n, 1);
  assert_int_equal(sent[0].charge, 4);
  assert_int_equal(sent[0].mid, mid_a + 4); /* a 4-credit request consumes 4 MessageIds */
  /* the second READ completes via direct receive into the caller's buffer */
  k = wt_read_rsp(m, 1024, 80, 200);
  rsp_hdr(m, sent[0].mid, 1, 0, 0, 0);
  struct core_direct d;
  int dr = core_recv_direct(c, m, 80, k, &d);
  if (dr != 1) fail_msg("core_recv_direct on a READ response with a destination buffer = %d, want 1", dr);
  size_t off = 80;
  for (int i = 0; i < d.iovcnt; i++) {
    memcpy(d.iov[i].iov_base, m + off, d.iov[i].iov_len);
    off += d.iov[i].iov_len;
  }
  assert_int_equal(off, k);
  assert_int_equal(core_recv_direct_done(c, &d), 0);
  pump(c);
  assert_int_equal(r2.calls, 1);
  assert_int_equal(b->msgs[0].rd_len, 200);
  for (int i = 0; i < 200; i++)
    assert_int_equal(buf2[i], (uint8_t)i);
  free(m);
  chain_free(a);
  chain_free(b);
  core_free(c);
}

/* A request larger than the server's whole window, with nothing in flight to grant more, fails
 * alone at submit (SMB3_ERANGE) and the connection lives. The chain's error is set when core_submit
 * returns, which is how net/ knows to wake its I/O thread for the callback (nothing may ever arrive
 * from the server to do it). */
static void test_oversized_request_fails_alone(void **s) {
  (void)s;
  struct smb3_core *c = core_21(2); /* 2 credits, nothing in flight */
  static uint8_t buf[256 * 1024];
  struct cbrec r = {0};
  struct smb3_chain *a = chain_read(buf, sizeof buf, 0, &r); /* charge 4 */
  assert_int_equal(core_submit(c, a, NOW), 0);
  if (a->error != SMB3_ERANGE)
    fail_msg("an oversized request's failure is not set at submit (error %d)", a->error);
  struct sent sent[2];
  assert_int_equal(drain(c, sent, 2, NULL), 0);
  pump(c);
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.error, SMB3_ERANGE);
  assert_int_equal(pump(c).chains, 0); /* once */
  assert_false(core_is_dead(c));
  struct cbrec re = {0};
  struct smb3_chain *e = chain_echo(1, &re); /* the connection still sends */
  assert_int_equal(submit_one(c, e).cmd, SMB2_ECHO);
  chain_free(a);
  chain_free(e);
  core_free(c);
}

static void test_pending_interim_keeps_waiting(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  static uint8_t buf[4096];
  struct cbrec r = {0};
  struct smb3_chain *a = chain_read(buf, sizeof buf, 0, &r);
  struct sent sent = submit_one(c, a);
  uint8_t m[1024];
  size_t n = status_rsp(m, sizeof m, SMB2_READ, NT_STATUS_PENDING);
  rsp_hdr(m, sent.mid, 1, NT_STATUS_PENDING, SMB2_FLAGS_ASYNC_COMMAND, 0x4242);
  feed_ok(c, m, n);
  struct events ev = pump(c);
  assert_int_equal(ev.chains, 0);
  assert_int_equal(r.calls, 0);
  assert_false(a->msgs[0].done);
  /* an interim answer means "working on it": the request does not time out at its deadline but
   * gets one more timeout (not forever: test_pending_forever_times_out) */
  assert_int_equal(core_check_timeouts(c, NOW + (TIMEOUT_MS * 3ull / 2) * 1000000ull), 0);
  assert_false(core_is_dead(c));
  /* a second interim is harmless too */
  feed_ok(c, m, n);
  assert_int_equal(pump(c).chains, 0);
  /* the final answer (async form) completes it */
  n = wt_read_rsp(m, sizeof m, 80, 100);
  rsp_hdr(m, sent.mid, 0, 0, SMB2_FLAGS_ASYNC_COMMAND, 0x4242);
  feed_ok(c, m, n);
  ev = pump(c);
  assert_int_equal(ev.chains, 1);
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.error, 0);
  assert_int_equal(a->msgs[0].status, 0);
  assert_int_equal(a->msgs[0].rd_len, 100);
  assert_int_equal(buf[99], 99);
  chain_free(a);
  core_free(c);
}

/* A server that answers STATUS_PENDING and then nothing (tests/hostile pending_forever): the one
 * extension an interim gives ends, and further interims do not extend it again. */
static void test_pending_forever_times_out(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  static uint8_t buf[4096];
  struct cbrec r = {0};
  struct smb3_chain *a = chain_read(buf, sizeof buf, 0, &r);
  struct sent sent = submit_one(c, a);
  uint8_t m[1024];
  size_t n = status_rsp(m, sizeof m, SMB2_READ, NT_STATUS_PENDING);
  rsp_hdr(m, sent.mid, 1, NT_STATUS_PENDING, SMB2_FLAGS_ASYNC_COMMAND, 0x4242);
  feed_ok(c, m, n);
  feed_ok(c, m, n);
  feed_ok(c, m, n);
  assert_int_equal(pump(c).chains, 0);
  assert_int_equal(core_check_timeouts(c, NOW + (2ull * TIMEOUT_MS - 1) * 1000000ull), 0);
  assert_int_equal(core_check_timeouts(c, NOW + (2ull * TIMEOUT_MS + 1) * 1000000ull), 1);
  pump(c);
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.error, SMB3_ETIMEDOUT);
  chain_free(a);
  core_free(c);
}

/* Without an interim response the same request does time out (so the test above means something). */
static void test_timeout_without_interim(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  struct cbrec r = {0};
  struct smb3_chain *a = chain_echo(1, &r);
  submit_one(c, a);
  assert_int_equal(core_check_timeouts(c, NOW + 1000ull), 0);
  assert_int_equal(core_check_timeouts(c, NOW + (TIMEOUT_MS + 1ull) * 1000000ull), 1);
  pump(c);
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.error, SMB3_ETIMEDOUT);
  chain_free(a);
  core_free(c);
}

/* Get `credits` credits with one ECHO round trip. */
static void top_up(struct smb3_core *c, uint16_t credits) {
  struct cbrec r = {0};
  struct smb3_chain *e = chain_echo(1, &r);
  answer_echo(c, submit_one(c, e).mid, credits);
  pump(c);
  assert_int_equal(r.calls, 1);
  chain_free(e);
}

static void check_cqc_sent(const struct sent *sent, int n, int frames) {
  assert_int_equal(n, 3);
  assert_int_equal(frames, 1);
  assert_int_equal(sent[0].cmd, SMB2_CREATE);
  assert_int_equal(sent[1].cmd, SMB2_QUERY_INFO);
  assert_int_equal(sent[2].cmd, SMB2_CLOSE);
  assert_false(sent[0].flags & SMB2_FLAGS_RELATED_OPERATIONS);
  assert_true(sent[1].flags & SMB2_FLAGS_RELATED_OPERATIONS);
  assert_true(sent[2].flags & SMB2_FLAGS_RELATED_OPERATIONS);
  assert_true(sent[0].next > 0 && sent[1].next > 0);
  assert_int_equal(sent[2].next, 0);
}

/* The compound tests' common start: an engine with 8 credits that has sent the CREATE +
 * QUERY_INFO + CLOSE chain as one compound frame (checked), its MessageIds in sent[0..2]. */
struct cqc_fixture {
  struct smb3_core *c;
  struct smb3_chain *ch;
  struct cbrec r;
  struct sent sent[4];
};
static void cqc_setup(struct cqc_fixture *x) {
  x->c = core_make(0x0202, 0x0311);
  top_up(x->c, 8);
  x->r = (struct cbrec){0};
  x->ch = chain_cqc(&x->r);
  assert_int_equal(core_submit(x->c, x->ch, NOW), 0);
  int frames;
  int n = drain(x->c, x->sent, 4, &frames);
  check_cqc_sent(x->sent, n, frames);
}
static void cqc_teardown(struct cqc_fixture *x) {
  chain_free(x->ch);
  core_free(x->c);
}

/* The answer to the chain in one frame: element i is msgs[i] (lens[i] bytes, patched in place)
 * with the MessageId it answers, one credit, status, and RELATED on all but the first. */
static void cqc_answer_frame(struct cframe *f, const struct cqc_fixture *x, uint8_t *const msgs[3],
                             const size_t lens[3], uint32_t status) {
  memset(f, 0, sizeof *f);
  for (int i = 0; i < 3; i++) {
    rsp_hdr(msgs[i], x->sent[i].mid, 1, status, i ? SMB2_FLAGS_RELATED_OPERATIONS : 0, 0);
    cframe_add(f, msgs[i], lens[i]);
  }
}

static void test_compound_response_completes_all(void **s) {
  (void)s;
  struct cqc_fixture x;
  cqc_setup(&x);
  struct smb3_chain *ch = x.ch;
  static uint8_t m0[1024], m1[1024], m2[1024];
  uint8_t info[100];
  for (int i = 0; i < 100; i++)
    info[i] = (uint8_t)(i * 3);
  size_t lens[3] = {wt_create_rsp(m0, sizeof m0),
                    wt_buf_rsp(m1, sizeof m1, SMB2_QUERY_INFO, info, sizeof info),
                    wt_close_rsp(m2, sizeof m2)};
  struct cframe f;
  cqc_answer_frame(&f, &x, (uint8_t *const[3]){m0, m1, m2}, lens, 0);
  feed_ok(x.c, f.buf, f.len);
  struct events ev = pump(x.c);
  assert_int_equal(ev.chains, 1);
  assert_int_equal(x.r.calls, 1);
  assert_int_equal(x.r.error, 0);
  for (int i = 0; i < 3; i++) {
    assert_true(ch->msgs[i].done);
    assert_int_equal(ch->msgs[i].status, 0);
    assert_non_null(ch->msgs[i].rsp);
  }
  /* each element's response is there, decodable by the element's decoder */
  struct smb2_create_rsp cr;
  assert_int_equal(smb2_create_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &cr), 0);
  struct smb2_query_info_rsp qr;
  assert_int_equal(smb2_query_info_rsp_decode(ch->msgs[1].rsp, ch->msgs[1].rsp_len, &qr), 0);
  assert_int_equal(qr.len, sizeof info);
  assert_memory_equal(qr.buf, info, sizeof info);
  struct smb2_close_rsp clr;
  assert_int_equal(smb2_close_rsp_decode(ch->msgs[2].rsp, ch->msgs[2].rsp_len, &clr), 0);
  cqc_teardown(&x);
}

/* A failing CREATE: the server fails the related requests with the same status. */
static void test_compound_error_response(void **s) {
  (void)s;
  struct cqc_fixture x;
  cqc_setup(&x);
  static uint8_t m[3][256];
  uint16_t cmds[3] = {SMB2_CREATE, SMB2_QUERY_INFO, SMB2_CLOSE};
  size_t lens[3];
  for (int i = 0; i < 3; i++)
    lens[i] = status_rsp(m[i], sizeof m[i], cmds[i], NT_STATUS_OBJECT_NAME_NOT_FOUND);
  struct cframe f;
  cqc_answer_frame(&f, &x, (uint8_t *const[3]){m[0], m[1], m[2]}, lens, NT_STATUS_OBJECT_NAME_NOT_FOUND);
  feed_ok(x.c, f.buf, f.len);
  pump(x.c);
  assert_int_equal(x.r.calls, 1);
  assert_int_equal(x.r.error, 0);
  for (int i = 0; i < 3; i++) {
    assert_true(x.ch->msgs[i].done);
    assert_int_equal(x.ch->msgs[i].status, NT_STATUS_OBJECT_NAME_NOT_FOUND);
  }
  cqc_teardown(&x);
}

/* The server may answer the elements of a compound in separate frames (e.g. one went async). */
static void test_compound_split_response(void **s) {
  (void)s;
  struct cqc_fixture x;
  cqc_setup(&x);
  struct smb3_core *c = x.c;
  struct smb3_chain *ch = x.ch;
  const struct sent *sent = x.sent;
  struct cbrec *r = &x.r;
  static uint8_t m[1024];
  uint8_t info[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  /* element 1 first (out of order), then 0, then 2 */
  size_t k = wt_buf_rsp(m, sizeof m, SMB2_QUERY_INFO, info, sizeof info);
  rsp_hdr(m, sent[1].mid, 1, 0, SMB2_FLAGS_RELATED_OPERATIONS, 0);
  feed_ok(c, m, k);
  assert_int_equal(pump(c).chains, 0);
  k = wt_create_rsp(m, sizeof m);
  rsp_hdr(m, sent[0].mid, 1, 0, 0, 0);
  feed_ok(c, m, k);
  assert_int_equal(pump(c).chains, 0);
  assert_int_equal(r->calls, 0);
  k = wt_close_rsp(m, sizeof m);
  rsp_hdr(m, sent[2].mid, 1, 0, SMB2_FLAGS_RELATED_OPERATIONS, 0);
  feed_ok(c, m, k);
  assert_int_equal(pump(c).chains, 1);
  assert_int_equal(r->calls, 1);
  for (int i = 0; i < 3; i++)
    assert_true(ch->msgs[i].done);
  /* a duplicate answer to an element already answered is an unknown MessageId now */
  assert_int_equal(feed(c, m, k), SMB3_EPROTO);
  pump(c);
  assert_int_equal(r->calls, 1);
  cqc_teardown(&x);
}

/* ---- bad frames ---- */
enum bad_kind {
  BAD_EMPTY,
  BAD_3_BYTES,
  BAD_SHORT_HEADER,
  BAD_STRUCTURE_SIZE,
  BAD_NOT_A_RESPONSE,
  BAD_NEXT_UNALIGNED,
  BAD_NEXT_BEYOND_END,
  BAD_NEXT_TOO_SMALL,
  BAD_SECOND_ELEMENT_SHORT,
  BAD_TRANSFORM_NO_SESSION,
  BAD_COMPRESSED,
  BAD_GARBAGE,
  BAD_READ_DATA_BEYOND_FRAME,
  BAD_READ_OFFSET_INSIDE_HEADER,
  BAD_READ_TRUNCATED_BODY,
  BAD_KINDS
};
static const char *const bad_names[BAD_KINDS] = {
    "empty frame",
    "3 bytes",
    "truncated header",
    "wrong header StructureSize",
    "no SERVER_TO_REDIR flag",
    "unaligned NextCommand",
    "NextCommand beyond the frame",
    "NextCommand smaller than a header",
    "second element truncated",
    "transform header without a session",
    "compression header (never negotiated)",
    "random garbage",
    "READ: DataLength beyond the frame",
    "READ: DataOffset inside the header",
    "READ: body truncated",
};

static size_t bad_frame(enum bad_kind k, uint64_t mid, uint8_t *f, size_t cap) {
  size_t n = wt_read_rsp(f, cap, 80, 32);
  rsp_hdr(f, mid, 1, 0, 0, 0);
  switch (k) {
  case BAD_EMPTY:
    return 0;
  case BAD_3_BYTES:
    return 3;
  case BAD_SHORT_HEADER:
    return 40;
  case BAD_STRUCTURE_SIZE:
    f[4] = 63;
    return n;
  case BAD_NOT_A_RESPONSE:
    le32_put(f + SMB2_HDR_OFF_FLAGS, 0);
    return n;
  case BAD_NEXT_UNALIGNED:
    le32_put(f + SMB2_HDR_OFF_NEXT, 67);
    return n;
  case BAD_NEXT_BEYOND_END:
    le32_put(f + SMB2_HDR_OFF_NEXT, 4096);
    return n;
  case BAD_NEXT_TOO_SMALL:
    le32_put(f + SMB2_HDR_OFF_NEXT, 8);
    return n;
  case BAD_SECOND_ELEMENT_SHORT: /* a valid READ answer, then 40 bytes of a second header */
    le32_put(f + SMB2_HDR_OFF_NEXT, (uint32_t)((n + 7) & ~(size_t)7));
    memset(f + n, 0, ((n + 7) & ~(size_t)7) - n);
    n = (n + 7) & ~(size_t)7;
    memcpy(f + n, f, 40);
    return n + 40;
  case BAD_TRANSFORM_NO_SESSION:
    memset(f, 0x33, 52 + 64);
    le32_put(f, SMB2_TRANSFORM_ID);
    le32_put(f + 36, 64); /* OriginalMessageSize */
    return 52 + 64;
  case BAD_COMPRESSED:
    le32_put(f, SMB2_COMPRESSION_ID);
    return n;
  case BAD_GARBAGE:
    for (size_t i = 0; i < 200; i++)
      f[i] = (uint8_t)(i * 131 + 7);
    return 200;
  case BAD_READ_DATA_BEYOND_FRAME:
    le32_put(f + SMB2_HDR_LEN + 4, 100000);
    return n;
  case BAD_READ_OFFSET_INSIDE_HEADER:
    f[SMB2_HDR_LEN + 2] = 16;
    return n;
  case BAD_READ_TRUNCATED_BODY:
    return SMB2_HDR_LEN + 6;
  default:
    return n;
  }
}

static void test_bad_frames_rejected(void **s) {
  (void)s;
  char accepted[2048] = "";
  for (int k = 0; k < BAD_KINDS; k++) {
    struct smb3_core *c = core_make(0x0202, 0x0311);
    static uint8_t buf[4096];
    struct cbrec r = {0};
    struct smb3_chain *a = chain_read(buf, sizeof buf, 0, &r);
    struct sent sent = submit_one(c, a);
    static uint8_t f[8192];
    memset(f, 0, sizeof f);
    size_t n = bad_frame((enum bad_kind)k, sent.mid, f, sizeof f);
    int rc = feed(c, f, n);
    pump(c);
    /* Rejected: either the frame (and the connection) fails, or the request completes with an error. */
    int rejected = rc < 0 || (r.calls == 1 && r.error != 0);
    if (!rejected) { /* collect, so that one run names every kind that gets through */
      size_t used = strlen(accepted);
      snprintf(accepted + used, sizeof accepted - used,
               "\n  %s: accepted (core_recv_frame = %d, callback ran %d times, error %d, status 0x%x, %zu "
               "bytes read)",
               bad_names[k], rc, r.calls, r.error, a->msgs[0].status, a->msgs[0].rd_len);
    }
    if (rc < 0) {
      assert_true(core_is_dead(c));
      assert_int_equal(r.calls, 1); /* completed once */
      /* the first element of BAD_SECOND_ELEMENT_SHORT is a valid answer to our READ */
      if (k != BAD_SECOND_ELEMENT_SHORT && r.error >= 0)
        fail_msg("%s: frame rejected (%d) but the request completed without an error", bad_names[k], rc);
    }
    core_fail_all(c, SMB3_ECLOSED);
    pump(c);
    assert_int_equal(r.calls, 1);
    chain_free(a);
    core_free(c);
  }
  if (accepted[0]) fail_msg("bad frames not rejected:%s", accepted);
}

/* Every prefix of a valid compound answer is rejected (or, for a prefix ending exactly at an
 * element boundary, leaves the rest pending) and never crashes. */
static void test_truncated_compound_prefixes(void **s) {
  (void)s;
  static uint8_t m0[1024], m1[1024], m2[1024];
  size_t n0 = wt_create_rsp(m0, sizeof m0);
  uint8_t info[40] = {0};
  size_t n1 = wt_buf_rsp(m1, sizeof m1, SMB2_QUERY_INFO, info, sizeof info);
  size_t n2 = wt_close_rsp(m2, sizeof m2);
  struct cframe *f = calloc(1, sizeof *f);
  assert_non_null(f);
  char failure[512] = "";
  for (size_t cut = 0; !failure[0]; cut++) {
    struct cqc_fixture x;
    cqc_setup(&x);
    struct smb3_core *c = x.c;
    struct cbrec *r = &x.r;
    cqc_answer_frame(f, &x, (uint8_t *const[3]){m0, m1, m2}, (size_t[3]){n0, n1, n2}, 0);
    size_t full = f->len;
    int rc = feed(c, f->buf, cut < full ? cut : full);
    pump(c);
    int last = cut >= full;
    if (last) {
      if (rc != 0 || r->calls != 1 || r->error != 0)
        snprintf(failure, sizeof failure, "the whole compound answer: rc %d, %d callbacks, error %d", rc,
                 r->calls, r->error);
    } else {
      if (rc == 0 && r->calls)
        snprintf(
            failure, sizeof failure,
            "a compound answer cut at %zu of %zu bytes completed the chain (elements at 0, %zu, %zu; the "
            "last one's body is then shorter than its StructureSize: responses are not checked against the "
            "StructureSize table of lib/wire/hdr.c)",
            cut, full, (n0 + 7) & ~(size_t)7, ((n0 + 7) & ~(size_t)7) + ((n1 + 7) & ~(size_t)7));
      core_fail_all(c, SMB3_ECLOSED);
      pump(c);
      if (!failure[0] && r->calls != 1)
        snprintf(failure, sizeof failure, "cut at %zu: %d callbacks, want 1", cut, r->calls);
    }
    cqc_teardown(&x);
    if (last) break;
  }
  free(f);
  if (failure[0]) fail_msg("%s", failure);
}

static void test_lease_break_event(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  uint8_t m[256];
  size_t n = wt_lease_break(m, sizeof m);
  le16_put(m + SMB2_HDR_OFF_CREDITS, 0);
  feed_ok(c, m, n);
  struct events ev = pump(c);
  assert_int_equal(ev.chains, 0);
  assert_int_equal(ev.breaks, 1);
  assert_true(ev.brk.is_lease);
  for (int i = 0; i < 16; i++)
    assert_int_equal(ev.brk.lease_key[i], i + 1);
  assert_int_equal(ev.brk.new_state, SMB2_LEASE_READ);
  /* the connection is fine: a request still goes out and completes */
  top_up(c, 1);
  assert_false(core_is_dead(c));
  core_free(c);
}

/* A notification with MessageId all ones that is not an OPLOCK_BREAK is a protocol error. */
static void test_unsolicited_non_break_rejected(void **s) {
  (void)s;
  struct smb3_core *c = core_make(0x0202, 0x0311);
  uint8_t m[128];
  size_t n = echo_rsp(m, sizeof m);
  rsp_hdr(m, UINT64_MAX, 0, 0, 0, 0);
  assert_true(feed(c, m, n) < 0);
  assert_true(core_is_dead(c));
  core_free(c);
}

/* A WRITE of len bytes whose data is the local file fd from off (payload_in_fd). */
static struct smb3_chain *chain_file_write(uint32_t len, int fd, uint64_t off, struct cbrec *rec) {
  struct smb3_chain *ch = chain_new(1);
  assert_non_null(ch);
  struct smb2_write_req wr = {.length = len, .offset = 0, .file_id = {1, 2}};
  struct le_wr w;
  assert_int_equal(msg_body_begin(&ch->msgs[0], SMB2_WRITE, 7, 64, &w), 0);
  assert_int_equal(smb2_write_req_encode(&w, &wr), 0);
  ch->msgs[0].payload_len = len;
  ch->msgs[0].payload_in_fd = 1;
  ch->msgs[0].payload_fd = fd;
  ch->msgs[0].payload_fd_off = off;
  assert_int_equal(msg_body_done(&ch->msgs[0], &w), 0);
  ch->cb = chain_cb;
  ch->arg = rec;
  return ch;
}

/* A WRITE whose data is in a local file: core_output() stops before it, core_output_file() says
 * where it is, and the bytes after it (the next frame) follow once it is marked sent. */
static void test_file_payload_output(void **s) {
  (void)s;
  struct smb3_core *c = core_21(64);
  struct cbrec r1 = {0}, r2 = {0};
  struct smb3_chain *ch = chain_file_write(100000, 42, 5000, &r1);
  assert_int_equal(core_submit(c, ch, NOW), 0);
  struct smb3_chain *echo = chain_echo(1, &r2);
  assert_int_equal(core_submit(c, echo, NOW), 0);
  struct iovec iov[16];
  int more = 0;
  int n = core_output_upto_file(c, iov, 16, &more);
  assert_true(n > 0);
  assert_int_equal(more, 1);
  size_t head = 0;
  for (int i = 0; i < n; i++)
    head += iov[i].iov_len;
  assert_int_equal(head, 4 + SMB2_HDR_LEN + 48); /* NBSS + header + WRITE body up to its Buffer */
  int fd;
  uint64_t off;
  size_t len;
  assert_int_equal(core_output_file(c, &fd, &off, &len), 0); /* not yet: the head goes first */
  core_output_done(c, head);
  assert_int_equal(core_output(c, iov, 16), 0);
  assert_int_equal(core_output_file(c, &fd, &off, &len), 1);
  assert_int_equal(fd, 42);
  assert_int_equal(off, 5000);
  assert_int_equal(len, 100000);
  core_output_done(c, 30000); /* a partial sendfile */
  assert_int_equal(core_output_file(c, &fd, &off, &len), 1);
  assert_int_equal(off, 35000);
  assert_int_equal(len, 70000);
  core_output_done(c, 70000);
  assert_int_equal(core_output_file(c, &fd, &off, &len), 0);
  struct sent sent[2];
  assert_int_equal(drain(c, sent, 2, NULL), 1); /* the ECHO, whole */
  assert_int_equal(sent[0].cmd, SMB2_ECHO);
  core_fail_all(c, SMB3_ECLOSED);
  pump(c);
  assert_int_equal(r1.calls, 1);
  assert_int_equal(r2.calls, 1);
  chain_free(ch);
  chain_free(echo);
  core_free(c);
}

/* File data cannot be signed: such a chain fails alone, the connection lives. */
static void test_file_payload_refused_when_signing(void **s) {
  (void)s;
  struct smb3_core *c = core_21_signing(64, 1);
  static const uint8_t key[16] = {1, 2, 3};
  core_set_session_key(c, key);
  assert_int_equal(core_session_established(c, 0), 0);
  struct cbrec r = {0}, r0 = {0};
  /* the message id an ECHO gets before: the refused chain must not use up any */
  struct smb3_chain *e0 = chain_echo(1, &r0);
  struct sent s0 = submit_one(c, e0);
  struct smb3_chain *ch = chain_file_write(10, 3, 0, &r);
  assert_int_equal(core_signing_active(c), 1);
  assert_int_equal(core_submit(c, ch, NOW), 0);
  pump(c);
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.error, SMB3_EINVAL);
  chain_free(ch);
  assert_int_equal(core_want_write(c), 0);
  /* the connection lives: an ECHO still goes out */
  struct cbrec re = {0};
  struct smb3_chain *echo = chain_echo(1, &re);
  struct sent sent = submit_one(c, echo);
  assert_int_equal(sent.mid, s0.mid + 1); /* no hole in the sequence (MS-SMB2 3.3.1.1) */
  core_fail_all(c, SMB3_ECLOSED);
  pump(c);
  chain_free(e0);
  chain_free(echo);
  core_free(c);
}

/* ---- compound signing (MS-SMB2 3.3.4.1.1) and the probe (client/connect.c) ---- */
static const uint8_t sess_key[16] = {0x5e, 0x55, 0x10, 0x4b, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};

/* Sign msg[0..len) in place with HMAC-SHA256 (SMB 2.x: the signing key is the session key). */
static void sign_msg(uint8_t *msg, size_t len) {
  le32_put(msg + SMB2_HDR_OFF_FLAGS, le32_at(msg + SMB2_HDR_OFF_FLAGS) | SMB2_FLAGS_SIGNED);
  memset(msg + SMB2_HDR_OFF_SIG, 0, 16);
  struct iovec v = {msg, len};
  uint8_t sig[16];
  assert_int_equal(smb3_sign(SMB3_SIGN_HMAC_SHA256, sess_key, &v, 1, sig), 0);
  memcpy(msg + SMB2_HDR_OFF_SIG, sig, 16);
}

/* A 2.1 core with an established, signing NTLM session (key sess_key). */
static struct smb3_core *core_signed_session(void) {
  struct smb3_core *c = core_21_signing(64, 1);
  core_set_session_key(c, sess_key);
  struct smb3_chain *ch = chain_new(1);
  assert_non_null(ch);
  struct le_wr w;
  struct smb2_session_setup_req r = {.sec_buf = (const uint8_t *)"x", .sec_len = 1};
  assert_int_equal(msg_body_begin(&ch->msgs[0], SMB2_SESSION_SETUP, 0, 64, &w), 0);
  assert_int_equal(smb2_session_setup_req_encode(&w, &r), 0);
  assert_int_equal(msg_body_done(&ch->msgs[0], &w), 0);
  ch->no_session = 2;
  struct cbrec rec = {0};
  ch->cb = chain_cb;
  ch->arg = &rec;
  struct sent sent = submit_one(c, ch);
  uint8_t m[256];
  size_t n = wt_session_setup_rsp(m, sizeof m);
  rsp_hdr(m, sent.mid, 64, 0, 0, 0);
  le16_put(m + SMB2_HDR_LEN + 2, 0); /* SessionFlags: a real user */
  sign_msg(m, n);
  feed_ok(c, m, n);
  pump(c);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.error, 0);
  assert_int_equal(core_session_established(c, 0), 0);
  assert_int_equal(core_signing_active(c), 1);
  chain_free(ch);
  return c;
}

/* The answer to a 2-ECHO compound: element 1 signed per the spec (after NextCommand and its
 * padding are in place) or as impacket 0.10 does (NextCommand 0 and no padding when signed, both
 * set afterwards); element 2, the last, signed correctly either way. */
static size_t echo_pair_rsp(struct cframe *f, uint64_t mid0, int impacket) {
  uint8_t e[2][128];
  size_t n = echo_rsp(e[0], sizeof e[0]);
  memcpy(e[1], e[0], n);
  rsp_hdr(e[0], mid0, 1, 0, 0, 0);
  rsp_hdr(e[1], mid0 + 1, 1, 0, SMB2_FLAGS_RELATED_OPERATIONS, 0);
  sign_msg(e[1], n);
  memset(f, 0, sizeof *f);
  if (impacket) sign_msg(e[0], n); /* before cframe_add sets NextCommand and pads */
  cframe_add(f, e[0], n);
  cframe_add(f, e[1], n);
  if (!impacket) sign_msg(f->buf, f->last); /* over the element up to NextCommand, padding included */
  return f->len;
}

static struct smb3_chain *probe_sent(struct smb3_core *c, struct cbrec *rec, int probe, uint64_t *mid0) {
  struct smb3_chain *ch = chain_echo(2, rec);
  ch->probe = probe;
  assert_int_equal(core_submit(c, ch, NOW), 0);
  struct sent sent[2];
  assert_int_equal(drain(c, sent, 2, NULL), 2);
  *mid0 = sent[0].mid;
  return ch;
}

/* The same, answered by a two-ECHO compound (impacket: its first element signed as impacket
 * signs it) that the core takes without failing the chain. */
static struct smb3_chain *probe_answered(struct smb3_core *c, struct cbrec *rec, int probe, int impacket,
                                         uint64_t *mid0) {
  struct smb3_chain *ch = probe_sent(c, rec, probe, mid0);
  struct cframe f;
  size_t n = echo_pair_rsp(&f, *mid0, impacket);
  feed_ok(c, f.buf, n);
  pump(c);
  assert_int_equal(rec->calls, 1);
  assert_int_equal(rec->error, 0);
  return ch;
}

static void test_probe_discards_impacket_element(void **s) {
  (void)s;
  struct smb3_core *c = core_signed_session();
  struct cbrec rec = {0};
  uint64_t mid0;
  struct smb3_chain *ch = probe_answered(c, &rec, 1, 1, &mid0);
  assert_int_equal(ch->bad_sigs, 1);
  assert_int_equal(ch->msgs[0].status, NT_STATUS_INVALID_SIGNATURE);
  assert_null(ch->msgs[0].rsp); /* nothing of it kept */
  assert_int_equal(ch->msgs[1].status, NT_STATUS_SUCCESS);
  chain_free(ch);
  /* the connection lives, the message ids go on, an answer still verifies */
  struct cbrec re = {0};
  struct smb3_chain *echo = chain_echo(1, &re);
  struct sent sent = submit_one(c, echo);
  assert_int_equal(sent.mid, mid0 + 2);
  uint8_t b[128];
  size_t bn = echo_rsp(b, sizeof b);
  rsp_hdr(b, sent.mid, 1, 0, 0, 0);
  sign_msg(b, bn);
  feed_ok(c, b, bn);
  pump(c);
  assert_int_equal(re.calls, 1);
  assert_int_equal(re.error, 0);
  chain_free(echo);
  core_free(c);
}

static void test_impacket_compound_fails_connection(void **s) {
  (void)s;
  struct smb3_core *c = core_signed_session();
  struct cbrec rec = {0};
  uint64_t mid0;
  struct smb3_chain *ch = probe_sent(c, &rec, 0, &mid0); /* an ordinary chain */
  struct cframe f;
  size_t n = echo_pair_rsp(&f, mid0, 1);
  assert_int_equal(feed(c, f.buf, n), SMB3_ESIGNATURE);
  pump(c);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.error, SMB3_ESIGNATURE);
  chain_free(ch);
  core_free(c);
}

static void test_probe_spec_compound_verifies(void **s) {
  (void)s;
  struct smb3_core *c = core_signed_session();
  struct cbrec rec = {0};
  uint64_t mid0;
  struct smb3_chain *ch = probe_answered(c, &rec, 1, 0, &mid0);
  assert_int_equal(ch->bad_sigs, 0);
  assert_int_equal(ch->msgs[0].status, NT_STATUS_SUCCESS);
  assert_non_null(ch->msgs[0].rsp);
  chain_free(ch);
  /* a probe never lets a forged element through unnoticed: one bit flipped is discarded too */
  struct cbrec r2 = {0};
  ch = probe_sent(c, &r2, 1, &mid0);
  struct cframe f;
  size_t n = echo_pair_rsp(&f, mid0, 0);
  f.buf[SMB2_HDR_LEN + 2] ^= 1; /* Reserved of the first ECHO response */
  feed_ok(c, f.buf, n);
  pump(c);
  assert_int_equal(ch->bad_sigs, 1);
  assert_null(ch->msgs[0].rsp);
  chain_free(ch);
  core_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unknown_msgid_kills_connection),
      cmocka_unit_test(test_wrong_command_kills_connection),
      cmocka_unit_test(test_credits_wait_for_grant),
      cmocka_unit_test(test_credits_granted_release_waiting_chain),
      cmocka_unit_test(test_multicredit_read_waits_for_credits),
      cmocka_unit_test(test_oversized_request_fails_alone),
      cmocka_unit_test(test_pending_interim_keeps_waiting),
      cmocka_unit_test(test_timeout_without_interim),
      cmocka_unit_test(test_pending_forever_times_out),
      cmocka_unit_test(test_compound_response_completes_all),
      cmocka_unit_test(test_compound_error_response),
      cmocka_unit_test(test_compound_split_response),
      cmocka_unit_test(test_bad_frames_rejected),
      cmocka_unit_test(test_truncated_compound_prefixes),
      cmocka_unit_test(test_lease_break_event),
      cmocka_unit_test(test_unsolicited_non_break_rejected),
      cmocka_unit_test(test_file_payload_output),
      cmocka_unit_test(test_file_payload_refused_when_signing),
      cmocka_unit_test(test_probe_discards_impacket_element),
      cmocka_unit_test(test_impacket_compound_fails_connection),
      cmocka_unit_test(test_probe_spec_compound_verifies),
  };
  return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
