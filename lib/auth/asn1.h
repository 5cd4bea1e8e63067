/* asn1.h - a small bounded DER reader and a back-to-front DER writer, enough for SPNEGO
 * (RFC 4178) and the GSS-API framing (RFC 2743 3.1). X.690 8.1 (identifier and length octets).
 *
 * Only single-byte tags (tag number < 31) are supported; that covers every tag SPNEGO uses.
 * Lengths: short form, or long form with 1..4 length octets; the indefinite form (BER only) is
 * rejected, and no length may exceed ASN1_MAX_LEN. Non-minimal long-form lengths are accepted
 * (some encoders emit them) - the reader is DER-strict only where it matters for safety.
 */
#ifndef SMB3_ASN1_H
#define SMB3_ASN1_H

#include <stddef.h>
#include <stdint.h>

/* Cap on any one DER length: SMB2 security buffers are at most 64 KiB in practice. */
#define ASN1_MAX_LEN ((size_t)1 << 20)

/* Universal and context tags used by SPNEGO. */
#define ASN1_BOOLEAN 0x01
#define ASN1_INTEGER 0x02
#define ASN1_BIT_STRING 0x03
#define ASN1_OCTET_STRING 0x04
#define ASN1_OID 0x06
#define ASN1_ENUMERATED 0x0a
#define ASN1_GENERAL_STRING 0x1b
#define ASN1_SEQUENCE 0x30
#define ASN1_APPLICATION(n) (0x60 | (n)) /* constructed [APPLICATION n] */
#define ASN1_CONTEXT(n) (0xa0 | (n))     /* constructed [n] */

/* Reader over a buffer it does not own; sticky error flag like le_rd. */
struct asn1_rd {
  const uint8_t *p;
  size_t len;
  size_t off;
  int err;
};

void asn1_rd_init(struct asn1_rd *r, const uint8_t *p, size_t len);

/* True if the reader has no unread bytes (and no error). */
int asn1_rd_done(const struct asn1_rd *r);

/* Tag of the next element without consuming it; -1 at the end or after an error. */
int asn1_peek_tag(const struct asn1_rd *r);

/* Read one element. On success *tag, *val (pointing into the buffer) and *vlen are set and 0
 * is returned; on malformed input the reader's error flag is set and SMB3_EPROTO returned. */
int asn1_read_any(struct asn1_rd *r, uint8_t *tag, const uint8_t **val, size_t *vlen);

/* Read one element whose tag must be `tag`, and point `inner` at its contents. */
int asn1_read(struct asn1_rd *r, uint8_t tag, struct asn1_rd *inner);

/* Back-to-front writer: each call prepends bytes before what was written so far, so a
 * constructed element is written contents first, then asn1_put_hdr() with the contents length
 * (asn1_wr_mark() - mark taken before the contents). Not owning; sticky err on overflow. */
struct asn1_wr {
  uint8_t *p;
  size_t cap;
  size_t pos; /* data lives in p[pos .. cap) */
  int err;
};

void asn1_wr_init(struct asn1_wr *w, uint8_t *p, size_t cap);
/* Current length of what has been written (use as a mark before writing contents). */
size_t asn1_wr_len(const struct asn1_wr *w);
void asn1_put_bytes(struct asn1_wr *w, const void *src, size_t n);
/* Prepend the identifier and length octets of an element with contents length len. */
void asn1_put_hdr(struct asn1_wr *w, uint8_t tag, size_t len);
/* Prepend a whole primitive element. */
void asn1_put_prim(struct asn1_wr *w, uint8_t tag, const void *val, size_t len);
/* Close a constructed element whose contents were written since `mark`. */
void asn1_put_wrap(struct asn1_wr *w, uint8_t tag, size_t mark);
/* Pointer to the encoding written so far (valid while the buffer lives). */
const uint8_t *asn1_wr_data(const struct asn1_wr *w);

#endif
