/* seal.c - SMB 3.x message encryption (MS-SMB2 3.1.4.3 encrypting, 3.2.5.1.1 / 3.3.5.2.1
 * decrypting) with AES-128/256 in CCM (RFC 4309 style: 11-byte nonce) or GCM (12-byte nonce),
 * always with a 16-byte tag that travels as the TRANSFORM_HEADER Signature. The AAD is the
 * transform header from Nonce to the end (MS-SMB2 2.2.41), supplied by the caller.
 */
#include <limits.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "crypto/crypto_int.h"
#include "smb3/smb3_errors.h"

#define AEAD_TAG_LEN 16
#define CCM_NONCE_LEN 11 /* MS-SMB2 2.2.41: AES_CCM_Nonce is the first 11 bytes of Nonce */
#define GCM_NONCE_LEN 12 /* MS-SMB2 2.2.41: AES_GCM_Nonce is the first 12 bytes of Nonce */

struct aead {
  const EVP_CIPHER *cipher;
  int ccm; /* CCM needs the total length up front and takes the data in one update */
  int noncelen;
};

size_t smb3_cipher_keylen(int cipher) {
  switch (cipher) {
  case SMB3_CIPHER_AES128_CCM:
  case SMB3_CIPHER_AES128_GCM:
    return 16;
  case SMB3_CIPHER_AES256_CCM:
  case SMB3_CIPHER_AES256_GCM:
    return 32;
  default:
    return 0;
  }
}

size_t smb3_cipher_noncelen(int cipher) {
  switch (cipher) {
  case SMB3_CIPHER_AES128_CCM:
  case SMB3_CIPHER_AES256_CCM:
    return CCM_NONCE_LEN;
  case SMB3_CIPHER_AES128_GCM:
  case SMB3_CIPHER_AES256_GCM:
    return GCM_NONCE_LEN;
  default:
    return 0;
  }
}

static int aead_lookup(int cipher, struct aead *x) {
  const struct crypto_algs *a = crypto_algs();
  if (smb3_cipher_keylen(cipher) == 0) return SMB3_EINVAL;
  if (a == NULL) return SMB3_EIO;
  x->ccm = cipher == SMB3_CIPHER_AES128_CCM || cipher == SMB3_CIPHER_AES256_CCM;
  x->noncelen = (int)smb3_cipher_noncelen(cipher);
  switch (cipher) {
  case SMB3_CIPHER_AES128_CCM:
    x->cipher = a->aes128_ccm;
    break;
  case SMB3_CIPHER_AES256_CCM:
    x->cipher = a->aes256_ccm;
    break;
  case SMB3_CIPHER_AES128_GCM:
    x->cipher = a->aes128_gcm;
    break;
  default:
    x->cipher = a->aes256_gcm;
    break;
  }
  return 0;
}

/* Cipher, nonce length, (CCM) tag length or expected tag, then key and nonce: CCM fixes its
 * parameters before the key is set (EVP_EncryptInit(3), "CCM Mode"). */
static int aead_init(EVP_CIPHER_CTX *c, const struct aead *x, const uint8_t *key, const uint8_t *nonce,
                     int enc, const uint8_t *tag) {
  if (!EVP_CipherInit_ex2(c, x->cipher, NULL, NULL, enc, NULL) ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, x->noncelen, NULL) <= 0)
    return 0;
  if (x->ccm && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, AEAD_TAG_LEN, enc ? NULL : (void *)tag) <= 0)
    return 0;
  return EVP_CipherInit_ex2(c, NULL, key, nonce, enc, NULL);
}

/* CCM must learn the plaintext length before any AAD; then the AAD, for both modes. */
static int aead_begin(EVP_CIPHER_CTX *c, const struct aead *x, size_t total, const uint8_t *aad,
                      size_t aadlen) {
  int outl;
  if (x->ccm && !EVP_CipherUpdate(c, NULL, &outl, NULL, (int)total)) return 0;
  return aadlen == 0 || EVP_CipherUpdate(c, NULL, &outl, aad, (int)aadlen);
}

static int update_inplace(EVP_CIPHER_CTX *c, uint8_t *p, size_t len) {
  int outl = 0;
  return EVP_CipherUpdate(c, p, &outl, p, (int)len) && (size_t)outl == len;
}

