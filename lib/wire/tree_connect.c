/* tree_connect.c - SMB2 TREE_CONNECT: request MS-SMB2 2.2.9, response 2.2.10. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_TREE_CONNECT_REQ_SIZE 9
#define SMB2_TREE_CONNECT_REQ_FIXED 8 /* path at header offset 0x48 */

int smb2_tree_connect_req_encode(struct le_wr *w, const struct smb2_tree_connect_req *r) {
  if (!r->path || !r->path[0]) return SMB3_EINVAL;
  size_t start = w->off;
  le_put_u16(w, SMB2_TREE_CONNECT_REQ_SIZE);
  le_put_u16(w, 0); /* Flags (3.1.1) / Reserved: no cluster reconnect, no redirect, no extension */
  le_put_u16(w, (uint16_t)WIRE_HDR_OFF(SMB2_TREE_CONNECT_REQ_FIXED));
  le_put_u16(w, 0); /* PathLength, patched below */
  size_t n;
  int rc = wire_put_utf16(w, r->path, 0, UINT16_MAX, &n);
  if (rc) return rc;
  le16_put(w->p + start + 6, (uint16_t)n);
  return 0;
}

int smb2_tree_connect_rsp_decode(const uint8_t *msg, size_t len, struct smb2_tree_connect_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_TREE_CONNECT);
  if (rc) return rc;
  rsp->share_type = le_u8(&r);
  le_skip(&r, 1); /* Reserved */
  rsp->share_flags = le_u32(&r);
  rsp->capabilities = le_u32(&r);
  rsp->maximal_access = le_u32(&r);
  return r.err ? SMB3_EPROTO : 0;
}
