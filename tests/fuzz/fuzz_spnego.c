/* fuzz_spnego - the SPNEGO decoders (RFC 4178 NegTokenInit/NegTokenInit2/NegTokenResp) and the
 * smb3_auth state machine fed with the input as the NEGOTIATE hint, as the server's
 * challenge token and as its final token. */
#include <stdint.h>
#include <stdlib.h>

#include "auth/auth.h"
#include "auth/spnego.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct spnego_init init;
  struct spnego_resp resp;
  (void)spnego_decode_init(data, size, &init);
  (void)spnego_decode_resp(data, size, &resp);

  struct smb3_auth *a = smb3_auth_new("User", "Password", "Domain", NULL);
  uint8_t *out = NULL, key[16];
  size_t outlen = 0;
  if (a) {
    if (smb3_auth_step(a, data, size, &out, &outlen) == 0) { /* as the NEGOTIATE hint */
      free(out);
      out = NULL;
      if (smb3_auth_step(a, data, size, &out, &outlen) == 0) /* as the CHALLENGE token */
        (void)smb3_auth_finish(a, data, size);
    }
    free(out);
    out = NULL;
    smb3_auth_free(a);
  }
  a = smb3_auth_new("User", "Password", "Domain", NULL);
  if (a) {
    if (smb3_auth_step(a, NULL, 0, &out, &outlen) == 0) {
      free(out);
      out = NULL;
      if (smb3_auth_step(a, data, size, &out, &outlen) == 0 && smb3_auth_finish(a, data, size) == 0)
        (void)smb3_auth_session_key(a, key);
    }
    free(out);
    smb3_auth_free(a);
  }
  return 0;
}
