/* session_setup.c - SMB2 SESSION_SETUP: request MS-SMB2 2.2.5, response 2.2.6. The security
 * buffer is an opaque GSS/SPNEGO token (lib/auth). */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_SESSION_SETUP_REQ_SIZE 25
#define SMB2_SESSION_SETUP_REQ_FIXED 24 /* buffer at header offset 0x58 */
#define SMB2_SESSION_SETUP_RSP_FIXED 8  /* buffer at header offset 0x48 */

int smb2_session_setup_req_encode(struct le_wr *w, const struct smb2_session_setup_req *r) {
  if (r->sec_len && !r->sec_buf) return SMB3_EINVAL;
  le_put_u16(w, SMB2_SESSION_SETUP_REQ_SIZE);
  le_put_u8(w, r->flags);
  le_put_u8(w, r->security_mode);
  le_put_u32(w, r->capabilities);
  le_put_u32(w, 0); /* Channel: MUST be 0 */
  le_put_u16(w, (uint16_t)WIRE_HDR_OFF(SMB2_SESSION_SETUP_REQ_FIXED));
  le_put_u16(w, r->sec_len);
  le_put_u64(w, r->previous_session_id);
  if (r->sec_len)
    le_put_bytes(w, r->sec_buf, r->sec_len);
  else
    le_put_u8(w, 0); /* odd StructureSize: Samba wants >= 1 Buffer byte */
  return wire_wr_done(w);
}

int smb2_session_setup_rsp_decode(const uint8_t *msg, size_t len, struct smb2_session_setup_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_SESSION_SETUP);
  if (rc) return rc;
  rsp->session_flags = le_u16(&r);
  uint16_t off = le_u16(&r);
  rsp->sec_len = le_u16(&r);
  if (r.err) return SMB3_EPROTO;
  const uint8_t *p;
  if (wire_rsp_buf(msg, len, SMB2_HDR_LEN + SMB2_SESSION_SETUP_RSP_FIXED, off, rsp->sec_len, &p))
    return SMB3_EPROTO;
  rsp->sec_buf = rsp->sec_len ? p : NULL;
  return 0;
}
