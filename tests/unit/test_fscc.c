/* test_fscc.c - MS-FSCC information classes: FileAllInformation (2.4.2),
 * FileNetworkOpenInformation (2.4.29), the SET_INFO encoders (2.4.7, 2.4.11, 2.4.14, 2.4.37.2),
 * FileFsFullSizeInformation (2.5.4) and FileIdFullDirectoryInformation iteration (2.4.18). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3.h"
#include "smb3/smb3_errors.h"
#include "wire_test.h"

static void test_all_info(void **state) {
  (void)state;
  uint8_t buf[256];
  size_t n = wt_all_info(buf, sizeof buf);
  assert_int_equal(n, 102);
  struct fscc_stat st;
  assert_int_equal(fscc_all_info_decode(buf, n, &st), 0);
  assert_int_equal(st.creation_time, 21);
  assert_int_equal(st.last_access_time, 22);
  assert_int_equal(st.last_write_time, 23);
  assert_int_equal(st.change_time, 24);
  assert_int_equal(st.attributes, SMB2_FILE_ATTRIBUTE_ARCHIVE);
  assert_int_equal(st.allocation_size, 4096);
  assert_int_equal(st.end_of_file, 5);
  assert_int_equal(st.nlink, 2);
  assert_int_equal(st.delete_pending, 0);
  assert_int_equal(st.file_id, 0x1234567890ull);
  /* The name may be cut short (STATUS_BUFFER_OVERFLOW); the fixed 100 bytes are required. */
  assert_int_equal(fscc_all_info_decode(buf, 100, &st), 0);
  for (size_t k = 0; k < 100; k++)
    assert_int_equal(fscc_all_info_decode(buf, k, &st), SMB3_EPROTO);
  buf[60] = 1; /* DeletePending */
  assert_int_equal(fscc_all_info_decode(buf, n, &st), 0);
  assert_int_equal(st.delete_pending, 1);
}

static void test_network_open_info(void **state) {
  (void)state;
  uint8_t buf[64];
  struct le_wr w;
  le_wr_init(&w, buf, sizeof buf);
  for (uint64_t i = 1; i <= 4; i++)
    le_put_u64(&w, i);
  le_put_u64(&w, 8192); /* AllocationSize */
  le_put_u64(&w, 7000); /* EndOfFile */
  le_put_u32(&w, SMB2_FILE_ATTRIBUTE_DIRECTORY);
  le_put_u32(&w, 0);
  struct fscc_stat st;
  assert_int_equal(fscc_network_open_info_decode(buf, w.off, &st), 0);
  assert_int_equal(st.change_time, 4);
  assert_int_equal(st.allocation_size, 8192);
  assert_int_equal(st.end_of_file, 7000);
  assert_int_equal(st.attributes, SMB2_FILE_ATTRIBUTE_DIRECTORY);
  assert_int_equal(st.file_id, 0);
  assert_int_equal(fscc_network_open_info_decode(buf, 55, &st), SMB3_EPROTO);
}

static void test_set_info_encoders(void **state) {
  (void)state;
  uint8_t out[128];
  assert_int_equal(fscc_basic_info_encode(out, sizeof out, 1, 0, 0x0102030405060708ull, 0, 0x20), 40);
  assert_true(wt_hex_eq(
      out, 40, "0100000000000000 0000000000000000 0807060504030201 0000000000000000 20000000 00000000"));
  assert_int_equal(fscc_basic_info_encode(out, 39, 1, 2, 3, 4, 5), SMB3_EINVAL);
  assert_int_equal(fscc_eof_info_encode(out, sizeof out, 0x1000), 8);
  assert_true(wt_hex_eq(out, 8, "0010000000000000"));
  assert_int_equal(fscc_eof_info_encode(out, 7, 1), SMB3_EINVAL);
  assert_int_equal(fscc_disposition_info_encode(out, sizeof out, 5), 1);
  assert_true(wt_hex_eq(out, 1, "01"));
  assert_int_equal(fscc_disposition_info_encode(out, 0, 1), SMB3_EINVAL);
}

