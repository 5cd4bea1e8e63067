/* posix.c - the SMB3 POSIX extensions' data (Samba 4.22: librpc/idl/smb3posix.idl for the layouts,
 * libcli/smb/util.c for the mode, source3/smbd/smb2_nttrans.c for chmod through a security
 * descriptor), SIDs and security descriptors (MS-DTYP 2.4.2.2, 2.4.4, 2.4.5, 2.4.6) and reparse
 * buffers (MS-FSCC 2.1.2.4 symbolic links, 2.1.2.6 NFS special files). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "util/le.h"
#include "util/utf16.h"

#define SID_HDR 8
#define POSIX_CC_FIXED 12 /* nlinks, reparse_tag, posix_mode */
#define POSIX_INFO_FIXED 68
#define SID_AUTH_NT 5
#define SID_AUTH_UNIX 22 /* S-1-22: Samba's Unix user (22-1) and group (22-2) domains */
#define SID_NFS_DOMAIN 88
#define SID_NFS_MODE 3 /* S-1-5-88-3-<mode> */

int fscc_sid_decode(const uint8_t *p, size_t len, struct fscc_sid *sid, size_t *used) {
  memset(sid, 0, sizeof *sid);
  if (len < SID_HDR || p[0] != 1 || p[1] > FSCC_SID_MAX_SUB) return SMB3_EPROTO;
  size_t n = SID_HDR + 4 * (size_t)p[1];
  if (len < n) return SMB3_EPROTO;
  sid->nsub = p[1];
  for (int i = 0; i < 6; i++) /* IdentifierAuthority is big-endian */
    sid->authority = sid->authority << 8 | p[2 + i];
  for (int i = 0; i < sid->nsub; i++)
    sid->sub[i] = le32_at(p + SID_HDR + 4 * i);
  *used = n;
  return 0;
}

int fscc_sid_encode(uint8_t *out, size_t cap, const struct fscc_sid *sid) {
  size_t n = SID_HDR + 4 * (size_t)sid->nsub;
  if (sid->nsub > FSCC_SID_MAX_SUB || cap < n) return SMB3_EINVAL;
  out[0] = 1;
  out[1] = sid->nsub;
  for (int i = 0; i < 6; i++)
    out[2 + i] = (uint8_t)(sid->authority >> (8 * (5 - i)));
  for (int i = 0; i < sid->nsub; i++)
    le32_put(out + SID_HDR + 4 * i, sid->sub[i]);
  return (int)n;
}

void fscc_sid_unix(struct fscc_sid *sid, int kind, uint32_t id) {
  memset(sid, 0, sizeof *sid);
  sid->authority = SID_AUTH_UNIX;
  sid->nsub = 2;
  sid->sub[0] = (uint32_t)kind;
  sid->sub[1] = id;
}

uint32_t fscc_sid_unix_id(const struct fscc_sid *sid, int kind) {
  if (sid->authority != SID_AUTH_UNIX || sid->nsub != 2 || sid->sub[0] != (uint32_t)kind) return FSCC_NO_ID;
  return sid->sub[1];
}

/* UNIX_TYPE_FILE .. UNIX_TYPE_SOCKET, in wire order */
static const uint32_t wire_types[] = {S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK};
#define WIRE_TYPE_SHIFT 12
#define WIRE_TYPE_MASK 070000u

uint32_t fscc_posix_mode_from_wire(uint32_t wire) {
  uint32_t t = (wire & WIRE_TYPE_MASK) >> WIRE_TYPE_SHIFT;
  return (wire & 07777u) | (t < sizeof wire_types / sizeof wire_types[0] ? wire_types[t] : 0);
}

uint32_t fscc_posix_mode_to_wire(uint32_t mode) {
  uint32_t t = 0;
  for (uint32_t i = 0; i < sizeof wire_types / sizeof wire_types[0]; i++)
    if ((mode & S_IFMT) == wire_types[i]) t = i;
  return (mode & 07777u) | t << WIRE_TYPE_SHIFT;
}

int fscc_posix_cc_decode(const uint8_t *p, size_t len, struct fscc_posix_cc *cc, size_t *used) {
  memset(cc, 0, sizeof *cc);
  if (len < POSIX_CC_FIXED) return SMB3_EPROTO;
  cc->nlink = le32_at(p);
  cc->reparse_tag = le32_at(p + 4);
  cc->wire_mode = le32_at(p + 8);
  size_t a, b;
  if (fscc_sid_decode(p + POSIX_CC_FIXED, len - POSIX_CC_FIXED, &cc->owner, &a)) return SMB3_EPROTO;
  if (fscc_sid_decode(p + POSIX_CC_FIXED + a, len - POSIX_CC_FIXED - a, &cc->group, &b)) return SMB3_EPROTO;
  *used = POSIX_CC_FIXED + a + b;
  return 0;
}

