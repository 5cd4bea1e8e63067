/* fuzz_hdr.c - libFuzzer target: MS-SMB2 2.2.1: header decode; a decoded header re-encodes to the same 64
 * bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_hdr h;
  if (smb2_hdr_decode(data, size, &h)) return 0;
  uint8_t out[SMB2_HDR_LEN];
  smb2_hdr_encode(&h, out);
  if (memcmp(out, data, SMB2_HDR_LEN)) abort();
  return 0;
}