static void test_rename_info(void **state) {
  (void)state;
  uint8_t out[128];
  int n = fscc_rename_info_encode(out, sizeof out, 1, 0, "/dir/new");
  assert_int_equal(n, 36);
  assert_true(
      wt_hex_eq(out, 36, "01 00000000000000 0000000000000000 0e000000 6400690072005c006e0065007700 0000"));
  /* A one-character name is padded to Windows' minimum of 24 bytes. */
  assert_int_equal(fscc_rename_info_encode(out, sizeof out, 0, 0, "a"), 24);
  assert_true(wt_hex_eq(out, 24, "00 00000000000000 0000000000000000 02000000 6100 0000"));
  assert_int_equal(fscc_rename_info_encode(out, sizeof out, 0, 0, ""), SMB3_EINVAL);
  assert_int_equal(fscc_rename_info_encode(out, sizeof out, 0, 0, "/"), SMB3_EINVAL);
  assert_int_equal(fscc_rename_info_encode(out, sizeof out, 0, 0, NULL), SMB3_EINVAL);
  assert_int_equal(fscc_rename_info_encode(out, sizeof out, 0, 0, "\xff"), SMB3_EINVAL);
  assert_int_equal(fscc_rename_info_encode(out, 35, 1, 0, "dir/new"), SMB3_EINVAL);
  /* POSIX names: '/' stays the separator, '\\' is a character of the name. */
  n = fscc_rename_info_encode(out, sizeof out, 0, 1, "/d/a\\b");
  assert_int_equal(n, 32);
  assert_true(wt_hex_eq(out, 32, "00 00000000000000 0000000000000000 0a000000 64002f0061005c006200 0000"));
  /* SFM names: a reserved character as its private-use code point; POSIX names win over it. */
  n = fscc_rename_info_encode(out, sizeof out, 0, FSCC_NAMES_SFM, "d/a*b");
  assert_int_equal(n, 32);
  assert_true(wt_hex_eq(out, 32, "00 00000000000000 0000000000000000 0a000000 64005c006100 21f0 6200 0000"));
  n = fscc_rename_info_encode(out, sizeof out, 0, FSCC_NAMES_POSIX | FSCC_NAMES_SFM, "a*b");
  assert_int_equal(n, 28);
  assert_true(wt_hex_eq(out, 28, "00 00000000000000 0000000000000000 06000000 61002a006200 0000"));
}

static void test_fs_full_size(void **state) {
  (void)state;
  uint8_t buf[64];
  size_t n = wt_fs_full_size(buf, sizeof buf);
  struct fscc_fs_full_size fs;
  assert_int_equal(fscc_fs_full_size_decode(buf, n, &fs), 0);
  assert_int_equal(fs.total_units, 1000000);
  assert_int_equal(fs.caller_available_units, 250000);
  assert_int_equal(fs.actual_available_units, 300000);
  assert_int_equal(fs.sectors_per_unit, 8);
  assert_int_equal(fs.bytes_per_sector, 512);
  for (size_t k = 0; k < n; k++)
    assert_int_equal(fscc_fs_full_size_decode(buf, k, &fs), SMB3_EPROTO);
}

/* Iterates buf to the end; returns the number of entries, or the first error. */
static int dir_count(const uint8_t *buf, size_t len) {
  struct fscc_dir_iter it;
  struct fscc_dirent e;
  int rc, count = 0;
  fscc_dir_iter_init(&it, buf, len);
  while ((rc = fscc_dir_next(&it, &e)) > 0)
    count++;
  fscc_dir_iter_free(&it);
  return rc < 0 ? rc : count;
}

static void test_dir_iter(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = wt_dir_buf(buf, sizeof buf);
  struct fscc_dir_iter it;
  struct fscc_dirent e;
  const char *names[] = {".", "..", "file.txt", "sub"};
  fscc_dir_iter_init(&it, buf, n);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(fscc_dir_next(&it, &e), 1);
    assert_string_equal(e.name, names[i]);
    assert_int_equal(e.name_len, strlen(names[i]));
    assert_int_equal(e.st.file_id, 100 + i);
    assert_int_equal(e.st.end_of_file, 1000 + strlen(names[i]));
    assert_int_equal(e.st.allocation_size, 4096);
    assert_int_equal(e.st.creation_time, 11);
    assert_int_equal(e.st.change_time, 14);
    assert_int_equal(e.st.attributes, i == 2 ? 0x20 : 0x10);
  }
  assert_int_equal(fscc_dir_next(&it, &e), 0);
  assert_int_equal(fscc_dir_next(&it, &e), 0);
  fscc_dir_iter_free(&it);
  assert_int_equal(dir_count(buf, 0), 0);
  assert_int_equal(dir_count(NULL, 0), 0);
  /* Every truncation is caught (the last entry's name, or an earlier Next, runs out). */
  for (size_t k = 1; k < n; k++) {
    uint8_t *copy = malloc(k);
    memcpy(copy, buf, k);
    assert_int_equal(dir_count(copy, k), SMB3_EPROTO);
    free(copy);
  }
}

/* Entries that are in bounds but not 8-byte aligned are accepted. */
static void test_dir_unaligned(void **state) {
  (void)state;
  uint8_t tmp[256], buf[256];
  struct le_wr w;
  le_wr_init(&w, tmp, sizeof tmp);
  wt_dirent(&w, "ab", 1, 0x20); /* 84 bytes */
  memcpy(buf, tmp, 84);
  le32_put(buf, 84);
  le_wr_init(&w, tmp, sizeof tmp);
  wt_dirent(&w, "c", 2, 0x20);
  memcpy(buf + 84, tmp, 82);
  assert_int_equal(dir_count(buf, 166), 2);
}

