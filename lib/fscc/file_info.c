/* file_info.c - MS-FSCC 2.4 file information classes for QUERY_INFO / SET_INFO: the decoders
 * for FileAllInformation and FileNetworkOpenInformation and the encoders for the SET_INFO
 * classes (Basic, EndOfFile, Disposition, Rename). Section numbers follow the MS-FSCC revision
 * the header cites; newer revisions renumbered some (noted where so). */
#include <stdlib.h>
#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "util/utf16.h"

#define FSCC_ALL_INFO_FIXED 100  /* 40 + 24 + 8 + 4 + 4 + 8 + 4 + 4 + FileNameLength(4) */
#define FSCC_NETWORK_OPEN_LEN 56 /* 2.4.29 */
#define FSCC_BASIC_LEN 40        /* 2.4.7 */
#define FSCC_RENAME_FIXED 20     /* 2.4.37.2 (2.4.42.2 in newer revisions) */
#define FSCC_RENAME_MIN 24       /* sizeof(FILE_RENAME_INFORMATION) on Windows */

/* The four FILETIMEs every class starts with, in the order Creation, LastAccess, LastWrite, Change. */
static void get_times(struct le_rd *r, struct fscc_stat *st) {
  st->creation_time = le_u64(r);
  st->last_access_time = le_u64(r);
  st->last_write_time = le_u64(r);
  st->change_time = le_u64(r);
}

/* 2.4.2: FileBasicInformation (2.4.7, 40 bytes incl. 4 reserved), FileStandardInformation
 * (2.4.38, 24), FileInternalInformation (2.4.20, 8), FileEaInformation (4), FileAccessInformation
 * (4), FilePositionInformation (8), FileModeInformation (4), FileAlignmentInformation (4),
 * FileNameInformation (4 + N). The name is not used and is not checked: with
 * STATUS_BUFFER_OVERFLOW the server cuts it short, and the fixed part is all we need. */
int fscc_all_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st) {
  memset(st, 0, sizeof *st);
  if (len < FSCC_ALL_INFO_FIXED) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  get_times(&r, st);
  st->attributes = le_u32(&r);
  le_skip(&r, 4); /* Basic: Reserved */
  st->allocation_size = le_u64(&r);
  st->end_of_file = le_u64(&r);
  st->nlink = le_u32(&r);
  st->delete_pending = le_u8(&r) != 0;
  le_skip(&r, 3); /* Standard: Directory, Reserved */
  st->file_id = le_u64(&r);
  le_skip(&r, 4 + 4 + 8 + 4 + 4 + 4); /* EA, Access, Position, Mode, Alignment, FileNameLength */
  return r.err ? SMB3_EPROTO : 0;
}

/* 2.4.29: Creation/LastAccess/LastWrite/Change, AllocationSize, EndOfFile, FileAttributes,
 * Reserved. */
int fscc_network_open_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st) {
  memset(st, 0, sizeof *st);
  if (len < FSCC_NETWORK_OPEN_LEN) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, len);
  get_times(&r, st);
  st->allocation_size = le_u64(&r);
  st->end_of_file = le_u64(&r);
  st->attributes = le_u32(&r);
  return r.err ? SMB3_EPROTO : 0;
}

static int wr_result(const struct le_wr *w) {
  return w->err ? SMB3_EINVAL : (int)w->off;
}

/* 2.4.7: a time of 0 (and FileAttributes 0) tells the server to leave that field alone. */
int fscc_basic_info_encode(uint8_t *out, size_t cap, uint64_t ctime, uint64_t atime, uint64_t mtime,
                           uint64_t chtime, uint32_t attributes) {
  struct le_wr w;
  le_wr_init(&w, out, cap);
  le_put_u64(&w, ctime);
  le_put_u64(&w, atime);
  le_put_u64(&w, mtime);
  le_put_u64(&w, chtime);
  le_put_u32(&w, attributes);
  le_put_u32(&w, 0); /* Reserved */
  return wr_result(&w);
}

/* 2.4.14 (2.4.16 in newer revisions). */
int fscc_eof_info_encode(uint8_t *out, size_t cap, uint64_t eof) {
  struct le_wr w;
  le_wr_init(&w, out, cap);
  le_put_u64(&w, eof);
  return wr_result(&w);
}

/* 2.4.11 (2.4.13 in newer revisions): one BOOLEAN. */
int fscc_disposition_info_encode(uint8_t *out, size_t cap, int delete_pending) {
  struct le_wr w;
  le_wr_init(&w, out, cap);
  le_put_u8(&w, delete_pending ? 1 : 0);
  return wr_result(&w);
}

/* 2.4.37.2: ReplaceIfExists, Reserved(7), RootDirectory(8) = 0, FileNameLength, FileName. FileLinkInformation
 * (2.4.27.2, FILE_LINK_INFORMATION_TYPE_2) has the same layout.
 * The name is relative to the share root ('/' -> '\\', leading separators dropped; with posix_paths,
 * a rename on a handle of a POSIX CREATE, '/' is the separator Samba parses and '\\' a character). After it
 * we add a UTF-16 NUL that FileNameLength does not count, as cifs.ko does, which also keeps
 * the buffer at least sizeof(FILE_RENAME_INFORMATION) = 24 bytes as Windows requires. */
int fscc_rename_info_encode(uint8_t *out, size_t cap, int replace, int names, const char *new_name) {
  int posix_paths = names & FSCC_NAMES_POSIX;
  if (!new_name) return SMB3_EINVAL;
  while (*new_name == '/' || (!posix_paths && *new_name == '\\'))
    new_name++;
  uint8_t *u;
  size_t n;
  if (!*new_name || smb3_utf8_to_utf16le(new_name, strlen(new_name), &u, &n)) return SMB3_EINVAL;
  for (size_t i = 0; !posix_paths && i + 1 < n; i += 2)
    if (u[i] == '/' && u[i + 1] == 0) u[i] = '\\';
  if (!posix_paths && (names & FSCC_NAMES_SFM)) smb3_sfm_map(u, n);
  struct le_wr w;
  le_wr_init(&w, out, cap);
  le_put_u8(&w, replace ? 1 : 0);
  le_put_zero(&w, 7);
  le_put_u64(&w, 0); /* RootDirectory: MUST be 0 for network operations */
  le_put_u32(&w, (uint32_t)n);
  le_put_bytes(&w, u, n);
  le_put_u16(&w, 0); /* terminator, not counted */
  free(u);
  while (!w.err && w.off < FSCC_RENAME_MIN)
    le_put_u8(&w, 0);
  return wr_result(&w);
}
