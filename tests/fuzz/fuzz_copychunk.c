/* fuzz_copychunk.c - libFuzzer target: the server-side copy outputs on their own: the
 * SRV_REQUEST_RESUME_KEY output (MS-SMB2 2.2.32.3) and SRV_COPYCHUNK_RESPONSE (2.2.32.1). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t key[SMB2_RESUME_KEY_LEN];
  (void)smb2_resume_key_decode(data, size, key);
  struct smb2_copychunk_rsp r;
  (void)smb2_copychunk_rsp_decode(data, size, &r);
  return 0;
}
