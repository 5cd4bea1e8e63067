/* dfs.c - DFS referrals, the FSCTL_DFS_GET_REFERRALS payloads: REQ_GET_DFS_REFERRAL (MS-DFSC
 * 2.2.2) and RESP_GET_DFS_REFERRAL (2.2.4) with DFS_REFERRAL_V1..V4 entries (2.2.5.1-2.2.5.4). */
#include <stdlib.h>
#include <string.h>

#include "smb3/smb3_errors.h"
#include "util/utf16.h"
#include "wire/wire_int.h"

#define DFS_RSP_HDR_LEN 8 /* PathConsumed, NumberOfReferrals, ReferralHeaderFlags */
#define DFS_V1_FIXED 8    /* VersionNumber, Size, ServerType, ReferralEntryFlags */
#define DFS_V2_FIXED 22   /* + Proximity, TimeToLive, three offsets */
#define DFS_V3_FIXED 18   /* + TimeToLive, three offsets (the GUID of 2.2.5.3.1 need not be there) */
#define DFS_PATH_MAX_BYTES 0xFFFCu

int smb2_dfs_referral_req_encode(struct le_wr *w, const char *path, uint16_t max_level) {
  if (!path || !path[0]) return SMB3_EINVAL;
  le_put_u16(w, max_level);
  size_t n;
  int rc = wire_put_utf16(w, path, WIRE_NAME_BS, DFS_PATH_MAX_BYTES, &n);
  if (rc) return rc;
  le_put_u16(w, 0); /* RequestFileName is NUL-terminated */
  return wire_wr_done(w);
}

/* A NUL-terminated UTF-16LE string at p[off..len) as UTF-8 (malloc'd). An offset of 0 in an entry
 * whose field is optional is "absent" and gives "". */
static int dfs_string(const uint8_t *p, size_t len, size_t off, char **out) {
  *out = NULL;
  if (off >= len || (len - off) < 2) return SMB3_EPROTO;
  size_t end = off;
  while (end + 1 < len && (p[end] || p[end + 1]))
    end += 2;
  if (end + 1 >= len) return SMB3_EPROTO; /* no terminator inside the buffer */
  int rc = smb3_utf16le_to_utf8(p + off, end - off, out, NULL);
  return rc == SMB3_ENOMEM ? rc : rc ? SMB3_EPROTO : 0;
}

static int dfs_empty(char **out) {
  *out = strdup("");
  return *out ? 0 : SMB3_ENOMEM;
}

/* String at entry-relative offset rel of the entry at base (2.2.5: "from the beginning of this
 * referral entry"); the string may lie anywhere in the response, not only inside the entry. */
static int dfs_entry_string(const uint8_t *p, size_t len, size_t base, uint16_t rel, char **out) {
  if (!rel) return dfs_empty(out);
  return dfs_string(p, len, base + rel, out);
}

static int dfs_entry_decode(const uint8_t *p, size_t len, size_t base, uint16_t version, uint16_t size,
                            struct smb2_dfs_target *t) {
  const uint8_t *e = p + base;
  t->server_type = le16_at(e + 4);
  t->flags = le16_at(e + 6);
  int rc;
  if (version == 1) {
    if (size < DFS_V1_FIXED + 2) return SMB3_EPROTO;
    /* the inline ShareName must end inside the entry */
    rc = dfs_string(p, base + size, base + DFS_V1_FIXED, &t->address);
    t->flags = 0; /* 2.2.5.1: ignored on receipt */
    return rc ? rc : dfs_empty(&t->path);
  }
  if (version == 2) {
    if (size < DFS_V2_FIXED) return SMB3_EPROTO;
    t->flags = 0; /* 2.2.5.2: ignored on receipt */
    t->ttl = le32_at(e + 12);
    rc = dfs_entry_string(p, len, base, le16_at(e + 16), &t->path);
    if (!rc) rc = dfs_entry_string(p, len, base, le16_at(e + 20), &t->address);
    return rc;
  }
  if (size < DFS_V3_FIXED) return SMB3_EPROTO;
  t->ttl = le32_at(e + 8);
  if (t->flags & DFS_ENTRY_NAME_LIST) {
    /* 2.2.5.3.2: SpecialNameOffset, NumberOfExpandedNames, ExpandedNameOffset */
    rc = dfs_entry_string(p, len, base, le16_at(e + 12), &t->path);
    if (!rc && le16_at(e + 14) && le16_at(e + 16))
      rc = dfs_entry_string(p, len, base, le16_at(e + 16), &t->address);
    else if (!rc)
      rc = dfs_empty(&t->address);
    return rc;
  }
  /* 2.2.5.3.1: DFSPathOffset, DFSAlternatePathOffset, NetworkAddressOffset, ServiceSiteGuid */
  rc = dfs_entry_string(p, len, base, le16_at(e + 12), &t->path);
  if (!rc) rc = dfs_entry_string(p, len, base, le16_at(e + 16), &t->address);
  return rc;
}

void smb2_dfs_referral_free(struct smb2_dfs_referral *r) {
  for (int i = 0; i < r->n; i++) {
    free(r->t[i].path);
    free(r->t[i].address);
  }
  memset(r, 0, sizeof *r);
}

int smb2_dfs_referral_decode(const uint8_t *p, size_t len, struct smb2_dfs_referral *r) {
  memset(r, 0, sizeof *r);
  if (!p || len < DFS_RSP_HDR_LEN) return SMB3_EPROTO;
  r->path_consumed = le16_at(p);
  uint16_t count = le16_at(p + 2);
  r->header_flags = le32_at(p + 4);
  if (!count || r->path_consumed % 2) return SMB3_EPROTO;
  size_t off = DFS_RSP_HDR_LEN;
  for (uint16_t i = 0; i < count && r->n < DFS_REFERRAL_MAX; i++) {
    if (!le_range_ok(off, DFS_V1_FIXED, len)) goto bad;
    uint16_t version = le16_at(p + off), size = le16_at(p + off + 2);
    if (version < 1 || version > 4 || (r->version && version != r->version)) goto bad;
    if (size < DFS_V1_FIXED || !le_range_ok(off, size, len)) goto bad;
    r->version = version;
    struct smb2_dfs_target *t = &r->t[r->n++];
    int rc = dfs_entry_decode(p, len, off, version, size, t);
    if (rc) {
      smb2_dfs_referral_free(r);
      return rc;
    }
    off += size;
  }
  return 0;
bad:
  smb2_dfs_referral_free(r);
  return SMB3_EPROTO;
}
