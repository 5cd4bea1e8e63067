/* fuzz_dfs_referral.c - libFuzzer target: what a hostile server can put in the output of
 * FSCTL_DFS_GET_REFERRALS (MS-DFSC 2.2.4 RESP_GET_DFS_REFERRAL, v1..v4 entries). Seeds: Samba
 * 4.17's answers for a link to another share, a link with a dead first target, a link to itself
 * and the root (captured with tshark from smb3 stat on the harness's msdfs root share). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct smb2_dfs_referral r;
  if (smb2_dfs_referral_decode(data, size, &r) == 0) {
    if (r.n < 1 || r.n > DFS_REFERRAL_MAX || r.version < 1 || r.version > 4) abort();
    for (int i = 0; i < r.n; i++)
      if (!r.t[i].path || !r.t[i].address || strlen(r.t[i].address) > 3 * size) abort();
    smb2_dfs_referral_free(&r);
  } else if (r.n) {
    abort(); /* a failed decode holds nothing */
  }
  return 0;
}