void fscc_stat_from_posix_cc(const struct fscc_posix_cc *cc, struct fscc_stat *st) {
  st->posix = 1;
  st->nlink = cc->nlink;
  st->reparse_tag = cc->reparse_tag;
  st->mode = fscc_posix_mode_from_wire(cc->wire_mode);
  if (!(st->mode & S_IFMT)) /* a type Samba calls UNKNOWN: what the attributes say */
    st->mode |= (st->attributes & 0x10u) ? S_IFDIR : S_IFREG;
  st->uid = fscc_sid_unix_id(&cc->owner, 1);
  st->gid = fscc_sid_unix_id(&cc->group, 2);
}

/* smb3_file_posix_information: the fixed 68 bytes, then smb3_posix_cc_info. Returns the total
 * length through *used. */
static int posix_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st, size_t *used) {
  memset(st, 0, sizeof *st);
  if (len < POSIX_INFO_FIXED) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, p, POSIX_INFO_FIXED);
  st->creation_time = le_u64(&r);
  st->last_access_time = le_u64(&r);
  st->last_write_time = le_u64(&r);
  st->change_time = le_u64(&r);
  st->end_of_file = le_u64(&r);
  st->allocation_size = le_u64(&r);
  st->attributes = le_u32(&r);
  st->file_id = le_u64(&r); /* inode */
  st->device = le_u32(&r);
  le_skip(&r, 4); /* Reserved */
  if (r.err) return SMB3_EPROTO;
  struct fscc_posix_cc cc;
  size_t n;
  if (fscc_posix_cc_decode(p + POSIX_INFO_FIXED, len - POSIX_INFO_FIXED, &cc, &n)) return SMB3_EPROTO;
  fscc_stat_from_posix_cc(&cc, st);
  *used = POSIX_INFO_FIXED + n;
  return 0;
}

int fscc_posix_info_decode(const uint8_t *p, size_t len, struct fscc_stat *st) {
  size_t used;
  int rc = posix_info_decode(p, len, st, &used);
  if (rc) memset(st, 0, sizeof *st);
  return rc;
}

int fscc_posix_info_decode_len(const uint8_t *p, size_t len, struct fscc_stat *st, size_t *used) {
  return posix_info_decode(p, len, st, used);
}

/* ---- security descriptors ---- */
#define SD_HDR 20
#define ACL_HDR 8
#define ACE_HDR 8 /* AceType, AceFlags, AceSize, Mask */
#define SE_DACL_PRESENT 0x0004u
#define SE_SELF_RELATIVE 0x8000u

static void sd_header(uint8_t *out, uint16_t control, uint32_t owner, uint32_t group, uint32_t dacl) {
  out[0] = 1; /* Revision */
  out[1] = 0; /* Sbz1 */
  le16_put(out + 2, control | SE_SELF_RELATIVE);
  le32_put(out + 4, owner);
  le32_put(out + 8, group);
  le32_put(out + 12, 0); /* no SACL */
  le32_put(out + 16, dacl);
}

int fscc_sd_mode_encode(uint8_t *out, size_t cap, uint32_t mode) {
  struct fscc_sid sid = {
      .nsub = 3, .authority = SID_AUTH_NT, .sub = {SID_NFS_DOMAIN, SID_NFS_MODE, mode & 07777u}};
  size_t sid_len = SID_HDR + 4 * 3, ace_len = ACE_HDR + sid_len, acl_len = ACL_HDR + ace_len;
  if (cap < SD_HDR + acl_len) return SMB3_EINVAL;
  sd_header(out, SE_DACL_PRESENT, 0, 0, SD_HDR);
  uint8_t *acl = out + SD_HDR;
  acl[0] = 2; /* AclRevision: ACL_REVISION */
  acl[1] = 0;
  le16_put(acl + 2, (uint16_t)acl_len);
  le16_put(acl + 4, 1); /* AceCount */
  le16_put(acl + 6, 0);
  uint8_t *ace = acl + ACL_HDR;
  ace[0] = 0; /* ACCESS_ALLOWED_ACE_TYPE; Samba reads only the trustee */
  ace[1] = 0;
  le16_put(ace + 2, (uint16_t)ace_len);
  le32_put(ace + 4, 0); /* Mask */
  fscc_sid_encode(ace + ACE_HDR, sid_len, &sid);
  return (int)(SD_HDR + acl_len);
}

int fscc_sd_owner_encode(uint8_t *out, size_t cap, uint32_t uid, uint32_t gid) {
  if (cap < SD_HDR || (uid == FSCC_NO_ID && gid == FSCC_NO_ID)) return SMB3_EINVAL;
  size_t off = SD_HDR;
  uint32_t owner_off = 0, group_off = 0;
  struct fscc_sid sid;
  if (uid != FSCC_NO_ID) {
    fscc_sid_unix(&sid, 1, uid);
    int n = fscc_sid_encode(out + off, cap - off, &sid);
    if (n < 0) return n;
    owner_off = (uint32_t)off;
    off += (size_t)n;
  }
  if (gid != FSCC_NO_ID) {
    fscc_sid_unix(&sid, 2, gid);
    int n = fscc_sid_encode(out + off, cap - off, &sid);
    if (n < 0) return n;
    group_off = (uint32_t)off;
    off += (size_t)n;
  }
  sd_header(out, 0, owner_off, group_off, 0);
  return (int)off;
}

