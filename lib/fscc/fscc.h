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
  /* Samba's SMB3 POSIX information (source3/include/trans2.h FSCC_FILE_POSIX_INFORMATION, and
   * SMB2_FIND_POSIX_INFORMATION for QUERY_DIRECTORY): the same number for both, answered only on
   * a handle opened with the POSIX create context. */
  FSCC_FILE_POSIX_INFORMATION = 100,
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
  /* From POSIX information only (posix = 1; all 0 otherwise): */
  int posix;
  uint32_t mode;        /* st_mode: S_IFMT type and the 07777 permission bits */
  uint32_t uid, gid;    /* FSCC_NO_ID when the SID is not a Unix one (S-1-22-1-N / S-1-22-2-N) */
  uint32_t device;      /* the server's st_dev */
  uint32_t reparse_tag; /* 0 unless a reparse point */
};
#define FSCC_NO_ID 0xFFFFFFFFu

/* ---- SMB3 POSIX extensions (Samba: librpc/idl/smb3posix.idl; libcli/smb/util.c) ---- posix.c */
/* A SID (MS-DTYP 2.4.2.2): Revision 1, SubAuthorityCount <= 15, 6-byte authority (big-endian),
 * the sub-authorities as LE u32. */
#define FSCC_SID_MAX_SUB 15
#define FSCC_SID_MAX_LEN (8 + 4 * FSCC_SID_MAX_SUB)
struct fscc_sid {
  uint8_t nsub;
  uint64_t authority; /* 48 bits */
  uint32_t sub[FSCC_SID_MAX_SUB];
};
/* Decode one SID at p (len bytes available); *used = its length. */
int fscc_sid_decode(const uint8_t *p, size_t len, struct fscc_sid *sid, size_t *used);
/* Returns the bytes written (8 + 4 * nsub) or SMB3_EINVAL. */
int fscc_sid_encode(uint8_t *out, size_t cap, const struct fscc_sid *sid);
/* Samba's mapping of Unix ids (source3/passdb/lookup_sid.c, "Unix User"/"Unix Group" domains):
 * uid N <-> S-1-22-1-N, gid N <-> S-1-22-2-N. unix_id returns N, or FSCC_NO_ID when sid is not of
 * that domain (kind 1 user, 2 group). */
void fscc_sid_unix(struct fscc_sid *sid, int kind, uint32_t id);
uint32_t fscc_sid_unix_id(const struct fscc_sid *sid, int kind);

/* The POSIX mode on the wire: permission bits as in POSIX (UNIX_R_USR 0400 ... UNIX_SET_UID 04000)
 * and the file type as a number 0..6 (FILE, DIR, SYMLINK, CHARDEV, BLKDEV, FIFO, SOCKET) in bits
 * 12..14 (UNIX_FILETYPE_SHIFT 12, UNIX_FILETYPE_MASK 070000), not S_IFMT. */
uint32_t fscc_posix_mode_from_wire(uint32_t wire);
uint32_t fscc_posix_mode_to_wire(uint32_t mode);

/* smb3_posix_cc_info: the POSIX create context's response data, and the tail of the POSIX
 * information: NumberOfLinks, ReparseTag, POSIX mode (wire form), owner SID, group SID. */
struct fscc_posix_cc {
  uint32_t nlink, reparse_tag, wire_mode;
  struct fscc_sid owner, group;
};
int fscc_posix_cc_decode(const uint8_t *p, size_t len, struct fscc_posix_cc *cc, size_t *used);
/* The POSIX information (QUERY_INFO class 100): the times, EndOfFile, AllocationSize, attributes,
 * inode, device, Reserved, then the cc part; fills st (posix = 1, mode in st_mode form). */
int fscc_posix_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st);
/* The same, and *used = the bytes it took (for a directory entry, where the name follows). */
int fscc_posix_info_decode_len(const uint8_t *p, size_t len, struct fscc_stat *st, size_t *used);
/* st's POSIX fields from a decoded cc (mode converted, owner/group mapped). */
void fscc_stat_from_posix_cc(const struct fscc_posix_cc *cc, struct fscc_stat *st);

