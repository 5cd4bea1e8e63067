/* fuzz_tree_connect_rsp.c - libFuzzer target: MS-SMB2 2.2.10: TREE_CONNECT response. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_tree_connect_rsp r;
  (void)smb2_tree_connect_rsp_decode(data, size, &r);
  return 0;
}
