/* paths.c - path operations, each CREATE + op + CLOSE in one related compound chain (seed 004;
 * MS-SMB2 3.2.4.1.4), or one by one under `nocompound`. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

/* ---- step encoders ---- */
static int enc_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, arg);
}
static int enc_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_close(c, m, fid, 0);
}
static int enc_close_postquery(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_close(c, m, fid, 1);
}
struct qi_arg {
  uint8_t type, cls;
  uint32_t outlen;
};
static int enc_query_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct qi_arg *q = arg;
  return build_query_info(c, m, fid, q->type, q->cls, q->outlen);
}
struct si_arg {
  uint8_t cls;
  const uint8_t *buf;
  uint32_t len;
};
static int enc_set_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct si_arg *s = arg;
  return build_set_info(c, m, fid, SMB2_0_INFO_FILE, s->cls, s->buf, s->len);
}

/* The first failing message of a completed chain, as SMB3_E*. */
static int chain_result(smb3_client *c, struct smb3_chain *ch, const char *what, const char *path) {
  char msg[700];
  snprintf(msg, sizeof msg, "%s '%s'", what, path);
  for (int i = 0; i < ch->n; i++) {
    uint32_t st = ch->msgs[i].status;
    if (st != NT_STATUS_SUCCESS) return client_msg_result(c, ch, i, msg);
  }
  return 0;
}

static int run_steps(smb3_client *c, const struct step *s, int n, const char *what, const char *path,
                     struct smb3_chain **keep) {
  struct smb3_chain *ch;
  int rc = client_steps(c, s, n, &ch);
  if (rc) return rc;
  rc = chain_result(c, ch, what, path);
  if (keep && !rc)
    *keep = ch;
  else
    chain_free(ch);
  return rc;
}

static void meta_create(struct create_args *a, const char *path, uint32_t access) {
  memset(a, 0, sizeof *a);
  a->path = path;
  a->access = access | SMB2_SYNCHRONIZE;
  a->share = SMB2_FILE_SHARE_ALL;
  a->disposition = SMB2_FILE_OPEN;
}

int smb3_stat(smb3_client *c, const char *path, struct smb3_stat *st) {
  struct create_args a;
  meta_create(&a, path, SMB2_FILE_READ_ATTRIBUTES);
  struct qi_arg q = {SMB2_0_INFO_FILE, FSCC_FILE_ALL_INFORMATION, 4096};
  struct step s[3] = {{enc_create, &a}, {enc_query_info, &q}, {enc_close, NULL}};
  struct smb3_chain *ch = NULL;
  int rc = run_steps(c, s, 3, "stat", path, &ch);
  if (rc) return rc;
  struct smb2_query_info_rsp r;
  struct fscc_stat fs;
  if (smb2_query_info_rsp_decode(ch->msgs[1].rsp, ch->msgs[1].rsp_len, &r) || fscc_all_info_decode(r.buf, r.len, &fs))
    rc = client_fail(c, SMB3_EPROTO, 0, "stat '%s': malformed QUERY_INFO response", path);
  else
    stat_from_fscc(&fs, st);
  chain_free(ch);
  return rc;
}

int smb3_statvfs(smb3_client *c, struct smb3_statvfs *sv) {
  struct create_args a;
  meta_create(&a, "", SMB2_FILE_READ_ATTRIBUTES);
  struct qi_arg q = {SMB2_0_INFO_FILESYSTEM, FSCC_FS_FULL_SIZE_INFORMATION, 64};
  struct step s[3] = {{enc_create, &a}, {enc_query_info, &q}, {enc_close, NULL}};
  struct smb3_chain *ch = NULL;
  int rc = run_steps(c, s, 3, "statvfs", "/", &ch);
  if (rc) return rc;
  struct smb2_query_info_rsp r;
  struct fscc_fs_full_size fs;
  if (smb2_query_info_rsp_decode(ch->msgs[1].rsp, ch->msgs[1].rsp_len, &r) ||
      fscc_fs_full_size_decode(r.buf, r.len, &fs)) {
    rc = client_fail(c, SMB3_EPROTO, 0, "statvfs: malformed QUERY_INFO response");
  } else {
    sv->bsize = (uint64_t)fs.sectors_per_unit * fs.bytes_per_sector;
    sv->blocks = fs.total_units;
    sv->bfree = fs.actual_available_units;
    sv->bavail = fs.caller_available_units;
  }
  chain_free(ch);
  return rc;
}