static void test_dir_reject(void **state) {
  (void)state;
  uint8_t good[512], buf[512];
  size_t n = wt_dir_buf(good, sizeof good);
  /* entries: "." at 0 (82 -> next 88), ".." at 88 (84 -> 88), "file.txt" at 176 (96), "sub" at 272 */
  assert_int_equal(le32_at(good), 88);
  assert_int_equal(le32_at(good + 88), 88);
  assert_int_equal(le32_at(good + 176), 96);
  assert_int_equal(le32_at(good + 272), 0);
  struct {
    size_t off;
    uint32_t val;
  } cases[] = {
      {0, 0xfffffff8},            /* Next overflowing */
      {0, 8},                     /* Next inside the entry */
      {0, 81},                    /* Next inside the name */
      {176, (uint32_t)(n - 176)}, /* Next exactly at the end */
      {176 + 60, 0x1000},         /* FileNameLength past the end */
      {176 + 60, 15},             /* odd FileNameLength */
      {176 + 60, 0},              /* empty name */
      {176 + 80, '/'},            /* '/' in a name */
      {176 + 80, 0},              /* NUL in a name */
      {176 + 80, 0xd800},         /* unpaired surrogate */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(buf, good, n);
    if (cases[i].off == 176 + 80)
      le16_put(buf + cases[i].off, (uint16_t)cases[i].val);
    else
      le32_put(buf + cases[i].off, cases[i].val);
    if (dir_count(buf, n) != SMB3_EPROTO) fail_msg("case %zu accepted", i);
  }
  /* After an error the iterator stays finished and owns nothing. */
  memcpy(buf, good, n);
  le16_put(buf + 176 + 80, '/');
  struct fscc_dir_iter it;
  struct fscc_dirent e;
  fscc_dir_iter_init(&it, buf, n);
  assert_int_equal(fscc_dir_next(&it, &e), 1);
  assert_int_equal(fscc_dir_next(&it, &e), 1);
  assert_int_equal(fscc_dir_next(&it, &e), SMB3_EPROTO);
  assert_null(e.name);
  assert_null(it.name);
  assert_int_equal(fscc_dir_next(&it, &e), 0);
  fscc_dir_iter_free(&it);
}

/* Minshall+French symlink files: the layout byte for byte, the round trip, and every way a file
 * can fail to be one. Digests computed independently (Python hashlib.md5). */
static void test_mfsymlink(void **state) {
  (void)state;
  uint8_t buf[SMB3_MFSYMLINK_SIZE];
  char t[SMB3_MFSYMLINK_MAX + 1];
  assert_int_equal(smb3_mfsymlink_format("file", buf), 0);
  static const char head[] = "XSym\n0004\n8c7dd922ad47494fc02c388e12c00eac\nfile\n";
  assert_memory_equal(buf, head, sizeof head - 1);
  for (size_t i = sizeof head - 1; i < sizeof buf; i++)
    assert_int_equal(buf[i], ' ');
  assert_int_equal(smb3_mfsymlink_parse(buf, sizeof buf, t), 4);
  assert_string_equal(t, "file");
  assert_int_equal(smb3_mfsymlink_format("../a b/c", buf), 0);
  assert_memory_equal(buf + 10, "7e6fd3cdfd4f352f77961e1373a4bec3\n../a b/c\n", 42);
  assert_int_equal(smb3_mfsymlink_parse(buf, sizeof buf, t), 8);
  assert_string_equal(t, "../a b/c");
  /* the longest target fills the file: no newline after it */
  char longest[SMB3_MFSYMLINK_MAX + 2];
  memset(longest, 'x', SMB3_MFSYMLINK_MAX);
  longest[SMB3_MFSYMLINK_MAX] = 0;
  assert_int_equal(smb3_mfsymlink_format(longest, buf), 0);
  assert_int_equal(buf[SMB3_MFSYMLINK_SIZE - 1], 'x');
  assert_int_equal(smb3_mfsymlink_parse(buf, sizeof buf, t), SMB3_MFSYMLINK_MAX);
  longest[SMB3_MFSYMLINK_MAX] = 'x';
  longest[SMB3_MFSYMLINK_MAX + 1] = 0;
  assert_int_equal(smb3_mfsymlink_format(longest, buf), SMB3_ENAMETOOLONG);
  assert_int_equal(smb3_mfsymlink_format("", buf), SMB3_EINVAL);
  /* not one: wrong size, magic, separators, digits, a length too long, a digest that does not
   * match, a NUL inside the target */
  assert_int_equal(smb3_mfsymlink_format("file", buf), 0);
  assert_int_equal(smb3_mfsymlink_parse(buf, sizeof buf - 1, t), SMB3_EPROTO);
  static const struct {
    size_t at;
    uint8_t c;
  } bad[] = {{0, 'x'}, {4, ' '}, {9, ' '}, {42, ' '}, {5, 'a'}, {8, '5'}, {11, '0'}, {43, 'F'}, {44, 0}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t b[SMB3_MFSYMLINK_SIZE];
    memcpy(b, buf, sizeof b);
    b[bad[i].at] = bad[i].c;
    if (smb3_mfsymlink_parse(b, sizeof b, t) != SMB3_EPROTO)
      fail_msg("byte %zu changed: still parsed", bad[i].at);
  }
  uint8_t b[SMB3_MFSYMLINK_SIZE];
  memcpy(b, buf, sizeof b);
  memcpy(b + 5, "1025", 4);
  assert_int_equal(smb3_mfsymlink_parse(b, sizeof b, t), SMB3_EPROTO);
  memcpy(b + 5, "0000", 4);
  assert_int_equal(smb3_mfsymlink_parse(b, sizeof b, t), SMB3_EPROTO);
}

