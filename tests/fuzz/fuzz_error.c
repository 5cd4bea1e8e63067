/* fuzz_error.c - libFuzzer target: MS-SMB2 2.2.2: ERROR response. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_error_rsp e;
  if (smb2_error_rsp_decode(data, size, &e)) return 0;
  fuzz_check_in(e.data, e.byte_count, data, size);
  return 0;
}
