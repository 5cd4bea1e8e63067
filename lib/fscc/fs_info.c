/* fs_info.c - MS-FSCC 2.5 file system information classes (QUERY_INFO SMB2_0_INFO_FILESYSTEM). */
#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"

#define FSCC_FS_FULL_SIZE_LEN 32

/* 2.5.4: TotalAllocationUnits, CallerAvailableAllocationUnits, ActualAvailableAllocationUnits,
 * SectorsPerAllocationUnit, BytesPerSector. */
int fscc_fs_full_size_decode(const uint8_t *p, size_t len, struct fscc_fs_full_size *fs) {
  memset(fs, 0, sizeof *fs);
  if (len < FSCC_FS_FULL_SIZE_LEN) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  fs->total_units = le_u64(&r);
  fs->caller_available_units = le_u64(&r);
  fs->actual_available_units = le_u64(&r);
  fs->sectors_per_unit = le_u32(&r);
  fs->bytes_per_sector = le_u32(&r);
  return r.err ? SMB3_EPROTO : 0;
}