int smb3_mkdir(smb3_client *c, const char *path) {
  struct create_args a;
  meta_create(&a, path, SMB2_FILE_READ_ATTRIBUTES);
  a.disposition = SMB2_FILE_CREATE;
  a.options = SMB2_FILE_DIRECTORY_FILE;
  a.attributes = SMB2_FILE_ATTRIBUTE_DIRECTORY;
  struct step s[2] = {{enc_create, &a}, {enc_close, NULL}};
  return run_steps(c, s, 2, "mkdir", path, NULL);
}

/* unlink: open with DELETE_ON_CLOSE and close (one round trip). */
int smb3_unlink(smb3_client *c, const char *path) {
  struct create_args a;
  meta_create(&a, path, SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES);
  a.options = SMB2_FILE_DELETE_ON_CLOSE | SMB2_FILE_NON_DIRECTORY_FILE;
  struct step s[2] = {{enc_create, &a}, {enc_close, NULL}};
  return run_steps(c, s, 2, "unlink", path, NULL);
}

/* rmdir: CREATE + SET_INFO(FileDispositionInformation) + CLOSE. Samba accepts DELETE_ON_CLOSE
 * on a non-empty directory and then silently keeps it at close; the disposition SET_INFO is
 * where STATUS_DIRECTORY_NOT_EMPTY is reported. */
int smb3_rmdir(smb3_client *c, const char *path) {
  uint8_t disp[1];
  fscc_disposition_info_encode(disp, sizeof disp, 1);
  struct create_args a;
  meta_create(&a, path, SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES);
  a.options = SMB2_FILE_DIRECTORY_FILE;
  struct si_arg si = {FSCC_FILE_DISPOSITION_INFORMATION, disp, 1};
  struct step s[3] = {{enc_create, &a}, {enc_set_info, &si}, {enc_close, NULL}};
  return run_steps(c, s, 3, "rmdir", path, NULL);
}

int smb3_rename(smb3_client *c, const char *from, const char *to, int replace) {
  size_t cap = 24 + 4 * strlen(to) + 8;
  uint8_t *buf = malloc(cap);
  if (!buf) return SMB3_ENOMEM;
  int len = fscc_rename_info_encode(buf, cap, replace, to);
  if (len < 0) {
    free(buf);
    return client_fail(c, SMB3_ENAMETOOLONG, 0, "rename: bad target name '%s'", to);
  }
  struct create_args a;
  meta_create(&a, from, SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES);
  struct si_arg si = {FSCC_FILE_RENAME_INFORMATION, buf, (uint32_t)len};
  struct step s[3] = {{enc_create, &a}, {enc_set_info, &si}, {enc_close, NULL}};
  int rc = run_steps(c, s, 3, "rename", from, NULL);
  free(buf);
  return rc;
}

int smb3_truncate(smb3_client *c, const char *path, uint64_t size) {
  uint8_t buf[8];
  fscc_eof_info_encode(buf, sizeof buf, size);
  struct create_args a;
  meta_create(&a, path, SMB2_FILE_WRITE_DATA | SMB2_FILE_READ_ATTRIBUTES);
  struct si_arg si = {FSCC_FILE_END_OF_FILE_INFORMATION, buf, 8};
  struct step s[3] = {{enc_create, &a}, {enc_set_info, &si}, {enc_close, NULL}};
  return run_steps(c, s, 3, "truncate", path, NULL);
}

static int set_basic(smb3_client *c, const char *path, uint64_t atime, uint64_t mtime, uint32_t attrs,
                     const char *what) {
  uint8_t buf[40];
  fscc_basic_info_encode(buf, sizeof buf, 0, atime, mtime, 0, attrs);
  struct create_args a;
  meta_create(&a, path, SMB2_FILE_WRITE_ATTRIBUTES | SMB2_FILE_READ_ATTRIBUTES);
  struct si_arg si = {FSCC_FILE_BASIC_INFORMATION, buf, 40};
  struct step s[3] = {{enc_create, &a}, {enc_set_info, &si}, {enc_close, NULL}};
  return run_steps(c, s, 3, what, path, NULL);
}

