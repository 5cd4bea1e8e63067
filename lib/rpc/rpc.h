/* rpc.h - DCE/RPC over an SMB2 named pipe: the connection-oriented PDUs (C706 chapter 12, MS-RPCE
 * 2.2.2) and the NDR of one call, srvsvc NetrShareEnum at level 1 (MS-SRVS 3.1.4.8).
 *
 * Pure: no I/O, no state. Encoders write into a bounded writer and return 0 or SMB3_EINVAL (the
 * writer overflowed). Decoders take bytes from the server and check everything against them:
 * PDU versions, types, fragment lengths and flags, call ids, NDR counts, offsets and pointer
 * referents, string terminators; anything that does not add up is SMB3_EPROTO. Only the
 * little-endian, ASCII, IEEE data representation is accepted (the one we ask for; every server
 * answers in it).
 */
#ifndef SMB3_RPC_H
#define SMB3_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "util/le.h"

/* ---- PDUs: C706 12.6 ---- dcerpc.c */
#define DCERPC_HDR_LEN 16      /* the common header (12.6.3.1) */
#define DCERPC_RESP_HDR_LEN 24 /* request and response: + alloc_hint, p_cont_id, opnum / cancel_count */
enum dcerpc_ptype {
  DCERPC_PT_REQUEST = 0,
  DCERPC_PT_RESPONSE = 2,
  DCERPC_PT_FAULT = 3,
  DCERPC_PT_BIND = 11,
  DCERPC_PT_BIND_ACK = 12,
  DCERPC_PT_BIND_NAK = 13,
};
#define DCERPC_PFC_FIRST_FRAG 0x01
#define DCERPC_PFC_LAST_FRAG 0x02
/* The fragment size we offer in the bind (both directions): what Windows and Samba clients use
 * over SMB named pipes; a server may lower it in its bind_ack. */
#define DCERPC_MAX_FRAG 4280
/* The largest stub (all fragments of one response together) we accept: far above any share list. */
#define DCERPC_MAX_STUB (4u << 20)

/* An interface or transfer syntax: the UUID in its NDR (little-endian fields) byte order. */
struct dcerpc_syntax {
  uint8_t uuid[16];
  uint16_t major, minor;
};
extern const struct dcerpc_syntax dcerpc_syntax_srvsvc; /* 4b324fc8-1670-01d3-1278-5a47bf6ee188 v3.0 */
extern const struct dcerpc_syntax dcerpc_syntax_ndr;    /* 8a885d04-1ceb-11c9-9fe8-08002b104860 v2 */

/* bind (12.6.4.3) with one presentation context (id 0: abstract over transfer). */
int dcerpc_bind_encode(struct le_wr *w, uint32_t call_id, const struct dcerpc_syntax *abstract,
                       const struct dcerpc_syntax *transfer);
/* bind_ack (12.6.4.4) for call_id, one context result. Returns 0 when the server accepted our
 * context with our transfer syntax; SMB3_ENOTSUP for a bind_nak (12.6.4.5) or a rejected context
 * (result and reason say why); SMB3_EPROTO for anything malformed. */
struct dcerpc_bind_ack {
  uint16_t max_xmit_frag, max_recv_frag;
  uint32_t assoc_group;
  uint16_t result, reason; /* of our context; for a bind_nak: result 2, reason = its reject reason */
};
int dcerpc_bind_ack_decode(const uint8_t *p, size_t len, uint32_t call_id, struct dcerpc_bind_ack *a);
/* request (12.6.4.9), one fragment, context 0: stub is the NDR of the call's [in] parameters. */
int dcerpc_request_encode(struct le_wr *w, uint32_t call_id, uint16_t opnum, const uint8_t *stub,
                          size_t stub_len);

/* A response's bytes as they come out of the pipe: one or more response PDUs (the first with
 * PFC_FIRST_FRAG, the last with PFC_LAST_FRAG, all for call_id), or one fault PDU.
 * Returns 1 when p[0..len) is a correct beginning that lacks bytes (read more); 0 when it is
 * complete: then *fault is the fault PDU's status (12.6.4.7) or 0, and, without a fault, the
 * fragments' stubs joined are in *stub (malloc'd, caller frees; never NULL on 0) and *stub_len;
 * SMB3_EPROTO for anything malformed (bytes after the last fragment included); SMB3_ENOMEM.
 * stub may be NULL to only ask whether the response is complete. */
int dcerpc_response_collect(const uint8_t *p, size_t len, uint32_t call_id, uint8_t **stub, size_t *stub_len,
                            uint32_t *fault);

/* ---- srvsvc NetrShareEnum (opnum 15), level 1: MS-SRVS 3.1.4.8, 2.2.4.23, 2.2.4.38 ---- srvsvc.c */
#define SRVSVC_OPNUM_NETR_SHARE_ENUM 15
#define SRVSVC_ERROR_MORE_DATA 234u /* WERROR: more entries, ask again from the resume handle */
/* The [in] parameters: ServerName NULL (the server itself), InfoStruct level 1 with an empty
 * container, PreferedMaximumLength MAX_PREFERRED_LENGTH, ResumeHandle pointing at resume. */
int srvsvc_share_enum_encode(struct le_wr *w, uint32_t resume);
struct srvsvc_share {
  char *name;    /* UTF-8, malloc'd */
  char *comment; /* UTF-8, malloc'd ("" when the server sent none) */
  uint32_t type; /* STYPE_* (MS-SRVS 2.2.2.4) */
};
struct srvsvc_enum {
  struct srvsvc_share *shares; /* n entries, malloc'd */
  uint32_t n;
  uint32_t total;  /* TotalEntries */
  int have_resume; /* the server sent a ResumeHandle */
  uint32_t resume; /* its value */
  uint32_t status; /* the call's WERROR (0 success, SRVSVC_ERROR_MORE_DATA, others) */
};
/* The [out] parameters from a response stub. On 0 r owns its shares (srvsvc_enum_free). SMB3_EPROTO
 * for malformed NDR, a level other than 1, strings that are not valid UTF-16 or lack their
 * terminator; SMB3_ENOMEM. On error r holds nothing. */
int srvsvc_share_enum_decode(const uint8_t *stub, size_t len, struct srvsvc_enum *r);
void srvsvc_enum_free(struct srvsvc_enum *r);

#endif
