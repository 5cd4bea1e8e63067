/* copy.c - server-side copy (MS-SMB2 3.2.4.20.1-2): the data goes from one open file to another
 * inside the server; only the list of chunks crosses the network.
 *
 * One round trip asks for the source's size (QUERY_INFO, so that a copy never asks for bytes
 * past its end: servers fail the whole request then) and its resume key
 * (FSCTL_SRV_REQUEST_RESUME_KEY). Then FSCTL_SRV_COPYCHUNK_WRITE requests of up to
 * COPY_REQ_BYTES each, COPY_DEPTH in flight. The first one goes alone: a server with smaller
 * limits fails it with STATUS_INVALID_PARAMETER and its limits (3.3.5.15.6), and it is sent
 * again within them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

#define COPY_CHUNK (1u << 20)      /* bytes per chunk, the usual server maximum */
#define COPY_CHUNKS 16             /* chunks per request */
#define COPY_REQ_BYTES (16u << 20) /* bytes per request, the usual server maximum */
#define COPY_DEPTH 4

struct copy_op {
  smb3_client *c;
  struct smb2_file_id sfid, dfid;
  uint64_t src_off, dst_off, len; /* len: clamped to the source's size once known */
  uint8_t key[SMB2_RESUME_KEY_LEN];
  uint32_t chunk, max_chunks, req_bytes; /* limits */
  int limits_learned;
  pthread_mutex_t m;
  uint64_t next;  /* next offset (relative to the start) to send */
  uint64_t limit; /* has_limit: a request ended short or failed here; nothing past it counts */
  int has_limit;
  int inflight;
  int probing; /* the first COPYCHUNK is out alone */
  int err;     /* the first failure (reported only if nothing was copied) */
  smb3_cb cb;
  void *arg;
  char what[300];
};

struct copy_req {
  struct copy_op *op;
  uint64_t off;
  uint32_t len;
};

/* ---- the first round trip: resume key + source size ---- */
static int enc_resume_key(smb3_client *c, struct smb3_msg *m, const struct copy_op *op) {
  return build_ioctl(c, m, op->sfid, SMB2_FSCTL_SRV_REQUEST_RESUME_KEY, NULL, 0, 32);
}

static int enc_source_size(smb3_client *c, struct smb3_msg *m, const struct copy_op *op) {
  return build_query_info(c, m, op->sfid, SMB2_0_INFO_FILE, FSCC_FILE_NETWORK_OPEN_INFORMATION, 56);
}

static void copy_finish(struct copy_op *op) {
  int64_t r = !op->has_limit ? (int64_t)op->len : op->limit || !op->err ? (int64_t)op->limit : op->err;
  if (r > 0) __atomic_add_fetch(&op->c->bytes_copied, (uint64_t)r, __ATOMIC_RELAXED);
  smb3_cb cb = op->cb;
  void *arg = op->arg;
  pthread_mutex_destroy(&op->m);
  free(op);
  cb(r, arg);
}

static int copy_send(struct copy_op *op, uint64_t off, uint32_t len);

static void cut_at(struct copy_op *op, uint64_t at) {
  if (!op->has_limit || at < op->limit) op->limit = at;
  op->has_limit = 1;
}

/* Send what the window allows; finish when nothing is left in flight. Called without op->m, on
 * the I/O thread (from the first round trip's callback and each request's): no completion runs
 * before it returns, since callbacks run only from the I/O thread's loop, never inside a submit. */
static void copy_pump(struct copy_op *op) {
  pthread_mutex_lock(&op->m);
  for (;;) {
    uint64_t end = op->len;
    int room = !op->err && !op->has_limit && op->next < end && !op->probing &&
               op->inflight < (op->limits_learned || op->next ? COPY_DEPTH : 1);
    if (!room) break;
    uint64_t left = end - op->next;
    uint32_t len = left < op->req_bytes ? (uint32_t)left : op->req_bytes;
    uint64_t off = op->next;
    op->next += len;
    op->inflight++;
    if (off == 0 && !op->limits_learned) op->probing = 1;
    pthread_mutex_unlock(&op->m);
    int rc = copy_send(op, off, len);
    pthread_mutex_lock(&op->m);
    if (rc) {
      op->inflight--;
      op->probing = 0;
      if (!op->err) op->err = rc;
      cut_at(op, off);
    }
  }
  int done = op->inflight == 0;
  pthread_mutex_unlock(&op->m);
  if (done) copy_finish(op);
}

