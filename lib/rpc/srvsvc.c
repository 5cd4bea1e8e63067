/* srvsvc.c - the NDR (C706 chapter 14) of srvsvc NetrShareEnum (MS-SRVS 3.1.4.8) at level 1:
 * SHARE_ENUM_STRUCT (2.2.4.38) holding a SHARE_INFO_1_CONTAINER (2.2.4.33) of SHARE_INFO_1
 * (2.2.4.23: shi1_netname, shi1_type, shi1_remark).
 *
 * Wire order: a structure's fixed part first, then what its embedded pointers point to, in the
 * order of the pointers (deferred pointees, C706 14.3.12.3). Every primitive is aligned to its
 * size from the start of the stub; a [string] wchar_t* is a conformant varying array (MaxCount,
 * Offset, ActualCount, then ActualCount UTF-16 units, the last one the terminator). */
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "smb3/smb3_errors.h"
#include "util/utf16.h"

#define MAX_PREFERRED_LENGTH 0xFFFFFFFFu /* MS-SRVS 2.2.2.2: everything in one answer if it can */
#define SHARE_INFO_1_FIXED 12            /* netname pointer, type, remark pointer */
/* Referent ids for our unique pointers: any nonzero value will do (C706 14.3.11.3); these are
 * the ones Microsoft's and Samba's marshallers start with. */
#define REFERENT_1 0x00020000u
#define REFERENT_2 0x00020004u

int srvsvc_share_enum_encode(struct le_wr *w, uint32_t resume) {
  le_put_u32(w, 0);                    /* ServerName: NULL, the server we talk to */
  le_put_u32(w, 1);                    /* InfoStruct (ref, no referent).Level */
  le_put_u32(w, 1);                    /* the union's discriminant, switch_is(Level) */
  le_put_u32(w, REFERENT_1);           /* ShareInfo.Level1 */
  le_put_u32(w, 0);                    /*   EntriesRead */
  le_put_u32(w, 0);                    /*   Buffer: NULL */
  le_put_u32(w, MAX_PREFERRED_LENGTH); /* PreferedMaximumLength */
  le_put_u32(w, REFERENT_2);           /* ResumeHandle */
  le_put_u32(w, resume);
  return w->err ? SMB3_EINVAL : 0;
}

static void align4(struct le_rd *r) {
  if (r->off & 3) le_skip(r, 4 - (r->off & 3));
}

static uint32_t u32_get(struct le_rd *r) {
  align4(r);
  return le_u32(r);
}

/* A [string] wchar_t* pointee into a malloc'd UTF-8 string. */
static int string_get(struct le_rd *r, char **out) {
  *out = NULL;
  uint32_t max = u32_get(r), offset = u32_get(r), actual = u32_get(r);
  if (r->err || offset != 0 || actual == 0 || actual > max) return SMB3_EPROTO;
  if (actual > (r->len - r->off) / 2) return SMB3_EPROTO;
  const uint8_t *s = le_rd_take(r, (size_t)actual * 2);
  if (!s) return SMB3_EPROTO;
  for (uint32_t i = 0; i + 1 < actual; i++)
    if (le16_at(s + 2 * i) == 0) return SMB3_EPROTO;          /* a NUL before the end: not one string */
  if (le16_at(s + 2 * (actual - 1)) != 0) return SMB3_EPROTO; /* no terminator */
  int rc = smb3_utf16le_to_utf8(s, (size_t)(actual - 1) * 2, out, NULL);
  return rc == SMB3_ENOMEM ? rc : rc ? SMB3_EPROTO : 0;
}

void srvsvc_enum_free(struct srvsvc_enum *r) {
  if (!r) return;
  for (uint32_t i = 0; r->shares && i < r->n; i++) {
    free(r->shares[i].name);
    free(r->shares[i].comment);
  }
  free(r->shares);
  r->shares = NULL;
  r->n = 0;
}

/* The container's array: fixed parts, then each entry's strings. */
static int shares_get(struct le_rd *r, uint32_t entries, struct srvsvc_enum *e) {
  uint32_t max = u32_get(r); /* conformance of [size_is(EntriesRead)] */
  if (r->err || max != entries) return SMB3_EPROTO;
  if (entries > (r->len - r->off) / SHARE_INFO_1_FIXED) return SMB3_EPROTO; /* before allocating */
  e->shares = calloc(entries ? entries : 1, sizeof *e->shares);
  if (!e->shares) return SMB3_ENOMEM;
  e->n = entries;
  uint32_t *ptrs = calloc(entries ? (size_t)entries * 2 : 1, sizeof *ptrs);
  if (!ptrs) return SMB3_ENOMEM;
  for (uint32_t i = 0; i < entries; i++) {
    ptrs[2 * i] = le_u32(r);
    e->shares[i].type = le_u32(r);
    ptrs[2 * i + 1] = le_u32(r);
  }
  int rc = r->err ? SMB3_EPROTO : 0;
  for (uint32_t i = 0; i < entries && !rc; i++) {
    if (!ptrs[2 * i]) rc = SMB3_EPROTO; /* a share without a name */
    if (!rc) rc = string_get(r, &e->shares[i].name);
    if (!rc && ptrs[2 * i + 1]) rc = string_get(r, &e->shares[i].comment);
    if (!rc && !ptrs[2 * i + 1] && !(e->shares[i].comment = strdup(""))) rc = SMB3_ENOMEM;
  }
  free(ptrs);
  return rc;
}

static int enum_get(struct le_rd *r, struct srvsvc_enum *e) {
  uint32_t level = u32_get(r), sw = u32_get(r);
  if (r->err || level != 1 || sw != 1) return SMB3_EPROTO;
  if (u32_get(r)) { /* Level1: the container */
    uint32_t entries = u32_get(r), buf = u32_get(r);
    if (r->err || (!buf && entries)) return SMB3_EPROTO; /* entries announced, no array */
    if (buf) {
      int rc = shares_get(r, entries, e);
      if (rc) return rc;
    }
  }
  e->total = u32_get(r);
  if (u32_get(r)) {
    e->have_resume = 1;
    e->resume = u32_get(r);
  }
  e->status = u32_get(r);
  if (r->err) return SMB3_EPROTO;
  /* Nothing may follow but the zero padding some marshallers add to a multiple of 8. */
  if (r->len - r->off >= 8) return SMB3_EPROTO;
  for (size_t i = r->off; i < r->len; i++)
    if (r->p[i]) return SMB3_EPROTO;
  return 0;
}

int srvsvc_share_enum_decode(const uint8_t *stub, size_t len, struct srvsvc_enum *e) {
  memset(e, 0, sizeof *e);
  if (!stub && len) return SMB3_EPROTO;
  struct le_rd r;
  le_rd_init(&r, stub, len);
  int rc = enum_get(&r, e);
  if (rc) srvsvc_enum_free(e);
  if (rc) memset(e, 0, sizeof *e);
  return rc;
}
