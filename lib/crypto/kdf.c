/* kdf.c - SMB 3.x key derivation (MS-SMB2 3.1.4.2): NIST SP800-108 KDF in counter mode with
 * HMAC-SHA256 as PRF, r = 32, L = output bits; each block is
 *   PRF(Ki, [i]_32 || Label || 0x00 || Context || [L]_32).
 * OpenSSL's KBKDF in counter mode emits exactly that (a 32-bit big-endian counter, the 0x00
 * separator and the 32-bit L are its defaults), so the labels are passed as the spec writes
 * them, terminating NUL included (e.g. "SMBSigningKey\0", 14 bytes).
 */
#include <openssl/core_names.h>
#include <openssl/params.h>

#include "crypto/crypto.h"
#include "crypto/crypto_int.h"
#include "smb3/smb3_errors.h"

/* SP800-108 requires L to fit its 32-bit encoding; SMB only ever asks for 16 or 32 bytes. */
#define KDF_MAX_OUT 64

int smb3_kdf(const uint8_t *key, size_t keylen, const void *label, size_t labellen, const void *context,
             size_t contextlen, uint8_t *out, size_t outlen) {
  if (key == NULL || keylen == 0 || (label == NULL && labellen) || (context == NULL && contextlen) ||
      out == NULL || outlen == 0 || outlen > KDF_MAX_OUT)
    return SMB3_EINVAL;
  const struct crypto_algs *a = crypto_algs();
  if (a == NULL) return SMB3_EIO;
  static const char empty = 0;
  OSSL_PARAM p[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, "counter", 0),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MAC, "HMAC", 0),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, keylen),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)(label ? label : &empty), labellen),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)(context ? context : &empty),
                                        contextlen),
      OSSL_PARAM_END,
  };
  EVP_KDF_CTX *c = EVP_KDF_CTX_new(a->kbkdf);
  if (c == NULL) return SMB3_ENOMEM;
  int ok = EVP_KDF_derive(c, out, outlen, p) > 0;
  EVP_KDF_CTX_free(c);
  return ok ? 0 : SMB3_EIO;
}
