/* test_wire_io.c - READ (MS-SMB2 2.2.19 / 2.2.20), WRITE (2.2.21 / 2.2.22), QUERY_INFO
 * (2.2.37 / 2.2.38), SET_INFO (2.2.39 / 2.2.40) and QUERY_DIRECTORY (2.2.33 / 2.2.34). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "wire_test.h"

static void test_read_req(void **state) {
  (void)state;
  struct smb2_read_req q = {.length = 0x10000, .offset = 0x1234, .file_id = {1, 2}, .minimum_count = 0};
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_read_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "3100 50 00 00000100 3412000000000000 0100000000000000 0200000000000000"
                        "00000000 00000000 00000000 0000 0000 00"));
  le_wr_init(&w, body, 48);
  assert_int_equal(smb2_read_req_encode(&w, &q), SMB3_EINVAL);
}

static int dec_read(const uint8_t *m, size_t n) {
  struct smb2_read_rsp r;
  return smb2_read_rsp_decode(m, n, &r);
}

static void test_read_rsp(void **state) {
  (void)state;
  uint8_t buf[256];
  struct smb2_read_rsp r;
  size_t n = wt_read_rsp(buf, sizeof buf, 80, 10);
  assert_int_equal(n, 90);
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.data_offset, 80);
  assert_int_equal(r.data_length, 10);
  assert_ptr_equal(r.data, buf + 80);
  assert_true(wt_truncations_fail(dec_read, buf, n));
  /* Data further out, located by DataOffset rather than assumed at 80. */
  n = wt_read_rsp(buf, sizeof buf, 96, 10);
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), 0);
  assert_ptr_equal(r.data, buf + 96);
  assert_int_equal(r.data[9], 9);
  /* Trailing bytes after the data (e.g. compound padding) are fine. */
  assert_int_equal(smb2_read_rsp_decode(buf, sizeof buf, &r), 0);
  /* Empty read: any offset. */
  n = wt_read_rsp(buf, sizeof buf, 80, 0);
  buf[66] = 0;
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.data_length, 0);
  assert_ptr_equal(r.data, buf + 80);
}

static void test_read_rsp_reject(void **state) {
  (void)state;
  uint8_t buf[256];
  struct smb2_read_rsp r;
  size_t n = wt_read_rsp(buf, sizeof buf, 80, 10);
  buf[66] = 72; /* DataOffset into the fixed part */
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), SMB3_EPROTO);
  buf[66] = 0;
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), SMB3_EPROTO);
  buf[66] = 81; /* one past */
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), SMB3_EPROTO);
  buf[66] = 80;
  le32_put(buf + 68, 0xffffffffu); /* DataLength overflowing */
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), SMB3_EPROTO);
  le32_put(buf + 68, 10);
  buf[64] = 16; /* StructureSize */
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), SMB3_EPROTO);
  buf[64] = 17;
  le16_put(buf + SMB2_HDR_OFF_COMMAND, SMB2_WRITE);
  assert_int_equal(smb2_read_rsp_decode(buf, n, &r), SMB3_EPROTO);
}

/* Zero-copy receive: only header + fixed part in memory. */
static void test_read_rsp_head(void **state) {
  (void)state;
  uint8_t buf[256];
  struct smb2_read_rsp r;
  size_t n = wt_read_rsp(buf, sizeof buf, 88, 100);
  assert_int_equal(smb2_read_rsp_decode_head(buf, 80, n, &r), 0);
  assert_int_equal(r.data_offset, 88);
  assert_int_equal(r.data_length, 100);
  assert_null(r.data); /* not in memory yet */
  assert_int_equal(smb2_read_rsp_decode_head(buf, n, n, &r), 0);
  assert_ptr_equal(r.data, buf + 88);
  assert_int_equal(smb2_read_rsp_decode_head(buf, 80, n - 1, &r), SMB3_EPROTO); /* data past the frame */
  assert_int_equal(smb2_read_rsp_decode_head(buf, 79, n, &r), SMB3_EPROTO);
  assert_int_equal(smb2_read_rsp_decode_head(buf, 80, 79, &r), SMB3_EPROTO);
  buf[66] = 64;
  assert_int_equal(smb2_read_rsp_decode_head(buf, 80, n, &r), SMB3_EPROTO);
  buf[66] = 88;
  buf[64] = 49;
  assert_int_equal(smb2_read_rsp_decode_head(buf, 80, n, &r), SMB3_EPROTO);
}

static void test_write(void **state) {
  (void)state;
  struct smb2_write_req q = {.length = 0x100, .offset = 0x200, .file_id = {3, 4}, .flags = 1};
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_write_req_encode(&w, &q), 0);
  assert_int_equal(w.off, SMB2_WRITE_REQ_FIXED);
  assert_true(wt_hex_eq(body, w.off,
                        "3100 7000 00010000 0002000000000000 0300000000000000 0400000000000000"
                        "00000000 00000000 0000 0000 01000000"));
  uint8_t buf[128];
  size_t n = wt_write_rsp(buf, sizeof buf, 0x100);
  assert_int_equal(n, 80);
  struct smb2_write_rsp r;
  assert_int_equal(smb2_write_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.count, 0x100);
  for (size_t k = 0; k < n; k++)
    assert_int_equal(smb2_write_rsp_decode(buf, k, &r), SMB3_EPROTO);
  buf[64] = 16;
  assert_int_equal(smb2_write_rsp_decode(buf, n, &r), SMB3_EPROTO);
}

