/* fuzz_read_rsp_head.c - libFuzzer target: MS-SMB2 2.2.20: READ response head for zero-copy receive. The
 * first 4 input bytes are the frame length the transport would report; the rest is what is in memory. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "util/le.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  size_t msg_len = le32_at(data);
  const uint8_t *head = data + 4;
  size_t head_len = size - 4;
  struct smb2_read_rsp r;
  if (smb2_read_rsp_decode_head(head, head_len, msg_len, &r)) return 0;
  if (head_len < SMB2_HDR_LEN + SMB2_READ_RSP_FIXED || head_len > msg_len) abort();
  if (r.data_length && (r.data_offset < SMB2_HDR_LEN + SMB2_READ_RSP_FIXED ||
                        (uint64_t)r.data_offset + r.data_length > msg_len))
    abort();
  if (r.data) fuzz_check_in(r.data, r.data_length, head, head_len); /* NULL: data not in memory yet */
  return 0;
}
