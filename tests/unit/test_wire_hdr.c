/* test_wire_hdr.c - SMB2 header (MS-SMB2 2.2.1), transform header (2.2.41), ERROR response
 * (2.2.2), the 4-byte bodies (2.2.7/8, 2.2.11/12, 2.2.28/29) and the StructureSize table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "smb3/smb3_errors.h"
#include "wire_test.h"

static void assert_hdr_equal(const struct smb2_hdr *a, const struct smb2_hdr *b) {
  assert_int_equal(a->credit_charge, b->credit_charge);
  assert_int_equal(a->status, b->status);
  assert_int_equal(a->command, b->command);
  assert_int_equal(a->credits, b->credits);
  assert_int_equal(a->flags, b->flags);
  assert_int_equal(a->next_command, b->next_command);
  assert_int_equal(a->message_id, b->message_id);
  assert_int_equal(a->async_id, b->async_id);
  assert_int_equal(a->process_id, b->process_id);
  assert_int_equal(a->tree_id, b->tree_id);
  assert_int_equal(a->session_id, b->session_id);
  assert_memory_equal(a->signature, b->signature, 16);
}

/* 2.2.1.2 sync header, field by field. */
static void test_hdr_encode_sync(void **state) {
  (void)state;
  struct smb2_hdr h = {.credit_charge = 1,
                       .command = SMB2_CREATE,
                       .credits = 31,
                       .flags = SMB2_FLAGS_SIGNED | SMB2_FLAGS_RELATED_OPERATIONS,
                       .next_command = 0x68,
                       .message_id = 0x0102030405060708ull,
                       .process_id = 0xfeff,
                       .tree_id = 0x11223344,
                       .session_id = 0xaabbccddeeff0011ull};
  for (int i = 0; i < 16; i++)
    h.signature[i] = (uint8_t)i;
  uint8_t out[SMB2_HDR_LEN];
  smb2_hdr_encode(&h, out);
  assert_true(wt_hex_eq(out, sizeof out,
                        "fe534d42 4000 0100 00000000 0500 1f00 0c000000 68000000 0807060504030201"
                        "fffe0000 44332211 1100ffeeddccbbaa 000102030405060708090a0b0c0d0e0f"));
  struct smb2_hdr d;
  assert_int_equal(smb2_hdr_decode(out, sizeof out, &d), 0);
  assert_hdr_equal(&d, &h);
}

/* 2.2.1.1 async header: AsyncId takes the place of Reserved + TreeId. */
static void test_hdr_async(void **state) {
  (void)state;
  struct smb2_hdr h = {.status = 0x103,
                       .command = SMB2_READ,
                       .flags = SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND,
                       .message_id = 9,
                       .async_id = 0x0000000812345678ull,
                       .session_id = 1};
  uint8_t out[SMB2_HDR_LEN];
  smb2_hdr_encode(&h, out);
  assert_true(wt_hex_eq(out + 8, 40,
                        "03010000 0800 0000 03000000 00000000 0900000000000000 7856341208000000"
                        "0100000000000000"));
  struct smb2_hdr d;
  assert_int_equal(smb2_hdr_decode(out, sizeof out, &d), 0);
  assert_int_equal(d.async_id, h.async_id);
  assert_int_equal(d.tree_id, 0);
  assert_int_equal(d.status, 0x103);
}

static void test_hdr_reject(void **state) {
  (void)state;
  uint8_t out[SMB2_HDR_LEN];
  struct smb2_hdr h = {0}, d;
  smb2_hdr_encode(&h, out);
  assert_int_equal(smb2_hdr_decode(out, 63, &d), SMB3_EPROTO);
  out[0] = 0xff; /* SMB1 */
  assert_int_equal(smb2_hdr_decode(out, sizeof out, &d), SMB3_EPROTO);
  out[0] = 0xfe;
  out[4] = 65; /* StructureSize */
  assert_int_equal(smb2_hdr_decode(out, sizeof out, &d), SMB3_EPROTO);
}

