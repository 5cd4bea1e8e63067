/* error.c - SMB2 ERROR Response (MS-SMB2 2.2.2). It replaces the body of any command's
 * response when the status is an error, so the command in the header is not checked. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_ERROR_RSP_SIZE 9
#define SMB2_ERROR_RSP_FIXED 8

int smb2_error_rsp_decode(const uint8_t *msg, size_t len, struct smb2_error_rsp *e) {
  memset(e, 0, sizeof *e);
  if (len < SMB2_HDR_LEN || le32_at(msg) != SMB2_PROTO_ID) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, msg, len);
  le_seek(&r, SMB2_HDR_LEN);
  uint16_t ss = le_u16(&r);
  e->context_count = le_u8(&r);
  le_skip(&r, 1); /* Reserved */
  e->byte_count = le_u32(&r);
  if (r.err || ss != SMB2_ERROR_RSP_SIZE) return SMB3_EPROTO;
  /* 2.2.2: with ByteCount 0 the server should still send one ErrorData byte; some omit it, so
   * only a non-empty ErrorData is required to be present. */
  const uint8_t *data;
  if (wire_rsp_buf(msg, len, SMB2_HDR_LEN + SMB2_ERROR_RSP_FIXED, SMB2_HDR_LEN + SMB2_ERROR_RSP_FIXED,
                   e->byte_count, &data))
    return SMB3_EPROTO;
  e->data = e->byte_count ? data : NULL;
  return 0;
}
