/* fuzz_core.c - libFuzzer target: the whole sans-I/O engine (lib/core) as one target
 * (every decoder has a fuzz target of its own; this one feeds frames to the whole engine).
 *
 * A core is created and three chains are submitted: a READ with a caller destination buffer, a
 * related compound CREATE + QUERY_INFO + CLOSE built with the wire encoders, and a WRITE whose
 * payload is sent from the caller's buffer. With the core's initial single credit only the READ
 * goes out; the others wait for credits that the fuzz input may grant. The input is then fed as
 * received frames: records of [flags:1][length:3, big-endian][frame], like NBSS. flags bit 0 sends
 * the frame through the zero-copy path (core_recv_direct + core_recv_direct_done), bit 1 runs the
 * timeout check far in the future, bit 2 submits one more ECHO first. Output is drained after
 * every step. At the end everything is failed and freed.
 *
 * Stream mode (bit 7 of the first record's flags): no fixed chains; the input is a server's side of
 * a whole connection (tests/fuzz/corpus_from_traffic.py writes one per captured connection). A
 * record with bit 3 first submits one chain mirroring the frame: a request of each message's
 * command (by NextCommand), related when the frame says so, charged what the response's
 * CreditCharge says, so that the core numbers it as the real client did. The handshake is done as
 * the client does it: a NEGOTIATE chain is built by core_build_negotiate and applied with
 * core_apply_negotiate when it completes; a successful SESSION_SETUP sets the session id, a key and
 * core_session_established. Seeds carry Samba's valid handshake, so that most mutations land in
 * the responses after it, on an established session.
 *
 * Invariants checked (abort() so libFuzzer reports the input): every chain's callback runs at
 * most once while the input is fed and exactly once after core_fail_all(); a direct receive
 * covers exactly the rest of the frame and lands inside the caller's buffer; rd_len never
 * exceeds the destination buffer.
 *
 * Seeds: tests/fuzz/corpus/fuzz_core/ (written by tests/fuzz/gen_core_seeds.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "util/status.h"
#include "wire/wire.h"

#define READ_LEN 4096
#define RDBUF_LEN 65536 /* stream mode's READs land here too */
#define WRITE_LEN 3000
#define MAX_CHAINS 256

struct fz {
  struct smb3_chain *chains[MAX_CHAINS];
  int calls[MAX_CHAINS];
  int n;
  uint8_t *rdbuf;
  uint8_t *wrbuf;
  struct smb3_chain *negotiate; /* stream mode: awaiting core_apply_negotiate */
  int applied[MAX_CHAINS];      /* stream mode: completion handled */
};

static void on_done(struct smb3_chain *ch, void *arg) {
  int *calls = arg;
  (*calls)++;
  if (*calls > 1) abort(); /* a callback ran twice */
  for (int i = 0; i < ch->n; i++)
    if (ch->msgs[i].rd_buf && ch->msgs[i].rd_len > ch->msgs[i].rd_cap) abort();
}

static void pump(struct smb3_core *c) {
  struct core_event *e = core_take_events(c);
  while (e) {
    struct core_event *next = e->next;
    if (e->chain)
      e->chain->cb(e->chain, e->chain->arg);
    else
      core_event_free(e);
    e = next;
  }
}

static void drain(struct smb3_core *c) {
  for (int guard = 0; guard < 1000; guard++) {
    struct iovec iov[32];
    int n = core_output(c, iov, 32);
    if (n <= 0) return;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
      volatile uint8_t sink = 0; /* touch every byte: iovecs must point at live memory */
      const uint8_t *p = iov[i].iov_base;
      for (size_t k = 0; k < iov[i].iov_len; k += 512)
        sink ^= p[k];
      if (iov[i].iov_len) sink ^= p[iov[i].iov_len - 1];
      (void)sink;
      total += iov[i].iov_len;
    }
    core_output_done(c, total);
  }
}

static struct smb3_chain *add_chain(struct fz *z, int n) {
  if (z->n >= MAX_CHAINS) return NULL;
  struct smb3_chain *ch = chain_new(n);
  if (!ch) return NULL;
  ch->cb = on_done;
  ch->arg = &z->calls[z->n];
  z->chains[z->n++] = ch;
  return ch;
}

static int enc_read(struct smb3_msg *m, uint8_t *buf) {
  struct smb2_read_req r = {.length = READ_LEN, .offset = 0, .file_id = {1, 2}};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_READ, 5, 64, &w);
  if (!rc) rc = smb2_read_req_encode(&w, &r);
  if (!rc) rc = msg_body_done(m, &w);
  m->expect_rsp_len = READ_LEN;
  m->rd_buf = buf;
  m->rd_cap = READ_LEN;
  return rc;
}