static void test_transform(void **state) {
  (void)state;
  struct smb2_transform_hdr t = {.orig_msg_size = 0x100, .flags = 1, .session_id = 0x8877665544332211ull};
  memset(t.signature, 0x11, 16);
  memset(t.nonce, 0x22, 11);
  uint8_t buf[SMB2_TRANSFORM_HDR_LEN + 0x100];
  memset(buf, 0, sizeof buf);
  smb2_transform_hdr_encode(&t, buf);
  assert_true(wt_hex_eq(buf, SMB2_TRANSFORM_HDR_LEN,
                        "fd534d42 11111111111111111111111111111111 2222222222222222222222 0000000000"
                        "00010000 0000 0100 1122334455667788"));
  struct smb2_transform_hdr d;
  assert_int_equal(smb2_transform_hdr_decode(buf, sizeof buf, &d), 0);
  assert_memory_equal(d.signature, t.signature, 16);
  assert_memory_equal(d.nonce, t.nonce, 16);
  assert_int_equal(d.orig_msg_size, t.orig_msg_size);
  assert_int_equal(d.flags, t.flags);
  assert_int_equal(d.session_id, t.session_id);
  assert_int_equal(smb2_transform_hdr_decode(buf, sizeof buf - 1, &d), SMB3_EPROTO); /* size mismatch */
  assert_int_equal(smb2_transform_hdr_decode(buf, 51, &d), SMB3_EPROTO);
  buf[0] = 0xfe;
  assert_int_equal(smb2_transform_hdr_decode(buf, sizeof buf, &d), SMB3_EPROTO);
}

static void test_error_rsp(void **state) {
  (void)state;
  uint8_t buf[256];
  struct smb2_error_rsp e;
  size_t n = wt_error_rsp(buf, sizeof buf, SMB2_CREATE, NULL, 0);
  assert_int_equal(n, 73);
  assert_int_equal(smb2_error_rsp_decode(buf, n, &e), 0);
  assert_int_equal(e.byte_count, 0);
  assert_null(e.data);
  /* Some servers omit the one pad byte. */
  assert_int_equal(smb2_error_rsp_decode(buf, 72, &e), 0);
  assert_int_equal(smb2_error_rsp_decode(buf, 71, &e), SMB3_EPROTO);
  n = wt_error_rsp(buf, sizeof buf, SMB2_READ, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  assert_int_equal(smb2_error_rsp_decode(buf, n, &e), 0);
  assert_int_equal(e.byte_count, 8);
  assert_ptr_equal(e.data, buf + 72);
  assert_int_equal(smb2_error_rsp_decode(buf, n - 1, &e), SMB3_EPROTO); /* ByteCount past the end */
  le32_put(buf + 68, 0xffffffffu);
  assert_int_equal(smb2_error_rsp_decode(buf, n, &e), SMB3_EPROTO);
  le32_put(buf + 68, 8);
  buf[64] = 8; /* StructureSize */
  assert_int_equal(smb2_error_rsp_decode(buf, n, &e), SMB3_EPROTO);
}

static void test_simple(void **state) {
  (void)state;
  uint8_t body[8];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_simple_req_encode(&w), 0);
  assert_true(wt_hex_eq(body, w.off, "0400 0000"));
  le_wr_init(&w, body, 3);
  assert_int_equal(smb2_simple_req_encode(&w), SMB3_EINVAL);
  uint8_t buf[128];
  wt_rsp_start(&w, buf, sizeof buf, SMB2_ECHO);
  le_put_u16(&w, 4);
  le_put_u16(&w, 0);
  assert_int_equal(smb2_simple_rsp_decode(buf, w.off), 0);
  assert_int_equal(smb2_simple_rsp_decode(buf, w.off - 1), SMB3_EPROTO);
  buf[64] = 9;
  assert_int_equal(smb2_simple_rsp_decode(buf, w.off), SMB3_EPROTO);
}

/* The StructureSize values of MS-SMB2 2.2.4 ... 2.2.40. */
static void test_structure_sizes(void **state) {
  (void)state;
  static const uint16_t want[SMB2_NCOMMANDS] = {65, 9,  4, 16, 4, 89, 60, 4, 17, 17,
                                                4,  49, 0, 4,  9, 9,  9,  2, 24};
  for (uint16_t c = 0; c < SMB2_NCOMMANDS; c++)
    assert_int_equal(smb2_rsp_structure_size(c), want[c]);
  assert_int_equal(smb2_rsp_structure_size(SMB2_NCOMMANDS), 0);
  assert_int_equal(smb2_rsp_structure_size(0xffff), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hdr_encode_sync), cmocka_unit_test(test_hdr_async),
      cmocka_unit_test(test_hdr_reject),      cmocka_unit_test(test_transform),
      cmocka_unit_test(test_error_rsp),       cmocka_unit_test(test_simple),
      cmocka_unit_test(test_structure_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
