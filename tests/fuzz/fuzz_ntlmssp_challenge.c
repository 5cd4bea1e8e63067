/* fuzz_ntlmssp_challenge - the NTLMSSP CHALLENGE_MESSAGE decoder (MS-NLMP 2.2.1.2) and the
 * AUTHENTICATE builder that consumes it, for a named and an anonymous user. Deterministic
 * client values keep runs reproducible. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/ntlmssp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct ntlmssp_challenge c;
  if (ntlmssp_parse_challenge(data, size, &c) == 0 && c.target_info_len) {
    const uint8_t *v;
    size_t vlen;
    (void)ntlmssp_av_find(c.target_info, c.target_info_len, MSV_AV_NB_DOMAIN_NAME, &v, &vlen);
  }
  for (int anon = 0; anon < 2; anon++) {
    struct ntlmssp n;
    uint8_t *neg = NULL, *auth = NULL;
    size_t neglen = 0, authlen = 0;
    if (ntlmssp_init(&n, anon ? "" : "User", "Password", "Domain", "WS") < 0) continue;
    n.fixed = 1;
    memset(n.fixed_client_challenge, 0xaa, 8);
    memset(n.fixed_session_key, 0x55, 16);
    if (ntlmssp_negotiate(&n, &neg, &neglen) == 0 &&
        ntlmssp_authenticate(&n, data, size, &auth, &authlen) == 0) {
      uint8_t sig[16];
      if (n.have_key && ntlmssp_sign_first(&n, data, size, sig) == 0)
        (void)ntlmssp_verify_first(&n, data, size, sig, sizeof sig);
    }
    free(neg);
    free(auth);
    ntlmssp_clear(&n);
  }
  return 0;
}