/* Total length of iov, or SIZE_MAX if it does not fit an int (OpenSSL's length type). */
static size_t iov_total(const struct iovec *iov, int iovcnt, int *nonempty) {
  size_t total = 0;
  *nonempty = 0;
  for (int i = 0; i < iovcnt; i++) {
    if (iov[i].iov_len > (size_t)INT_MAX - total) return SIZE_MAX;
    total += iov[i].iov_len;
    *nonempty += iov[i].iov_len != 0;
  }
  return total;
}

/* CCM cannot take its data in pieces, so a list of several buffers is gathered into one
 * temporary, encrypted there and scattered back. */
static int encrypt_gathered(EVP_CIPHER_CTX *c, struct iovec *iov, int iovcnt, size_t total) {
  uint8_t *tmp = malloc(total);
  if (tmp == NULL) return SMB3_ENOMEM;
  size_t off = 0;
  for (int i = 0; i < iovcnt; off += iov[i].iov_len, i++)
    if (iov[i].iov_len) memcpy(tmp + off, iov[i].iov_base, iov[i].iov_len);
  int ok = update_inplace(c, tmp, total);
  off = 0;
  for (int i = 0; ok && i < iovcnt; off += iov[i].iov_len, i++)
    if (iov[i].iov_len) memcpy(iov[i].iov_base, tmp + off, iov[i].iov_len);
  OPENSSL_cleanse(tmp, total); /* it held plaintext */
  free(tmp);
  return ok ? 0 : SMB3_EIO;
}

static int encrypt_data(EVP_CIPHER_CTX *c, const struct aead *x, struct iovec *iov, int iovcnt, size_t total,
                        int nonempty) {
  if (x->ccm && nonempty > 1) return encrypt_gathered(c, iov, iovcnt, total);
  for (int i = 0; i < iovcnt; i++)
    if (iov[i].iov_len && !update_inplace(c, iov[i].iov_base, iov[i].iov_len)) return SMB3_EIO;
  return 0;
}

static int encrypt_finish(EVP_CIPHER_CTX *c, uint8_t tag[16]) {
  uint8_t dummy[32];
  int outl = 0;
  if (!EVP_CipherFinal_ex(c, dummy, &outl) || outl != 0 ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, AEAD_TAG_LEN, tag) <= 0)
    return SMB3_EIO;
  return 0;
}

/* ---- a key set up once, used for one message at a time ---- */
struct smb3_aead {
  EVP_CIPHER_CTX *c;
  struct aead x;
  int enc;
  int begun;       /* a message is under way */
  size_t total;    /* its length (CCM: all of it in one update) */
  uint8_t key[32]; /* CCM sets its parameters before the key, so it is set again per message */
};

struct smb3_aead *smb3_aead_new(int cipher, const uint8_t *key, int enc) {
  struct aead x;
  if (key == NULL || aead_lookup(cipher, &x) != 0) return NULL;
  struct smb3_aead *a = calloc(1, sizeof *a);
  if (a == NULL) return NULL;
  a->x = x;
  a->enc = enc != 0;
  memcpy(a->key, key, smb3_cipher_keylen(cipher));
  a->c = EVP_CIPHER_CTX_new();
  /* GCM: the key schedule once, here; each message then sets only its nonce. */
  if (a->c == NULL || (!x.ccm && (!EVP_CipherInit_ex2(a->c, x.cipher, NULL, NULL, a->enc, NULL) ||
                                  EVP_CIPHER_CTX_ctrl(a->c, EVP_CTRL_AEAD_SET_IVLEN, x.noncelen, NULL) <= 0 ||
                                  !EVP_CipherInit_ex2(a->c, NULL, key, NULL, a->enc, NULL)))) {
    smb3_aead_free(a);
    return NULL;
  }
  return a;
}

void smb3_aead_free(struct smb3_aead *a) {
  if (a == NULL) return;
  EVP_CIPHER_CTX_free(a->c);
  OPENSSL_cleanse(a->key, sizeof a->key);
  free(a);
}

int smb3_aead_streams(const struct smb3_aead *a) {
  return a != NULL && !a->x.ccm;
}

