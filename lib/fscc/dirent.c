/* dirent.c - iterating a QUERY_DIRECTORY output buffer of FileIdFullDirectoryInformation
 * entries (MS-FSCC 2.4.18; 2.4.23 in newer revisions). */
#include <stdlib.h>
#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "util/utf16.h"

#define DIRENT_FIXED 80 /* everything before FileName */

void fscc_dir_iter_init(struct fscc_dir_iter *it, const uint8_t *buf, size_t len) {
  it->buf = buf;
  it->len = buf ? len : 0;
  it->off = 0;
  it->done = it->len == 0;
  it->name = NULL;
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
  if (memchr(it->name, '\0', ulen) || memchr(it->name, '/', ulen)) return SMB3_EPROTO;
  e->name = it->name;
  e->name_len = ulen;
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
  if (!le_range_ok(it->off, DIRENT_FIXED, it->len)) return SMB3_EPROTO;
  const uint8_t *p = it->buf + it->off;
  uint32_t name_len;
  uint32_t next = dirent_fixed(p, e, &name_len);
  if (!le_range_ok(it->off + DIRENT_FIXED, name_len, it->len)) return SMB3_EPROTO;
  if (next && (next < DIRENT_FIXED + (uint64_t)name_len || !le_range_ok(it->off, next, it->len - 1)))
    return SMB3_EPROTO;
  int rc = dirent_name(it, p + DIRENT_FIXED, name_len, e);
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
}
