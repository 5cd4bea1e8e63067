/* test_crypto.c - lib/crypto against published test vectors (sources cited per test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "crypto/crypto.h"
#include "smb3/smb3_errors.h"

/* Parse a hex string (whitespace ignored) into out; returns the byte count. */
static size_t unhex(const char *s, uint8_t *out, size_t cap) {
  size_t n = 0;
  int hi = -1;
  for (; *s; s++) {
    int v;
    if (*s >= '0' && *s <= '9')
      v = *s - '0';
    else if (*s >= 'a' && *s <= 'f')
      v = *s - 'a' + 10;
    else if (*s >= 'A' && *s <= 'F')
      v = *s - 'A' + 10;
    else
      continue;
    if (hi < 0) {
      hi = v;
      continue;
    }
    assert_true(n < cap);
    out[n++] = (uint8_t)(hi << 4 | v);
    hi = -1;
  }
  assert_int_equal(hi, -1);
  return n;
}

static void assert_hex(const uint8_t *got, size_t len, const char *want_hex) {
  uint8_t want[512];
  size_t n = unhex(want_hex, want, sizeof(want));
  assert_int_equal(n, len);
  assert_memory_equal(got, want, len);
}

/* ---- MD4: RFC 1320 appendix A.5 test suite ---- */
static const char *const digest_inputs[] = {
    "",
    "a",
    "abc",
    "message digest",
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
};

static void test_md4_rfc1320(void **state) {
  (void)state;
  static const char *const want[] = {
      "31d6cfe0d16ae931b73c59d7e0c089c0", "bde52cb31de33e46245e05fbdbd6fb24",
      "a448017aaf21d8525fc10ae87aa6729d", "d9130a8164549fe818874806e1c7014b",
      "d79e1c308aa5bbcdeea8ed63df412da9", "043f8582f241db351ce627e153e7f0e4",
      "e33b4ddc9c38f2199c3e7b164fcc0536",
  };
  for (size_t i = 0; i < 7; i++) {
    uint8_t out[16];
    assert_int_equal(smb3_md4(digest_inputs[i], strlen(digest_inputs[i]), out), 0);
    assert_hex(out, 16, want[i]);
  }
  uint8_t out[16];
  assert_int_equal(smb3_md4(NULL, 0, out), 0);
  assert_hex(out, 16, want[0]);
  assert_int_equal(smb3_md4(NULL, 1, out), SMB3_EINVAL);
}

/* ---- MD5: RFC 1321 appendix A.5 test suite ---- */
static void test_md5_rfc1321(void **state) {
  (void)state;
  static const char *const want[] = {
      "d41d8cd98f00b204e9800998ecf8427e", "0cc175b9c0f1b6a831c399e269772661",
      "900150983cd24fb0d6963f7d28e17f72", "f96b697d7cb7938d525a2f31aaf161d0",
      "c3fcd3d76192e4007dfb496cca67e13b", "d174ab98d277d9f5a5611c2c9f419d9f",
      "57edf4a22be3c955ac49da2e2107b67a",
  };
  for (size_t i = 0; i < 7; i++) {
    uint8_t out[16];
    assert_int_equal(smb3_md5(digest_inputs[i], strlen(digest_inputs[i]), out), 0);
    assert_hex(out, 16, want[i]);
  }
}

/* ---- HMAC-MD5: RFC 2202 section 2 test cases 1, 2, 3 and 6 (65+-byte key) ---- */
static void test_hmac_md5_rfc2202(void **state) {
  (void)state;
  uint8_t key[80], data[64], out[16];
  memset(key, 0x0b, 16);
  struct iovec v = {.iov_base = "Hi There", .iov_len = 8};
  assert_int_equal(smb3_hmac_md5(key, 16, &v, 1, out), 0);
  assert_hex(out, 16, "9294727a3638bb1c13f48ef8158bfc9d");

  /* Case 2, split over three iovecs to exercise the iov path. */
  struct iovec v2[3] = {{"what do ya", 10}, {NULL, 0}, {" want for nothing?", 18}};
  assert_int_equal(smb3_hmac_md5((const uint8_t *)"Jefe", 4, v2, 3, out), 0);
  assert_hex(out, 16, "750c783e6ab0b503eaa86e310a5db738");

  memset(key, 0xaa, 16);
  memset(data, 0xdd, 50);
  struct iovec v3 = {data, 50};
  assert_int_equal(smb3_hmac_md5(key, 16, &v3, 1, out), 0);
  assert_hex(out, 16, "56be34521d144c88dbb8c733f0e8b3f6");

  memset(key, 0xaa, 80);
  const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  struct iovec v6 = {(void *)m6, strlen(m6)};
  assert_int_equal(smb3_hmac_md5(key, 80, &v6, 1, out), 0);
  assert_hex(out, 16, "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd");

  assert_int_equal(smb3_hmac_md5(key, 16, NULL, 1, out), SMB3_EINVAL);
}

/* ---- RC4: RFC 6229 section 2, keystream at offsets 0 and 16 (plaintext zero) ---- */
static void rc4_check(const char *key_hex, const char *ks0_hex, const char *ks16_hex) {
  uint8_t key[32], buf[32] = {0};
  size_t kl = unhex(key_hex, key, sizeof(key));
  assert_int_equal(smb3_rc4(key, kl, buf, buf, sizeof(buf)), 0); /* in place */
  assert_hex(buf, 16, ks0_hex);
  assert_hex(buf + 16, 16, ks16_hex);
}

static void test_rc4_rfc6229(void **state) {
  (void)state;
  rc4_check("0102030405", "b2396305f03dc027ccc3524a0a1118a8", "6982944f18fc82d589c403a47a0d0919");
  rc4_check("0102030405060708", "97ab8a1bf0afb96132f2f67258da15a8", "8263efdb45c4a18684ef87e6b19e5b09");
  rc4_check("0102030405060708090a0b0c0d0e0f10", "9ac7cc9a609d1ef7b2932899cde41b97",
            "5248c4959014126a6e8a84f11d1a9e1c");
  /* Out of place and decrypt round trip. */
  uint8_t key[16] = {1, 2, 3}, pt[40], ct[40], back[40];
  for (size_t i = 0; i < sizeof(pt); i++)
    pt[i] = (uint8_t)i;
  assert_int_equal(smb3_rc4(key, 16, pt, ct, sizeof(pt)), 0);
  assert_int_equal(smb3_rc4(key, 16, ct, back, sizeof(ct)), 0);
  assert_memory_equal(pt, back, sizeof(pt));
  assert_int_equal(smb3_rc4(NULL, 16, pt, ct, 1), SMB3_EINVAL);
}

static void test_random(void **state) {
  (void)state;
  uint8_t a[32] = {0}, b[32] = {0}, z[32] = {0};
  assert_int_equal(smb3_random(a, sizeof(a)), 0);
  assert_int_equal(smb3_random(b, sizeof(b)), 0);
  assert_memory_not_equal(a, z, sizeof(a));
  assert_memory_not_equal(a, b, sizeof(a));
  assert_int_equal(smb3_random(NULL, 0), 0);
  assert_int_equal(smb3_random(NULL, 4), SMB3_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_md4_rfc1320),      cmocka_unit_test(test_md5_rfc1321),
      cmocka_unit_test(test_hmac_md5_rfc2202), cmocka_unit_test(test_rc4_rfc6229),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
