/* fscc.h - MS-FSCC information classes used by QUERY_INFO / SET_INFO / QUERY_DIRECTORY.
 * Decoders are bounds-checked and return 0 or SMB3_EPROTO; encoders return the number of bytes
 * written or SMB3_EINVAL on overflow. */
#ifndef SMB3_FSCC_H
#define SMB3_FSCC_H

#include <stddef.h>
#include <stdint.h>

/* File information classes (MS-FSCC 2.4) */
enum fscc_file_class {
  FSCC_FILE_DIRECTORY_INFORMATION = 1,
  FSCC_FILE_FULL_DIRECTORY_INFORMATION = 2,
  FSCC_FILE_BOTH_DIRECTORY_INFORMATION = 3,
  FSCC_FILE_BASIC_INFORMATION = 4,
  FSCC_FILE_STANDARD_INFORMATION = 5,
  FSCC_FILE_INTERNAL_INFORMATION = 6,
  FSCC_FILE_EA_INFORMATION = 7,
  FSCC_FILE_RENAME_INFORMATION = 10,
  FSCC_FILE_LINK_INFORMATION = 11,
  FSCC_FILE_NAMES_INFORMATION = 12,
  FSCC_FILE_DISPOSITION_INFORMATION = 13,
  FSCC_FILE_FULL_EA_INFORMATION = 15,
  FSCC_FILE_ALL_INFORMATION = 18,
  FSCC_FILE_ALLOCATION_INFORMATION = 19,
  FSCC_FILE_END_OF_FILE_INFORMATION = 20,
  FSCC_FILE_NETWORK_OPEN_INFORMATION = 34,
  FSCC_FILE_ID_BOTH_DIRECTORY_INFORMATION = 37,
  FSCC_FILE_ID_FULL_DIRECTORY_INFORMATION = 38,
};
/* File system information classes (MS-FSCC 2.5) */
enum fscc_fs_class {
  FSCC_FS_VOLUME_INFORMATION = 1,
  FSCC_FS_SIZE_INFORMATION = 3,
  FSCC_FS_DEVICE_INFORMATION = 4,
  FSCC_FS_ATTRIBUTE_INFORMATION = 5,
  FSCC_FS_FULL_SIZE_INFORMATION = 7,
};

/* The attributes every stat-like call returns (times are FILETIME: 100 ns since 1601). */
struct fscc_stat {
  uint64_t creation_time, last_access_time, last_write_time, change_time;
  uint64_t allocation_size;
  uint64_t end_of_file;
  uint32_t attributes;
  uint64_t file_id; /* IndexNumber (FileInternalInformation / FileIdFullDirectoryInformation) */
  uint32_t nlink;   /* NumberOfLinks (FileStandardInformation), 0 if unknown */
  int delete_pending;
};

/* FileAllInformation (2.4.2): Basic + Standard + Internal + EA + Access + Position + Mode +
 * Alignment + Name. Fills st (name ignored). */
int fscc_all_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st);
/* FileNetworkOpenInformation (2.4.29). file_id and nlink left 0. */
int fscc_network_open_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st);
/* FileBasicInformation (2.4.7) encode: times 0 = "don't change", attributes 0 = "don't change". */
int fscc_basic_info_encode(uint8_t *out, size_t cap, uint64_t ctime, uint64_t atime, uint64_t mtime,
                           uint64_t chtime, uint32_t attributes);
/* FileEndOfFileInformation (2.4.14). */
int fscc_eof_info_encode(uint8_t *out, size_t cap, uint64_t eof);
/* FileDispositionInformation (2.4.11). */
int fscc_disposition_info_encode(uint8_t *out, size_t cap, int delete_pending);
/* FileRenameInformation for SMB2 (2.4.37.2): ReplaceIfExists, RootDirectory=0, UTF-16 name
 * (path relative to the share root, '/' converted to '\\'). Returns bytes written. */
int fscc_rename_info_encode(uint8_t *out, size_t cap, int replace, const char *new_name);
/* FILE_FULL_EA_INFORMATION (2.4.15): extended attributes. The decoder checks every entry (header,
 * name with its NUL, value, NextEntryOffset inside the buffer and past the entry) before the first
 * callback; cb gets each in order (name NUL-terminated in place); a non-zero return stops it. The
 * encoder writes one entry: a value of length 0 removes the attribute (that is how SMB says it). */
struct fscc_ea {
  const char *name;
  size_t name_len;
  const uint8_t *value;
  size_t value_len;
};
int fscc_ea_list_decode(const uint8_t *p, size_t len, int (*cb)(const struct fscc_ea *ea, void *arg),
                        void *arg);
int fscc_ea_encode(uint8_t *out, size_t cap, const char *name, const void *value, size_t value_len);

/* FileFsFullSizeInformation (2.5.4). */
struct fscc_fs_full_size {
  uint64_t total_units, caller_available_units, actual_available_units;
  uint32_t sectors_per_unit, bytes_per_sector;
};
int fscc_fs_full_size_decode(const uint8_t *p, size_t len, struct fscc_fs_full_size *fs);

/* Directory enumeration: FileIdFullDirectoryInformation (2.4.18). Iterates the entries of one
 * QUERY_DIRECTORY output buffer. Usage:
 *   struct fscc_dir_iter it; fscc_dir_iter_init(&it, buf, len);
 *   struct fscc_dirent e; while ((rc = fscc_dir_next(&it, &e)) > 0) { ... }  rc==0 end, <0 error.
 * e.name is malloc'd UTF-8 (NUL-terminated) owned by the iterator and valid until the next call
 * or fscc_dir_iter_free(). Names containing '/' or NUL, or empty, are SMB3_EPROTO; "." and ".."
 * are returned (the caller decides). */
struct fscc_dirent {
  struct fscc_stat st;
  char *name;
  size_t name_len;
};
struct fscc_dir_iter {
  const uint8_t *buf;
  size_t len;
  size_t off;
  int done;
  char *name; /* owned */
};
void fscc_dir_iter_init(struct fscc_dir_iter *it, const uint8_t *buf, size_t len);
int fscc_dir_next(struct fscc_dir_iter *it, struct fscc_dirent *e);
void fscc_dir_iter_free(struct fscc_dir_iter *it);

#endif
