/* crypto_int.h - private to lib/crypto: the module's one piece of global state.
 *
 * All algorithms are fetched once (pthread_once) from a private OSSL_LIB_CTX holding the
 * "default" and, when available, the "legacy" provider (MD4 and RC4 live only in legacy since
 * OpenSSL 3). The application's default library context is never touched. The table is
 * immutable after initialisation and lives for the life of the process (still reachable, so
 * leak checkers do not report it).
 */
#ifndef SMB3_CRYPTO_INT_H
#define SMB3_CRYPTO_INT_H

#include <openssl/core.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct crypto_algs {
  OSSL_LIB_CTX *libctx;
  EVP_MD *md4; /* NULL if the legacy provider is missing */
  EVP_MD *md5;
  EVP_MD *sha512;
  EVP_CIPHER *rc4; /* NULL if the legacy provider is missing */
  EVP_CIPHER *aes128_ccm, *aes256_ccm, *aes128_gcm, *aes256_gcm;
  EVP_MAC *hmac, *cmac, *gmac;
  EVP_KDF *kbkdf;
};

/* The algorithm table, or NULL if the private context could not be set up. Thread-safe. */
const struct crypto_algs *crypto_algs(void);

/* True if iov[0..iovcnt) is a well-formed list (NULL bases only with zero length). */
int crypto_iov_ok(const struct iovec *iov, int iovcnt);

/* One-shot MAC over an iovec list: init with key and params, update per element, final into
 * out (outlen bytes, at most 64; the MAC's full output is truncated to outlen). */
int crypto_mac_iov(EVP_MAC *mac, const OSSL_PARAM *params, const uint8_t *key, size_t keylen,
                   const struct iovec *iov, int iovcnt, uint8_t *out, size_t outlen);

#endif
