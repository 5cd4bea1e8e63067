/* fuzz_simple_rsp.c - libFuzzer target: MS-SMB2 2.2.8 / 2.2.12 / 2.2.29: the 4-byte responses. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)smb2_simple_rsp_decode(data, size);
  return 0;
}
