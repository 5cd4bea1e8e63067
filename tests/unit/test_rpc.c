/* test_rpc.c - DCE/RPC PDUs (C706 12.6: bind, bind_ack, bind_nak, request, response fragments,
 * fault) and the NDR of srvsvc NetrShareEnum level 1 (MS-SRVS 3.1.4.8): encodings byte for byte,
 * a response captured from Samba 4.17, and malformed PDUs and stubs, each refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rpc/rpc.h"
#include "smb3/smb3_errors.h"
#include "wire_test.h"

/* smb3 ls -a against the test harness (Samba 4.17): shares test ("the test share"), public, ro
 * (no comments) and IPC$; call id 2, one fragment. */
static const char samba_rsp_hex[] =
    "05000203100000006c010000020000005401000000000000010000000100000008000200040000000c00020004000000"
    "10000200000000001400020018000200000000001c00020020000200000000002400020028000200030000802c000200"
    "0500000000000000050000007400650073007400000000000f000000000000000f000000740068006500200074006500"
    "73007400200073006800610072006500000000000700000000000000070000007000750062006c006900630000000000"
    "0100000000000000010000000000000003000000000000000300000072006f0000000000010000000000000001000000"
    "000000000500000000000000050000004900500043002400000000002100000000000000210000004900500043002000"
    "53006500720076006900630065002000280073006d006200330066007300200074006500730074002000730065007200"
    "76006500720029000000000004000000300002000000000000000000";

static void test_bind_encode(void **state) {
  (void)state;
  uint8_t b[128];
  struct le_wr w;
  le_wr_init(&w, b, sizeof b);
  assert_int_equal(dcerpc_bind_encode(&w, 1, &dcerpc_syntax_srvsvc, &dcerpc_syntax_ndr), 0);
  assert_true(
      wt_hex_eq(b, w.off,
                "05000b03 10000000 4800 0000 01000000" /* v5.0 bind, first|last, LE, 72 bytes, call 1 */
                "b810 b810 00000000 01000000"          /* frags 4280, new group, one context */
                "0000 01 00 c84f324b 7016 d301 12785a47bf6ee188 0300 0000" /* srvsvc v3.0 */
                "045d888a eb1c c911 9fe808002b104860 02000000"));          /* NDR v2 */
  le_wr_init(&w, b, 40);
  assert_int_equal(dcerpc_bind_encode(&w, 1, &dcerpc_syntax_srvsvc, &dcerpc_syntax_ndr), SMB3_EINVAL);
}

static void test_request_encode(void **state) {
  (void)state;
  uint8_t stub[64], b[128];
  struct le_wr w;
  le_wr_init(&w, stub, sizeof stub);
  assert_int_equal(srvsvc_share_enum_encode(&w, 7), 0);
  size_t n = w.off;
  assert_true(
      wt_hex_eq(stub, n, "00000000 01000000 01000000 00000200 00000000 00000000 ffffffff 04000200 07000000"));
  le_wr_init(&w, b, sizeof b);
  assert_int_equal(dcerpc_request_encode(&w, 2, SRVSVC_OPNUM_NETR_SHARE_ENUM, stub, n), 0);
  assert_int_equal(w.off, 24 + n);
  assert_true(wt_hex_eq(b, 24, "05000003 10000000 3c00 0000 02000000 24000000 0000 0f00"));
  assert_int_equal(dcerpc_request_encode(&w, 2, 15, NULL, 4), SMB3_EINVAL);
}

/* A bind_ack as Samba sends it: secondary address "\\PIPE\\srvsvc", one accepted result. */
static size_t bind_ack(uint8_t *b, size_t cap, uint16_t result, const struct dcerpc_syntax *ts) {
  struct le_wr w;
  le_wr_init(&w, b, cap);
  const uint8_t hdr[] = {5, 0, DCERPC_PT_BIND_ACK, 3, 0x10, 0, 0, 0};
  le_put_bytes(&w, hdr, sizeof hdr);
  le_put_u16(&w, 0); /* frag_length, below */
  le_put_u16(&w, 0);
  le_put_u32(&w, 1);
  le_put_u16(&w, 4280);
  le_put_u16(&w, 4280);
  le_put_u32(&w, 0x1234);
  le_put_u16(&w, 13);
  le_put_bytes(&w, "\\PIPE\\srvsvc", 13);
  le_put_align(&w, 4);
  le_put_u32(&w, 1); /* one result */
  le_put_u16(&w, result);
  le_put_u16(&w, 0);
  le_put_bytes(&w, ts->uuid, 16);
  le_put_u16(&w, ts->major);
  le_put_u16(&w, ts->minor);
  le16_put(b + 8, (uint16_t)w.off);
  return w.off;
}

