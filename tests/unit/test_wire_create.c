/* test_wire_create.c - CREATE (MS-SMB2 2.2.13 / 2.2.14 with the RqLs, MxAc and QFid contexts),
 * CLOSE (2.2.15 / 2.2.16) and FLUSH (2.2.17 / 2.2.18). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "smb3/smb3_errors.h"
#include "wire_test.h"

#define FIXED_HEX(namelen, ctxoff, ctxlen, oplock)                                                           \
  "3900 00 " oplock                                                                                          \
  " 02000000 0000000000000000 0000000000000000 89001200 80000000 07000000 01000000 40000000"                 \
  "7800 " namelen " " ctxoff " " ctxlen

static void create_base(struct smb2_create_req *r, const char *name) {
  memset(r, 0, sizeof *r);
  r->impersonation = 2;
  r->desired_access = SMB2_FILE_READ_DATA | SMB2_FILE_READ_EA | SMB2_FILE_READ_ATTRIBUTES |
                      SMB2_READ_CONTROL | SMB2_SYNCHRONIZE;
  r->file_attributes = SMB2_FILE_ATTRIBUTE_NORMAL;
  r->share_access = SMB2_FILE_SHARE_ALL;
  r->create_disposition = SMB2_FILE_OPEN;
  r->create_options = SMB2_FILE_NON_DIRECTORY_FILE;
  r->name = name;
}

/* '/' becomes '\\', leading separators go, the name is padded to 8. */
static void test_create_req_name(void **state) {
  (void)state;
  struct smb2_create_req r;
  uint8_t body[512];
  struct le_wr w;
  const char *names[] = {"dir/a.txt", "/dir\\a.txt", "\\/dir/a.txt"};
  for (int i = 0; i < 3; i++) {
    create_base(&r, names[i]);
    le_wr_init(&w, body, sizeof body);
    assert_int_equal(smb2_create_req_encode(&w, &r), 0);
    assert_true(wt_hex_eq(body, w.off,
                          FIXED_HEX("1200", "00000000", "00000000",
                                    "00") "640069007200 5c00 6100 2e00 7400 7800 7400 000000000000"));
  }
}

/* The share root: NameOffset 0x78, NameLength 0, and 8 zero bytes of Buffer for Samba. */
static void test_create_req_empty_name(void **state) {
  (void)state;
  struct smb2_create_req r;
  create_base(&r, "");
  uint8_t body[512];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  assert_true(wt_hex_eq(body, w.off, FIXED_HEX("0000", "00000000", "00000000", "00") "0000000000000000"));
}

/* MxAc and QFid without data, then a v2 lease: each context 8-aligned, chained by Next,
 * CreateContextsOffset from the header start. */
static void test_create_req_contexts(void **state) {
  (void)state;
  struct smb2_create_req r;
  create_base(&r, "f");
  r.oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
  r.want_maximal_access = 1;
  r.want_disk_id = 1;
  r.lease.version = 2;
  for (int i = 0; i < 16; i++)
    r.lease.key[i] = (uint8_t)(i + 1), r.lease.parent_key[i] = (uint8_t)(0x80 + i);
  r.lease.state = SMB2_LEASE_READ | SMB2_LEASE_HANDLE | SMB2_LEASE_WRITE;
  r.lease.flags = 0x4 | 0x2; /* BREAK_IN_PROGRESS is not a request flag: dropped */
  r.lease.epoch = 5;
  uint8_t body[512];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  assert_true(wt_hex_eq(body, w.off,
                        FIXED_HEX("0200", "80000000", "7c000000",
                                  "ff") "6600 000000000000"
                                        "18000000 1000 0400 0000 0000 00000000 4d784163 00000000"
                                        "18000000 1000 0400 0000 0000 00000000 51466964 00000000"
                                        "00000000 1000 0400 0000 1800 34000000 52714c73 00000000"
                                        "0102030405060708090a0b0c0d0e0f10 07000000 04000000 0000000000000000"
                                        "808182838485868788898a8b8c8d8e8f 0500 0000"));
  /* v1 lease: 32 bytes, LeaseFlags 0. */
  r.want_maximal_access = r.want_disk_id = 0;
  r.lease.version = 1;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), 0);
  assert_true(wt_hex_eq(body + 64, w.off - 64,
                        "00000000 1000 0400 0000 1800 20000000 52714c73 00000000"
                        "0102030405060708090a0b0c0d0e0f10 07000000 00000000 0000000000000000"));
  assert_int_equal(le32_at(body + 52), 56);
}

