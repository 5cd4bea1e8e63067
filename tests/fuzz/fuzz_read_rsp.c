/* fuzz_read_rsp.c - libFuzzer target: MS-SMB2 2.2.20: READ response (whole message in memory). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_read_rsp r;
  if (smb2_read_rsp_decode(data, size, &r)) return 0;
  fuzz_check_in(r.data, r.data_length, data, size);
  if (r.data_length && r.data_offset < SMB2_HDR_LEN + SMB2_READ_RSP_FIXED) abort();
  return 0;
}
