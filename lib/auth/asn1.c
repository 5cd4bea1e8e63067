/* asn1.c - bounded DER reader and back-to-front writer (see asn1.h; X.690 8.1). */
#include "auth/asn1.h"

#include <string.h>

#include "smb3/smb3_errors.h"

void asn1_rd_init(struct asn1_rd *r, const uint8_t *p, size_t len) {
  r->p = p;
  r->len = p ? len : 0;
  r->off = 0;
  r->err = 0;
}

int asn1_rd_done(const struct asn1_rd *r) {
  return !r->err && r->off == r->len;
}

int asn1_peek_tag(const struct asn1_rd *r) {
  if (r->err || r->off >= r->len) return -1;
  return r->p[r->off];
}

static int asn1_fail(struct asn1_rd *r) {
  r->err = 1;
  return SMB3_EPROTO;
}

/* X.690 8.1.3: definite length, short or long form (at most 4 octets, capped). */
static int asn1_read_len(struct asn1_rd *r, size_t *len) {
  if (r->off >= r->len) return asn1_fail(r);
  uint8_t b = r->p[r->off++];
  if (b < 0x80) {
    *len = b;
    return 0;
  }
  size_t n = b & 0x7f;
  if (n == 0 || n > 4 || n > r->len - r->off) return asn1_fail(r); /* indefinite or too long */
  size_t v = 0;
  for (size_t i = 0; i < n; i++)
    v = (v << 8) | r->p[r->off++];
  if (v > ASN1_MAX_LEN) return asn1_fail(r);
  *len = v;
  return 0;
}

int asn1_read_any(struct asn1_rd *r, uint8_t *tag, const uint8_t **val, size_t *vlen) {
  if (r->err || r->off >= r->len) return asn1_fail(r);
  uint8_t t = r->p[r->off++];
  if ((t & 0x1f) == 0x1f) return asn1_fail(r); /* high tag numbers: never used by SPNEGO */
  size_t len;
  if (asn1_read_len(r, &len) < 0) return SMB3_EPROTO;
  if (len > r->len - r->off) return asn1_fail(r);
  *tag = t;
  *val = r->p + r->off;
  *vlen = len;
  r->off += len;
  return 0;
}

int asn1_read(struct asn1_rd *r, uint8_t tag, struct asn1_rd *inner) {
  uint8_t t;
  const uint8_t *v;
  size_t n;
  asn1_rd_init(inner, NULL, 0);
  if (asn1_read_any(r, &t, &v, &n) < 0) return SMB3_EPROTO;
  if (t != tag) return asn1_fail(r);
  asn1_rd_init(inner, v, n);
  return 0;
}

void asn1_wr_init(struct asn1_wr *w, uint8_t *p, size_t cap) {
  w->p = p;
  w->cap = cap;
  w->pos = cap;
  w->err = 0;
}

size_t asn1_wr_len(const struct asn1_wr *w) {
  return w->cap - w->pos;
}

const uint8_t *asn1_wr_data(const struct asn1_wr *w) {
  return w->p + w->pos;
}

void asn1_put_bytes(struct asn1_wr *w, const void *src, size_t n) {
  if (w->err || n > w->pos) {
    w->err = 1;
    return;
  }
  w->pos -= n;
  if (n) memcpy(w->p + w->pos, src, n);
}

void asn1_put_hdr(struct asn1_wr *w, uint8_t tag, size_t len) {
  uint8_t hdr[6];
  size_t n = 0;
  if (len > ASN1_MAX_LEN) {
    w->err = 1;
    return;
  }
  hdr[n++] = tag;
  if (len < 0x80) {
    hdr[n++] = (uint8_t)len;
  } else {
    size_t octets = len > 0xffff ? 3 : len > 0xff ? 2 : 1; /* minimal, X.690 10.1 */
    hdr[n++] = (uint8_t)(0x80 | octets);
    for (size_t i = octets; i > 0; i--)
      hdr[n++] = (uint8_t)(len >> (8 * (i - 1)));
  }
  asn1_put_bytes(w, hdr, n);
}

void asn1_put_prim(struct asn1_wr *w, uint8_t tag, const void *val, size_t len) {
  asn1_put_bytes(w, val, len);
  asn1_put_hdr(w, tag, len);
}

void asn1_put_wrap(struct asn1_wr *w, uint8_t tag, size_t mark) {
  size_t now = asn1_wr_len(w);
  asn1_put_hdr(w, tag, now >= mark ? now - mark : 0);
}
