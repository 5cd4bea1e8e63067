/* close.c - SMB2 CLOSE: request MS-SMB2 2.2.15, response 2.2.16. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_CLOSE_REQ_SIZE 24

int smb2_close_req_encode(struct le_wr *w, const struct smb2_close_req *r) {
  le_put_u16(w, SMB2_CLOSE_REQ_SIZE);
  le_put_u16(w, r->flags);
  le_put_u32(w, 0); /* Reserved */
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  return wire_wr_done(w);
}

/* The attributes are meaningful only when Flags has POSTQUERY_ATTRIB; otherwise the server
 * sends zeros, which the caller can tell from rsp->flags. */
int smb2_close_rsp_decode(const uint8_t *msg, size_t len, struct smb2_close_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_CLOSE);
  if (rc) return rc;
  rsp->flags = le_u16(&r);
  le_skip(&r, 4); /* Reserved */
  wire_get_file_attrs(&r, &rsp->attrs);
  return r.err ? SMB3_EPROTO : 0;
}
