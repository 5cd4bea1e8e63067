/* wire_int.h - helpers shared by the per-command codecs of lib/wire (not part of the API).
 * Implemented in hdr.c. */
#ifndef SMB3_WIRE_INT_H
#define SMB3_WIRE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "smb3/smb3_errors.h"
#include "wire/wire.h"

/* Header offset of a request buffer placed at writer position pos (wire.h: position 0 is
 * header offset 64). */
#define WIRE_HDR_OFF(pos) ((size_t)SMB2_HDR_LEN + (pos))

/* Starts decoding a response body: msg must hold a 64-byte SMB2 header with ProtocolId FE 'SMB'
 * and Command cmd. Sets *ss to the body's StructureSize and leaves r (over all len bytes of
 * msg) positioned just after it. Returns 0 or SMB3_EPROTO. Truncation of the rest of the body
 * is caught by r->err once the caller has read it. */
int wire_rsp_open(struct le_rd *r, const uint8_t *msg, size_t len, uint16_t cmd, uint16_t *ss);

/* wire_rsp_open plus the check that StructureSize equals smb2_rsp_structure_size(cmd). */
int wire_rsp_begin(struct le_rd *r, const uint8_t *msg, size_t len, uint16_t cmd);

/* Locates a buffer the server describes by a header-relative offset and a length (MS-SMB2
 * measures every response buffer offset from the start of the SMB2 header). A non-empty buffer
 * must lie inside [min_off, len), where min_off is the end of the fixed part, so that it cannot
 * alias the header or the fixed fields. An empty buffer is accepted whatever its offset (servers
 * send 0 or the nominal offset) and yields a pointer to the end of the fixed part (or NULL if
 * the message is shorter). Returns 0 or SMB3_EPROTO. */
int wire_rsp_buf(const uint8_t *msg, size_t len, size_t min_off, uint64_t off, uint64_t blen,
                 const uint8_t **out);

/* Decodes the response body QUERY_DIRECTORY (MS-SMB2 2.2.34) and QUERY_INFO (2.2.38) have in
 * common: StructureSize 9, OutputBufferOffset (2 bytes, from the header), OutputBufferLength (4),
 * Buffer. msg must be a response to cmd; the buffer is located with wire_rsp_buf after the 8 fixed
 * bytes. Sets *buf and *blen (NULL and 0 on error). Returns 0 or SMB3_EPROTO. */
int wire_rsp_output_decode(const uint8_t *msg, size_t len, uint16_t cmd, const uint8_t **buf, uint32_t *blen);

/* Reads the 52 bytes of struct smb2_file_attrs (sticky error on truncation, as any le_rd read). */
void wire_get_file_attrs(struct le_rd *r, struct smb2_file_attrs *a);

/* Appends s (UTF-8, NUL-terminated) as UTF-16LE without terminator, turning '/' into '\\' with
 * WIRE_NAME_BS in flags, and the characters Windows reserves into SFM's code points with
 * WIRE_NAME_SFM (smb3_sfm_map). *nbytes receives the encoded length. Returns 0, SMB3_EINVAL
 * (invalid UTF-8, writer overflow, or longer than max_bytes), or SMB3_ENOMEM. */
#define WIRE_NAME_BS 1
#define WIRE_NAME_SFM 2
int wire_put_utf16(struct le_wr *w, const char *s, int flags, size_t max_bytes, size_t *nbytes);

/* Writer status as an encoder return value. */
static inline int wire_wr_done(const struct le_wr *w) {
  return w->err ? SMB3_EINVAL : 0;
}

#endif
