/* le.h - bounded little-endian cursors for decoding and encoding wire messages.
 *
 * Convention: never cast packed structs over received bytes. A reader walks a
 * buffer with memcpy + le*toh; any read past the end sets a sticky error flag and yields zeros,
 * so a decoder reads a whole message and checks r->err once. A writer does the same on overflow.
 */
#ifndef SMB3_LE_H
#define SMB3_LE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct le_rd {
  const uint8_t *p; /* start of the buffer (not owned) */
  size_t len;       /* bytes available */
  size_t off;       /* current position */
  int err;          /* sticky: set once a read ran past len */
};

struct le_wr {
  uint8_t *p; /* start of the buffer (not owned) */
  size_t cap; /* capacity */
  size_t off; /* current position == bytes written so far */
  int err;    /* sticky: set once a write would overflow cap */
};

static inline void le_rd_init(struct le_rd *r, const void *p, size_t len) {
  r->p = (const uint8_t *)p;
  r->len = len;
  r->off = 0;
  r->err = 0;
}

/* True if n more bytes can be read. */
static inline int le_rd_has(const struct le_rd *r, size_t n) {
  return !r->err && r->off <= r->len && n <= r->len - r->off;
}

/* Claim the next n bytes: 1 and advance if they are there, else 0 and set the sticky error.
 * The loads below test this count, never a pointer: a test such as `if (r->p + r->off)` tells
 * GCC that the buffer may be NULL, and with -O3 it then clones the accesses onto a path that
 * reads (or, for the writer, writes) at address 0 + off and warns about it (-Wstringop-overflow,
 * "region of size 0"). */
static inline int le_rd_claim(struct le_rd *r, size_t n) {
  if (!le_rd_has(r, n)) {
    r->err = 1;
    return 0;
  }
  r->off += n;
  return 1;
}

/* A pointer to the next n bytes, or NULL (sticky error set) if they are not there. */
static inline const uint8_t *le_rd_take(struct le_rd *r, size_t n) {
  if (!le_rd_claim(r, n)) return NULL;
  return r->p + (r->off - n);
}

static inline uint8_t le_u8(struct le_rd *r) {
  return le_rd_claim(r, 1) ? r->p[r->off - 1] : 0;
}
static inline uint16_t le_u16(struct le_rd *r) {
  uint16_t v = 0;
  if (le_rd_claim(r, 2)) memcpy(&v, r->p + r->off - 2, 2);
  return le16toh(v);
}
static inline uint32_t le_u32(struct le_rd *r) {
  uint32_t v = 0;
  if (le_rd_claim(r, 4)) memcpy(&v, r->p + r->off - 4, 4);
  return le32toh(v);
}
static inline uint64_t le_u64(struct le_rd *r) {
  uint64_t v = 0;
  if (le_rd_claim(r, 8)) memcpy(&v, r->p + r->off - 8, 8);
  return le64toh(v);
}
static inline void le_bytes(struct le_rd *r, void *dst, size_t n) {
  if (le_rd_claim(r, n)) {
    if (n) memcpy(dst, r->p + r->off - n, n);
  } else {
    memset(dst, 0, n);
  }
}
static inline void le_skip(struct le_rd *r, size_t n) {
  (void)le_rd_claim(r, n);
}
/* Move to an absolute offset (may equal len). */
static inline void le_seek(struct le_rd *r, size_t off) {
  if (off > r->len)
    r->err = 1;
  else
    r->off = off;
}

/* Check that [off, off+len) lies inside [0, total) without overflow. */
static inline int le_range_ok(uint64_t off, uint64_t len, uint64_t total) {
  return off <= total && len <= total - off;
}

/* Read-only little-endian loads from a buffer already checked by the caller. */
static inline uint16_t le16_at(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return le16toh(v);
}
static inline uint32_t le32_at(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return le32toh(v);
}
static inline uint64_t le64_at(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return le64toh(v);
}
static inline void le16_put(uint8_t *p, uint16_t v) {
  v = htole16(v);
  memcpy(p, &v, 2);
}
static inline void le32_put(uint8_t *p, uint32_t v) {
  v = htole32(v);
  memcpy(p, &v, 4);
}
static inline void le64_put(uint8_t *p, uint64_t v) {
  v = htole64(v);
  memcpy(p, &v, 8);
}

static inline void le_wr_init(struct le_wr *w, void *p, size_t cap) {
  w->p = (uint8_t *)p;
  w->cap = cap;
  w->off = 0;
  w->err = 0;
}
/* Claim the next n bytes of the buffer: 1 with their offset in *at, or 0 (sticky error set) if
 * they do not fit. As with le_rd_claim, the puts test this, never a pointer (see there). */
static inline int le_wr_claim(struct le_wr *w, size_t n, size_t *at) {
  if (w->err || w->off > w->cap || n > w->cap - w->off) {
    w->err = 1;
    return 0;
  }
  *at = w->off;
  w->off += n;
  return 1;
}
static inline void le_put_u8(struct le_wr *w, uint8_t v) {
  size_t at;
  if (le_wr_claim(w, 1, &at)) w->p[at] = v;
}
static inline void le_put_u16(struct le_wr *w, uint16_t v) {
  size_t at;
  if (le_wr_claim(w, 2, &at)) le16_put(w->p + at, v);
}
static inline void le_put_u32(struct le_wr *w, uint32_t v) {
  size_t at;
  if (le_wr_claim(w, 4, &at)) le32_put(w->p + at, v);
}
static inline void le_put_u64(struct le_wr *w, uint64_t v) {
  size_t at;
  if (le_wr_claim(w, 8, &at)) le64_put(w->p + at, v);
}
static inline void le_put_bytes(struct le_wr *w, const void *src, size_t n) {
  size_t at;
  if (le_wr_claim(w, n, &at) && n) memcpy(w->p + at, src, n);
}
static inline void le_put_zero(struct le_wr *w, size_t n) {
  size_t at;
  if (le_wr_claim(w, n, &at) && n) memset(w->p + at, 0, n);
}
/* Pad with zeros to a multiple of a (a power of two). */
static inline void le_put_align(struct le_wr *w, size_t a) {
  le_put_zero(w, (a - (w->off & (a - 1))) & (a - 1));
}

#endif
