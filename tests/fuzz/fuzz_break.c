/* fuzz_break.c - libFuzzer target: MS-SMB2 2.2.23.1 / 2.2.23.2 / 2.2.25.x: oplock and lease break messages.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_break b;
  if (smb2_break_decode(data, size, &b)) return 0;
  if (b.is_lease != 0 && b.is_lease != 1) abort();
  return 0;
}