static int enc_cqc(struct smb3_chain *ch) {
  struct le_wr w;
  struct smb2_create_req cr = {.impersonation = 2,
                               .desired_access = SMB2_FILE_READ_ATTRIBUTES,
                               .share_access = SMB2_FILE_SHARE_ALL,
                               .create_disposition = SMB2_FILE_OPEN,
                               .name = "a\\b.txt"};
  int rc = msg_body_begin(&ch->msgs[0], SMB2_CREATE, 5, 512, &w);
  if (!rc) rc = smb2_create_req_encode(&w, &cr);
  if (!rc) rc = msg_body_done(&ch->msgs[0], &w);
  struct smb2_query_info_req q = {.info_type = SMB2_0_INFO_FILE,
                                  .file_info_class = 18,
                                  .output_buffer_length = 4096,
                                  .file_id = SMB2_FILE_ID_RELATED};
  if (!rc) rc = msg_body_begin(&ch->msgs[1], SMB2_QUERY_INFO, 5, 64, &w);
  if (!rc) rc = smb2_query_info_req_encode(&w, &q);
  if (!rc) rc = msg_body_done(&ch->msgs[1], &w);
  ch->msgs[1].expect_rsp_len = 4096;
  struct smb2_close_req cl = {.file_id = SMB2_FILE_ID_RELATED};
  if (!rc) rc = msg_body_begin(&ch->msgs[2], SMB2_CLOSE, 5, 64, &w);
  if (!rc) rc = smb2_close_req_encode(&w, &cl);
  if (!rc) rc = msg_body_done(&ch->msgs[2], &w);
  ch->related = 1;
  return rc;
}

static int enc_write(struct smb3_msg *m, const uint8_t *buf) {
  struct smb2_write_req r = {.length = WRITE_LEN, .offset = 0, .file_id = {1, 2}};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_WRITE, 5, 64, &w);
  if (!rc) rc = smb2_write_req_encode(&w, &r);
  if (!rc) rc = msg_body_done(m, &w);
  m->payload = buf;
  m->payload_len = WRITE_LEN;
  return rc;
}

static int enc_echo(struct smb3_msg *m) {
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_ECHO, 0, 16, &w);
  if (!rc) rc = smb2_simple_req_encode(&w);
  if (!rc) rc = msg_body_done(m, &w);
  return rc;
}

static void submit(struct fz *z, struct smb3_core *c, struct smb3_chain *ch, int enc_rc) {
  if (!ch) return;
  if (enc_rc || core_submit(c, ch, 1000000000ull)) z->calls[z->n - 1] = -1000; /* not queued: no callback */
}

/* One frame through the zero-copy READ path when the core accepts it, else whole. */
static void recv_direct(struct fz *z, struct smb3_core *c, uint8_t *frame, size_t len) {
  struct core_direct *d = calloc(1, sizeof *d);
  if (!d) return;
  const size_t head = SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
  int rc = len >= head ? core_recv_direct(c, frame, head, len, d) : 0;
  if (rc == 1) {
    size_t off = head, room = 0;
    for (int i = 0; i < d->iovcnt; i++)
      room += d->iov[i].iov_len;
    if (room != len - head) abort(); /* the iovecs must cover exactly the rest of the frame */
    for (int i = 0; i < d->iovcnt; i++) {
      uint8_t *dst = d->iov[i].iov_base;
      int in_pad = dst >= d->pad && dst + d->iov[i].iov_len <= d->pad + sizeof d->pad;
      int in_rd = dst >= z->rdbuf && dst + d->iov[i].iov_len <= z->rdbuf + RDBUF_LEN;
      if (!in_pad && !in_rd) abort(); /* data must land in scratch or the caller's buffer */
      memcpy(dst, frame + off, d->iov[i].iov_len);
      off += d->iov[i].iov_len;
    }
    core_recv_direct_done(c, d);
  } else if (rc == 0) {
    core_recv_frame(c, frame, len);
  } else {
    core_fail_all(c, rc);
  }
  free(d);
}

/* Stream mode: one request of COMMAND with a body of the right StructureSize (zeros otherwise:
 * the core only sends it), expecting up to CHARGE * 64 KiB back. */
static int enc_mirror(struct fz *z, struct smb3_msg *m, uint16_t command, uint16_t charge) {
  static const uint16_t ssize[19] = {36, 25, 4, 9, 4, 57, 24, 24, 49, 49, 48, 57, 4, 4, 33, 32, 41, 33, 24};
  struct le_wr w;
  int rc = msg_body_begin(m, command, 1, 64, &w);
  if (rc) return rc;
  le_put_u16(&w, command < 19 ? ssize[command] : 4);
  le_put_zero(&w, 30);
  rc = msg_body_done(m, &w);
  size_t want = (size_t)(charge ? charge : 1) * 65536;
  if (command == SMB2_WRITE) {
    m->payload = z->wrbuf;
    m->payload_len = want < WRITE_LEN ? want : WRITE_LEN;
  } else if (command == SMB2_READ || command == SMB2_QUERY_INFO || command == SMB2_QUERY_DIRECTORY ||
             command == SMB2_IOCTL) {
    m->expect_rsp_len = (uint32_t)want;
  }
  if (command == SMB2_READ && charge <= 1) {
    m->rd_buf = z->rdbuf;
    m->rd_cap = RDBUF_LEN;
  }
  return rc;
}