static void test_query_info_req(void **state) {
  (void)state;
  struct smb2_query_info_req q = {.info_type = SMB2_0_INFO_FILE,
                                  .file_info_class = FSCC_FILE_ALL_INFORMATION,
                                  .output_buffer_length = 0x1000,
                                  .file_id = {5, 6}};
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_query_info_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "2900 01 12 00100000 0000 0000 00000000 00000000 00000000"
                        "0500000000000000 0600000000000000 00"));
  q.input = (const uint8_t *)"\x01\x02\x03\x04";
  q.input_len = 4;
  q.info_type = SMB2_0_INFO_SECURITY;
  q.additional_information = 7;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_query_info_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "2900 03 12 00100000 6800 0000 04000000 07000000 00000000"
                        "0500000000000000 0600000000000000 01020304"));
  q.input = NULL;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_query_info_req_encode(&w, &q), SMB3_EINVAL);
}

static int dec_query_info(const uint8_t *m, size_t n) {
  struct smb2_query_info_rsp r;
  return smb2_query_info_rsp_decode(m, n, &r);
}

static int dec_query_dir(const uint8_t *m, size_t n) {
  struct smb2_query_dir_rsp r;
  return smb2_query_dir_rsp_decode(m, n, &r);
}

/* QUERY_INFO and QUERY_DIRECTORY responses share a layout (2.2.38 / 2.2.34). */
static void check_buf_rsp(uint16_t cmd, wt_dec_fn dec) {
  uint8_t buf[256];
  size_t n = wt_buf_rsp(buf, sizeof buf, cmd, "0123456789", 10);
  assert_int_equal(n, 82);
  assert_int_equal(dec(buf, n), 0);
  assert_true(wt_truncations_fail(dec, buf, n));
  le16_put(buf + 66, 64); /* OutputBufferOffset into the header */
  assert_int_equal(dec(buf, n), SMB3_EPROTO);
  le16_put(buf + 66, 71); /* into the fixed part */
  assert_int_equal(dec(buf, n), SMB3_EPROTO);
  le16_put(buf + 66, 73);
  assert_int_equal(dec(buf, n), SMB3_EPROTO);
  le16_put(buf + 66, 72);
  le32_put(buf + 68, 0xfffffffeu);
  assert_int_equal(dec(buf, n), SMB3_EPROTO);
  le32_put(buf + 68, 0); /* empty output: offset irrelevant */
  le16_put(buf + 66, 0);
  assert_int_equal(dec(buf, 72), 0);
  le16_put(buf + SMB2_HDR_OFF_COMMAND, SMB2_CHANGE_NOTIFY); /* same size, other command */
  assert_int_equal(dec(buf, 72), SMB3_EPROTO);
}

static void test_query_info_rsp(void **state) {
  (void)state;
  check_buf_rsp(SMB2_QUERY_INFO, dec_query_info);
  uint8_t buf[256];
  size_t n = wt_buf_rsp(buf, sizeof buf, SMB2_QUERY_INFO, "0123456789", 10);
  struct smb2_query_info_rsp r;
  assert_int_equal(smb2_query_info_rsp_decode(buf, n, &r), 0);
  assert_ptr_equal(r.buf, buf + 72);
  assert_int_equal(r.len, 10);
}

static void test_set_info(void **state) {
  (void)state;
  struct smb2_set_info_req q = {.info_type = SMB2_0_INFO_FILE,
                                .file_info_class = FSCC_FILE_END_OF_FILE_INFORMATION,
                                .file_id = {7, 8},
                                .buf = (const uint8_t *)"\x00\x10\x00\x00\x00\x00\x00\x00",
                                .len = 8};
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_set_info_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "2100 01 14 08000000 6000 0000 00000000 0700000000000000 0800000000000000"
                        "0010000000000000"));
  q.len = 0;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_set_info_req_encode(&w, &q), 0);
  assert_int_equal(w.off, 33);
  uint8_t buf[128];
  wt_rsp_start(&w, buf, sizeof buf, SMB2_SET_INFO);
  le_put_u16(&w, 2);
  assert_int_equal(smb2_set_info_rsp_decode(buf, w.off), 0);
  assert_int_equal(smb2_set_info_rsp_decode(buf, w.off - 1), SMB3_EPROTO);
  buf[64] = 4;
  assert_int_equal(smb2_set_info_rsp_decode(buf, w.off), SMB3_EPROTO);
}

static void test_query_dir(void **state) {
  (void)state;
  struct smb2_query_dir_req q = {.file_info_class = FSCC_FILE_ID_FULL_DIRECTORY_INFORMATION,
                                 .flags = SMB2_RESTART_SCANS,
                                 .file_id = {9, 10},
                                 .output_buffer_length = 0x10000,
                                 .pattern = "*"};
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_query_dir_req_encode(&w, &q), 0);
  const char *want = "2100 26 01 00000000 0900000000000000 0a00000000000000 6000 0200 00000100 2a00";
  assert_true(wt_hex_eq(body, w.off, want));
  q.pattern = NULL; /* defaults to "*" */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_query_dir_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off, want));
  check_buf_rsp(SMB2_QUERY_DIRECTORY, dec_query_dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_req),        cmocka_unit_test(test_read_rsp),
      cmocka_unit_test(test_read_rsp_reject), cmocka_unit_test(test_read_rsp_head),
      cmocka_unit_test(test_write),           cmocka_unit_test(test_query_info_req),
      cmocka_unit_test(test_query_info_rsp),  cmocka_unit_test(test_set_info),
      cmocka_unit_test(test_query_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
