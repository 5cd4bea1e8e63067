/* fuzz_create_rsp.c - libFuzzer target: MS-SMB2 2.2.14 / 2.2.14.2: CREATE response and its create contexts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_create_rsp r;
  if (smb2_create_rsp_decode(data, size, &r)) return 0;
  if (r.lease.version < 0 || r.lease.version > 2) abort();
  return 0;
}
