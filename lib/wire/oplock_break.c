/* oplock_break.c - SMB2 OPLOCK_BREAK: server notifications (MS-SMB2 2.2.23.1 oplock,
 * 2.2.23.2 lease), client acknowledgments (2.2.24.1, 2.2.24.2) and the server's responses to
 * them (2.2.25.1, 2.2.25.2). The body's StructureSize tells the layouts apart. */
#include <string.h>

#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_OPLOCK_BREAK_SIZE 24 /* notification, ack and response alike */
#define SMB2_LEASE_BREAK_NOTIFY_SIZE 44
#define SMB2_LEASE_BREAK_ACK_SIZE 36 /* ack and response alike */

static void break_oplock(struct le_rd *r, struct smb2_break *b) {
  b->oplock_level = le_u8(r);
  le_skip(r, 5); /* Reserved, Reserved2 */
  b->file_id.persistent = le_u64(r);
  b->file_id.volatile_ = le_u64(r);
}

static void break_lease_notify(struct le_rd *r, struct smb2_break *b) {
  b->is_lease = 1;
  b->new_epoch = le_u16(r);
  b->flags = le_u32(r);
  le_bytes(r, b->lease_key, 16);
  b->current_state = le_u32(r);
  b->new_state = le_u32(r);
  le_skip(r, 12); /* BreakReason, AccessMaskHint, ShareMaskHint: reserved */
}

/* 2.2.25.2: the granted LeaseState is reported as new_state (current_state stays 0). */
static void break_lease_rsp(struct le_rd *r, struct smb2_break *b) {
  b->is_lease = 1;
  le_skip(r, 2); /* Reserved */
  b->flags = le_u32(r);
  le_bytes(r, b->lease_key, 16);
  b->new_state = le_u32(r);
  le_skip(r, 8); /* LeaseDuration */
}

int smb2_break_decode(const uint8_t *msg, size_t len, struct smb2_break *b) {
  memset(b, 0, sizeof *b);
  struct le_rd r;
  uint16_t ss;
  int rc = wire_rsp_open(&r, msg, len, SMB2_OPLOCK_BREAK, &ss);
  if (rc) return rc;
  if (ss == SMB2_OPLOCK_BREAK_SIZE)
    break_oplock(&r, b);
  else if (ss == SMB2_LEASE_BREAK_NOTIFY_SIZE)
    break_lease_notify(&r, b);
  else if (ss == SMB2_LEASE_BREAK_ACK_SIZE)
    break_lease_rsp(&r, b);
  else
    return SMB3_EPROTO;
  return r.err ? SMB3_EPROTO : 0;
}

int smb2_oplock_ack_encode(struct le_wr *w, uint8_t level, struct smb2_file_id file_id) {
  le_put_u16(w, SMB2_OPLOCK_BREAK_SIZE);
  le_put_u8(w, level);
  le_put_u8(w, 0);  /* Reserved */
  le_put_u32(w, 0); /* Reserved2 */
  le_put_u64(w, file_id.persistent);
  le_put_u64(w, file_id.volatile_);
  return wire_wr_done(w);
}

int smb2_lease_ack_encode(struct le_wr *w, const uint8_t key[16], uint32_t state) {
  le_put_u16(w, SMB2_LEASE_BREAK_ACK_SIZE);
  le_put_u16(w, 0); /* Reserved */
  le_put_u32(w, 0); /* Flags: reserved */
  le_put_bytes(w, key, 16);
  le_put_u32(w, state);
  le_put_u64(w, 0); /* LeaseDuration: reserved */
  return wire_wr_done(w);
}
