/* fuzz_validate_negotiate.c - libFuzzer target: MS-SMB2 2.2.32.6: VALIDATE_NEGOTIATE_INFO output buffer on
 * its own. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_validate_negotiate v;
  (void)smb2_validate_negotiate_decode(data, size, &v);
  return 0;
}
