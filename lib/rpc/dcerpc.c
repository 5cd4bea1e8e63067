/* dcerpc.c - connection-oriented DCE/RPC PDUs (C706 12.6, MS-RPCE 2.2.2): bind, bind_ack,
 * bind_nak, request, response (reassembled from its fragments) and fault. */
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "smb3/smb3_errors.h"

/* NDR: the UUID's first three fields little-endian, the last eight bytes as they are. */
const struct dcerpc_syntax dcerpc_syntax_srvsvc = {
    {0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01, 0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88}, 3, 0};
const struct dcerpc_syntax dcerpc_syntax_ndr = {
    {0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60}, 2, 0};

#define DCERPC_VERS 5
#define DCERPC_VERS_MINOR 0
#define DREP_LE_ASCII 0x10 /* packed_drep[0]: little-endian integers, ASCII characters (12.6.3.1) */
#define DREP_IEEE 0x00     /* packed_drep[1]: IEEE floating point */
#define BIND_ACK_MIN 26    /* header + max_xmit/recv_frag, assoc_group_id, sec_addr length: 16 + 10 */
#define FAULT_MIN 28       /* header 24 + status (12.6.4.7) */
#define RESULT_LEN 24      /* p_result_t: result, reason, transfer syntax (20) */

/* The common header (12.6.3.1); frag_length is patched once the PDU is complete. */
static void hdr_put(struct le_wr *w, uint8_t ptype, uint32_t call_id) {
  le_put_u8(w, DCERPC_VERS);
  le_put_u8(w, DCERPC_VERS_MINOR);
  le_put_u8(w, ptype);
  le_put_u8(w, DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG);
  le_put_u8(w, DREP_LE_ASCII);
  le_put_u8(w, DREP_IEEE);
  le_put_u16(w, 0);
  le_put_u16(w, 0); /* frag_length, below */
  le_put_u16(w, 0); /* auth_length: no authentication on the pipe (the SMB2 session protects it) */
  le_put_u32(w, call_id);
}

static int hdr_finish(struct le_wr *w, size_t start) {
  size_t n = w->off - start;
  if (w->err || n > UINT16_MAX) return SMB3_EINVAL;
  le16_put(w->p + start + 8, (uint16_t)n);
  return 0;
}

static void syntax_put(struct le_wr *w, const struct dcerpc_syntax *s) {
  le_put_bytes(w, s->uuid, 16);
  le_put_u16(w, s->major);
  le_put_u16(w, s->minor);
}

int dcerpc_bind_encode(struct le_wr *w, uint32_t call_id, const struct dcerpc_syntax *abstract,
                       const struct dcerpc_syntax *transfer) {
  size_t start = w->off;
  hdr_put(w, DCERPC_PT_BIND, call_id);
  le_put_u16(w, DCERPC_MAX_FRAG); /* max_xmit_frag */
  le_put_u16(w, DCERPC_MAX_FRAG); /* max_recv_frag */
  le_put_u32(w, 0);               /* assoc_group_id: a new association */
  le_put_u8(w, 1);                /* p_context_elem: n_context_elem */
  le_put_u8(w, 0);
  le_put_u16(w, 0);
  le_put_u16(w, 0); /* p_cont_id */
  le_put_u8(w, 1);  /* n_transfer_syn */
  le_put_u8(w, 0);
  syntax_put(w, abstract);
  syntax_put(w, transfer);
  return hdr_finish(w, start);
}

int dcerpc_request_encode(struct le_wr *w, uint32_t call_id, uint16_t opnum, const uint8_t *stub,
                          size_t stub_len) {
  if (stub_len && !stub) return SMB3_EINVAL;
  if (stub_len > DCERPC_MAX_FRAG - DCERPC_RESP_HDR_LEN) return SMB3_EINVAL; /* one fragment only */
  size_t start = w->off;
  hdr_put(w, DCERPC_PT_REQUEST, call_id);
  le_put_u32(w, (uint32_t)stub_len); /* alloc_hint */
  le_put_u16(w, 0);                  /* p_cont_id */
  le_put_u16(w, opnum);
  le_put_bytes(w, stub, stub_len);
  return hdr_finish(w, start);
}

/* The common header of the PDU at p (len bytes available, at least 16). Checks version, data
 * representation, no authentication, the call id and a frag_length that covers its header. */
struct pdu_hdr {
  uint8_t ptype, flags;
  uint16_t frag_len;
};
static int hdr_get(const uint8_t *p, uint32_t call_id, size_t min_len, struct pdu_hdr *h) {
  if (p[0] != DCERPC_VERS || p[1] != DCERPC_VERS_MINOR) return SMB3_EPROTO;
  if (p[4] != DREP_LE_ASCII || p[5] != DREP_IEEE) return SMB3_EPROTO;
  h->ptype = p[2];
  h->flags = p[3];
  h->frag_len = le16_at(p + 8);
  if (le16_at(p + 10) != 0) return SMB3_EPROTO; /* auth_length: we asked for none */
  if (le32_at(p + 12) != call_id) return SMB3_EPROTO;
  if (h->frag_len < min_len) return SMB3_EPROTO;
  return 0;
}