static int dec_bind_ack(const uint8_t *p, size_t n) {
  struct dcerpc_bind_ack a;
  return dcerpc_bind_ack_decode(p, n, 1, &a);
}

static void test_bind_ack(void **state) {
  (void)state;
  uint8_t b[128];
  struct dcerpc_bind_ack a;
  size_t n = bind_ack(b, sizeof b, 0, &dcerpc_syntax_ndr);
  assert_int_equal(n, 68);
  assert_int_equal(dcerpc_bind_ack_decode(b, n, 1, &a), 0);
  assert_int_equal(a.max_xmit_frag, 4280);
  assert_int_equal(a.assoc_group, 0x1234);
  assert_true(wt_truncations_fail(dec_bind_ack, b, n));
  assert_int_equal(dcerpc_bind_ack_decode(b, n, 2, &a), SMB3_EPROTO); /* another call's */
  uint8_t c[128];
#define MUTATE(off, val, want)                                                                               \
  do {                                                                                                       \
    memcpy(c, b, n);                                                                                         \
    c[off] = (uint8_t)(val);                                                                                 \
    assert_int_equal(dcerpc_bind_ack_decode(c, n, 1, &a), want);                                             \
  } while (0)
  MUTATE(0, 4, SMB3_EPROTO);     /* version 4 */
  MUTATE(2, 2, SMB3_EPROTO);     /* a response, not a bind_ack */
  MUTATE(3, 1, SMB3_EPROTO);     /* not the last fragment */
  MUTATE(4, 0x00, SMB3_EPROTO);  /* big-endian data representation */
  MUTATE(8, 61, SMB3_EPROTO);    /* frag_length past the data */
  MUTATE(10, 8, SMB3_EPROTO);    /* auth_length: we asked for none */
  MUTATE(24, 200, SMB3_EPROTO);  /* sec_addr longer than the PDU */
  MUTATE(38, 'x', SMB3_EPROTO);  /* sec_addr without its NUL */
  MUTATE(40, 0, SMB3_EPROTO);    /* no results */
  MUTATE(40, 2, SMB3_EPROTO);    /* two results announced, one there */
  MUTATE(48, 0x05, SMB3_EPROTO); /* accepted with another transfer syntax */
  MUTATE(44, 3, SMB3_ENOTSUP);   /* our context rejected */
  memcpy(c, b, n);
  le16_put(c + 16, 8); /* max_xmit_frag too small for a stub */
  assert_int_equal(dcerpc_bind_ack_decode(c, n, 1, &a), SMB3_EPROTO);
  struct dcerpc_syntax other = dcerpc_syntax_ndr;
  other.major = 1;
  n = bind_ack(b, sizeof b, 0, &other);
  assert_int_equal(dcerpc_bind_ack_decode(b, n, 1, &a), SMB3_EPROTO);
  n = bind_ack(b, sizeof b, 2, &dcerpc_syntax_ndr); /* provider rejection */
  assert_int_equal(dcerpc_bind_ack_decode(b, n, 1, &a), SMB3_ENOTSUP);
  assert_int_equal(a.result, 2);
  uint8_t nak[24];
  assert_int_equal(wt_unhex("05000d03 10000000 1800 0000 01000000 0400 01 00 0500 0000", nak, sizeof nak),
                   24);
  assert_int_equal(dcerpc_bind_ack_decode(nak, 24, 1, &a), SMB3_ENOTSUP);
  assert_int_equal(a.reason, 4);
}

