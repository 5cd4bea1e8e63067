/* fuzz_fscc_all_info.c - libFuzzer target: MS-FSCC 2.4.2: FileAllInformation. */
#include <stddef.h>
#include <stdint.h>

#include "fscc/fscc.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_stat st;
  (void)fscc_all_info_decode(data, size, &st);
  return 0;
}
