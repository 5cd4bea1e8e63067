/* create.c - SMB2 CREATE: request MS-SMB2 2.2.13, response 2.2.14, and the create contexts we
 * use (2.2.13.2 / 2.2.14.2): "RqLs" lease v1/v2 (2.2.13.2.8, 2.2.13.2.10, 2.2.14.2.10,
 * 2.2.14.2.11), "MxAc" maximal access (2.2.13.2.5, 2.2.14.2.5), "QFid" on-disk id (2.2.13.2.9,
 * 2.2.14.2.9), and Samba's SMB3 POSIX context (name = the 16-byte POSIX tag; request: the
 * mode, source3/smbd/open.c create_file_default's check_posix_create_context; response:
 * smb3_posix_cc_info, librpc/idl/smb3posix.idl, decoded by lib/fscc/posix.c). */
#include <string.h>

#include "fscc/fscc.h"
#include "smb3/smb3_errors.h"
#include "wire/wire_int.h"

#define SMB2_CREATE_REQ_SIZE 57
#define SMB2_CREATE_REQ_FIXED 56 /* the name starts at header offset 0x78 */
#define SMB2_CREATE_REQ_OFF_NAMELEN 46
#define SMB2_CREATE_REQ_OFF_CTX 48
#define SMB2_CREATE_RSP_FIXED 88
#define CTX_HDR_LEN 16  /* Next, NameOffset, NameLength, Reserved, DataOffset, DataLength */
#define CTX_NAME_LEN 4  /* the MS-SMB2 context names are 4 ASCII bytes; POSIX's is 16 */
#define POSIX_REQ_LEN 4 /* the mode; Samba refuses any other length (INVALID_PARAMETER) */
#define LEASE_V1_LEN 32
#define LEASE_V2_LEN 52
#define MXAC_RSP_LEN 8 /* QueryStatus + MaximalAccess */
#define QFID_RSP_MIN 8 /* DiskFileId's first 8 bytes; servers send 32 */

/* Chain state while writing contexts: writer positions of the first and the previous one. */
struct ctx_chain {
  size_t first, prev;
  int n;
};

/* 2.2.13.2: a context starts 8-byte aligned, and the previous one's Next is the distance to
 * it. Writes the header and the name; the caller writes dlen bytes of data after it. */
static void ctx_begin_n(struct le_wr *w, struct ctx_chain *c, const void *name, uint16_t nlen,
                        uint32_t dlen) {
  le_put_align(w, 8);
  if (c->n++ == 0)
    c->first = w->off;
  else if (!w->err)
    le32_put(w->p + c->prev, (uint32_t)(w->off - c->prev));
  c->prev = w->off;
  le_put_u32(w, 0); /* Next: patched when another context follows */
  uint16_t data_off = (uint16_t)((CTX_HDR_LEN + nlen + 7) & ~7u); /* 2.2.13.2: data 8-byte aligned */
  le_put_u16(w, CTX_HDR_LEN);
  le_put_u16(w, nlen);
  le_put_u16(w, 0); /* Reserved */
  le_put_u16(w, dlen ? data_off : 0);
  le_put_u32(w, dlen);
  le_put_bytes(w, name, nlen);
  le_put_zero(w, data_off - CTX_HDR_LEN - nlen); /* the data (or the next context) 8-byte aligned */
}

static void ctx_begin(struct le_wr *w, struct ctx_chain *c, const char *name, uint32_t dlen) {
  ctx_begin_n(w, c, name, CTX_NAME_LEN, dlen);
}

/* 2.2.13.2.8 (v1, 32 bytes) / 2.2.13.2.10 (v2, 52 bytes). LeaseDuration MUST be 0. */
static void ctx_put_lease(struct le_wr *w, struct ctx_chain *c, const struct smb2_lease *l) {
  int v2 = l->version == 2;
  ctx_begin(w, c, "RqLs", v2 ? LEASE_V2_LEN : LEASE_V1_LEN);
  le_put_bytes(w, l->key, 16);
  le_put_u32(w, l->state);
  le_put_u32(w, v2 ? l->flags & SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET : 0); /* v1: MUST be 0 */
  le_put_u64(w, 0);                                                        /* LeaseDuration */
  if (v2) {
    le_put_bytes(w, l->parent_key, 16);
    le_put_u16(w, l->epoch);
    le_put_u16(w, 0); /* Reserved */
  }
}

