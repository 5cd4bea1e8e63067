/* test_utf16 - UTF-8 <-> UTF-16LE converters and the NTLM user-name upper-casing (utf16.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "smb3/smb3_errors.h"
#include "util/utf16.h"

static void expect_to16(const char *s, size_t len, const uint8_t *want, size_t wantlen) {
  uint8_t *out = NULL;
  size_t outlen = 99;
  assert_int_equal(smb3_utf8_to_utf16le(s, len, &out, &outlen), 0);
  assert_non_null(out);
  assert_int_equal(outlen, wantlen);
  if (wantlen) assert_memory_equal(out, want, wantlen);
  free(out);
}

static void expect_to8(const uint8_t *p, size_t len, const char *want, size_t wantlen) {
  char *out = NULL;
  size_t outlen = 99;
  assert_int_equal(smb3_utf16le_to_utf8(p, len, &out, &outlen), 0);
  assert_non_null(out);
  assert_int_equal(outlen, wantlen);
  assert_memory_equal(out, want, wantlen);
  assert_int_equal(out[outlen], 0);
  free(out);
}

static void test_ascii(void **state) {
  (void)state;
  static const uint8_t user[] = {'U', 0, 's', 0, 'e', 0, 'r', 0};
  expect_to16("User", 4, user, sizeof user);
  expect_to8(user, sizeof user, "User", 4);
}

static void test_empty(void **state) {
  (void)state;
  expect_to16("", 0, NULL, 0);
  expect_to16(NULL, 0, NULL, 0);
  expect_to8(NULL, 0, "", 0);
}

static void test_bmp_and_astral(void **state) {
  (void)state;
  /* "é€𝄞" = U+00E9 U+20AC U+1D11E (surrogates D834 DD1E). */
  static const char u8[] = "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
  static const uint8_t u16[] = {0xe9, 0x00, 0xac, 0x20, 0x34, 0xd8, 0x1e, 0xdd};
  expect_to16(u8, sizeof u8 - 1, u16, sizeof u16);
  expect_to8(u16, sizeof u16, u8, sizeof u8 - 1);
  /* Boundaries: U+007F, U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF. */
  static const char edges[] = "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf";
  static const uint8_t edges16[] = {0x7f, 0,    0x80, 0,    0xff, 0x07, 0x00, 0x08, 0xff,
                                    0xff, 0x00, 0xd8, 0x00, 0xdc, 0xff, 0xdb, 0xff, 0xdf};
  expect_to16(edges, sizeof edges - 1, edges16, sizeof edges16);
  expect_to8(edges16, sizeof edges16, edges, sizeof edges - 1);
}

static void test_embedded_nul(void **state) {
  (void)state;
  static const uint8_t u16[] = {'a', 0, 0, 0, 'b', 0};
  expect_to16("a\0b", 3, u16, sizeof u16);
  expect_to8(u16, sizeof u16, "a\0b", 3);
}

static void test_invalid_utf8(void **state) {
  (void)state;
  static const char *bad[] = {
      "\x80",             /* lone continuation */
      "\xc0\xaf",         /* overlong '/' */
      "\xc1\xbf",         /* overlong */
      "\xe0\x80\xaf",     /* overlong 3-byte */
      "\xf0\x80\x80\xaf", /* overlong 4-byte */
      "\xed\xa0\x80",     /* encoded surrogate U+D800 */
      "\xed\xbf\xbf",     /* encoded surrogate U+DFFF */
      "\xf4\x90\x80\x80", /* U+110000 */
      "\xf5\x80\x80\x80", /* F5 lead */
      "\xff",             /* invalid byte */
      "\xc3",             /* truncated 2-byte */
      "\xe2\x82",         /* truncated 3-byte */
      "\xf0\x9d\x84",     /* truncated 4-byte */
      "\xc3\x28",         /* bad continuation */
      "a\xe2\x28\xa1",    /* bad continuation in the middle */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t *out = (uint8_t *)1;
    size_t outlen = 7;
    assert_int_equal(smb3_utf8_to_utf16le(bad[i], strlen(bad[i]), &out, &outlen), SMB3_EINVAL);
    assert_null(out);
    assert_int_equal(outlen, 0);
  }
}

