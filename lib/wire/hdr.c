/* hdr.c - the SMB2 packet header (MS-SMB2 2.2.1.1 async form, 2.2.1.2 sync form), the table of
 * response StructureSizes, and the helpers every command codec shares (wire_int.h). */
#include <stdlib.h>
#include <string.h>

#include "smb3/smb3_errors.h"
#include "util/utf16.h"
#include "wire/wire_int.h"

#define SMB2_HDR_STRUCTURE_SIZE 64

void smb2_hdr_encode(const struct smb2_hdr *h, uint8_t out[SMB2_HDR_LEN]) {
  struct le_wr w;
  le_wr_init(&w, out, SMB2_HDR_LEN);
  le_put_u32(&w, SMB2_PROTO_ID);
  le_put_u16(&w, SMB2_HDR_STRUCTURE_SIZE);
  le_put_u16(&w, h->credit_charge);
  le_put_u32(&w, h->status);
  le_put_u16(&w, h->command);
  le_put_u16(&w, h->credits);
  le_put_u32(&w, h->flags);
  le_put_u32(&w, h->next_command);
  le_put_u64(&w, h->message_id);
  if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) { /* 2.2.1.1: AsyncId replaces Reserved + TreeId */
    le_put_u64(&w, h->async_id);
  } else { /* 2.2.1.2: Reserved (we carry the ProcessId there) + TreeId */
    le_put_u32(&w, h->process_id);
    le_put_u32(&w, h->tree_id);
  }
  le_put_u64(&w, h->session_id);
  le_put_bytes(&w, h->signature, 16);
}

int smb2_hdr_decode(const uint8_t *p, size_t len, struct smb2_hdr *h) {
  struct le_rd r;
  le_rd_init(&r, p, len);
  memset(h, 0, sizeof *h);
  uint32_t proto = le_u32(&r);
  uint16_t ss = le_u16(&r);
  h->credit_charge = le_u16(&r);
  h->status = le_u32(&r);
  h->command = le_u16(&r);
  h->credits = le_u16(&r);
  h->flags = le_u32(&r);
  h->next_command = le_u32(&r);
  h->message_id = le_u64(&r);
  if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) {
    h->async_id = le_u64(&r);
  } else {
    h->process_id = le_u32(&r);
    h->tree_id = le_u32(&r);
  }
  h->session_id = le_u64(&r);
  le_bytes(&r, h->signature, 16);
  if (r.err || proto != SMB2_PROTO_ID || ss != SMB2_HDR_STRUCTURE_SIZE) return SMB3_EPROTO;
  return 0;
}

/* Response StructureSizes, MS-SMB2 2.2.4 ... 2.2.40. Odd values count the first byte of the
 * variable Buffer, which servers may omit when the buffer is empty, so decoders require only
 * StructureSize & ~1 body bytes. OPLOCK_BREAK has three layouts (24 oplock, 44 lease break
 * notification, 36 lease break response); the table gives the oplock one and
 * smb2_break_decode() accepts all three. CANCEL has no response. */
static const uint16_t rsp_structure_size[SMB2_NCOMMANDS] = {
    [SMB2_NEGOTIATE] = 65,      /* 2.2.4 */
    [SMB2_SESSION_SETUP] = 9,   /* 2.2.6 */
    [SMB2_LOGOFF] = 4,          /* 2.2.8 */
    [SMB2_TREE_CONNECT] = 16,   /* 2.2.10 */
    [SMB2_TREE_DISCONNECT] = 4, /* 2.2.12 */
    [SMB2_CREATE] = 89,         /* 2.2.14 */
    [SMB2_CLOSE] = 60,          /* 2.2.16 */
    [SMB2_FLUSH] = 4,           /* 2.2.18 */
    [SMB2_READ] = 17,           /* 2.2.20 */
    [SMB2_WRITE] = 17,          /* 2.2.22 */
    [SMB2_LOCK] = 4,            /* 2.2.27 */
    [SMB2_IOCTL] = 49,          /* 2.2.32 */
    [SMB2_CANCEL] = 0,          /* 2.2.30: no response */
    [SMB2_ECHO] = 4,            /* 2.2.29 */
    [SMB2_QUERY_DIRECTORY] = 9, /* 2.2.34 */
    [SMB2_CHANGE_NOTIFY] = 9,   /* 2.2.36 */
    [SMB2_QUERY_INFO] = 9,      /* 2.2.38 */
    [SMB2_SET_INFO] = 2,        /* 2.2.40 */
    [SMB2_OPLOCK_BREAK] = 24,   /* 2.2.25.1 (2.2.23.2: 44, 2.2.25.2: 36) */
};