int smb3_utimens(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                 const struct timespec_smb3 *mtime) {
  return set_basic(c, path, atime ? ts_to_filetime(atime) : 0, mtime ? ts_to_filetime(mtime) : 0, 0, "utimens");
}

int smb3_set_readonly(smb3_client *c, const char *path, int readonly) {
  struct smb3_stat st;
  int rc = smb3_stat(c, path, &st);
  if (rc) return rc;
  uint32_t attrs = st.attributes & ~SMB2_FILE_ATTRIBUTE_READONLY;
  if (readonly) attrs |= SMB2_FILE_ATTRIBUTE_READONLY;
  if (!attrs) attrs = SMB2_FILE_ATTRIBUTE_NORMAL; /* 0 would mean "unchanged" */
  return set_basic(c, path, 0, 0, attrs, "chmod");
}

/* ---- small whole-file helpers ---- */
struct rw_arg {
  void *buf;
  uint32_t len;
};
static int enc_read0(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct rw_arg *r = arg;
  return build_read(c, m, fid, r->buf, r->len, 0);
}
static int enc_write0(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct rw_arg *r = arg;
  return build_write(c, m, fid, r->buf, r->len, 0);
}

ssize_t smb3_read_file(smb3_client *c, const char *path, void *buf, size_t len) {
  if (len > c->rsize) { /* does not fit one READ: open + pipelined reads + close */
    smb3_file *f;
    int rc = smb3_open(c, path, O_RDONLY, &f, NULL);
    if (rc) return rc;
    ssize_t n = smb3_read_range(f, buf, len, 0);
    int crc = smb3_close(f);
    return n < 0 ? n : crc ? crc : n;
  }
  struct create_args a;
  create_args_from_flags(&a, path, O_RDONLY);
  struct rw_arg r = {buf, (uint32_t)len};
  struct step s[3] = {{enc_create, &a}, {enc_read0, &r}, {enc_close, NULL}};
  struct smb3_chain *ch;
  int rc = client_steps(c, s, 3, &ch);
  if (rc) return rc;
  ssize_t n;
  if (ch->msgs[0].status != NT_STATUS_SUCCESS) n = chain_result(c, ch, "read", path);
  else if (ch->msgs[1].status == NT_STATUS_END_OF_FILE) n = 0;
  else if (ch->msgs[1].status != NT_STATUS_SUCCESS) n = chain_result(c, ch, "read", path);
  else n = (ssize_t)ch->msgs[1].rd_len;
  chain_free(ch);
  return n;
}

ssize_t smb3_write_file(smb3_client *c, const char *path, const void *buf, size_t len) {
  if (len > c->wsize || len == 0) {
    smb3_file *f;
    int rc = smb3_open(c, path, O_WRONLY | O_CREAT | O_TRUNC, &f, NULL);
    if (rc) return rc;
    ssize_t n = len ? smb3_write_range(f, buf, len, 0) : 0;
    int crc = smb3_close(f);
    return n < 0 ? n : crc ? crc : n;
  }
  struct create_args a;
  create_args_from_flags(&a, path, O_WRONLY | O_CREAT | O_TRUNC);
  struct rw_arg r = {(void *)buf, (uint32_t)len};
  struct step s[3] = {{enc_create, &a}, {enc_write0, &r}, {enc_close_postquery, NULL}};
  struct smb3_chain *ch;
  int rc = client_steps(c, s, 3, &ch);
  if (rc) return rc;
  ssize_t n = chain_result(c, ch, "write", path);
  struct smb2_write_rsp w;
  if (!n) {
    if (smb2_write_rsp_decode(ch->msgs[1].rsp, ch->msgs[1].rsp_len, &w)) n = SMB3_EPROTO;
    else n = w.count == len ? (ssize_t)len : client_fail(c, SMB3_EIO, 0, "write '%s': short write", path);
  }
  chain_free(ch);
  return n;
}