static void test_create_req_invalid(void **state) {
  (void)state;
  struct smb2_create_req r;
  uint8_t body[512];
  struct le_wr w;
  create_base(&r, "x");
  r.oplock_level = SMB2_OPLOCK_LEVEL_LEASE; /* LEASE without a lease */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), SMB3_EINVAL);
  r.oplock_level = SMB2_OPLOCK_LEVEL_NONE;
  r.lease.version = 1; /* a lease without LEASE */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), SMB3_EINVAL);
  r.lease.version = 0;
  r.name = NULL;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), SMB3_EINVAL);
  r.name = "a\xc0\xafz"; /* overlong UTF-8 */
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_create_req_encode(&w, &r), SMB3_EINVAL);
  create_base(&r, "name");
  r.want_maximal_access = 1;
  for (size_t cap = 0; cap < 56 + 8 + 24; cap++) {
    le_wr_init(&w, body, cap);
    assert_int_equal(smb2_create_req_encode(&w, &r), SMB3_EINVAL);
  }
  char *big = malloc(40000);
  memset(big, 'a', 39999);
  big[39999] = 0; /* 79998 bytes of UTF-16 > NameLength's 16 bits */
  create_base(&r, big);
  uint8_t *large = malloc(100000);
  le_wr_init(&w, large, 100000);
  assert_int_equal(smb2_create_req_encode(&w, &r), SMB3_EINVAL);
  free(large);
  free(big);
}

static int dec_create(const uint8_t *m, size_t n) {
  struct smb2_create_rsp r;
  return smb2_create_rsp_decode(m, n, &r);
}

static void test_create_rsp(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = wt_create_rsp(buf, sizeof buf);
  assert_int_equal(n, 348);
  struct smb2_create_rsp r;
  assert_int_equal(smb2_create_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.oplock_level, SMB2_OPLOCK_LEVEL_LEASE);
  assert_int_equal(r.create_action, SMB2_FILE_CREATED);
  assert_int_equal(r.attrs.creation_time, 1001);
  assert_int_equal(r.attrs.change_time, 1004);
  assert_int_equal(r.attrs.allocation_size, 4096);
  assert_int_equal(r.attrs.end_of_file, 123);
  assert_int_equal(r.attrs.file_attributes, SMB2_FILE_ATTRIBUTE_ARCHIVE);
  assert_int_equal(r.file_id.persistent, 0x1111);
  assert_int_equal(r.file_id.volatile_, 0x2222);
  assert_int_equal(r.have_maximal_access, 1);
  assert_int_equal(r.maximal_access, 0x001f01ff);
  assert_int_equal(r.have_disk_id, 1);
  assert_int_equal(r.disk_file_id, 0xdeadbeefcafef00dull);
  assert_int_equal(r.lease.version, 2);
  assert_int_equal(r.lease.key[15], 16);
  assert_int_equal(r.lease.state, SMB2_LEASE_READ | SMB2_LEASE_HANDLE);
  assert_int_equal(r.lease.flags, 4);
  assert_int_equal(r.lease.parent_key[0], 0x80);
  assert_int_equal(r.lease.epoch, 7);
  assert_true(wt_truncations_fail(dec_create, buf, n));
  /* v1 lease response, and MxAc with a failed QueryStatus. */
  le32_put(buf + 272 + 12, 32);
  le32_put(buf + 152 + 24, 0xC0000022u);
  assert_int_equal(smb2_create_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.lease.version, 1);
  assert_int_equal(r.lease.epoch, 0);
  assert_int_equal(r.have_maximal_access, 0);
  /* No contexts at all. */
  le32_put(buf + 148, 0);
  assert_int_equal(smb2_create_rsp_decode(buf, 152, &r), 0);
  assert_int_equal(r.lease.version, 0);
  assert_int_equal(r.have_disk_id, 0);
}

static void test_create_rsp_reject(void **state) {
  (void)state;
  uint8_t good[512], buf[512];
  size_t n = wt_create_rsp(good, sizeof good);
  struct smb2_create_rsp r;
  struct {
    size_t off;
    int width;
    uint32_t val;
  } cases[] = {
      {64, 2, 88},          /* StructureSize */
      {144, 4, 0x1000},     /* CreateContextsOffset past the end */
      {144, 4, 100},        /* ... into the fixed part */
      {144, 4, 0xffffffff}, /* ... overflowing */
      {148, 4, 197},        /* CreateContextsLength one too many */
      {148, 4, 0xffffffff}, /* ... overflowing */
      {148, 4, 8},          /* list shorter than one context header */
      {152, 4, 0xfffffff0}, /* Next past the list */
      {152, 4, 8},          /* Next inside the context header */
      {152, 4, 196},        /* Next exactly at the end: no room for a context */
      {152 + 4, 2, 0xfff0}, /* NameOffset out of the context */
      {152 + 6, 2, 0x20},   /* NameLength out of the context */
      {152 + 10, 2, 30},    /* MxAc data crosses into the next context */
      {152 + 12, 4, 4},     /* MxAc data too short */
      {184 + 12, 4, 4},     /* QFid data too short */
      {272 + 12, 4, 77},    /* lease data past the end */
      {272 + 12, 4, 20},    /* lease data too short for v1 */
      {272, 4, 8 * 10},     /* last context's Next pointing outside */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(buf, good, n);
    if (cases[i].width == 2)
      le16_put(buf + cases[i].off, (uint16_t)cases[i].val);
    else
      le32_put(buf + cases[i].off, cases[i].val);
    if (smb2_create_rsp_decode(buf, n, &r) != SMB3_EPROTO) fail_msg("case %zu decoded", i);
  }
  /* A self-loop cannot happen (Next 0 ends), and Next always advances: a chain of 16-byte
   * contexts with Next = 16 walks to the end and then fails for lack of room. */
  memcpy(buf, good, n);
  for (size_t off = 152; off + 16 <= n; off += 16) {
    memset(buf + off, 0, 16);
    le32_put(buf + off, 16);
  }
  assert_int_equal(smb2_create_rsp_decode(buf, n, &r), SMB3_EPROTO);
}