uint16_t smb2_rsp_structure_size(uint16_t command) {
  return command < SMB2_NCOMMANDS ? rsp_structure_size[command] : 0;
}

int wire_rsp_open(struct le_rd *r, const uint8_t *msg, size_t len, uint16_t cmd, uint16_t *ss) {
  le_rd_init(r, msg, len);
  if (len < SMB2_HDR_LEN + 2 || le32_at(msg) != SMB2_PROTO_ID) return SMB3_EPROTO;
  if (le16_at(msg + SMB2_HDR_OFF_COMMAND) != cmd) return SMB3_EPROTO;
  le_seek(r, SMB2_HDR_LEN);
  *ss = le_u16(r);
  return 0;
}

int wire_rsp_begin(struct le_rd *r, const uint8_t *msg, size_t len, uint16_t cmd) {
  uint16_t ss;
  int rc = wire_rsp_open(r, msg, len, cmd, &ss);
  if (rc) return rc;
  uint16_t want = smb2_rsp_structure_size(cmd);
  if (!want || ss != want) return SMB3_EPROTO;
  /* The fixed part must be there even when the decoder does not read all of it. */
  if (len - SMB2_HDR_LEN < (size_t)(want & ~1u)) return SMB3_EPROTO;
  return 0;
}

int wire_rsp_buf(const uint8_t *msg, size_t len, size_t min_off, uint64_t off, uint64_t blen,
                 const uint8_t **out) {
  if (blen == 0) {
    *out = min_off <= len ? msg + min_off : NULL;
    return 0;
  }
  *out = NULL;
  if (off < min_off || !le_range_ok(off, blen, len)) return SMB3_EPROTO;
  *out = msg + off;
  return 0;
}

void wire_get_file_attrs(struct le_rd *r, struct smb2_file_attrs *a) {
  a->creation_time = le_u64(r);
  a->last_access_time = le_u64(r);
  a->last_write_time = le_u64(r);
  a->change_time = le_u64(r);
  a->allocation_size = le_u64(r);
  a->end_of_file = le_u64(r);
  a->file_attributes = le_u32(r);
}

#define WIRE_OUTPUT_RSP_FIXED 8 /* StructureSize, OutputBufferOffset, OutputBufferLength */

int wire_rsp_output_decode(const uint8_t *msg, size_t len, uint16_t cmd, const uint8_t **buf,
                           uint32_t *blen) {
  *buf = NULL;
  *blen = 0;
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, cmd);
  if (rc) return rc;
  uint16_t off = le_u16(&r);
  uint32_t n = le_u32(&r);
  if (r.err) return SMB3_EPROTO;
  rc = wire_rsp_buf(msg, len, SMB2_HDR_LEN + WIRE_OUTPUT_RSP_FIXED, off, n, buf);
  if (rc) return rc;
  *blen = n;
  return 0;
}

int wire_put_utf16(struct le_wr *w, const char *s, int flags, size_t max_bytes, size_t *nbytes) {
  uint8_t *u;
  size_t n;
  *nbytes = 0;
  if (!s) return SMB3_EINVAL;
  int rc = smb3_utf8_to_utf16le(s, strlen(s), &u, &n);
  if (rc == SMB3_ENOMEM) return rc;
  if (rc) return SMB3_EINVAL;
  if (flags & WIRE_NAME_BS) /* '/' is only ever the code unit 0x002F in UTF-16 */
    for (size_t i = 0; i + 1 < n; i += 2)
      if (u[i] == '/' && u[i + 1] == 0) u[i] = '\\';
  if (flags & WIRE_NAME_SFM) smb3_sfm_map(u, n);
  if (n > max_bytes) {
    free(u);
    return SMB3_EINVAL;
  }
  le_put_bytes(w, u, n);
  free(u);
  *nbytes = n;
  return wire_wr_done(w);
}
