/* test_wire_ioctl.c - IOCTL (MS-SMB2 2.2.31 / 2.2.32) with VALIDATE_NEGOTIATE_INFO (2.2.31.4 /
 * 2.2.32.6), server-side copy (2.2.31.1, 2.2.32.1, 2.2.32.3), and OPLOCK_BREAK notifications, acknowledgments
 * and responses (2.2.23 - 2.2.25). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "smb3/smb3_errors.h"
#include "wire_test.h"

static void test_ioctl_req_validate_negotiate(void **state) {
  (void)state;
  struct smb2_validate_negotiate v = {.capabilities = 0x44, .security_mode = 1, .dialect_count = 2};
  for (int i = 0; i < 16; i++)
    v.guid[i] = (uint8_t)i;
  v.dialects[0] = 0x0300;
  v.dialects[1] = 0x0302;
  uint8_t in[64];
  struct le_wr w;
  le_wr_init(&w, in, sizeof in);
  assert_int_equal(smb2_validate_negotiate_encode(&w, &v), 0);
  assert_true(wt_hex_eq(in, w.off, "44000000 000102030405060708090a0b0c0d0e0f 0100 0200 0003 0203"));
  struct smb2_ioctl_req q = {.ctl_code = SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO,
                             .file_id = SMB2_FILE_ID_RELATED,
                             .input = in,
                             .input_len = (uint32_t)w.off,
                             .max_output_response = 24,
                             .flags = SMB2_0_IOCTL_IS_FSCTL};
  uint8_t body[128];
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_ioctl_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "3900 0000 04021400 ffffffffffffffff ffffffffffffffff 78000000 1c000000"
                        "00000000 00000000 00000000 18000000 01000000 00000000"
                        "44000000 000102030405060708090a0b0c0d0e0f 0100 0200 0003 0203"));
  v.dialect_count = 0;
  le_wr_init(&w, in, sizeof in);
  assert_int_equal(smb2_validate_negotiate_encode(&w, &v), SMB3_EINVAL);
  q.input = NULL;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_ioctl_req_encode(&w, &q), SMB3_EINVAL);
  q.input_len = 0; /* no input: offset 0 and one pad byte */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_ioctl_req_encode(&w, &q), 0);
  assert_int_equal(w.off, 57);
  assert_int_equal(le32_at(body + 24), 0);
}

static int dec_ioctl(const uint8_t *m, size_t n) {
  struct smb2_ioctl_rsp r;
  return smb2_ioctl_rsp_decode(m, n, &r);
}

static void test_ioctl_rsp(void **state) {
  (void)state;
  uint8_t buf[256];
  size_t n = wt_ioctl_rsp(buf, sizeof buf);
  assert_int_equal(n, 136);
  struct smb2_ioctl_rsp r;
  assert_int_equal(smb2_ioctl_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.ctl_code, SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO);
  assert_int_equal(r.file_id.persistent, UINT64_MAX);
  assert_int_equal(r.output_len, 24);
  assert_ptr_equal(r.output, buf + 112);
  struct smb2_validate_negotiate v;
  assert_int_equal(smb2_validate_negotiate_decode(r.output, r.output_len, &v), 0);
  assert_int_equal(v.capabilities, SMB2_GLOBAL_CAP_LEASING);
  assert_int_equal(v.guid[0], 0xa0);
  assert_int_equal(v.security_mode, 1);
  assert_int_equal(v.dialect, 0x0302);
  for (size_t k = 0; k < 24; k++)
    assert_int_equal(smb2_validate_negotiate_decode(r.output, k, &v), SMB3_EPROTO);
  assert_true(wt_truncations_fail(dec_ioctl, buf, n));
  uint8_t bad[256];
  struct {
    size_t off;
    uint32_t val;
  } cases[] = {
      {96, 0x1000},     /* OutputOffset past the end */
      {96, 100},        /* ... into the fixed part */
      {96, 0xfffffff0}, /* ... overflowing */
      {100, 25},        /* OutputCount one too many */
      {92, 25},         /* InputCount: announced input must be inside too */
      {88, 0x1000},     /* InputOffset */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(bad, buf, n);
    le32_put(bad + cases[i].off, cases[i].val);
    if (i == 5) le32_put(bad + 92, 4);
    if (smb2_ioctl_rsp_decode(bad, n, &r) != SMB3_EPROTO) fail_msg("case %zu decoded", i);
  }
  memcpy(bad, buf, n);
  bad[64] = 48;
  assert_int_equal(smb2_ioctl_rsp_decode(bad, n, &r), SMB3_EPROTO);
}

