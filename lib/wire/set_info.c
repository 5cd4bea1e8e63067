/* set_info.c - SMB2 SET_INFO: request MS-SMB2 2.2.39, response 2.2.40. */
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_SET_INFO_REQ_SIZE 33
#define SMB2_SET_INFO_REQ_FIXED 32 /* buffer at header offset 0x60 */

int smb2_set_info_req_encode(struct le_wr *w, const struct smb2_set_info_req *r) {
  if (r->len && !r->buf) return SMB3_EINVAL;
  le_put_u16(w, SMB2_SET_INFO_REQ_SIZE);
  le_put_u8(w, r->info_type);
  le_put_u8(w, r->file_info_class);
  le_put_u32(w, r->len);
  le_put_u16(w, (uint16_t)WIRE_HDR_OFF(SMB2_SET_INFO_REQ_FIXED));
  le_put_u16(w, 0); /* Reserved */
  le_put_u32(w, r->additional_information);
  le_put_u64(w, r->file_id.persistent);
  le_put_u64(w, r->file_id.volatile_);
  if (r->len)
    le_put_bytes(w, r->buf, r->len);
  else
    le_put_u8(w, 0); /* Samba wants >= 1 Buffer byte (odd StructureSize) */
  return wire_wr_done(w);
}

int smb2_set_info_rsp_decode(const uint8_t *msg, size_t len) {
  struct le_rd r;
  return wire_rsp_begin(&r, msg, len, SMB2_SET_INFO);
}