static void mirror(struct fz *z, struct smb3_core *c, const uint8_t *f, size_t len) {
  uint16_t cmds[CORE_MAX_CHAIN], charges[CORE_MAX_CHAIN];
  int n = 0, related = 0;
  for (size_t off = 0; n < CORE_MAX_CHAIN && len - off >= SMB2_HDR_LEN;) {
    cmds[n] = le16_at(f + off + 12);
    charges[n] = le16_at(f + off + 6);
    if (n && (le32_at(f + off + SMB2_HDR_OFF_FLAGS) & SMB2_FLAGS_RELATED_OPERATIONS)) related = 1;
    n++;
    uint32_t next = le32_at(f + off + SMB2_HDR_OFF_NEXT);
    if (!next || next > len - off) break;
    off += next;
  }
  if (!n) return;
  struct smb3_chain *ch = add_chain(z, n);
  if (!ch) return;
  int rc = 0;
  if (cmds[0] == SMB2_NEGOTIATE && n == 1) {
    rc = core_build_negotiate(c, ch);
    if (!rc) z->negotiate = ch;
  } else {
    for (int i = 0; i < n && !rc; i++)
      rc = enc_mirror(z, &ch->msgs[i], cmds[i], charges[i]);
    if (cmds[0] == SMB2_SESSION_SETUP) ch->no_session = 2;
  }
  ch->related = related;
  submit(z, c, ch, rc);
}

/* Stream mode: what the client does with a completed NEGOTIATE or SESSION_SETUP. */
static void handshake_step(struct fz *z, struct smb3_core *c) {
  for (int i = 0; i < z->n; i++) {
    struct smb3_chain *ch = z->chains[i];
    if (z->applied[i] || z->calls[i] != 1) continue;
    z->applied[i] = 1;
    struct smb3_msg *m = &ch->msgs[0];
    if (ch == z->negotiate) {
      if (core_apply_negotiate(c, ch, NULL)) core_fail_all(c, SMB3_EPROTO);
    } else if (m->command == SMB2_SESSION_SETUP && m->rsp && m->rsp_len >= SMB2_HDR_LEN + 4) {
      core_set_session_id(c, le64_at(m->rsp + 40));
      if (m->status == NT_STATUS_SUCCESS) {
        /* No key: the captured responses were signed with one this target cannot know, so the
         * session is taken as one without keys (as a guest's), where nothing is verified. */
        if (core_session_established(c, le16_at(m->rsp + SMB2_HDR_LEN + 2))) core_fail_all(c, SMB3_EPROTO);
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct core_config cfg = {
      .dialect_min = 0x0202, .dialect_max = 0x0311, .credits_target = 64, .timeout_ms = 1000};
  struct smb3_core *c = core_new(&cfg);
  if (!c) return 0;
  struct fz z;
  memset(&z, 0, sizeof z);
  z.rdbuf = malloc(RDBUF_LEN);
  z.wrbuf = malloc(WRITE_LEN);
  if (!z.rdbuf || !z.wrbuf) goto out;
  memset(z.wrbuf, 0x5a, WRITE_LEN);

  int stream = size >= 1 && (data[0] & 0x80);
  struct smb3_chain *ch;
  if (!stream) {
    ch = add_chain(&z, 1);
    submit(&z, c, ch, ch ? enc_read(&ch->msgs[0], z.rdbuf) : 0);
    ch = add_chain(&z, 3);
    submit(&z, c, ch, ch ? enc_cqc(ch) : 0);
    ch = add_chain(&z, 1);
    submit(&z, c, ch, ch ? enc_write(&ch->msgs[0], z.wrbuf) : 0);
    drain(c);
    pump(c);
  }

  size_t off = 0;
  while (size - off >= 4) {
    uint8_t flags = data[off];
    size_t len = (size_t)data[off + 1] << 16 | (size_t)data[off + 2] << 8 | data[off + 3];
    off += 4;
    if (len > size - off) len = size - off;
    if (flags & 4) {
      ch = add_chain(&z, 1);
      submit(&z, c, ch, ch ? enc_echo(&ch->msgs[0]) : 0);
    }
    if (stream && (flags & 8)) {
      mirror(&z, c, data + off, len);
      drain(c);
    }
    uint8_t *frame = malloc(len ? len : 1); /* exact size: ASan sees overreads */
    if (!frame) break;
    memcpy(frame, data + off, len);
    off += len;
    if (flags & 1)
      recv_direct(&z, c, frame, len);
    else
      core_recv_frame(c, frame, len);
    free(frame);
    if (flags & 2) core_check_timeouts(c, UINT64_MAX / 2);
    drain(c);
    pump(c);
    if (stream) {
      handshake_step(&z, c);
      drain(c);
    }
  }

  core_fail_all(c, SMB3_ECLOSED);
  pump(c);
  for (int i = 0; i < z.n; i++)
    if (z.calls[i] != 1 && z.calls[i] != -1000) abort(); /* every queued chain completes exactly once */
out:
  core_free(c);
  for (int i = 0; i < z.n; i++)
    chain_free(z.chains[i]);
  free(z.rdbuf);
  free(z.wrbuf);
  return 0;
}