/* Response PDUs carrying stub[0..n) in fragments of at most per bytes of stub. */
static size_t fragments(uint8_t *b, size_t cap, uint32_t call_id, const uint8_t *stub, size_t n, size_t per) {
  size_t off = 0, done = 0;
  do {
    size_t k = n - done < per ? n - done : per;
    if (off + 24 + k > cap) return 0;
    uint8_t flags = (done == 0 ? DCERPC_PFC_FIRST_FRAG : 0) | (done + k == n ? DCERPC_PFC_LAST_FRAG : 0);
    uint8_t *p = b + off;
    memset(p, 0, 24);
    p[0] = 5;
    p[2] = DCERPC_PT_RESPONSE;
    p[3] = flags;
    p[4] = 0x10;
    le16_put(p + 8, (uint16_t)(24 + k));
    le32_put(p + 12, call_id);
    le32_put(p + 16, (uint32_t)(n - done));
    memcpy(p + 24, stub + done, k);
    off += 24 + k;
    done += k;
  } while (done < n);
  return off;
}

static void test_response_fragments(void **state) {
  (void)state;
  uint8_t stub[300], b[1024], *out;
  size_t out_len;
  uint32_t fault;
  for (size_t i = 0; i < sizeof stub; i++)
    stub[i] = (uint8_t)(i * 7);
  size_t n = fragments(b, sizeof b, 9, stub, sizeof stub, 100); /* three fragments */
  assert_int_equal(n, 3 * 124);
  assert_int_equal(dcerpc_response_collect(b, n, 9, &out, &out_len, &fault), 0);
  assert_int_equal(fault, 0);
  assert_int_equal(out_len, sizeof stub);
  assert_memory_equal(out, stub, sizeof stub);
  free(out);
  /* Every strict prefix is a correct beginning: read more. */
  for (size_t k = 0; k < n; k++)
    assert_int_equal(dcerpc_response_collect(b, k, 9, NULL, NULL, &fault), 1);
  assert_int_equal(dcerpc_response_collect(b, n, 8, NULL, NULL, &fault), SMB3_EPROTO); /* call id */
  uint8_t c[1024];
  memcpy(c, b, n);
  c[n] = 0;
  assert_int_equal(dcerpc_response_collect(c, n + 1, 9, &out, &out_len, &fault), SMB3_EPROTO); /* trailing */
  memcpy(c, b, n);
  c[3] = 0; /* first fragment without FIRST_FRAG */
  assert_int_equal(dcerpc_response_collect(c, n, 9, &out, &out_len, &fault), SMB3_EPROTO);
  memcpy(c, b, n);
  c[124 + 3] |= DCERPC_PFC_FIRST_FRAG; /* a second first fragment */
  assert_int_equal(dcerpc_response_collect(c, n, 9, &out, &out_len, &fault), SMB3_EPROTO);
  memcpy(c, b, n);
  le16_put(c + 124 + 8, 20); /* a fragment shorter than its header */
  assert_int_equal(dcerpc_response_collect(c, n, 9, &out, &out_len, &fault), SMB3_EPROTO);
  memcpy(c, b, n);
  c[124 + 2] = DCERPC_PT_REQUEST; /* not a response */
  assert_int_equal(dcerpc_response_collect(c, n, 9, &out, &out_len, &fault), SMB3_EPROTO);
  memcpy(c, b, n);
  c[20] = 1; /* another presentation context */
  assert_int_equal(dcerpc_response_collect(c, n, 9, &out, &out_len, &fault), SMB3_EPROTO);
  memcpy(c, b, n);
  c[248 + 3] = 0; /* the last fragment lacks LAST_FRAG: more is announced */
  assert_int_equal(dcerpc_response_collect(c, n, 9, &out, &out_len, &fault), 1);
  /* A fault PDU: its status, no stub. */
  uint8_t f[32];
  assert_int_equal(
      wt_unhex("05000303 10000000 2000 0000 09000000 20000000 0000 00 00 05000000 00000000", f, sizeof f),
      32);
  out = (uint8_t *)1;
  assert_int_equal(dcerpc_response_collect(f, 32, 9, &out, &out_len, &fault), 0);
  assert_int_equal(fault, 5);
  assert_null(out);
  assert_int_equal(dcerpc_response_collect(f, 31, 9, &out, &out_len, &fault), 1);
  f[24] = 0; /* a fault that names no status */
  assert_int_equal(dcerpc_response_collect(f, 32, 9, &out, &out_len, &fault), SMB3_EPROTO);
}