int smb3_aead_begin(struct smb3_aead *a, const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                    size_t total, const uint8_t *tag) {
  if (a == NULL || nonce == NULL || total == 0 || total > INT_MAX || (aad == NULL && aadlen) ||
      aadlen > INT_MAX || (a->x.ccm && !a->enc && tag == NULL))
    return SMB3_EINVAL;
  a->begun = 0;
  int ok = a->x.ccm ? aead_init(a->c, &a->x, a->key, nonce, a->enc, tag)
                    : EVP_CipherInit_ex2(a->c, NULL, NULL, nonce, a->enc, NULL);
  if (!ok || !aead_begin(a->c, &a->x, total, aad, aadlen)) return SMB3_EIO;
  a->begun = 1;
  a->total = total;
  return 0;
}

int smb3_aead_update(struct smb3_aead *a, uint8_t *out, const uint8_t *in, size_t len) {
  if (a == NULL || !a->begun || len > INT_MAX || (a->x.ccm && len != a->total)) return SMB3_EINVAL;
  if (len == 0) return 0;
  int outl = 0;
  if (EVP_CipherUpdate(a->c, out, &outl, in, (int)len) && (size_t)outl == len) return 0;
  a->begun = 0;
  /* CCM verifies its tag inside the one update when decrypting */
  return a->x.ccm && !a->enc ? SMB3_ESIGNATURE : SMB3_EIO;
}

int smb3_aead_finish(struct smb3_aead *a, uint8_t tag[16]) {
  if (a == NULL || !a->begun || tag == NULL) return SMB3_EINVAL;
  a->begun = 0;
  if (a->enc) return encrypt_finish(a->c, tag);
  if (a->x.ccm) return 0; /* verified in the update */
  uint8_t dummy[32];
  int outl = 0;
  if (EVP_CIPHER_CTX_ctrl(a->c, EVP_CTRL_AEAD_SET_TAG, AEAD_TAG_LEN, tag) <= 0) return SMB3_EIO;
  return EVP_CipherFinal_ex(a->c, dummy, &outl) > 0 ? 0 : SMB3_ESIGNATURE;
}

/* ---- one message with a key of its own ---- */
int smb3_encrypt(int cipher, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                 struct iovec *iov, int iovcnt, uint8_t tag[16]) {
  int nonempty, rc;
  if (key == NULL || nonce == NULL || tag == NULL || (aad == NULL && aadlen) || aadlen > INT_MAX ||
      !crypto_iov_ok(iov, iovcnt) || smb3_cipher_keylen(cipher) == 0)
    return SMB3_EINVAL;
  size_t total = iov_total(iov, iovcnt, &nonempty);
  if (total == 0 || total == SIZE_MAX) /* an SMB2 message is never empty */
    return SMB3_EINVAL;
  struct smb3_aead *a = smb3_aead_new(cipher, key, 1);
  if (a == NULL) return crypto_algs() == NULL ? SMB3_EIO : SMB3_ENOMEM;
  if ((rc = smb3_aead_begin(a, nonce, aad, aadlen, total, NULL)) == 0 &&
      (rc = encrypt_data(a->c, &a->x, iov, iovcnt, total, nonempty)) == 0)
    rc = encrypt_finish(a->c, tag);
  smb3_aead_free(a);
  return rc;
}

int smb3_decrypt(int cipher, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                 uint8_t *buf, size_t len, const uint8_t tag[16]) {
  int rc;
  if (key == NULL || nonce == NULL || tag == NULL || buf == NULL || len == 0 || len > INT_MAX ||
      (aad == NULL && aadlen) || aadlen > INT_MAX || smb3_cipher_keylen(cipher) == 0)
    return SMB3_EINVAL;
  struct smb3_aead *a = smb3_aead_new(cipher, key, 0);
  if (a == NULL) return crypto_algs() == NULL ? SMB3_EIO : SMB3_ENOMEM;
  uint8_t t[16];
  memcpy(t, tag, sizeof t);
  if ((rc = smb3_aead_begin(a, nonce, aad, aadlen, len, t)) == 0 &&
      (rc = smb3_aead_update(a, buf, buf, len)) == 0)
    rc = smb3_aead_finish(a, t);
  smb3_aead_free(a);
  /* Never hand out plaintext that failed authentication (MS-SMB2 3.2.5.1.1.1: discard it). */
  if (rc == SMB3_ESIGNATURE) OPENSSL_cleanse(buf, len);
  return rc;
}
