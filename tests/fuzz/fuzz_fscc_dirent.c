/* fuzz_fscc_dirent.c - libFuzzer target: MS-FSCC 2.4.18: FileIdFullDirectoryInformation iteration, with
 * and without SFM's names (an odd first byte asks for them); every returned name is non-empty UTF-8
 * without NUL or slash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fscc/fscc.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_dir_iter it;
  struct fscc_dirent e;
  fscc_dir_iter_init(&it, data, size);
  it.sfm = size > 0 && (data[0] & 1);
  size_t n = 0;
  while (fscc_dir_next(&it, &e) > 0) {
    if (!e.name || !e.name_len || strlen(e.name) != e.name_len || strchr(e.name, '/')) abort();
    if (++n > size / 80 + 1) abort(); /* each entry takes at least 80 bytes */
  }
  fscc_dir_iter_free(&it);
  return 0;
}