/* FILE_FULL_EA_INFORMATION: one entry byte for byte, a list of two read back, and every field of
 * a broken list refused before any entry is reported. */
static int ea_seen(const struct fscc_ea *ea, void *arg) {
  int *n = arg;
  if (*n == 0) assert_true(ea->name_len == 5 && !memcmp(ea->name, "color", 6) && ea->value_len == 4);
  if (*n == 1) assert_true(ea->name_len == 1 && ea->value_len == 0);
  (*n)++;
  return 0;
}

static void test_ea(void **state) {
  (void)state;
  uint8_t b[64];
  int n = fscc_ea_encode(b, sizeof b, "color", "blue", 4);
  assert_int_equal(n, 8 + 5 + 1 + 4);
  static const uint8_t want[] = {0, 0, 0, 0, 0, 5, 4, 0, 'c', 'o', 'l', 'o', 'r', 0, 'b', 'l', 'u', 'e'};
  assert_memory_equal(b, want, sizeof want);
  assert_int_equal(fscc_ea_encode(b, sizeof b, "", "x", 1), SMB3_EINVAL);
  assert_int_equal(fscc_ea_encode(b, 10, "color", "blue", 4), SMB3_EINVAL);
  char longname[300];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  assert_int_equal(fscc_ea_encode(b, sizeof b, longname, "x", 1), SMB3_EINVAL);
  /* a list: "color"="blue" (padded to 20), then "x" with no value */
  uint8_t l[40] = {0};
  memcpy(l, want, sizeof want);
  l[0] = 20;
  static const uint8_t second[] = {0, 0, 0, 0, 0, 1, 0, 0, 'x', 0};
  memcpy(l + 20, second, sizeof second);
  int seen = 0;
  assert_int_equal(fscc_ea_list_decode(l, 30, ea_seen, &seen), 0);
  assert_int_equal(seen, 2);
  assert_int_equal(fscc_ea_list_decode(NULL, 0, ea_seen, &seen), 0); /* no attributes */
  for (size_t k = 1; k < 30; k++) { /* cut anywhere (at 18 the first is whole but points past the end) */
    seen = 0;
    assert_int_equal(fscc_ea_list_decode(l, k, ea_seen, &seen), SMB3_EPROTO);
    assert_int_equal(seen, 0);
  }
  uint8_t bad[40];
  struct {
    size_t off;
    uint8_t val;
  } cases[] = {
      {0, 3},    /* NextEntryOffset not aligned */
      {0, 8},    /* ... inside the entry */
      {0, 40},   /* ... past the buffer */
      {5, 0},    /* an empty name */
      {5, 200},  /* a name past the end */
      {13, 'z'}, /* no NUL after the name */
      {10, 0},   /* a NUL inside the name */
      {6, 200},  /* a value past the end */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(bad, l, 30);
    bad[cases[i].off] = cases[i].val;
    seen = 0;
    if (fscc_ea_list_decode(bad, 30, ea_seen, &seen) != SMB3_EPROTO || seen)
      fail_msg("EA case %zu decoded", i);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ea),
      cmocka_unit_test(test_all_info),
      cmocka_unit_test(test_network_open_info),
      cmocka_unit_test(test_set_info_encoders),
      cmocka_unit_test(test_rename_info),
      cmocka_unit_test(test_fs_full_size),
      cmocka_unit_test(test_dir_iter),
      cmocka_unit_test(test_dir_unaligned),
      cmocka_unit_test(test_dir_reject),
      cmocka_unit_test(test_mfsymlink),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
