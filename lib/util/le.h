/* le.h - bounded little-endian cursors for decoding and encoding wire messages.
 *
 * Convention (DESIGN.md 1): never cast packed structs over received bytes. A reader walks a
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
static inline int le_rd_has(const struct le_rd *r, size_t n) { return !r->err && r->off <= r->len && n <= r->len - r->off; }

static inline const uint8_t *le_rd_take(struct le_rd *r, size_t n) {
  if (!le_rd_has(r, n)) {
    r->err = 1;
    return NULL;
  }
  const uint8_t *q = r->p + r->off;
  r->off += n;
  return q;
}

static inline uint8_t le_u8(struct le_rd *r) {
  const uint8_t *q = le_rd_take(r, 1);
  return q ? q[0] : 0;
}
static inline uint16_t le_u16(struct le_rd *r) {
  uint16_t v = 0;
  const uint8_t *q = le_rd_take(r, 2);
  if (q) memcpy(&v, q, 2);
  return le16toh(v);
}
static inline uint32_t le_u32(struct le_rd *r) {
  uint32_t v = 0;
  const uint8_t *q = le_rd_take(r, 4);
  if (q) memcpy(&v, q, 4);
  return le32toh(v);
}
static inline uint64_t le_u64(struct le_rd *r) {
  uint64_t v = 0;
  const uint8_t *q = le_rd_take(r, 8);
  if (q) memcpy(&v, q, 8);
  return le64toh(v);
}
static inline void le_bytes(struct le_rd *r, void *dst, size_t n) {
  const uint8_t *q = le_rd_take(r, n);
  if (q)
    memcpy(dst, q, n);
  else
    memset(dst, 0, n);
}
static inline void le_skip(struct le_rd *r, size_t n) { (void)le_rd_take(r, n); }
/* Move to an absolute offset (may equal len). */
static inline void le_seek(struct le_rd *r, size_t off) {
  if (off > r->len)
    r->err = 1;
  else
    r->off = off;
}

/* Check that [off, off+len) lies inside [0, total) without overflow. */
static inline int le_range_ok(uint64_t off, uint64_t len, uint64_t total) { return off <= total && len <= total - off; }

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
static inline uint8_t *le_wr_take(struct le_wr *w, size_t n) {
  if (w->err || w->off > w->cap || n > w->cap - w->off) {
    w->err = 1;
    return NULL;
  }
  uint8_t *q = w->p + w->off;
  w->off += n;
  return q;
}
static inline void le_put_u8(struct le_wr *w, uint8_t v) {
  uint8_t *q = le_wr_take(w, 1);
  if (q) q[0] = v;
}
static inline void le_put_u16(struct le_wr *w, uint16_t v) {
  uint8_t *q = le_wr_take(w, 2);
  if (q) le16_put(q, v);
}
static inline void le_put_u32(struct le_wr *w, uint32_t v) {
  uint8_t *q = le_wr_take(w, 4);
  if (q) le32_put(q, v);
}
static inline void le_put_u64(struct le_wr *w, uint64_t v) {
  uint8_t *q = le_wr_take(w, 8);
  if (q) le64_put(q, v);
}
static inline void le_put_bytes(struct le_wr *w, const void *src, size_t n) {
  uint8_t *q = le_wr_take(w, n);
  if (q && n) memcpy(q, src, n);
}
static inline void le_put_zero(struct le_wr *w, size_t n) {
  uint8_t *q = le_wr_take(w, n);
  if (q && n) memset(q, 0, n);
}
/* Pad with zeros to a multiple of a (a power of two). */
static inline void le_put_align(struct le_wr *w, size_t a) { le_put_zero(w, (a - (w->off & (a - 1))) & (a - 1)); }

#endif
