/* fuzz_fscc_network_open_info.c - libFuzzer target: MS-FSCC 2.4.29: FileNetworkOpenInformation. */
#include <stddef.h>
#include <stdint.h>

#include "fscc/fscc.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_stat st;
  (void)fscc_network_open_info_decode(data, size, &st);
  return 0;
}