/* One request's outcome: n bytes copied from off (n < len: short or failed with err). */
static void copy_req_done(struct copy_req *q, uint64_t n, int err, int relearn) {
  struct copy_op *op = q->op;
  pthread_mutex_lock(&op->m);
  op->inflight--;
  if (relearn) { /* the probe was refused for its size: the next one fits the server's limits */
    op->probing = 0;
    op->limits_learned = 1;
    op->next = q->off;
  } else {
    if (q->off == 0) op->probing = 0;
    if (n < q->len) {
      uint64_t at = q->off + n;
      cut_at(op, at);
      if (err && !op->err) op->err = err;
      if (!at && !op->err)
        op->err = client_fail(op->c, SMB3_EIO, 0, "%s: the server copied nothing", op->what);
    }
  }
  pthread_mutex_unlock(&op->m);
  free(q);
  copy_pump(op);
}

static void copy_chunk_done(struct smb3_chain *ch, void *arg) {
  struct copy_req *q = arg;
  struct copy_op *op = q->op;
  struct smb3_msg *m = &ch->msgs[0];
  struct smb2_ioctl_rsp ir;
  struct smb2_copychunk_rsp cr;
  int decoded = !ch->error && !smb2_ioctl_rsp_decode(m->rsp, m->rsp_len, &ir) &&
                !smb2_copychunk_rsp_decode(ir.output, ir.output_len, &cr);
  uint64_t n = 0;
  int err = 0, relearn = 0;
  if (ch->error) {
    err = ch->error;
  } else if (m->status == NT_STATUS_SUCCESS) {
    if (!decoded || cr.total_bytes_written > q->len)
      err = client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed COPYCHUNK response", op->what);
    else
      n = cr.total_bytes_written;
  } else if (m->status == NT_STATUS_INVALID_PARAMETER && decoded && !op->limits_learned && q->off == 0 &&
             cr.chunks_written && cr.chunk_bytes_written && cr.total_bytes_written &&
             (cr.chunks_written < op->max_chunks || cr.chunk_bytes_written < op->chunk ||
              cr.total_bytes_written < op->req_bytes)) {
    /* the server's limits (3.3.5.15.6): stay within them from now on */
    if (cr.chunks_written < op->max_chunks) op->max_chunks = cr.chunks_written;
    if (cr.chunk_bytes_written < op->chunk) op->chunk = cr.chunk_bytes_written;
    if (cr.total_bytes_written < op->req_bytes) op->req_bytes = cr.total_bytes_written;
    if ((uint64_t)op->chunk * op->max_chunks < op->req_bytes) op->req_bytes = op->chunk * op->max_chunks;
    relearn = 1;
  } else {
    err = client_msg_result(op->c, ch, 0, op->what);
  }
  chain_free(ch);
  copy_req_done(q, n, err, relearn);
}

static int copy_send(struct copy_op *op, uint64_t off, uint32_t len) {
  struct smb2_copychunk chunks[SMB2_COPYCHUNK_MAX];
  int n = 0;
  for (uint32_t at = 0; at < len && n < SMB2_COPYCHUNK_MAX; n++) {
    uint32_t l = len - at < op->chunk ? len - at : op->chunk;
    chunks[n] = (struct smb2_copychunk){op->src_off + off + at, op->dst_off + off + at, l};
    at += l;
  }
  uint8_t in[SMB2_RESUME_KEY_LEN + 8 + SMB2_COPYCHUNK_MAX * 24];
  struct le_wr iw;
  le_wr_init(&iw, in, sizeof in);
  int rc = smb2_copychunk_encode(&iw, op->key, chunks, n);
  if (rc) return rc;
  struct smb3_chain *ch = chain_new(1);
  struct copy_req *q = malloc(sizeof *q);
  if (!ch || !q) {
    chain_free(ch);
    free(q);
    return SMB3_ENOMEM;
  }
  *q = (struct copy_req){op, off, len};
  rc = build_ioctl(op->c, &ch->msgs[0], op->dfid, SMB2_FSCTL_SRV_COPYCHUNK_WRITE, in, (uint32_t)iw.off, 12);
  ch->cb = copy_chunk_done;
  ch->arg = q;
  if (!rc) rc = client_submit(op->c, ch);
  if (rc) {
    chain_free(ch);
    free(q);
  }
  return rc;
}

static void copy_started(struct smb3_chain *ch, void *arg) {
  struct copy_op *op = arg;
  int rc = ch->error;
  struct smb2_ioctl_rsp ir;
  struct smb2_query_info_rsp qr;
  struct fscc_stat st;
  if (!rc && ch->msgs[0].status != NT_STATUS_SUCCESS) rc = client_msg_result(op->c, ch, 0, op->what);
  if (!rc && ch->msgs[1].status != NT_STATUS_SUCCESS) rc = client_msg_result(op->c, ch, 1, op->what);
  if (!rc && (smb2_query_info_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &qr) ||
              fscc_network_open_info_decode(qr.buf, qr.len, &st)))
    rc = client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed QUERY_INFO response", op->what);
  if (!rc && (smb2_ioctl_rsp_decode(ch->msgs[1].rsp, ch->msgs[1].rsp_len, &ir) ||
              smb2_resume_key_decode(ir.output, ir.output_len, op->key)))
    rc = client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed resume key response", op->what);
  chain_free(ch);
  if (rc) {
    op->err = rc;
    cut_at(op, 0);
  } else {
    uint64_t avail = st.end_of_file > op->src_off ? st.end_of_file - op->src_off : 0;
    if (op->len > avail) op->len = avail; /* nothing past the source's end: copied up to it */
  }
  copy_pump(op);
}

