/* query_dir.c - SMB2 QUERY_DIRECTORY: request MS-SMB2 2.2.33, response 2.2.34. The output is a
 * chain of MS-FSCC directory entries (lib/fscc/dirent.c). */
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_QUERY_DIR_REQ_SIZE 33
#define SMB2_QUERY_DIR_REQ_FIXED 32 /* pattern at header offset 0x60 */
#define SMB2_QUERY_DIR_REQ_OFF_NAMELEN 26

int smb2_query_dir_req_encode(struct le_wr *w, const struct smb2_query_dir_req *r) {
  /* A NULL or empty pattern means "*": Windows rejects FileNameLength 0 with
   * STATUS_INVALID_PARAMETER. */
  const char *pattern = r->pattern && r->pattern[0] ? r->pattern : "*";
  size_t start = w->off;
  le_put_u16(w, SMB2_QUERY_DIR_REQ_SIZE);
  le_put_u8(w, r->file_info_class);
  le_put_u8(w, r->flags);
  le_put_u32(w, r->file_index);
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  le_put_u16(w, (uint16_t)WIRE_HDR_OFF(SMB2_QUERY_DIR_REQ_FIXED));
  le_put_u16(w, 0); /* FileNameLength, patched */
  le_put_u32(w, r->output_buffer_length);
  size_t n;
  int rc = wire_put_utf16(w, pattern, 0, UINT16_MAX - 1, &n);
  if (rc) return rc;
  le16_put(w->p + start + SMB2_QUERY_DIR_REQ_OFF_NAMELEN, (uint16_t)n);
  return 0;
}

/* 2.2.34 has the same body as QUERY_INFO's response (2.2.38); one decoder serves both. */
int smb2_query_dir_rsp_decode(const uint8_t *msg, size_t len, struct smb2_query_dir_rsp *rsp) {
  return wire_rsp_output_decode(msg, len, SMB2_QUERY_DIRECTORY, &rsp->buf, &rsp->len);
}
