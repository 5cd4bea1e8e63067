/* fuzz_mfsymlink.c - libFuzzer target: a Minshall+French symlink file's content (file data from
 * the server, read by smb3fs -o mfsymlinks). A parsed target must be as long as returned, inside
 * the limit, and format back to the same bytes' header. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "smb3/smb3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char t[SMB3_MFSYMLINK_MAX + 1];
  int n = smb3_mfsymlink_parse(data, size, t);
  if (n < 0) return 0;
  if (n == 0 || n > SMB3_MFSYMLINK_MAX || strlen(t) != (size_t)n) abort();
  uint8_t again[SMB3_MFSYMLINK_SIZE];
  if (smb3_mfsymlink_format(t, again) || memcmp(again, data, 43 + (size_t)n)) abort();
  return 0;
}