/* nocompound: the QUERY_INFO went alone (ch holds it, room for two); now the IOCTL, and both
 * answers reach copy_started as if they had come in one compound. */
static void copy_keyed(struct smb3_chain *one, void *arg) {
  struct smb3_chain *ch = arg;
  struct copy_op *op = ch->arg;
  ch->error = one->error;
  ch->msgs[1].status = one->msgs[0].status;
  ch->msgs[1].rsp = one->msgs[0].rsp; /* moved: freed with ch */
  ch->msgs[1].rsp_len = one->msgs[0].rsp_len;
  one->msgs[0].rsp = NULL;
  ch->n = 2;
  chain_free(one);
  copy_started(ch, op);
}

static void copy_sized(struct smb3_chain *ch, void *arg) {
  struct copy_op *op = arg;
  if (ch->error || ch->msgs[0].status != NT_STATUS_SUCCESS) {
    copy_started(ch, op); /* reports the QUERY_INFO's failure; msgs[1] is never looked at */
    return;
  }
  struct smb3_chain *one = chain_new(1);
  int rc = one ? enc_resume_key(op->c, &one->msgs[0], op) : SMB3_ENOMEM;
  if (!rc) {
    one->cb = copy_keyed;
    one->arg = ch;
    rc = client_submit(op->c, one);
  }
  if (!rc) return;
  chain_free(one);
  ch->error = rc;
  copy_started(ch, op);
}

int smb3_copy_range_async(smb3_file *src, uint64_t src_off, smb3_file *dst, uint64_t dst_off, uint64_t len,
                          smb3_cb cb, void *arg) {
  if (!src || !dst || !cb) return SMB3_EINVAL;
  if (src->is_dir || dst->is_dir) return SMB3_EISDIR;
  if (src->c != dst->c) return SMB3_EXDEV; /* a resume key is good on its own tree only */
  if (src_off > INT64_MAX || dst_off > INT64_MAX) return SMB3_ERANGE;
  if (len > (uint64_t)INT64_MAX - dst_off) len = (uint64_t)INT64_MAX - dst_off;
  struct copy_op *op = calloc(1, sizeof *op);
  if (!op) return SMB3_ENOMEM;
  *op = (struct copy_op){.c = src->c,
                         .sfid = src->fid,
                         .dfid = dst->fid,
                         .src_off = src_off,
                         .dst_off = dst_off,
                         .len = len,
                         .chunk = COPY_CHUNK,
                         .max_chunks = COPY_CHUNKS,
                         .req_bytes = COPY_REQ_BYTES,
                         .cb = cb,
                         .arg = arg};
  snprintf(op->what, sizeof op->what, "copy '%s' to '%s'", src->path, dst->path);
  pthread_mutex_init(&op->m, NULL);
  /* An unrelated compound: both name their handle themselves (Samba fails a related one that
   * does not follow a CREATE). The IOCTL last: Samba answers it asynchronously, which it allows
   * only for the last request of a compound. With nocompound, one after the other. */
  struct smb3_chain *ch = chain_new(2);
  int one_by_one = op->c->opts.nocompound;
  int rc = ch ? enc_source_size(op->c, &ch->msgs[0], op) : SMB3_ENOMEM;
  if (!rc && !one_by_one) rc = enc_resume_key(op->c, &ch->msgs[1], op);
  if (!rc) {
    ch->cb = one_by_one ? copy_sized : copy_started;
    ch->arg = op;
    if (one_by_one) ch->n = 1; /* the IOCTL follows in copy_sized */
    rc = client_submit(op->c, ch);
  }
  if (rc) {
    chain_free(ch);
    pthread_mutex_destroy(&op->m);
    free(op);
  }
  return rc;
}

struct copy_wait {
  sem_t done;
  int64_t r;
};

static void copy_wait_done(int64_t r, void *arg) {
  struct copy_wait *w = arg;
  w->r = r;
  sem_post(&w->done);
}

int64_t smb3_copy_range(smb3_file *src, uint64_t src_off, smb3_file *dst, uint64_t dst_off, uint64_t len) {
  int rc = client_sync_check(src ? src->c : NULL, "copy");
  if (rc) return rc;
  struct copy_wait w = {.r = 0};
  sem_init(&w.done, 0, 0);
  rc = smb3_copy_range_async(src, src_off, dst, dst_off, len, copy_wait_done, &w);
  if (!rc) client_sem_wait(&w.done);
  sem_destroy(&w.done);
  return rc ? rc : w.r;
}
