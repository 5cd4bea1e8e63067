/* dirent.c - iterating a QUERY_DIRECTORY output buffer of FileIdFullDirectoryInformation
 * entries (MS-FSCC 2.4.18; 2.4.23 in newer revisions), or of Samba's POSIX entries. */
#include <stdlib.h>
#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "util/utf16.h"

#define DIRENT_FIXED 80 /* everything before FileName */

void fscc_dir_iter_init(struct fscc_dir_iter *it, const uint8_t *buf, size_t len) {
  it->posix = 0;
  it->sfm = 0;
  it->buf = buf;
  it->len = buf ? len : 0;
  it->off = 0;
  it->done = it->len == 0;
  it->name = NULL;
}

void fscc_dir_iter_init_posix(struct fscc_dir_iter *it, const uint8_t *buf, size_t len) {
  fscc_dir_iter_init(it, buf, len);
  it->posix = 1;
}

void fscc_dir_iter_free(struct fscc_dir_iter *it) {
  free(it->name);
  it->name = NULL;
}

/* Fixed part of the entry at it->off (bounds already checked); returns NextEntryOffset. */
static uint32_t dirent_fixed(const uint8_t *p, struct fscc_dirent *e, uint32_t *name_len) {
  struct le_rd r;
  le_rd_init(&r, p, DIRENT_FIXED);
  uint32_t next = le_u32(&r);
  le_skip(&r, 4); /* FileIndex: meaningless on most file systems */
  e->st.creation_time = le_u64(&r);
  e->st.last_access_time = le_u64(&r);
  e->st.last_write_time = le_u64(&r);
  e->st.change_time = le_u64(&r);
  e->st.end_of_file = le_u64(&r); /* EndOfFile precedes AllocationSize in directory classes */
  e->st.allocation_size = le_u64(&r);
  e->st.attributes = le_u32(&r);
  *name_len = le_u32(&r);
  le_skip(&r, 8); /* EaSize, Reserved */
  e->st.file_id = le_u64(&r);
  return next;
}

/* A name we can hand to a POSIX caller: non-empty UTF-16, no NUL and no '/'. */
static int dirent_name(struct fscc_dir_iter *it, const uint8_t *p, uint32_t n, struct fscc_dirent *e) {
  size_t ulen;
  if (n == 0 || smb3_utf16le_to_utf8(p, n, &it->name, &ulen)) return SMB3_EPROTO;
  if (it->sfm && !it->posix) ulen = smb3_sfm_unmap(it->name, ulen);
  if (memchr(it->name, '\0', ulen) || memchr(it->name, '/', ulen)) return SMB3_EPROTO;
  e->name = it->name;
  e->name_len = ulen;
  return 0;
}

/* An SMB2_FIND_POSIX_INFORMATION entry (Samba source3/smbd/smb2_trans2.c smbd_marshall_dir_entry):
 * NextEntryOffset, FileIndex, the POSIX information (variable: two SIDs), FileNameLength, FileName.
 * Returns NextEntryOffset; *name_off is where the name starts. */
#define POSIX_DIRENT_HEAD 8
static int dirent_posix_fixed(const uint8_t *p, size_t avail, struct fscc_dirent *e, uint32_t *next,
                              uint32_t *name_len, size_t *name_off) {
  size_t used;
  if (avail < POSIX_DIRENT_HEAD) return SMB3_EPROTO;
  *next = le32_at(p);
  if (fscc_posix_info_decode_len(p + POSIX_DIRENT_HEAD, avail - POSIX_DIRENT_HEAD, &e->st, &used))
    return SMB3_EPROTO;
  size_t at = POSIX_DIRENT_HEAD + used;
  if (!le_range_ok(at, 4, avail)) return SMB3_EPROTO;
  *name_len = le32_at(p + at);
  *name_off = at + 4;
  return 0;
}

/* Entries are chained by NextEntryOffset (0 ends the chain). Each must fit in the buffer,
 * and the next one must start after this one's name; 2.4.18 says entries are 8-byte aligned,
 * but an unaligned in-bounds offset is tolerated. Any violation ends the iteration. */
int fscc_dir_next(struct fscc_dir_iter *it, struct fscc_dirent *e) {
  memset(e, 0, sizeof *e);
  fscc_dir_iter_free(it);
  if (it->done) return 0;
  it->done = 1; /* until this entry proves good */
  if (it->off >= it->len) return SMB3_EPROTO;
  const uint8_t *p = it->buf + it->off;
  uint32_t name_len, next;
  size_t name_off = DIRENT_FIXED;
  if (it->posix) {
    if (dirent_posix_fixed(p, it->len - it->off, e, &next, &name_len, &name_off)) {
      memset(e, 0, sizeof *e);
      return SMB3_EPROTO;
    }
  } else {
    if (!le_range_ok(it->off, DIRENT_FIXED, it->len)) return SMB3_EPROTO;
    next = dirent_fixed(p, e, &name_len);
  }
  if (!le_range_ok(it->off + name_off, name_len, it->len)) goto bad;
  if (next && (next < name_off + (uint64_t)name_len || !le_range_ok(it->off, next, it->len - 1))) goto bad;
  int rc = dirent_name(it, p + name_off, name_len, e);
  if (rc) {
    fscc_dir_iter_free(it);
    memset(e, 0, sizeof *e);
    return rc;
  }
  if (next) {
    it->off += next;
    it->done = 0;
  }
  return 1;
bad:
  memset(e, 0, sizeof *e);
  return SMB3_EPROTO;
}