static int create_req_check(const struct smb2_create_req *r) {
  if (!r->name || r->lease.version < 0 || r->lease.version > 2) return SMB3_EINVAL;
  /* 2.2.13: a lease context goes with RequestedOplockLevel LEASE and only with it. */
  if ((r->lease.version != 0) != (r->oplock_level == SMB2_OPLOCK_LEVEL_LEASE)) return SMB3_EINVAL;
  return 0;
}

static void create_put_fixed(struct le_wr *w, const struct smb2_create_req *r) {
  le_put_u16(w, SMB2_CREATE_REQ_SIZE);
  le_put_u8(w, 0); /* SecurityFlags: MUST be 0 */
  le_put_u8(w, r->oplock_level);
  le_put_u32(w, r->impersonation);
  le_put_u64(w, 0); /* SmbCreateFlags: MUST be 0 */
  le_put_u64(w, 0); /* Reserved */
  le_put_u32(w, r->desired_access);
  le_put_u32(w, r->file_attributes);
  le_put_u32(w, r->share_access);
  le_put_u32(w, r->create_disposition);
  le_put_u32(w, r->create_options);
  le_put_u16(w, (uint16_t)WIRE_HDR_OFF(SMB2_CREATE_REQ_FIXED)); /* NameOffset, even for "" */
  le_put_u16(w, 0);                                             /* NameLength, patched */
  le_put_u32(w, 0);                                             /* CreateContextsOffset, patched */
  le_put_u32(w, 0);                                             /* CreateContextsLength, patched */
}

int smb2_create_req_encode(struct le_wr *w, const struct smb2_create_req *r) {
  int rc = create_req_check(r);
  if (rc) return rc;
  size_t start = w->off;
  create_put_fixed(w, r);
  const char *name = r->name; /* 2.2.13: relative to the share, no leading separator */
  while (*name == '/' || (!r->posix_paths && *name == '\\'))
    name++;
  size_t n;
  int flags = r->posix_paths ? 0 : WIRE_NAME_BS | (r->sfm_names ? WIRE_NAME_SFM : 0);
  if ((rc = wire_put_utf16(w, name, flags, UINT16_MAX - 1, &n))) return rc;
  le16_put(w->p + start + SMB2_CREATE_REQ_OFF_NAMELEN, (uint16_t)n);
  le_put_align(w, 8); /* contexts (and the next compound element) start 8-byte aligned */
  struct ctx_chain c = {0, 0, 0};
  if (r->want_maximal_access) ctx_begin(w, &c, "MxAc", 0); /* no Timestamp */
  if (r->want_disk_id) ctx_begin(w, &c, "QFid", 0);
  if (r->lease.version) ctx_put_lease(w, &c, &r->lease);
  if (r->posix) { /* permission bits only: Samba strips the type (unix_perms_to_wire) */
    ctx_begin_n(w, &c, smb2_posix_tag, SMB2_POSIX_TAG_LEN, POSIX_REQ_LEN);
    le_put_u32(w, r->posix_mode & 07777u);
  }
  if (c.n && !w->err) {
    le32_put(w->p + start + SMB2_CREATE_REQ_OFF_CTX, (uint32_t)WIRE_HDR_OFF(c.first));
    le32_put(w->p + start + SMB2_CREATE_REQ_OFF_CTX + 4, (uint32_t)(w->off - c.first));
  }
  /* Opening the share root with no contexts leaves Buffer empty; Samba rejects a request
   * without at least one Buffer byte (odd StructureSize), so send 8 zero bytes like cifs.ko. */
  if (w->off == start + SMB2_CREATE_REQ_FIXED) le_put_zero(w, 8);
  return wire_wr_done(w);
}

