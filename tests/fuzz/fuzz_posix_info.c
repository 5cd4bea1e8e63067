/* fuzz_posix_info.c - libFuzzer target: Samba's SMB3 POSIX information (QUERY_INFO class 100) and the
 * POSIX create context's response data (smb3_posix_cc_info): a decode either fails or reports
 * lengths inside the input and a mode whose type is one of the seven (or none). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fscc/fscc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fscc_stat st;
  size_t used = 0;
  if (!fscc_posix_info_decode_len(data, size, &st, &used) && (used > size || !st.posix)) abort();
  struct fscc_posix_cc cc;
  if (!fscc_posix_cc_decode(data, size, &cc, &used) && used > size) abort();
  struct fscc_sid sid;
  if (!fscc_sid_decode(data, size, &sid, &used) && (used > size || sid.nsub > FSCC_SID_MAX_SUB)) abort();
  return 0;
}
