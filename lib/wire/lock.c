/* lock.c - SMB2 LOCK request, MS-SMB2 2.2.26 (the response, 2.2.27, is StructureSize 4 +
 * Reserved: smb2_simple_rsp_decode). */
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_LOCK_REQ_SIZE 48 /* the fixed part and one SMB2_LOCK_ELEMENT */

int smb2_lock_req_encode(struct le_wr *w, struct smb2_file_id file_id, const struct smb2_lock_element *locks,
                         uint16_t n) {
  if (!n || !locks) return SMB3_EINVAL;
  le_put_u16(w, SMB2_LOCK_REQ_SIZE);
  le_put_u16(w, n);
  le_put_u32(w, 0); /* LockSequenceNumber/Index: only resilient handles use them */
  le_put_u64(w, file_id.persistent);
  le_put_u64(w, file_id.volatile_);
  for (uint16_t i = 0; i < n; i++) {
    le_put_u64(w, locks[i].offset);
    le_put_u64(w, locks[i].length);
    le_put_u32(w, locks[i].flags);
    le_put_u32(w, 0); /* Reserved */
  }
  return wire_wr_done(w);
}
