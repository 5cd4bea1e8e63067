/* flush.c - SMB2 FLUSH: request MS-SMB2 2.2.17, response 2.2.18. */
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_FLUSH_REQ_SIZE 24

int smb2_flush_req_encode(struct le_wr *w, struct smb2_file_id file_id) {
  le_put_u16(w, SMB2_FLUSH_REQ_SIZE);
  le_put_u16(w, 0); /* Reserved1 */
  le_put_u32(w, 0); /* Reserved2 */
  le_put_u64(w, file_id.persistent);
  le_put_u64(w, file_id.volatile_);
  return wire_wr_done(w);
}

int smb2_flush_rsp_decode(const uint8_t *msg, size_t len) {
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_FLUSH);
  if (rc) return rc;
  le_skip(&r, 2); /* Reserved */
  return r.err ? SMB3_EPROTO : 0;
}