/* Server-side copy: the SRV_COPYCHUNK_COPY layout byte for byte, the resume key and
 * SRV_COPYCHUNK_RESPONSE outputs, and their short forms refused. */
static void test_copychunk(void **state) {
  (void)state;
  uint8_t key[SMB2_RESUME_KEY_LEN];
  for (int i = 0; i < SMB2_RESUME_KEY_LEN; i++)
    key[i] = (uint8_t)(0x10 + i);
  struct smb2_copychunk c[2] = {{0x0102030405060708ull, 0x1000, 0x100000}, {7, 0x100007, 3}};
  uint8_t in[128];
  struct le_wr w;
  le_wr_init(&w, in, sizeof in);
  assert_int_equal(smb2_copychunk_encode(&w, key, c, 2), 0);
  assert_int_equal(w.off, 24 + 8 + 2 * 24);
  assert_true(wt_hex_eq(in, w.off,
                        "101112131415161718191a1b1c1d1e1f2021222324252627 02000000 00000000"
                        "0807060504030201 0010000000000000 00001000 00000000"
                        "0700000000000000 0700100000000000 03000000 00000000"));
  le_wr_init(&w, in, sizeof in);
  assert_int_equal(smb2_copychunk_encode(&w, key, c, 0), SMB3_EINVAL);
  assert_int_equal(smb2_copychunk_encode(&w, key, c, SMB2_COPYCHUNK_MAX + 1), SMB3_EINVAL);
  le_wr_init(&w, in, 40); /* no room for the second chunk */
  assert_int_equal(smb2_copychunk_encode(&w, key, c, 2), SMB3_EINVAL);

  uint8_t out[32];
  for (int i = 0; i < 32; i++)
    out[i] = (uint8_t)(0xa0 + i);
  uint8_t got[SMB2_RESUME_KEY_LEN];
  assert_int_equal(smb2_resume_key_decode(out, 32, got), 0);
  assert_memory_equal(got, out, SMB2_RESUME_KEY_LEN);
  assert_int_equal(smb2_resume_key_decode(out, 28, got), 0); /* ContextLength, no context */
  for (size_t k = 0; k < 28; k++)
    assert_int_equal(smb2_resume_key_decode(out, k, got), SMB3_EPROTO);
  assert_int_equal(smb2_resume_key_decode(NULL, 32, got), SMB3_EPROTO);

  uint8_t rsp[12] = {0x10, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 1};
  struct smb2_copychunk_rsp r;
  assert_int_equal(smb2_copychunk_rsp_decode(rsp, sizeof rsp, &r), 0);
  assert_int_equal(r.chunks_written, 16);
  assert_int_equal(r.chunk_bytes_written, 0x100000);
  assert_int_equal(r.total_bytes_written, 0x1000000);
  for (size_t k = 0; k < 12; k++)
    assert_int_equal(smb2_copychunk_rsp_decode(rsp, k, &r), SMB3_EPROTO);
}

/* FSCTL_QUERY_ALLOCATED_RANGES output: ranges in order; a cut, overlapping, descending or overflowing
 * one is refused; more than fit are counted but not stored. */
static void test_alloc_ranges(void **state) {
  (void)state;
  uint8_t b[64];
  struct le_wr w;
  le_wr_init(&w, b, sizeof b);
  le_put_u64(&w, 0), le_put_u64(&w, 4096), le_put_u64(&w, 1 << 20), le_put_u64(&w, 7);
  le_put_u64(&w, 2 << 20), le_put_u64(&w, 1);
  struct smb2_range r[3];
  size_t n;
  assert_int_equal(smb2_alloc_ranges_decode(b, 48, r, 3, &n), 0);
  assert_int_equal(n, 3);
  assert_int_equal(r[1].off, 1 << 20);
  assert_int_equal(r[1].len, 7);
  assert_int_equal(smb2_alloc_ranges_decode(b, 48, r, 2, &n), 0); /* more than fit */
  assert_int_equal(n, 2);
  assert_int_equal(smb2_alloc_ranges_decode(b, 0, r, 3, &n), 0); /* no data at all */
  assert_int_equal(n, 0);
  for (size_t k = 1; k < 48; k++)
    if (k % 16) assert_int_equal(smb2_alloc_ranges_decode(b, k, r, 3, &n), SMB3_EPROTO);
  uint8_t bad[32];
  memcpy(bad, b, 32);
  le64_put(bad + 16, 100); /* starts inside the first one */
  assert_int_equal(smb2_alloc_ranges_decode(bad, 32, r, 3, &n), SMB3_EPROTO);
  memcpy(bad, b, 32);
  le64_put(bad + 24, UINT64_MAX - 5); /* negative length */
  assert_int_equal(smb2_alloc_ranges_decode(bad, 32, r, 3, &n), SMB3_EPROTO);
  memcpy(bad, b, 32);
  le64_put(bad + 16, (uint64_t)INT64_MAX - 2); /* end past INT64_MAX */
  le64_put(bad + 24, 10);
  assert_int_equal(smb2_alloc_ranges_decode(bad, 32, r, 3, &n), SMB3_EPROTO);
}