static void test_invalid_utf16(void **state) {
  (void)state;
  static const uint8_t lone_high[] = {'a', 0, 0x34, 0xd8};
  static const uint8_t lone_low[] = {0x1e, 0xdd, 'a', 0};
  static const uint8_t high_then_ascii[] = {0x34, 0xd8, 'a', 0};
  static const uint8_t two_highs[] = {0x34, 0xd8, 0x34, 0xd8};
  static const uint8_t odd[] = {'a', 0, 'b'};
  const struct {
    const uint8_t *p;
    size_t n;
  } bad[] = {{lone_high, sizeof lone_high},
             {lone_low, sizeof lone_low},
             {high_then_ascii, sizeof high_then_ascii},
             {two_highs, sizeof two_highs},
             {odd, sizeof odd}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *out = (char *)1;
    assert_int_equal(smb3_utf16le_to_utf8(bad[i].p, bad[i].n, &out, NULL), SMB3_EPROTO);
    assert_null(out);
  }
}

static void test_bad_args(void **state) {
  (void)state;
  uint8_t *o16;
  char *o8;
  size_t n;
  assert_int_equal(smb3_utf8_to_utf16le("a", 1, NULL, &n), SMB3_EINVAL);
  assert_int_equal(smb3_utf8_to_utf16le(NULL, 1, &o16, &n), SMB3_EINVAL);
  assert_int_equal(smb3_utf16le_to_utf8(NULL, 2, &o8, &n), SMB3_EINVAL);
  assert_int_equal(smb3_utf16le_to_utf8((const uint8_t *)"a", 2, NULL, &n), SMB3_EINVAL);
  assert_int_equal(smb3_utf8_to_utf16le("a", SMB3_UTF_MAX_INPUT + 1, &o16, &n), SMB3_ERANGE);
  assert_int_equal(smb3_utf16le_to_utf8((const uint8_t *)"a", SMB3_UTF_MAX_INPUT + 2, &o8, &n), SMB3_ERANGE);
}

/* Every 16-bit code unit that is not a surrogate round-trips through UTF-8. */
static void test_roundtrip_bmp(void **state) {
  (void)state;
  uint8_t *u16 = malloc(0x10000 * 2);
  size_t n = 0;
  assert_non_null(u16);
  for (uint32_t c = 1; c < 0x10000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    u16[n++] = (uint8_t)c;
    u16[n++] = (uint8_t)(c >> 8);
  }
  char *u8 = NULL;
  size_t u8len = 0;
  assert_int_equal(smb3_utf16le_to_utf8(u16, n, &u8, &u8len), 0);
  uint8_t *back = NULL;
  size_t backlen = 0;
  assert_int_equal(smb3_utf8_to_utf16le(u8, u8len, &back, &backlen), 0);
  assert_int_equal(backlen, n);
  assert_memory_equal(back, u16, n);
  free(back);
  free(u8);
  free(u16);
}