static void test_samba_response(void **state) {
  (void)state;
  uint8_t b[1024], *stub;
  size_t n = wt_unhex(samba_rsp_hex, b, sizeof b), stub_len;
  uint32_t fault;
  assert_int_equal(n, 364);
  assert_int_equal(dcerpc_response_collect(b, n, 2, &stub, &stub_len, &fault), 0);
  assert_int_equal(stub_len, 340);
  struct srvsvc_enum e;
  assert_int_equal(srvsvc_share_enum_decode(stub, stub_len, &e), 0);
  assert_int_equal(e.n, 4);
  assert_int_equal(e.total, 4);
  assert_int_equal(e.status, 0);
  assert_true(e.have_resume);
  assert_string_equal(e.shares[0].name, "test");
  assert_string_equal(e.shares[0].comment, "the test share");
  assert_int_equal(e.shares[0].type, 0);
  assert_string_equal(e.shares[2].name, "ro");
  assert_string_equal(e.shares[2].comment, "");
  assert_string_equal(e.shares[3].name, "IPC$");
  assert_int_equal(e.shares[3].type, 0x80000003u);
  assert_string_equal(e.shares[3].comment, "IPC Service (smb3fs test server)");
  srvsvc_enum_free(&e);
  /* Every strict prefix of the stub is refused. */
  for (size_t k = 0; k < stub_len; k++) {
    uint8_t *copy = malloc(k ? k : 1);
    memcpy(copy, stub, k);
    assert_int_not_equal(srvsvc_share_enum_decode(copy, k, &e), 0);
    assert_null(e.shares);
    free(copy);
  }
  free(stub);
}

/* A hand-built stub: two shares, the second with a NULL remark pointer. */
static size_t enum_stub(uint8_t *b, size_t cap) {
  struct le_wr w;
  le_wr_init(&w, b, cap);
  const uint32_t fixed[] = {1, 1, 0x20000, 2, 0x20004, 2, 0x20008, 0, 0x2000c, 0x20010, 1, 0};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    le_put_u32(&w, fixed[i]);
  /* "a" (2 units), pad; "hi" (3 units), pad; "b" */
  const char *strs = "02000000 00000000 02000000 6100 0000"
                     "03000000 00000000 03000000 6800 6900 0000 0000"
                     "02000000 00000000 02000000 6200 0000";
  uint8_t s[128];
  size_t sn = wt_unhex(strs, s, sizeof s);
  le_put_bytes(&w, s, sn);
  le_put_u32(&w, 2);       /* TotalEntries */
  le_put_u32(&w, 0x20014); /* ResumeHandle */
  le_put_u32(&w, 0);
  le_put_u32(&w, 0); /* WERROR */
  return w.off;
}
/* Offsets into enum_stub: */
#define ST_LEVEL 0
#define ST_SWITCH 4
#define ST_COUNT 12
#define ST_MAX 20
#define ST_NAME0 24
#define ST_REMARK1 44
#define ST_STR0 48     /* "a": max, offset, actual, units */
#define ST_STR1 64     /* "hi" */
#define ST_STR1_END 80 /* its terminator */

static int dec_enum(const uint8_t *p, size_t n) {
  struct srvsvc_enum e;
  int rc = srvsvc_share_enum_decode(p, n, &e);
  srvsvc_enum_free(&e);
  return rc;
}

