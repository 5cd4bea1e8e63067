/* fuzz_reparse.c - libFuzzer target: reparse data buffers (MS-FSCC 2.1.2; FSCTL_GET_REPARSE_POINT
 * output): a decoded symlink target is a NUL-terminated string without NUL inside and '\\'. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fscc/fscc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_reparse r;
  int rc = fscc_reparse_decode(data, size, &r);
  if (rc && r.target) abort();
  if (r.target) {
    if (!r.target[0] || strchr(r.target, '\\')) abort();
    free(r.target);
  }
  return 0;
}
