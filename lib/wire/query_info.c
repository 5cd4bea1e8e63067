/* query_info.c - SMB2 QUERY_INFO: request MS-SMB2 2.2.37, response 2.2.38. The output buffer
 * holds an MS-FSCC information class (lib/fscc) or a security descriptor. */
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_QUERY_INFO_REQ_SIZE 41
#define SMB2_QUERY_INFO_REQ_FIXED 40 /* input buffer at header offset 0x68 */

int smb2_query_info_req_encode(struct le_wr *w, const struct smb2_query_info_req *r) {
  if (r->input_len && !r->input) return SMB3_EINVAL;
  le_put_u16(w, SMB2_QUERY_INFO_REQ_SIZE);
  le_put_u8(w, r->info_type);
  le_put_u8(w, r->file_info_class);
  le_put_u32(w, r->output_buffer_length);
  le_put_u16(w, r->input_len ? (uint16_t)WIRE_HDR_OFF(SMB2_QUERY_INFO_REQ_FIXED) : 0);
  le_put_u16(w, 0); /* Reserved */
  le_put_u32(w, r->input_len);
  le_put_u32(w, r->additional_information);
  le_put_u32(w, r->flags);
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  if (r->input_len)
    le_put_bytes(w, r->input, r->input_len);
  else
    le_put_u8(w, 0); /* the one Buffer byte the odd StructureSize counts */
  return wire_wr_done(w);
}

/* Also used with STATUS_BUFFER_OVERFLOW, where the body is the normal one, truncated data.
 * 2.2.38 has the same body as QUERY_DIRECTORY's response (2.2.34); one decoder serves both. */
int smb2_query_info_rsp_decode(const uint8_t *msg, size_t len, struct smb2_query_info_rsp *rsp) {
  return wire_rsp_output_decode(msg, len, SMB2_QUERY_INFO, &rsp->buf, &rsp->len);
}
