/* prim.c - the private library context and the primitives NTLMSSP needs (MS-NLMP 3.3):
 * MD4 (NT hash), MD5, HMAC-MD5 (NTLMv2), RC4 (key exchange / sealing) and random bytes.
 */
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <string.h>

#include "crypto/crypto.h"
#include "crypto/crypto_int.h"
#include "smb3/smb3_errors.h"

static pthread_once_t algs_once = PTHREAD_ONCE_INIT;
static struct crypto_algs algs;
static int algs_ok;

/* Fetch everything SMB needs. "legacy" is optional: without it only MD4/RC4 (NTLM) fail,
 * signing and sealing still work. Providers stay loaded for the process lifetime. */
static void algs_init(void) {
  OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
  if (ctx == NULL || OSSL_PROVIDER_load(ctx, "default") == NULL) return;
  (void)OSSL_PROVIDER_load(ctx, "legacy");
  algs.libctx = ctx;
  algs.md4 = EVP_MD_fetch(ctx, "MD4", NULL);
  algs.md5 = EVP_MD_fetch(ctx, "MD5", NULL);
  algs.sha512 = EVP_MD_fetch(ctx, "SHA512", NULL);
  algs.rc4 = EVP_CIPHER_fetch(ctx, "RC4", NULL);
  algs.aes128_ccm = EVP_CIPHER_fetch(ctx, "AES-128-CCM", NULL);
  algs.aes256_ccm = EVP_CIPHER_fetch(ctx, "AES-256-CCM", NULL);
  algs.aes128_gcm = EVP_CIPHER_fetch(ctx, "AES-128-GCM", NULL);
  algs.aes256_gcm = EVP_CIPHER_fetch(ctx, "AES-256-GCM", NULL);
  algs.hmac = EVP_MAC_fetch(ctx, "HMAC", NULL);
  algs.cmac = EVP_MAC_fetch(ctx, "CMAC", NULL);
  algs.gmac = EVP_MAC_fetch(ctx, "GMAC", NULL);
  algs.kbkdf = EVP_KDF_fetch(ctx, "KBKDF", NULL);
  algs_ok = algs.md5 && algs.sha512 && algs.aes128_ccm && algs.aes256_ccm && algs.aes128_gcm &&
            algs.aes256_gcm && algs.hmac && algs.cmac && algs.gmac && algs.kbkdf;
}

const struct crypto_algs *crypto_algs(void) {
  if (pthread_once(&algs_once, algs_init) != 0 || !algs_ok) return NULL;
  return &algs;
}

int crypto_iov_ok(const struct iovec *iov, int iovcnt) {
  if (iovcnt < 0 || (iovcnt > 0 && iov == NULL)) return 0;
  for (int i = 0; i < iovcnt; i++)
    if (iov[i].iov_base == NULL && iov[i].iov_len != 0) return 0;
  return 1;
}

static int mac_update_iov(EVP_MAC_CTX *c, const struct iovec *iov, int iovcnt) {
  for (int i = 0; i < iovcnt; i++)
    if (iov[i].iov_len && !EVP_MAC_update(c, iov[i].iov_base, iov[i].iov_len)) return 0;
  return 1;
}

int crypto_mac_iov(EVP_MAC *mac, const OSSL_PARAM *params, const uint8_t *key, size_t keylen,
                   const struct iovec *iov, int iovcnt, uint8_t *out, size_t outlen) {
  uint8_t full[EVP_MAX_MD_SIZE];
  size_t n = 0;
  EVP_MAC_CTX *c = EVP_MAC_CTX_new(mac);
  if (c == NULL) return SMB3_ENOMEM;
  int ok = EVP_MAC_init(c, key, keylen, params) && mac_update_iov(c, iov, iovcnt) &&
           EVP_MAC_final(c, full, &n, sizeof(full)) && n >= outlen;
  EVP_MAC_CTX_free(c);
  if (ok) memcpy(out, full, outlen);
  OPENSSL_cleanse(full, sizeof(full));
  return ok ? 0 : SMB3_EIO;
}

static int digest16(const EVP_MD *md, const void *data, size_t len, uint8_t out[16]) {
  unsigned int n = 0;
  if ((data == NULL && len) || out == NULL) return SMB3_EINVAL;
  if (md == NULL) return SMB3_ENOTSUP;
  static const uint8_t empty = 0;
  if (!EVP_Digest(data ? data : &empty, len, out, &n, md, NULL) || n != 16) return SMB3_EIO;
  return 0;
}

/* MD4 (RFC 1320): the NT one-way function of MS-NLMP 3.3.1. ENOTSUP without the legacy provider. */
int smb3_md4(const void *data, size_t len, uint8_t out[16]) {
  const struct crypto_algs *a = crypto_algs();
  if (a == NULL) return SMB3_EIO;
  return digest16(a->md4, data, len, out);
}

int smb3_md5(const void *data, size_t len, uint8_t out[16]) {
  const struct crypto_algs *a = crypto_algs();
  if (a == NULL) return SMB3_EIO;
  return digest16(a->md5, data, len, out);
}

/* HMAC-MD5 (RFC 2104) over the concatenation of iov: NTOWFv2 and NTProofStr (MS-NLMP 3.3.2). */
int smb3_hmac_md5(const uint8_t *key, size_t keylen, const struct iovec *iov, int iovcnt, uint8_t out[16]) {
  const struct crypto_algs *a = crypto_algs();
  if ((key == NULL && keylen) || out == NULL || !crypto_iov_ok(iov, iovcnt)) return SMB3_EINVAL;
  if (a == NULL) return SMB3_EIO;
  static const uint8_t empty = 0;
  OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "MD5", 0), OSSL_PARAM_END};
  return crypto_mac_iov(a->hmac, p, key ? key : &empty, keylen, iov, iovcnt, out, 16);
}

/* RC4 with any key length (MS-NLMP 3.4.4 uses 16-byte keys; RFC 6229 tests 5..32). Setting
 * the key length must happen between choosing the cipher and giving the key. */
int smb3_rc4(const uint8_t *key, size_t keylen, const uint8_t *in, uint8_t *out, size_t len) {
  const struct crypto_algs *a = crypto_algs();
  if (key == NULL || keylen == 0 || keylen > 256 || ((in == NULL || out == NULL) && len) || len > INT32_MAX)
    return SMB3_EINVAL;
  if (a == NULL) return SMB3_EIO;
  if (a->rc4 == NULL) return SMB3_ENOTSUP;
  if (len == 0) return 0;
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  if (c == NULL) return SMB3_ENOMEM;
  int outl = 0;
  int ok = EVP_CipherInit_ex2(c, a->rc4, NULL, NULL, 1, NULL) &&
           EVP_CIPHER_CTX_set_key_length(c, (int)keylen) && EVP_CipherInit_ex2(c, NULL, key, NULL, 1, NULL) &&
           EVP_CipherUpdate(c, out, &outl, in, (int)len) && (size_t)outl == len;
  EVP_CIPHER_CTX_free(c);
  return ok ? 0 : SMB3_EIO;
}

int smb3_random(void *buf, size_t len) {
  const struct crypto_algs *a = crypto_algs();
  if (buf == NULL && len) return SMB3_EINVAL;
  if (len == 0) return 0;
  if (a == NULL) return SMB3_EIO;
  return RAND_bytes_ex(a->libctx, buf, len, 0) == 1 ? 0 : SMB3_EIO;
}
