/* utf16.c - bounded UTF-8 <-> UTF-16LE conversion (see utf16.h).
 *
 * UTF-8 validation follows RFC 3629 section 4 (the well-formed byte sequences table):
 * overlong forms, encoded surrogates and code points above U+10FFFF are rejected. UTF-16
 * decoding follows RFC 2781 section 2.2.
 */
#include "util/utf16.h"

#include <stdlib.h>
#include <string.h>

#include "smb3/smb3_errors.h"
#include "util/le.h"

/* Decode one UTF-8 sequence at s[*i..len). Returns the code point or -1 if ill-formed. */
static int32_t utf8_next(const uint8_t *s, size_t len, size_t *i) {
  uint8_t b = s[*i];
  size_t n;
  uint32_t cp, min;
  if (b < 0x80) {
    (*i)++;
    return b;
  } else if (b >= 0xc2 && b <= 0xdf) {
    n = 1, cp = b & 0x1fu, min = 0x80;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 2, cp = b & 0x0fu, min = 0x800;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 3, cp = b & 0x07u, min = 0x10000;
  } else {
    return -1; /* continuation byte, C0/C1 (always overlong) or F5..FF */
  }
  if (n > len - *i - 1) return -1; /* truncated sequence */
  for (size_t k = 1; k <= n; k++) {
    uint8_t c = s[*i + k];
    if ((c & 0xc0) != 0x80) return -1;
    cp = (cp << 6) | (c & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  *i += n + 1;
  return (int32_t)cp;
}

int smb3_utf8_to_utf16le(const char *s, size_t len, uint8_t **out, size_t *outlen) {
  if (!out || !outlen) return SMB3_EINVAL;
  *out = NULL;
  *outlen = 0;
  if (!s && len) return SMB3_EINVAL;
  if (len > SMB3_UTF_MAX_INPUT) return SMB3_ERANGE;
  /* Every UTF-8 byte yields at most 2 output bytes (ASCII 1 -> 2, 4-byte form -> 4). */
  uint8_t *buf = malloc(len ? len * 2 : 1);
  if (!buf) return SMB3_ENOMEM;
  const uint8_t *u = (const uint8_t *)s;
  size_t i = 0, o = 0;
  while (i < len) {
    int32_t cp = utf8_next(u, len, &i);
    if (cp < 0) {
      free(buf);
      return SMB3_EINVAL;
    }
    if (cp >= 0x10000) {
      uint32_t v = (uint32_t)cp - 0x10000;
      le16_put(buf + o, (uint16_t)(0xd800 | (v >> 10)));
      le16_put(buf + o + 2, (uint16_t)(0xdc00 | (v & 0x3ff)));
      o += 4;
    } else {
      le16_put(buf + o, (uint16_t)cp);
      o += 2;
    }
  }
  *out = buf;
  *outlen = o;
  return 0;
}

/* Append code point cp (<= 0x10FFFF, not a surrogate) as UTF-8 at buf[*o]. */
static void utf8_put(uint8_t *buf, size_t *o, uint32_t cp) {
  if (cp < 0x80) {
    buf[(*o)++] = (uint8_t)cp;
  } else if (cp < 0x800) {
    buf[(*o)++] = (uint8_t)(0xc0 | (cp >> 6));
    buf[(*o)++] = (uint8_t)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    buf[(*o)++] = (uint8_t)(0xe0 | (cp >> 12));
    buf[(*o)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    buf[(*o)++] = (uint8_t)(0x80 | (cp & 0x3f));
  } else {
    buf[(*o)++] = (uint8_t)(0xf0 | (cp >> 18));
    buf[(*o)++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    buf[(*o)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    buf[(*o)++] = (uint8_t)(0x80 | (cp & 0x3f));
  }
}

int smb3_utf16le_to_utf8(const uint8_t *p, size_t len, char **out, size_t *outlen) {
  if (!out) return SMB3_EINVAL;
  *out = NULL;
  if (outlen) *outlen = 0;
  if (!p && len) return SMB3_EINVAL;
  if (len > SMB3_UTF_MAX_INPUT) return SMB3_ERANGE;
  if (len & 1) return SMB3_EPROTO;
  /* One code unit gives at most 3 bytes; a surrogate pair (2 units) gives 4. */
  uint8_t *buf = malloc(len / 2 * 3 + 1);
  if (!buf) return SMB3_ENOMEM;
  size_t i = 0, o = 0;
  while (i < len) {
    uint32_t cp = le16_at(p + i);
    i += 2;
    if (cp >= 0xd800 && cp <= 0xdbff) {
      uint32_t lo = i < len ? le16_at(p + i) : 0;
      if (lo < 0xdc00 || lo > 0xdfff) goto bad;
      i += 2;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      goto bad;
    }
    utf8_put(buf, &o, cp);
  }
  buf[o] = 0;
  *out = (char *)buf;
  if (outlen) *outlen = o;
  return 0;
bad:
  free(buf);
  return SMB3_EPROTO;
}

/* Latin Extended-A (U+0100..U+017F) pairs upper/lower case by parity, with the parity flipping
 * in U+0139..U+0148 and U+0179..U+017E. U+0130/0131 (dotted/dotless I), U+0138 (kra),
 * U+0149 and U+017F have no simple in-block upper case and stay unchanged. */
static uint16_t upper_latin_ext_a(uint16_t c) {
  if ((c >= 0x0100 && c <= 0x012f) || (c >= 0x0132 && c <= 0x0137) || (c >= 0x014a && c <= 0x0177))
    return (c & 1) ? (uint16_t)(c - 1) : c;
  if ((c >= 0x0139 && c <= 0x0148) || (c >= 0x0179 && c <= 0x017e)) return (c & 1) ? c : (uint16_t)(c - 1);
  return c;
}

uint16_t smb3_utf16_upper(uint16_t c) {
  if (c >= 'a' && c <= 'z') return (uint16_t)(c - 0x20);
  if (c < 0x80) return c;
  /* Latin-1: U+00E0..U+00FE map to U+00C0..U+00DE, except U+00F7 (division sign). U+00DF
   * (sharp s) has no single-character upper case; U+00FF maps to U+0178. */
  if (c >= 0x00e0 && c <= 0x00fe && c != 0x00f7) return (uint16_t)(c - 0x20);
  if (c == 0x00ff) return 0x0178;
  if (c >= 0x0100 && c <= 0x017f) return upper_latin_ext_a(c);
  /* Greek: alpha..omega (final sigma U+03C2 excluded: it stays as it is). */
  if (c >= 0x03b1 && c <= 0x03c9 && c != 0x03c2) return (uint16_t)(c - 0x20);
  /* Cyrillic: U+0430..U+044F -> U+0410..U+042F, U+0450..U+045F -> U+0400..U+040F. */
  if (c >= 0x0430 && c <= 0x044f) return (uint16_t)(c - 0x20);
  if (c >= 0x0450 && c <= 0x045f) return (uint16_t)(c - 0x50);
  return c;
}

void smb3_utf16le_upper(uint8_t *p, size_t len) {
  for (size_t i = 0; i + 1 < len; i += 2)
    le16_put(p + i, smb3_utf16_upper(le16_at(p + i)));
}

/* SFM's order for the printable reserved characters: U+F020 + index (U+F026 is '\\', not mapped). */
static const char sfm_chars[] = "\"*:<>?";

void smb3_sfm_map(uint8_t *p, size_t len) {
  for (size_t i = 0; i + 1 < len; i += 2) {
    if (p[i + 1] || !p[i]) continue;
    uint8_t c = p[i];
    const char *at = c >= 0x20 ? strchr(sfm_chars, c) : NULL;
    if (c < 0x20) {
      p[i + 1] = 0xf0;
    } else if (c == '|') {
      p[i] = 0x27, p[i + 1] = 0xf0;
    } else if (at) {
      p[i] = (uint8_t)(0x20 + (at - sfm_chars)), p[i + 1] = 0xf0;
    }
  }
}

size_t smb3_sfm_unmap(char *s, size_t len) {
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    /* U+F001..U+F03F is EF 80 81..BF in UTF-8 */
    uint8_t b2 = i + 2 < len ? (uint8_t)s[i + 2] : 0;
    if (b2 >= 0x81 && b2 <= 0xa7 && b2 != 0xa6 && (uint8_t)s[i] == 0xef && (uint8_t)s[i + 1] == 0x80) {
      unsigned v = b2 - 0x80u; /* the code point less U+F000 */
      s[o++] = v < 0x20 ? (char)v : v == 0x27 ? '|' : sfm_chars[v - 0x20];
      i += 3;
    } else {
      s[o++] = s[i++];
    }
  }
  if (o < len) s[o] = 0;
  return o;
}
