/* transform.c - SMB2 TRANSFORM_HEADER (MS-SMB2 2.2.41), the 52-byte header in front of an
 * encrypted message. The AEAD itself lives in lib/crypto; this only moves the fields. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

void smb2_transform_hdr_encode(const struct smb2_transform_hdr *t, uint8_t out[SMB2_TRANSFORM_HDR_LEN]) {
  struct le_wr w;
  le_wr_init(&w, out, SMB2_TRANSFORM_HDR_LEN);
  le_put_u32(&w, SMB2_TRANSFORM_ID);
  le_put_bytes(&w, t->signature, 16);
  le_put_bytes(&w, t->nonce, 16);
  le_put_u32(&w, t->orig_msg_size);
  le_put_u16(&w, 0); /* Reserved */
  le_put_u16(&w, t->flags);
  le_put_u64(&w, t->session_id);
}

int smb2_transform_hdr_decode(const uint8_t *p, size_t len, struct smb2_transform_hdr *t) {
  struct le_rd r;
  le_rd_init(&r, p, len);
  memset(t, 0, sizeof *t);
  uint32_t proto = le_u32(&r);
  le_bytes(&r, t->signature, 16);
  le_bytes(&r, t->nonce, 16);
  t->orig_msg_size = le_u32(&r);
  le_skip(&r, 2); /* Reserved */
  t->flags = le_u16(&r);
  t->session_id = le_u64(&r);
  if (r.err || proto != SMB2_TRANSFORM_ID) return SMB3_EPROTO;
  /* 3.2.5.1.1.1: the ciphertext that follows is exactly OriginalMessageSize bytes. */
  if (t->orig_msg_size != len - SMB2_TRANSFORM_HDR_LEN) return SMB3_EPROTO;
  return 0;
}