static void test_enum_decode(void **state) {
  (void)state;
  uint8_t b[256];
  size_t n = enum_stub(b, sizeof b);
  struct srvsvc_enum e;
  assert_int_equal(srvsvc_share_enum_decode(b, n, &e), 0);
  assert_int_equal(e.n, 2);
  assert_string_equal(e.shares[0].name, "a");
  assert_string_equal(e.shares[0].comment, "hi");
  assert_int_equal(e.shares[0].type, 0);
  assert_string_equal(e.shares[1].name, "b");
  assert_string_equal(e.shares[1].comment, "");
  assert_int_equal(e.shares[1].type, 1);
  srvsvc_enum_free(&e);
  assert_true(wt_truncations_fail(dec_enum, b, n));
  uint8_t c[256];
#define BAD32(off, val)                                                                                      \
  do {                                                                                                       \
    memcpy(c, b, n);                                                                                         \
    le32_put(c + (off), (val));                                                                              \
    assert_int_equal(dec_enum(c, n), SMB3_EPROTO);                                                           \
  } while (0)
  BAD32(ST_LEVEL, 2);          /* another level */
  BAD32(ST_SWITCH, 2);         /* a union arm that is not the level */
  BAD32(ST_COUNT, 3);          /* more entries than the array's conformance */
  BAD32(ST_MAX, 3);            /* conformance and count differ */
  BAD32(ST_COUNT, 0x40000000); /* a count larger than the data (and no allocation of it) */
  BAD32(ST_NAME0, 0);          /* a share without a name */
  BAD32(ST_STR0 + 4, 1);       /* a varying string's offset */
  BAD32(ST_STR0 + 8, 3);       /* actual count above max count */
  BAD32(ST_STR0 + 8, 0);       /* no units at all: no terminator */
  memcpy(c, b, n);
  le32_put(c + ST_STR0, 0x7fffffff);
  le32_put(c + ST_STR0 + 8, 0x7fffffff);
  assert_int_equal(dec_enum(c, n), SMB3_EPROTO);
  memcpy(c, b, n);
  c[ST_STR1_END] = 'x'; /* "hi" without its terminator */
  assert_int_equal(dec_enum(c, n), SMB3_EPROTO);
  memcpy(c, b, n);
  c[ST_STR1 + 12] = 0; /* a NUL inside "hi" */
  c[ST_STR1 + 13] = 0;
  assert_int_equal(dec_enum(c, n), SMB3_EPROTO);
  memcpy(c, b, n);
  le16_put(c + ST_STR1 + 12, 0xd800); /* an unpaired surrogate */
  assert_int_equal(dec_enum(c, n), SMB3_EPROTO);
  memcpy(c, b, n);
  le32_put(c + ST_REMARK1, 0x20010); /* a remark announced that is not there (the stub ends early) */
  assert_int_equal(dec_enum(c, n), SMB3_EPROTO);
  memcpy(c, b, n);
  memset(c + n, 0, 4); /* padding of zeros is tolerated, anything else is not */
  assert_int_equal(dec_enum(c, n + 4), 0);
  c[n + 1] = 1;
  assert_int_equal(dec_enum(c, n + 4), SMB3_EPROTO);
  memset(c + n, 0, 8);
  assert_int_equal(dec_enum(c, n + 8), SMB3_EPROTO);
  /* A NULL container, and a NULL array with count 0: no shares; a NULL array with a count: refused. */
  uint8_t z[64];
  size_t zn = wt_unhex("01000000 01000000 00000000 00000000 00000000 00000000", z, sizeof z);
  assert_int_equal(srvsvc_share_enum_decode(z, zn, &e), 0);
  assert_int_equal(e.n, 0);
  srvsvc_enum_free(&e);
  zn = wt_unhex("01000000 01000000 00000200 00000000 00000000 00000000 00000000 05000000", z, sizeof z);
  assert_int_equal(srvsvc_share_enum_decode(z, zn, &e), 0);
  assert_int_equal(e.status, 5);
  srvsvc_enum_free(&e);
  zn = wt_unhex("01000000 01000000 00000200 01000000 00000000 00000000 00000000 00000000", z, sizeof z);
  assert_int_equal(srvsvc_share_enum_decode(z, zn, &e), SMB3_EPROTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bind_encode),    cmocka_unit_test(test_request_encode),
      cmocka_unit_test(test_bind_ack),       cmocka_unit_test(test_response_fragments),
      cmocka_unit_test(test_samba_response), cmocka_unit_test(test_enum_decode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