static int ctx_parse_lease(const uint8_t *d, uint32_t dlen, struct smb2_lease *l) {
  struct le_rd r;
  le_rd_init(&r, d, dlen);
  if (dlen < LEASE_V1_LEN) return SMB3_EPROTO;
  l->version = dlen >= LEASE_V2_LEN ? 2 : 1;
  le_bytes(&r, l->key, 16);
  l->state = le_u32(&r);
  l->flags = le_u32(&r);
  le_skip(&r, 8); /* LeaseDuration */
  if (l->version == 2) {
    le_bytes(&r, l->parent_key, 16);
    l->epoch = le_u16(&r);
  }
  return r.err ? SMB3_EPROTO : 0;
}

/* One response context; unknown names (e.g. "DHnQ") are ignored. */
static int ctx_parse(const uint8_t *name, uint16_t nlen, const uint8_t *d, uint32_t dlen,
                     struct smb2_create_rsp *rsp) {
  if (nlen == SMB2_POSIX_TAG_LEN && !memcmp(name, smb2_posix_tag, SMB2_POSIX_TAG_LEN)) {
    size_t used;
    if (fscc_posix_cc_decode(d, dlen, &rsp->posix, &used)) return SMB3_EPROTO;
    rsp->have_posix = 1;
    return 0;
  }
  if (nlen != CTX_NAME_LEN) return 0;
  if (!memcmp(name, "RqLs", 4)) return ctx_parse_lease(d, dlen, &rsp->lease);
  if (!memcmp(name, "MxAc", 4)) { /* 2.2.14.2.5 */
    if (dlen < MXAC_RSP_LEN) return SMB3_EPROTO;
    rsp->have_maximal_access = le32_at(d) == 0; /* QueryStatus */
    rsp->maximal_access = le32_at(d + 4);
    return 0;
  }
  if (!memcmp(name, "QFid", 4)) { /* 2.2.14.2.9 */
    if (dlen < QFID_RSP_MIN) return SMB3_EPROTO;
    rsp->have_disk_id = 1;
    rsp->disk_file_id = le64_at(d);
    return 0;
  }
  return 0;
}

/* The context list (p, n bytes, already inside the message): chained by Next (0 ends), each
 * context's name and data inside the context (bounded by the next one), Next advancing. */
static int ctx_parse_all(const uint8_t *p, size_t n, struct smb2_create_rsp *rsp) {
  size_t off = 0;
  for (;;) {
    if (!le_range_ok(off, CTX_HDR_LEN, n)) return SMB3_EPROTO;
    const uint8_t *c = p + off;
    uint32_t next = le32_at(c);
    uint16_t name_off = le16_at(c + 4), name_len = le16_at(c + 6), data_off = le16_at(c + 10);
    uint32_t data_len = le32_at(c + 12);
    if (next && (next < CTX_HDR_LEN || !le_range_ok(off, next, n))) return SMB3_EPROTO;
    size_t clen = next ? next : n - off;
    if (!le_range_ok(name_off, name_len, clen)) return SMB3_EPROTO;
    if (data_len && !le_range_ok(data_off, data_len, clen)) return SMB3_EPROTO;
    int rc = ctx_parse(c + name_off, name_len, c + data_off, data_len, rsp);
    if (rc || !next) return rc;
    off += next;
  }
}

int smb2_create_rsp_decode(const uint8_t *msg, size_t len, struct smb2_create_rsp *rsp) {
  memset(rsp, 0, sizeof *rsp);
  struct le_rd r;
  int rc = wire_rsp_begin(&r, msg, len, SMB2_CREATE);
  if (rc) return rc;
  rsp->oplock_level = le_u8(&r);
  rsp->flags = le_u8(&r);
  rsp->create_action = le_u32(&r);
  wire_get_file_attrs(&r, &rsp->attrs);
  le_skip(&r, 4); /* Reserved2 */
  rsp->file_id.persistent = le_u64(&r);
  rsp->file_id.volatile_ = le_u64(&r);
  uint32_t ctx_off = le_u32(&r), ctx_len = le_u32(&r);
  if (r.err) return SMB3_EPROTO;
  if (!ctx_len) return 0;
  const uint8_t *p;
  if (wire_rsp_buf(msg, len, SMB2_HDR_LEN + SMB2_CREATE_RSP_FIXED, ctx_off, ctx_len, &p)) return SMB3_EPROTO;
  return ctx_parse_all(p, ctx_len, rsp);
}
