/* simple.c - the commands whose request and response bodies are StructureSize 4 + Reserved:
 * LOGOFF (MS-SMB2 2.2.7 / 2.2.8), TREE_DISCONNECT (2.2.11 / 2.2.12), ECHO (2.2.28 / 2.2.29).
 * LOCK's response (2.2.27) has the same shape. */
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_SIMPLE_SIZE 4

int smb2_simple_req_encode(struct le_wr *w) {
  le_put_u16(w, SMB2_SIMPLE_SIZE);
  le_put_u16(w, 0); /* Reserved */
  return wire_wr_done(w);
}

/* The command is not checked: the caller matched the response to its request already. */
int smb2_simple_rsp_decode(const uint8_t *msg, size_t len) {
  if (len < SMB2_HDR_LEN + SMB2_SIMPLE_SIZE || le32_at(msg) != SMB2_PROTO_ID) return SMB3_EPROTO;
  return le16_at(msg + SMB2_HDR_LEN) == SMB2_SIMPLE_SIZE ? 0 : SMB3_EPROTO;
}