/* Security descriptors for SET_INFO SMB2_0_INFO_SECURITY (MS-DTYP 2.4.6, self-relative).
 * mode: a DACL of exactly one ACE whose trustee is S-1-5-88-3-<mode>: Samba 4.22 takes that, on a
 * POSIX handle, as a chmod of the permission bits 0777 (source3/smbd/smb2_nttrans.c
 * check_smb2_posix_chmod_ace; the setuid/setgid/sticky bits are masked off there). Send with
 * AdditionalInformation DACL_SECURITY_INFORMATION (0x4).
 * owner: the owner and/or group SID (S-1-22-1-uid, S-1-22-2-gid; FSCC_NO_ID = absent); send with
 * OWNER_SECURITY_INFORMATION 0x1 | GROUP_SECURITY_INFORMATION 0x2 as present.
 * Both return the bytes written or SMB3_EINVAL. */
#define FSCC_SECINFO_OWNER 0x1u
#define FSCC_SECINFO_GROUP 0x2u
#define FSCC_SECINFO_DACL 0x4u
int fscc_sd_mode_encode(uint8_t *out, size_t cap, uint32_t mode);
int fscc_sd_owner_encode(uint8_t *out, size_t cap, uint32_t uid, uint32_t gid);

/* Reparse data buffers (MS-FSCC 2.1.2): FSCTL_SET_REPARSE_POINT input / GET output. */
#define FSCC_IO_REPARSE_TAG_SYMLINK 0xA000000Cu /* 2.1.2.4 */
#define FSCC_IO_REPARSE_TAG_NFS 0x80000014u     /* 2.1.2.6 */
#define FSCC_SYMLINK_FLAG_RELATIVE 0x1u
#define FSCC_NFS_SPECFILE_LNK 0x00000000014B4E4Cull
#define FSCC_NFS_SPECFILE_CHR 0x0000000000524843ull
#define FSCC_NFS_SPECFILE_BLK 0x00000000004B4C42ull
#define FSCC_NFS_SPECFILE_FIFO 0x000000004F464946ull
#define FSCC_NFS_SPECFILE_SOCK 0x000000004B434F53ull
/* A symbolic link to target (UTF-8, '/' kept as is: Samba hands a POSIX client the Unix target
 * unchanged), SubstituteName = PrintName, RELATIVE unless target starts with '/'. */
int fscc_reparse_symlink_encode(uint8_t *out, size_t cap, const char *target);
/* An NFS special file: type FSCC_NFS_SPECFILE_{FIFO,SOCK,CHR,BLK}; major/minor for CHR/BLK. */
int fscc_reparse_nfs_encode(uint8_t *out, size_t cap, uint64_t type, uint32_t major, uint32_t minor);
/* Decode a reparse buffer: tag always; a symlink's or NFS LNK's target (malloc'd UTF-8 in *target,
 * '\\' turned into '/'; NULL for others), an NFS buffer's type and device numbers. */
struct fscc_reparse {
  uint32_t tag;
  uint64_t nfs_type;
  uint32_t major, minor;
  uint32_t flags; /* symlink Flags */
  char *target;
};
int fscc_reparse_decode(const uint8_t *p, size_t len, struct fscc_reparse *r);

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
 * (path relative to the share root, '/' converted to '\\' unless names has FSCC_NAMES_POSIX: a
 * POSIX share's names keep '/' as the separator; with FSCC_NAMES_SFM the characters Windows
 * reserves go as SFM's code points, smb3_sfm_map). Returns bytes written. */
#define FSCC_NAMES_POSIX 1
#define FSCC_NAMES_SFM 2
int fscc_rename_info_encode(uint8_t *out, size_t cap, int replace, int names, const char *new_name);
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
  int posix; /* entries are FSCC_FILE_POSIX_INFORMATION (fscc_dir_iter_init_posix) */
  int sfm;   /* names come back from SFM's code points (smb3_sfm_unmap); init sets 0 */
  const uint8_t *buf;
  size_t len;
  size_t off;
  int done;
  char *name; /* owned */
};
void fscc_dir_iter_init(struct fscc_dir_iter *it, const uint8_t *buf, size_t len);
/* The same for SMB2_FIND_POSIX_INFORMATION (100) entries: NextEntryOffset, FileIndex, the POSIX
 * information (fscc_posix_info_decode), FileNameLength, FileName. */
void fscc_dir_iter_init_posix(struct fscc_dir_iter *it, const uint8_t *buf, size_t len);
int fscc_dir_next(struct fscc_dir_iter *it, struct fscc_dirent *e);
void fscc_dir_iter_free(struct fscc_dir_iter *it);

#endif
