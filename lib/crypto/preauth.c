/* preauth.c - SMB 3.1.1 preauthentication integrity (MS-SMB2 3.2.5.2 client, 3.3.5.4 server):
 * the running value is SHA-512(previous value || whole message), starting from 64 zero bytes,
 * over NEGOTIATE and every SESSION_SETUP request/response except the final success response.
 */
#include <openssl/crypto.h>
#include <string.h>

#include "crypto/crypto.h"
#include "crypto/crypto_int.h"
#include "smb3/smb3_errors.h"

static int digest_iov(EVP_MD_CTX *c, const struct iovec *iov, int iovcnt) {
  for (int i = 0; i < iovcnt; i++)
    if (iov[i].iov_len && !EVP_DigestUpdate(c, iov[i].iov_base, iov[i].iov_len)) return 0;
  return 1;
}

int smb3_preauth_update(uint8_t hash[64], const struct iovec *iov, int iovcnt) {
  if (hash == NULL || !crypto_iov_ok(iov, iovcnt)) return SMB3_EINVAL;
  const struct crypto_algs *a = crypto_algs();
  if (a == NULL) return SMB3_EIO;
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  if (c == NULL) return SMB3_ENOMEM;
  /* Hash into a temporary so a failure leaves the caller's running value untouched. */
  uint8_t next[64];
  unsigned int n = 0;
  int ok = EVP_DigestInit_ex2(c, a->sha512, NULL) && EVP_DigestUpdate(c, hash, 64) &&
           digest_iov(c, iov, iovcnt) && EVP_DigestFinal_ex(c, next, &n) && n == sizeof(next);
  EVP_MD_CTX_free(c);
  if (ok) memcpy(hash, next, sizeof(next));
  return ok ? 0 : SMB3_EIO;
}
