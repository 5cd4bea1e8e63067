/* fuzz_session_setup_rsp.c - libFuzzer target: MS-SMB2 2.2.6: SESSION_SETUP response. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_session_setup_rsp r;
  if (smb2_session_setup_rsp_decode(data, size, &r)) return 0;
  fuzz_check_in(r.sec_buf, r.sec_len, data, size);
  return 0;
}
