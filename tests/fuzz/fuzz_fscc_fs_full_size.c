/* fuzz_fscc_fs_full_size.c - libFuzzer target: MS-FSCC 2.5.4: FileFsFullSizeInformation. */
#include <stddef.h>
#include <stdint.h>

#include "fscc/fscc.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_fs_full_size fs;
  (void)fscc_fs_full_size_decode(data, size, &fs);
  return 0;
}
