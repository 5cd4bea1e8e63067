/* fuzz_posix_dirent.c - libFuzzer target: a QUERY_DIRECTORY buffer of SMB2_FIND_POSIX_INFORMATION
 * entries; every name handed out is non-empty, without '/' or NUL, and the walk ends. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fscc/fscc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_dir_iter it;
  struct fscc_dirent e;
  size_t n = 0;
  fscc_dir_iter_init_posix(&it, data, size);
  while (fscc_dir_next(&it, &e) > 0) {
    if (!e.name_len || strlen(e.name) != e.name_len || memchr(e.name, '/', e.name_len)) abort();
    if (++n > size) abort(); /* each entry takes at least one byte of the input */
  }
  fscc_dir_iter_free(&it);
  return 0;
}