static void test_close(void **state) {
  (void)state;
  uint8_t body[64];
  struct le_wr w;
  struct smb2_close_req q = {.flags = SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB, .file_id = {0x0102, 0x0304}};
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_close_req_encode(&w, &q), 0);
  assert_true(wt_hex_eq(body, w.off, "1800 0100 00000000 0201000000000000 0403000000000000"));
  le_wr_init(&w, body, 23);
  assert_int_equal(smb2_close_req_encode(&w, &q), SMB3_EINVAL);

  uint8_t buf[256];
  size_t n = wt_close_rsp(buf, sizeof buf);
  assert_int_equal(n, 124);
  struct smb2_close_rsp r;
  assert_int_equal(smb2_close_rsp_decode(buf, n, &r), 0);
  assert_int_equal(r.flags, 1);
  assert_int_equal(r.attrs.creation_time, 100);
  assert_int_equal(r.attrs.end_of_file, 600);
  assert_int_equal(r.attrs.file_attributes, SMB2_FILE_ATTRIBUTE_DIRECTORY);
  for (size_t k = 0; k < n; k++)
    assert_int_equal(smb2_close_rsp_decode(buf, k, &r), SMB3_EPROTO);
  le16_put(buf + SMB2_HDR_OFF_COMMAND, SMB2_FLUSH);
  assert_int_equal(smb2_close_rsp_decode(buf, n, &r), SMB3_EPROTO);
}

static void test_flush(void **state) {
  (void)state;
  uint8_t body[64];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_flush_req_encode(&w, (struct smb2_file_id){1, 2}), 0);
  assert_true(wt_hex_eq(body, w.off, "1800 0000 00000000 0100000000000000 0200000000000000"));
  uint8_t buf[128];
  wt_rsp_start(&w, buf, sizeof buf, SMB2_FLUSH);
  le_put_u16(&w, 4);
  le_put_u16(&w, 0);
  assert_int_equal(smb2_flush_rsp_decode(buf, w.off), 0);
  for (size_t k = 0; k < w.off; k++)
    assert_int_equal(smb2_flush_rsp_decode(buf, k), SMB3_EPROTO);
  buf[64] = 2;
  assert_int_equal(smb2_flush_rsp_decode(buf, w.off), SMB3_EPROTO);
}

/* LOCK (2.2.26): 24 fixed bytes, then one 24-byte element per lock; StructureSize is 48 whatever
 * the count. The response is the 4-byte shape (smb2_simple_rsp_decode). */
static void test_lock(void **state) {
  (void)state;
  uint8_t body[128];
  struct le_wr w;
  le_wr_init(&w, body, sizeof body);
  struct smb2_lock_element el[2] = {
      {0x100, 0x20, SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY},
      {0x7FFFFFFFFFFFFFFFull, 1, SMB2_LOCKFLAG_UNLOCK},
  };
  assert_int_equal(smb2_lock_req_encode(&w, (struct smb2_file_id){1, 2}, el, 1), 0);
  assert_true(wt_hex_eq(body, w.off,
                        "3000 0100 00000000 0100000000000000 0200000000000000"
                        " 0001000000000000 2000000000000000 12000000 00000000"));
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_lock_req_encode(&w, (struct smb2_file_id){3, 4}, el, 2), 0);
  assert_int_equal(w.off, 72);
  assert_true(wt_hex_eq(body + 48, 24, "ffffffffffffff7f 0100000000000000 04000000 00000000"));
  le_wr_init(&w, body, sizeof body);
  assert_int_equal(smb2_lock_req_encode(&w, (struct smb2_file_id){3, 4}, el, 0), SMB3_EINVAL);
  le_wr_init(&w, body, 50); /* no room for the element */
  assert_int_not_equal(smb2_lock_req_encode(&w, (struct smb2_file_id){3, 4}, el, 2), 0);
  uint8_t buf[128];
  wt_rsp_start(&w, buf, sizeof buf, SMB2_LOCK);
  le_put_u16(&w, 4);
  le_put_u16(&w, 0);
  assert_int_equal(smb2_simple_rsp_decode(buf, w.off), 0);
  for (size_t k = 0; k < w.off; k++)
    assert_int_equal(smb2_simple_rsp_decode(buf, k), SMB3_EPROTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_req_name),
      cmocka_unit_test(test_create_req_empty_name),
      cmocka_unit_test(test_create_req_contexts),
      cmocka_unit_test(test_create_req_invalid),
      cmocka_unit_test(test_create_rsp),
      cmocka_unit_test(test_create_rsp_reject),
      cmocka_unit_test(test_close),
      cmocka_unit_test(test_flush),
      cmocka_unit_test(test_lock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
