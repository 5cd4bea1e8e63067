/* fuzz_query_dir_rsp.c - libFuzzer target: MS-SMB2 2.2.34: QUERY_DIRECTORY response. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_query_dir_rsp r;
  if (smb2_query_dir_rsp_decode(data, size, &r)) return 0;
  fuzz_check_in(r.buf, r.len, data, size);
  return 0;
}
