/* read.c - SMB2 READ: request MS-SMB2 2.2.19, response 2.2.20. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_READ_REQ_SIZE 49
/* 2.2.19 Padding: where we would like the data, from the header start; header + 16-byte
 * fixed response part = 0x50, what Windows asks for. Not binding on the server. */
#define SMB2_READ_DATA_PLACEMENT (SMB2_HDR_LEN + SMB2_READ_RSP_FIXED)

int smb2_read_req_encode(struct le_wr *w, const struct smb2_read_req *r) {
  le_put_u16(w, SMB2_READ_REQ_SIZE);
  le_put_u8(w, SMB2_READ_DATA_PLACEMENT);
  le_put_u8(w, r->flags);
  le_put_u32(w, r->length);
  le_put_u64(w, r->offset);
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  le_put_u32(w, r->minimum_count);
  le_put_u32(w, 0); /* Channel: SMB2_CHANNEL_NONE */
  le_put_u32(w, r->remaining_bytes);
  le_put_u16(w, 0); /* ReadChannelInfoOffset */
  le_put_u16(w, 0); /* ReadChannelInfoLength */
  le_put_u8(w, 0);  /* Buffer: one byte when there is no channel info (2.2.19) */
  return wire_wr_done(w);
}

/* Fixed part after StructureSize; *r->data left to the callers. */
static void read_rsp_fixed(struct le_rd *r, struct smb2_read_rsp *rsp) {
  rsp->data_offset = le_u8(r);
  le_skip(r, 1); /* Reserved */
  rsp->data_length = le_u32(r);
  rsp->data_remaining = le_u32(r);
  le_skip(r, 4); /* Reserved2 / Flags */
}

int smb2_read_rsp_decode(const uint8_t *msg, size_t len, struct smb2_read_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_READ);
  if (rc) return rc;
  read_rsp_fixed(&r, rsp);
  if (r.err) return SMB3_EPROTO;
  /* The data is wherever DataOffset says (usually 0x50), never inside header or fixed part. */
  return wire_rsp_buf(msg, len, SMB2_HDR_LEN + SMB2_READ_RSP_FIXED, rsp->data_offset, rsp->data_length,
                      &rsp->data);
}

int smb2_read_rsp_decode_head(const uint8_t *head, size_t head_len, size_t msg_len,
                              struct smb2_read_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  const size_t fixed = SMB2_HDR_LEN + SMB2_READ_RSP_FIXED;
  if (head_len < fixed || head_len > msg_len) return SMB3_EPROTO;
  struct le_rd r;
  int rc = wire_rsp_begin(&r, head, fixed, SMB2_READ);
  if (rc) return rc;
  read_rsp_fixed(&r, rsp);
  if (r.err) return SMB3_EPROTO;
  if (rsp->data_length &&
      (rsp->data_offset < fixed || !le_range_ok(rsp->data_offset, rsp->data_length, msg_len)))
    return SMB3_EPROTO;
  /* Only point at the data when all of it is already in head. */
  if (le_range_ok(rsp->data_offset, rsp->data_length, head_len) && rsp->data_offset >= fixed)
    rsp->data = head + rsp->data_offset;
  return 0;
}
