/* fuzz_copychunk.c - libFuzzer target: IOCTL outputs on their own: the SRV_REQUEST_RESUME_KEY output
 * (MS-SMB2 2.2.32.3), SRV_COPYCHUNK_RESPONSE (2.2.32.1) and QUERY_ALLOCATED_RANGES (MS-FSCC 2.3.38). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t key[SMB2_RESUME_KEY_LEN];
  (void)smb2_resume_key_decode(data, size, key);
  struct smb2_copychunk_rsp r;
  (void)smb2_copychunk_rsp_decode(data, size, &r);
  struct smb2_range ranges[4];
  size_t n;
  if (!smb2_alloc_ranges_decode(data, size, ranges, 4, &n))
    for (size_t i = 1; i < n; i++)
      if (ranges[i].off < ranges[i - 1].off + ranges[i - 1].len) __builtin_trap(); /* must be refused */
  return 0;
}
