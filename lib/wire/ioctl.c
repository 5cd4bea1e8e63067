/* ioctl.c - SMB2 IOCTL: request MS-SMB2 2.2.31, response 2.2.32, the
 * FSCTL_VALIDATE_NEGOTIATE_INFO input (2.2.31.4) and output (2.2.32.6), and server-side copy:
 * the resume key (2.2.32.3), SRV_COPYCHUNK_COPY (2.2.31.1) and its response (2.2.32.1), and the
 * allocated ranges of a file (MS-FSCC 2.3.38). */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_IOCTL_REQ_SIZE 57
#define SMB2_IOCTL_REQ_FIXED 56 /* input at header offset 0x78 */
#define SMB2_IOCTL_RSP_FIXED 48
#define VALIDATE_NEGOTIATE_RSP_LEN 24

int smb2_ioctl_req_encode(struct le_wr *w, const struct smb2_ioctl_req *r) {
  if (r->input_len && !r->input) return SMB3_EINVAL;
  uint32_t in_off = r->input_len ? (uint32_t)WIRE_HDR_OFF(SMB2_IOCTL_REQ_FIXED) : 0;
  le_put_u16(w, SMB2_IOCTL_REQ_SIZE);
  le_put_u16(w, 0); /* Reserved */
  le_put_u32(w, r->ctl_code);
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  le_put_u32(w, in_off);
  le_put_u32(w, r->input_len);
  le_put_u32(w, 0); /* MaxInputResponse: we never want the input echoed */
  le_put_u32(w, 0); /* OutputOffset: no output buffer is sent */
  le_put_u32(w, 0); /* OutputCount */
  le_put_u32(w, r->max_output_response);
  le_put_u32(w, r->flags);
  le_put_u32(w, 0); /* Reserved2 */
  if (r->input_len)
    le_put_bytes(w, r->input, r->input_len);
  else
    le_put_u8(w, 0); /* the one Buffer byte the odd StructureSize counts */
  return wire_wr_done(w);
}

int smb2_ioctl_rsp_decode(const uint8_t *msg, size_t len, struct smb2_ioctl_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_IOCTL);
  if (rc) return rc;
  le_skip(&r, 2); /* Reserved */
  rsp->ctl_code = le_u32(&r);
  rsp->file_id.persistent = le_u64(&r);
  rsp->file_id.volatile_ = le_u64(&r);
  uint32_t in_off = le_u32(&r), in_len = le_u32(&r);
  uint32_t out_off = le_u32(&r);
  rsp->output_len = le_u32(&r);
  le_skip(&r, 8); /* Flags, Reserved2 */
  if (r.err) return SMB3_EPROTO;
  const size_t min_off = SMB2_HDR_LEN + SMB2_IOCTL_RSP_FIXED;
  const uint8_t *in;
  /* The input buffer is not used but, if announced, must be inside the message too. */
  if (wire_rsp_buf(msg, len, min_off, in_off, in_len, &in)) return SMB3_EPROTO;
  return wire_rsp_buf(msg, len, min_off, out_off, rsp->output_len, &rsp->output);
}

/* 2.2.31.4: written into a scratch buffer that becomes the IOCTL input. */
int smb2_validate_negotiate_encode(struct le_wr *w, const struct smb2_validate_negotiate *v) {
  if (!v->dialect_count || v->dialect_count > SMB2_MAX_DIALECTS) return SMB3_EINVAL;
  le_put_u32(w, v->capabilities);
  le_put_bytes(w, v->guid, 16);
  le_put_u16(w, v->security_mode);
  le_put_u16(w, v->dialect_count);
  for (int i = 0; i < v->dialect_count; i++)
    le_put_u16(w, v->dialects[i]);
  return wire_wr_done(w);
}

/* 2.2.32.6: p/len is the IOCTL output buffer. */
int smb2_validate_negotiate_decode(const uint8_t *p, size_t len, struct smb2_validate_negotiate *v) {
  memset(v, 0, sizeof *v);
  if (len < VALIDATE_NEGOTIATE_RSP_LEN) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  v->capabilities = le_u32(&r);
  le_bytes(&r, v->guid, 16);
  v->security_mode = le_u16(&r);
  v->dialect = le_u16(&r);
  return r.err ? SMB3_EPROTO : 0;
}

/* 2.2.32.3: ResumeKey (24 bytes), ContextLength, Context (ignored). */
int smb2_resume_key_decode(const uint8_t *p, size_t len, uint8_t key[SMB2_RESUME_KEY_LEN]) {
  if (!p || len < SMB2_RESUME_KEY_LEN + 4) return SMB3_EPROTO;
  memcpy(key, p, SMB2_RESUME_KEY_LEN);
  return 0;
}

/* 2.2.31.1: SourceKey, ChunkCount, Reserved, then ChunkCount SRV_COPYCHUNK entries (2.2.31.1.1). */
int smb2_copychunk_encode(struct le_wr *w, const uint8_t key[SMB2_RESUME_KEY_LEN],
                          const struct smb2_copychunk *c, int n) {
  if (n < 1 || n > SMB2_COPYCHUNK_MAX) return SMB3_EINVAL;
  le_put_bytes(w, key, SMB2_RESUME_KEY_LEN);
  le_put_u32(w, (uint32_t)n);
  le_put_u32(w, 0); /* Reserved */
  for (int i = 0; i < n; i++) {
    le_put_u64(w, c[i].src_off);
    le_put_u64(w, c[i].dst_off);
    le_put_u32(w, c[i].len);
    le_put_u32(w, 0); /* Reserved */
  }
  return wire_wr_done(w);
}

/* 2.2.32.1: ChunksWritten, ChunkBytesWritten, TotalBytesWritten. */
int smb2_copychunk_rsp_decode(const uint8_t *p, size_t len, struct smb2_copychunk_rsp *r) {
  memset(r, 0, sizeof *r);
  if (!p || len < 12) return SMB3_EPROTO;
  struct le_rd rd;
  le_rd_init(&rd, p, len);
  r->chunks_written = le_u32(&rd);
  r->chunk_bytes_written = le_u32(&rd);
  r->total_bytes_written = le_u32(&rd);
  return rd.err ? SMB3_EPROTO : 0;
}

/* MS-FSCC 2.3.38: FileOffset, Length (signed 64-bit each), repeated. */
int smb2_alloc_ranges_decode(const uint8_t *p, size_t len, struct smb2_range *out, size_t max, size_t *n) {
  *n = 0;
  if ((!p && len) || len % 16) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  uint64_t prev_end = 0;
  for (size_t i = 0; i < len / 16; i++) {
    uint64_t off = le_u64(&r), l = le_u64(&r);
    if (r.err || off > INT64_MAX || l > INT64_MAX - off || off < prev_end) return SMB3_EPROTO;
    prev_end = off + l;
    if (*n < max) out[(*n)++] = (struct smb2_range){off, l};
  }
  return 0;
}