/* ---- reparse buffers ---- */
#define REPARSE_HDR 8 /* ReparseTag, ReparseDataLength, Reserved */
#define SYMLINK_FIXED 12

static int reparse_finish(uint8_t *out, uint32_t tag, size_t data_len) {
  if (data_len > UINT16_MAX) return SMB3_EINVAL;
  le32_put(out, tag);
  le16_put(out + 4, (uint16_t)data_len);
  le16_put(out + 6, 0);
  return (int)(REPARSE_HDR + data_len);
}

int fscc_reparse_symlink_encode(uint8_t *out, size_t cap, const char *target) {
  uint8_t *u;
  size_t n;
  if (!target || !target[0]) return SMB3_EINVAL;
  int rc = smb3_utf8_to_utf16le(target, strlen(target), &u, &n);
  if (rc) return rc == SMB3_ENOMEM ? rc : SMB3_EINVAL;
  size_t data_len = SYMLINK_FIXED + 2 * n;
  if (n > UINT16_MAX / 2 || cap < REPARSE_HDR + data_len) {
    free(u);
    return SMB3_EINVAL;
  }
  uint8_t *d = out + REPARSE_HDR;
  le16_put(d, 0);               /* SubstituteNameOffset */
  le16_put(d + 2, (uint16_t)n); /* SubstituteNameLength */
  le16_put(d + 4, (uint16_t)n); /* PrintNameOffset */
  le16_put(d + 6, (uint16_t)n); /* PrintNameLength */
  le32_put(d + 8, target[0] == '/' ? 0 : FSCC_SYMLINK_FLAG_RELATIVE);
  memcpy(d + SYMLINK_FIXED, u, n);
  memcpy(d + SYMLINK_FIXED + n, u, n);
  free(u);
  return reparse_finish(out, FSCC_IO_REPARSE_TAG_SYMLINK, data_len);
}

int fscc_reparse_nfs_encode(uint8_t *out, size_t cap, uint64_t type, uint32_t major, uint32_t minor) {
  int dev = type == FSCC_NFS_SPECFILE_CHR || type == FSCC_NFS_SPECFILE_BLK;
  if (!dev && type != FSCC_NFS_SPECFILE_FIFO && type != FSCC_NFS_SPECFILE_SOCK) return SMB3_EINVAL;
  size_t data_len = 8 + (dev ? 8 : 0);
  if (cap < REPARSE_HDR + data_len) return SMB3_EINVAL;
  le64_put(out + REPARSE_HDR, type);
  if (dev) {
    le32_put(out + REPARSE_HDR + 8, major);
    le32_put(out + REPARSE_HDR + 12, minor);
  }
  return reparse_finish(out, FSCC_IO_REPARSE_TAG_NFS, data_len);
}

static int reparse_target(const uint8_t *p, size_t n, struct fscc_reparse *r) {
  size_t ulen;
  if (n == 0 || n % 2 || smb3_utf16le_to_utf8(p, n, &r->target, &ulen)) return SMB3_EPROTO;
  if (memchr(r->target, '\0', ulen)) return SMB3_EPROTO;
  for (char *c = r->target; *c; c++)
    if (*c == '\\') *c = '/';
  return 0;
}

int fscc_reparse_decode(const uint8_t *p, size_t len, struct fscc_reparse *r) {
  memset(r, 0, sizeof *r);
  if (len < REPARSE_HDR) return SMB3_EPROTO;
  r->tag = le32_at(p);
  size_t dlen = le16_at(p + 4);
  if (dlen > len - REPARSE_HDR) return SMB3_EPROTO;
  const uint8_t *d = p + REPARSE_HDR;
  int rc = 0;
  if (r->tag == FSCC_IO_REPARSE_TAG_SYMLINK) {
    if (dlen < SYMLINK_FIXED) return SMB3_EPROTO;
    uint16_t so = le16_at(d), sl = le16_at(d + 2);
    r->flags = le32_at(d + 8);
    if (!le_range_ok((uint64_t)SYMLINK_FIXED + so, sl, dlen)) return SMB3_EPROTO;
    rc = reparse_target(d + SYMLINK_FIXED + so, sl, r);
  } else if (r->tag == FSCC_IO_REPARSE_TAG_NFS) {
    if (dlen < 8) return SMB3_EPROTO;
    r->nfs_type = le64_at(d);
    if (r->nfs_type == FSCC_NFS_SPECFILE_CHR || r->nfs_type == FSCC_NFS_SPECFILE_BLK) {
      if (dlen < 16) return SMB3_EPROTO;
      r->major = le32_at(d + 8);
      r->minor = le32_at(d + 12);
    } else if (r->nfs_type == FSCC_NFS_SPECFILE_LNK) {
      rc = reparse_target(d + 8, dlen - 8, r);
    }
  }
  if (rc) {
    free(r->target);
    r->target = NULL;
  }
  return rc;
}