int dcerpc_bind_ack_decode(const uint8_t *p, size_t len, uint32_t call_id, struct dcerpc_bind_ack *a) {
  memset(a, 0, sizeof *a);
  struct pdu_hdr h;
  if (len < DCERPC_HDR_LEN || hdr_get(p, call_id, DCERPC_HDR_LEN, &h)) return SMB3_EPROTO;
  if (h.frag_len != len) return SMB3_EPROTO; /* one PDU, exactly */
  if ((h.flags & (DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG)) !=
      (DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG))
    return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  le_seek(&r, DCERPC_HDR_LEN);
  if (h.ptype == DCERPC_PT_BIND_NAK) { /* 12.6.4.5: provider_reject_reason, then the versions */
    a->result = 2;
    a->reason = le_u16(&r);
    return r.err ? SMB3_EPROTO : SMB3_ENOTSUP;
  }
  if (h.ptype != DCERPC_PT_BIND_ACK || len < BIND_ACK_MIN) return SMB3_EPROTO;
  a->max_xmit_frag = le_u16(&r);
  a->max_recv_frag = le_u16(&r);
  a->assoc_group = le_u32(&r);
  uint16_t addr_len = le_u16(&r); /* sec_addr: port_any_t (a NUL-terminated string, length counts it) */
  const uint8_t *addr = le_rd_take(&r, addr_len);
  if (r.err || (addr_len && addr[addr_len - 1] != 0)) return SMB3_EPROTO;
  le_seek(&r, (r.off + 3) & ~(size_t)3); /* p_result_list is 4-aligned from the PDU's start */
  uint8_t n = le_u8(&r);
  le_skip(&r, 3);
  if (r.err || n < 1 || !le_rd_has(&r, (size_t)n * RESULT_LEN)) return SMB3_EPROTO;
  /* We offered one context: the first result is ours (a server may not add others). */
  if (n != 1 || r.off + RESULT_LEN != len) return SMB3_EPROTO;
  a->result = le_u16(&r);
  a->reason = le_u16(&r);
  const uint8_t *ts = le_rd_take(&r, 20);
  if (r.err) return SMB3_EPROTO;
  if (a->max_xmit_frag < DCERPC_RESP_HDR_LEN + 8 || a->max_recv_frag < DCERPC_RESP_HDR_LEN + 8)
    return SMB3_EPROTO;                    /* fragments that cannot carry a stub */
  if (a->result != 0) return SMB3_ENOTSUP; /* user or provider rejection (12.6.3.1 p_cont_def_result_t) */
  if (memcmp(ts, dcerpc_syntax_ndr.uuid, 16) || le16_at(ts + 16) != dcerpc_syntax_ndr.major ||
      le16_at(ts + 18) != dcerpc_syntax_ndr.minor)
    return SMB3_EPROTO; /* accepted, but not in the transfer syntax we offered */
  return 0;
}

/* One pass over the PDUs: checks them, and copies their stubs into out when it is not NULL. */
static int collect(const uint8_t *p, size_t len, uint32_t call_id, uint8_t *out, size_t *stub_len,
                   uint32_t *fault) {
  size_t off = 0, total = 0;
  *fault = 0;
  for (;;) {
    if (len - off < DCERPC_HDR_LEN) return 1;
    struct pdu_hdr h;
    if (hdr_get(p + off, call_id, DCERPC_HDR_LEN, &h)) return SMB3_EPROTO;
    int first = (h.flags & DCERPC_PFC_FIRST_FRAG) != 0, last = (h.flags & DCERPC_PFC_LAST_FRAG) != 0;
    if (first != (off == 0)) return SMB3_EPROTO; /* FIRST_FRAG on the first fragment and only there */
    if (h.ptype == DCERPC_PT_FAULT) {
      if (off != 0 || !last || h.frag_len < FAULT_MIN) return SMB3_EPROTO;
      if (len < h.frag_len) return 1;
      if (len != h.frag_len) return SMB3_EPROTO;
      *fault = le32_at(p + DCERPC_RESP_HDR_LEN);
      if (!*fault) return SMB3_EPROTO; /* a fault must name one */
      return 0;
    }
    if (h.ptype != DCERPC_PT_RESPONSE || h.frag_len < DCERPC_RESP_HDR_LEN) return SMB3_EPROTO;
    size_t n = h.frag_len - DCERPC_RESP_HDR_LEN;
    if (n > DCERPC_MAX_STUB - total) return SMB3_EPROTO;
    if (len - off < h.frag_len) return 1;
    if (le16_at(p + off + 20) != 0)
      return SMB3_EPROTO; /* p_cont_id: our only context (the whole fragment is here) */
    if (out) memcpy(out + total, p + off + DCERPC_RESP_HDR_LEN, n);
    total += n;
    off += h.frag_len;
    if (last) {
      if (off != len) return SMB3_EPROTO; /* bytes after the last fragment */
      *stub_len = total;
      return 0;
    }
  }
}

int dcerpc_response_collect(const uint8_t *p, size_t len, uint32_t call_id, uint8_t **stub, size_t *stub_len,
                            uint32_t *fault) {
  size_t n = 0;
  uint32_t f = 0;
  if (stub) *stub = NULL;
  if (stub_len) *stub_len = 0;
  if (fault) *fault = 0;
  if (!p && len) return SMB3_EPROTO;
  int rc = collect(p, len, call_id, NULL, &n, &f);
  if (rc || !stub) {
    if (fault) *fault = f;
    return rc;
  }
  if (f) {
    if (fault) *fault = f;
    return 0;
  }
  uint8_t *out = malloc(n ? n : 1);
  if (!out) return SMB3_ENOMEM;
  rc = collect(p, len, call_id, out, &n, &f);
  if (rc) { /* cannot happen: the same bytes passed a moment ago */
    free(out);
    return rc;
  }
  *stub = out;
  if (stub_len) *stub_len = n;
  return 0;
}
