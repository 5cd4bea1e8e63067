/* fuzz_transform.c - libFuzzer target: MS-SMB2 2.2.41: transform header decode; fields re-encode identically.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_transform_hdr t;
  if (smb2_transform_hdr_decode(data, size, &t)) return 0;
  if (t.orig_msg_size != size - SMB2_TRANSFORM_HDR_LEN) abort();
  uint8_t out[SMB2_TRANSFORM_HDR_LEN];
  smb2_transform_hdr_encode(&t, out);
  if (memcmp(out, data, 40) || memcmp(out + 42, data + 42, 10)) abort(); /* all but Reserved */
  return 0;
}
