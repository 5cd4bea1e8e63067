/* fuzz_ioctl_rsp.c - libFuzzer target: MS-SMB2 2.2.32: IOCTL response, then its output as
 * VALIDATE_NEGOTIATE_INFO (2.2.32.6), a resume key (2.2.32.3), a COPYCHUNK response (2.2.32.1) and
 * allocated ranges (MS-FSCC 2.3.38). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_ioctl_rsp r;
  if (smb2_ioctl_rsp_decode(data, size, &r)) return 0;
  fuzz_check_in(r.output, r.output_len, data, size);
  struct smb2_validate_negotiate v;
  (void)smb2_validate_negotiate_decode(r.output, r.output_len, &v);
  uint8_t key[SMB2_RESUME_KEY_LEN];
  (void)smb2_resume_key_decode(r.output, r.output_len, key);
  struct smb2_copychunk_rsp c;
  (void)smb2_copychunk_rsp_decode(r.output, r.output_len, &c);
  struct smb2_range ranges[4];
  size_t n;
  (void)smb2_alloc_ranges_decode(r.output, r.output_len, ranges, 4, &n);
  return 0;
}
