/* sign.c - SMB2 message signing (MS-SMB2 3.1.4.1 signing, 3.1.5.1 verifying).
 *
 * The signature is one MAC over the whole message (header with a zeroed Signature field, then
 * the payload, plus any compound padding) as the caller lays it out in iov. Verifying is the
 * same computation followed by a constant-time compare, so it lives with the caller.
 */
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <string.h>

#include "crypto/crypto.h"
#include "crypto/crypto_int.h"
#include "smb3/smb3_errors.h"

/* SMB2 header fields the GMAC nonce needs (MS-SMB2 2.2.1). */
#define HDR_LEN 64
#define HDR_OFF_COMMAND 12
#define HDR_OFF_FLAGS 16
#define HDR_OFF_MESSAGE_ID 24
#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001u
#define SMB2_CANCEL 0x000C

#define GMAC_NONCE_ROLE_SERVER 0x1u /* least significant bit: sent by the server */
#define GMAC_NONCE_CANCEL 0x2u      /* penultimate bit: SMB2 CANCEL request */

static uint32_t rd_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* MS-SMB2 3.1.4.1: the 12-byte AES-GMAC nonce is MessageId (8 bytes, as on the wire, i.e.
 * little-endian) followed by a 32-bit little-endian word whose bit 0 is the sender's role
 * (1 = server) and bit 1 marks an SMB2 CANCEL request. The role comes from the header's
 * SERVER_TO_REDIR flag, which every server-sent message (responses and oplock/lease breaks)
 * carries, so the same function serves signing and verifying on either side. */
static void gmac_nonce(const uint8_t *hdr, uint8_t nonce[12]) {
  uint32_t flags = rd_le32(hdr + HDR_OFF_FLAGS);
  uint16_t cmd = (uint16_t)(hdr[HDR_OFF_COMMAND] | hdr[HDR_OFF_COMMAND + 1] << 8);
  uint32_t word = 0;
  if (flags & SMB2_FLAGS_SERVER_TO_REDIR)
    word |= GMAC_NONCE_ROLE_SERVER;
  else if (cmd == SMB2_CANCEL)
    word |= GMAC_NONCE_CANCEL;
  memcpy(nonce, hdr + HDR_OFF_MESSAGE_ID, 8);
  for (int i = 0; i < 4; i++)
    nonce[8 + i] = (uint8_t)(word >> (8 * i));
}

/* SMB 2.0.2 / 2.1: HMAC-SHA256 over the message keyed with the session key, first 16 bytes. */
static int sign_hmac_sha256(const struct crypto_algs *a, const uint8_t key[16], const struct iovec *iov,
                            int iovcnt, uint8_t sig[16]) {
  OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0), OSSL_PARAM_END};
  return crypto_mac_iov(a->hmac, p, key, 16, iov, iovcnt, sig, 16);
}

/* SMB 3.x: AES-128-CMAC (RFC 4493). */
static int sign_cmac(const struct crypto_algs *a, const uint8_t key[16], const struct iovec *iov, int iovcnt,
                     uint8_t sig[16]) {
  OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, "AES-128-CBC", 0),
                    OSSL_PARAM_END};
  return crypto_mac_iov(a->cmac, p, key, 16, iov, iovcnt, sig, 16);
}

/* SMB 3.1.1 with SMB2_SIGNING_CAPABILITIES: AES-128-GMAC (RFC 4543), i.e. GCM with the whole
 * message as AAD and no plaintext; the tag is the signature. */
static int sign_gmac(const struct crypto_algs *a, const uint8_t key[16], const struct iovec *iov, int iovcnt,
                     uint8_t sig[16]) {
  uint8_t nonce[12];
  if (iovcnt < 1 || iov[0].iov_len < HDR_LEN) return SMB3_EINVAL;
  gmac_nonce(iov[0].iov_base, nonce);
  OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, "AES-128-GCM", 0),
                    OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV, nonce, sizeof(nonce)),
                    OSSL_PARAM_END};
  return crypto_mac_iov(a->gmac, p, key, 16, iov, iovcnt, sig, 16);
}

int smb3_sign(int alg, const uint8_t key[16], const struct iovec *iov, int iovcnt, uint8_t sig[16]) {
  if (key == NULL || sig == NULL || !crypto_iov_ok(iov, iovcnt)) return SMB3_EINVAL;
  const struct crypto_algs *a = crypto_algs();
  if (a == NULL) return SMB3_EIO;
  switch (alg) {
  case SMB3_SIGN_HMAC_SHA256:
    return sign_hmac_sha256(a, key, iov, iovcnt, sig);
  case SMB3_SIGN_AES_CMAC:
    return sign_cmac(a, key, iov, iovcnt, sig);
  case SMB3_SIGN_AES_GMAC:
    return sign_gmac(a, key, iov, iovcnt, sig);
  default:
    return SMB3_EINVAL;
  }
}
