/* write.c - SMB2 WRITE: request MS-SMB2 2.2.21, response 2.2.22. The request's data is not
 * copied here: the connection sends it from the caller's buffer right after the fixed part. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_WRITE_REQ_SIZE 49

int smb2_write_req_encode(struct le_wr *w, const struct smb2_write_req *r) {
  le_put_u16(w, SMB2_WRITE_REQ_SIZE);
  le_put_u16(w, (uint16_t)WIRE_HDR_OFF(SMB2_WRITE_REQ_FIXED)); /* DataOffset 0x70 */
  le_put_u32(w, r->length);
  le_put_u64(w, r->offset);
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  le_put_u32(w, 0); /* Channel: SMB2_CHANNEL_NONE */
  le_put_u32(w, r->remaining_bytes);
  le_put_u16(w, 0); /* WriteChannelInfoOffset */
  le_put_u16(w, 0); /* WriteChannelInfoLength */
  le_put_u32(w, r->flags);
  return wire_wr_done(w);
}

/* StructureSize is 17 but the response has no Buffer; servers send 16 body bytes. */
int smb2_write_rsp_decode(const uint8_t *msg, size_t len, struct smb2_write_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_WRITE);
  if (rc) return rc;
  le_skip(&r, 2); /* Reserved */
  rsp->count = le_u32(&r);
  rsp->remaining = le_u32(&r);
  le_skip(&r, 4); /* WriteChannelInfoOffset / Length: unused */
  return r.err ? SMB3_EPROTO : 0;
}