static int dec_break(const uint8_t *m, size_t n) {
  struct smb2_break b;
  return smb2_break_decode(m, n, &b);
}

static void test_break_decode(void **state) {
  (void)state;
  uint8_t buf[256];
  struct smb2_break b;
  size_t n = wt_oplock_break(buf, sizeof buf);
  assert_int_equal(smb2_break_decode(buf, n, &b), 0);
  assert_int_equal(b.is_lease, 0);
  assert_int_equal(b.oplock_level, SMB2_OPLOCK_LEVEL_II);
  assert_int_equal(b.file_id.persistent, 0xaaaa);
  assert_int_equal(b.file_id.volatile_, 0xbbbb);
  assert_true(wt_truncations_fail(dec_break, buf, n));

  n = wt_lease_break(buf, sizeof buf);
  assert_int_equal(n, 108);
  assert_int_equal(smb2_break_decode(buf, n, &b), 0);
  assert_int_equal(b.is_lease, 1);
  assert_int_equal(b.new_epoch, 3);
  assert_int_equal(b.flags, 1);
  assert_int_equal(b.lease_key[0], 1);
  assert_int_equal(b.lease_key[15], 16);
  assert_int_equal(b.current_state, 7);
  assert_int_equal(b.new_state, SMB2_LEASE_READ);
  assert_true(wt_truncations_fail(dec_break, buf, n));
  buf[64] = 40;
  assert_int_equal(smb2_break_decode(buf, n, &b), SMB3_EPROTO);
  buf[64] = 44;
  le16_put(buf + SMB2_HDR_OFF_COMMAND, SMB2_LOCK);
  assert_int_equal(smb2_break_decode(buf, n, &b), SMB3_EPROTO);

  /* 2.2.25.2 Lease Break Response to our ack. */
  struct le_wr w;
  wt_rsp_start(&w, buf, sizeof buf, SMB2_OPLOCK_BREAK);
  le_put_u16(&w, 36);
  le_put_u16(&w, 0);
  le_put_u32(&w, 0);
  for (int i = 0; i < 16; i++)
    le_put_u8(&w, (uint8_t)(0x40 + i));
  le_put_u32(&w, SMB2_LEASE_READ | SMB2_LEASE_HANDLE);
  le_put_u64(&w, 0);
  assert_int_equal(smb2_break_decode(buf, w.off, &b), 0);
  assert_int_equal(b.is_lease, 1);
  assert_int_equal(b.lease_key[0], 0x40);
  assert_int_equal(b.new_state, 3);
  assert_int_equal(b.current_state, 0);
  assert_true(wt_truncations_fail(dec_break, buf, w.off));
}

static void test_break_acks(void **state) {
  (void)state;
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_oplock_ack_encode(&w, SMB2_OPLOCK_LEVEL_NONE, (struct smb2_file_id){1, 2}), 0);
  assert_true(wt_hex_eq(body, w.off, "1800 00 00 00000000 0100000000000000 0200000000000000"));
  uint8_t key[16];
  for (int i = 0; i < 16; i++)
    key[i] = (uint8_t)(0xf0 + i);
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_lease_ack_encode(&w, key, SMB2_LEASE_READ), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "2400 0000 00000000 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff 01000000 0000000000000000"));
  le_wr_init(&w, body, 35);
  assert_int_equal(smb2_lease_ack_encode(&w, key, SMB2_LEASE_READ), SMB3_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ioctl_req_validate_negotiate),
      cmocka_unit_test(test_ioctl_rsp),
      cmocka_unit_test(test_copychunk),
      cmocka_unit_test(test_alloc_ranges),
      cmocka_unit_test(test_break_decode),
      cmocka_unit_test(test_break_acks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
