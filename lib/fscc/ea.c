/* ea.c - FILE_FULL_EA_INFORMATION (MS-FSCC 2.4.15): NextEntryOffset, Flags, EaNameLength,
 * EaValueLength, EaName + NUL, EaValue; entries 4-byte aligned. */
#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"

#define EA_HDR 8

/* Entry at p (len bytes left): its fields, or SMB3_EPROTO. */
static int ea_entry(const uint8_t *p, size_t len, struct fscc_ea *ea, uint32_t *next) {
  if (len < EA_HDR) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  *next = le_u32(&r);
  le_skip(&r, 1); /* Flags (FILE_NEED_EA): nothing for us to do with it */
  size_t nlen = le_u8(&r), vlen = le_u16(&r);
  size_t size = EA_HDR + nlen + 1 + vlen;
  if (r.err || size > len || nlen == 0 || p[EA_HDR + nlen] != 0 || memchr(p + EA_HDR, 0, nlen))
    return SMB3_EPROTO;
  if (*next && (*next < size || *next > len || *next % 4)) return SMB3_EPROTO;
  *ea = (struct fscc_ea){(const char *)p + EA_HDR, nlen, p + EA_HDR + nlen + 1, vlen};
  return 0;
}

int fscc_ea_list_decode(const uint8_t *p, size_t len, int (*cb)(const struct fscc_ea *ea, void *arg),
                        void *arg) {
  if (!p || !len) return 0; /* no attributes */
  struct fscc_ea ea;
  uint32_t next;
  /* check all, then report all: a caller never acts on the first half of a malformed list */
  for (size_t off = 0;; off += next) {
    if (ea_entry(p + off, len - off, &ea, &next)) return SMB3_EPROTO;
    if (!next) break;
  }
  for (size_t off = 0;; off += next) {
    ea_entry(p + off, len - off, &ea, &next);
    if (cb && cb(&ea, arg)) return 0;
    if (!next) break;
  }
  return 0;
}

int fscc_ea_encode(uint8_t *out, size_t cap, const char *name, const void *value, size_t value_len) {
  size_t nlen = name ? strlen(name) : 0;
  if (!nlen || nlen > 255 || value_len > 65535 || (value_len && !value)) return SMB3_EINVAL;
  struct le_wr w;
  le_wr_init(&w, out, cap);
  le_put_u32(&w, 0); /* the only entry */
  le_put_u8(&w, 0);
  le_put_u8(&w, (uint8_t)nlen);
  le_put_u16(&w, (uint16_t)value_len);
  le_put_bytes(&w, name, nlen);
  le_put_u8(&w, 0);
  if (value_len) le_put_bytes(&w, value, value_len);
  return w.err ? SMB3_EINVAL : (int)w.off;
}