static void test_upper(void **state) {
  (void)state;
  assert_int_equal(smb3_utf16_upper('a'), 'A');
  assert_int_equal(smb3_utf16_upper('z'), 'Z');
  assert_int_equal(smb3_utf16_upper('A'), 'A');
  assert_int_equal(smb3_utf16_upper('0'), '0');
  assert_int_equal(smb3_utf16_upper('{'), '{');
  assert_int_equal(smb3_utf16_upper(0x00e9), 0x00c9); /* é -> É */
  assert_int_equal(smb3_utf16_upper(0x00f7), 0x00f7); /* ÷ unchanged */
  assert_int_equal(smb3_utf16_upper(0x00df), 0x00df); /* ß unchanged */
  assert_int_equal(smb3_utf16_upper(0x00ff), 0x0178); /* ÿ -> Ÿ */
  assert_int_equal(smb3_utf16_upper(0x0101), 0x0100); /* ā -> Ā */
  assert_int_equal(smb3_utf16_upper(0x0100), 0x0100);
  assert_int_equal(smb3_utf16_upper(0x013e), 0x013d); /* ľ -> Ľ */
  assert_int_equal(smb3_utf16_upper(0x017e), 0x017d); /* ž -> Ž */
  assert_int_equal(smb3_utf16_upper(0x0131), 0x0131); /* dotless i unchanged */
  assert_int_equal(smb3_utf16_upper(0x03b1), 0x0391); /* α -> Α */
  assert_int_equal(smb3_utf16_upper(0x03c2), 0x03c2); /* final sigma unchanged */
  assert_int_equal(smb3_utf16_upper(0x0434), 0x0414); /* д -> Д */
  assert_int_equal(smb3_utf16_upper(0x0451), 0x0401); /* ё -> Ё */
  assert_int_equal(smb3_utf16_upper(0x4e2d), 0x4e2d); /* CJK unchanged */
  uint8_t buf[] = {'u', 0, 0xe9, 0, 0x34, 0xd8, 0x1e, 0xdd, 'x'};
  smb3_utf16le_upper(buf, sizeof buf);
  static const uint8_t want[] = {'U', 0, 0xc9, 0, 0x34, 0xd8, 0x1e, 0xdd, 'x'};
  assert_memory_equal(buf, want, sizeof want);
}

/* SFM's mapping: each reserved character to its code point and back, the rest untouched. */
static void test_sfm(void **state) {
  (void)state;
  static const char *names = "\"*:<>?|";
  static const uint16_t cps[] = {0xf020, 0xf021, 0xf022, 0xf023, 0xf024, 0xf025, 0xf027};
  for (size_t i = 0; i < 7; i++) {
    char in[4] = {'a', names[i], '\\', 0};
    uint8_t *u;
    size_t n;
    assert_int_equal(smb3_utf8_to_utf16le(in, 3, &u, &n), 0);
    smb3_sfm_map(u, n);
    assert_int_equal(u[0] | u[1] << 8, 'a');
    assert_int_equal(u[2] | u[3] << 8, cps[i]);
    assert_int_equal(u[4] | u[5] << 8, '\\'); /* the separator is not mapped */
    char *back;
    size_t blen;
    assert_int_equal(smb3_utf16le_to_utf8(u, n, &back, &blen), 0);
    assert_int_equal(blen, 5); /* a, three bytes of U+F0xx, '\\' */
    assert_int_equal(smb3_sfm_unmap(back, blen), 3);
    assert_string_equal(back, in);
    free(back);
    free(u);
  }
  /* Control characters to U+F001..U+F01F; NUL, space, '.', '/' and other private-use code points
   * (U+F000, U+F026, U+F028, U+F040) stay as they are. */
  uint8_t ctl[] = {0x01, 0, 0x1f, 0, ' ', 0, '.', 0, 0, 0, '/', 0, 0x21, 0xf0};
  smb3_sfm_map(ctl, sizeof ctl);
  static const uint8_t want[] = {0x01, 0xf0, 0x1f, 0xf0, ' ', 0, '.', 0, 0, 0, '/', 0, 0x21, 0xf0};
  assert_memory_equal(ctl, want, sizeof want);
  char kept[] = "\xef\x80\x80\xef\x80\xa6\xef\x80\xa8\xef\x81\x80x\xef\x80";
  size_t klen = sizeof kept - 1;
  assert_int_equal(smb3_sfm_unmap(kept, klen), klen);
  char ctl8[] = "\xef\x80\x81-\xef\x80\x9f";
  assert_int_equal(smb3_sfm_unmap(ctl8, sizeof ctl8 - 1), 3);
  assert_memory_equal(ctl8, "\x01-\x1f", 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ascii),          cmocka_unit_test(test_empty),
      cmocka_unit_test(test_bmp_and_astral), cmocka_unit_test(test_embedded_nul),
      cmocka_unit_test(test_invalid_utf8),   cmocka_unit_test(test_invalid_utf16),
      cmocka_unit_test(test_bad_args),       cmocka_unit_test(test_roundtrip_bmp),
      cmocka_unit_test(test_upper),          cmocka_unit_test(test_sfm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
