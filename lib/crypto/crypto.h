/* crypto.h - thin wrappers over OpenSSL libcrypto (EVP) for SMB2/3 signing, sealing, key
 * derivation and the 3.1.1 preauthentication integrity hash. No state outside the arguments
 * except a struct smb3_aead (one per user); all other functions are thread-safe. Return 0 or a negative
 * SMB3_E* code.
 */
#ifndef SMB3_CRYPTO_H
#define SMB3_CRYPTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Signing algorithms (MS-SMB2 2.2.3.1.7 SigningAlgorithm ids where they exist). */
enum smb3_sign_alg {
  SMB3_SIGN_HMAC_SHA256 = 100, /* SMB 2.0.2 / 2.1: HMAC-SHA256 truncated to 16 bytes */
  SMB3_SIGN_AES_CMAC = 1,      /* SMB 3.x: AES-128-CMAC */
  SMB3_SIGN_AES_GMAC = 2,      /* SMB 3.1.1 when negotiated: AES-128-GMAC */
};

/* Cipher ids as in MS-SMB2 2.2.3.1.2. */
enum smb3_cipher {
  SMB3_CIPHER_NONE = 0,
  SMB3_CIPHER_AES128_CCM = 1,
  SMB3_CIPHER_AES128_GCM = 2,
  SMB3_CIPHER_AES256_CCM = 3,
  SMB3_CIPHER_AES256_GCM = 4,
};

/* Key length in bytes of a cipher (16 or 32; 0 for NONE/unknown). */
size_t smb3_cipher_keylen(int cipher);
/* Nonce length used in the transform header: 11 for CCM, 12 for GCM; 0 if unknown. */
size_t smb3_cipher_noncelen(int cipher);

/* Compute the 16-byte signature of one SMB2 message (MS-SMB2 3.1.4.1).
 * iov[0..iovcnt) together are the whole message starting at the 64-byte SMB2 header; the
 * header's Signature field (bytes 48..63) must already be zero. For AES-GMAC the 12-byte nonce
 * is built from the header's MessageId and Flags (SERVER_TO_REDIR -> role bit, and the CANCEL
 * command -> cancel bit), so iov[0] must hold at least the first 64 bytes.
 * key: 16 bytes (HMAC-SHA256 uses the 16-byte session key). */
int smb3_sign(int alg, const uint8_t key[16], const struct iovec *iov, int iovcnt, uint8_t sig[16]);

/* SP800-108 counter-mode KDF with HMAC-SHA256, r=32, L = outlen*8 (MS-SMB2 3.1.4.2), via
 * OpenSSL's EVP_KDF "KBKDF". label/context include their terminating NULs as the spec says. */
int smb3_kdf(const uint8_t *key, size_t keylen, const void *label, size_t labellen, const void *context,
             size_t contextlen, uint8_t *out, size_t outlen);

/* SHA-512 preauth integrity hash step (MS-SMB2 3.2.5.2 / 3.3.5.4):
 * hash = SHA512(hash || message), where message is the whole SMB2 message (iov list). */
int smb3_preauth_update(uint8_t hash[64], const struct iovec *iov, int iovcnt);

/* AEAD encrypt in place (MS-SMB2 3.1.4.3). iov is the plaintext (the SMB2 message or compound),
 * encrypted in place; aad is the transform header from Nonce to the end (32 bytes, offset 20..51).
 * nonce has smb3_cipher_noncelen(cipher) bytes. tag receives the 16-byte signature. */
int smb3_encrypt(int cipher, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                 struct iovec *iov, int iovcnt, uint8_t tag[16]);

/* AEAD decrypt in place and verify tag; SMB3_ESIGNATURE if the tag does not match. */
int smb3_decrypt(int cipher, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                 uint8_t *buf, size_t len, const uint8_t tag[16]);

/* A cipher key set up once (for GCM the key schedule is computed here, not per message), then used
 * for one message at a time: begin (nonce, AAD, the message's length; tag: the expected tag, needed
 * up front when decrypting with CCM, else ignored), update over the message in order (out may be
 * in: in place), finish (encrypting: writes the tag; decrypting: checks it, SMB3_ESIGNATURE if it
 * does not match). GCM takes the data in any number of updates (smb3_aead_streams); CCM in exactly
 * one of the whole length. Not thread-safe: one context per direction and connection.
 * smb3_aead_new returns NULL for an unknown cipher or out of memory. */
struct smb3_aead;
struct smb3_aead *smb3_aead_new(int cipher, const uint8_t *key, int enc);
void smb3_aead_free(struct smb3_aead *a);
int smb3_aead_streams(const struct smb3_aead *a);
int smb3_aead_begin(struct smb3_aead *a, const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                    size_t total, const uint8_t *tag);
int smb3_aead_update(struct smb3_aead *a, uint8_t *out, const uint8_t *in, size_t len);
int smb3_aead_finish(struct smb3_aead *a, uint8_t tag[16]);

/* Primitives used by NTLMSSP (MD4/RC4 come from the legacy provider, loaded once into a private
 * OSSL_LIB_CTX so the application's default context is untouched). */
int smb3_md4(const void *data, size_t len, uint8_t out[16]);
int smb3_md5(const void *data, size_t len, uint8_t out[16]);
/* HMAC-MD5 over the concatenation of iov. */
int smb3_hmac_md5(const uint8_t *key, size_t keylen, const struct iovec *iov, int iovcnt, uint8_t out[16]);
/* RC4 (one-shot, in place or out of place). */
int smb3_rc4(const uint8_t *key, size_t keylen, const uint8_t *in, uint8_t *out, size_t len);
/* Cryptographically random bytes. */
int smb3_random(void *buf, size_t len);

#endif
