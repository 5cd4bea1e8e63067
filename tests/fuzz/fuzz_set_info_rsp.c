/* fuzz_set_info_rsp.c - libFuzzer target: MS-SMB2 2.2.40: SET_INFO response. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)smb2_set_info_rsp_decode(data, size);
  return 0;
}
