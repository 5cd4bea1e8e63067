/* smallfile.c - whole small files in one round trip: CREATE + READ + CLOSE and
 * CREATE + WRITE + CLOSE as related compounds when the data fits one request; larger files go
 * through open + the pipelined bulk engine + close. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

struct small {
  struct create_args ca;
  void *buf;
  uint32_t len;
};

static int enc_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, &((const struct small *)arg)->ca);
}
static int enc_read(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct small *s = arg;
  return build_read(c, m, fid, s->buf, s->len, 0);
}
static int enc_write(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct small *s = arg;
  return build_write(c, m, fid, s->buf, s->len, 0);
}

/* The first failing element, as SMB3_E* with the failure recorded. */
static int small_result(smb3_client *c, struct smb3_chain *ch, int upto, const char *what, const char *path) {
  char msg[700];
  snprintf(msg, sizeof msg, "%s '%s'", what, path);
  for (int i = 0; i < upto; i++)
    if (ch->msgs[i].status != NT_STATUS_SUCCESS) return client_msg_result(c, ch, i, msg);
  return 0;
}

/* Open, bulk transfer, close: for data larger than one request. */
static ssize_t big_file(smb3_client *c, const char *path, void *buf, size_t len, int is_read) {
  smb3_file *f;
  int rc = smb3_open(c, path, is_read ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, &f, NULL);
  if (rc) return rc;
  ssize_t n = len == 0 ? 0 : is_read ? smb3_read_range(f, buf, len, 0) : smb3_write_range(f, buf, len, 0);
  int crc = smb3_close(f);
  return n < 0 ? n : crc ? crc : n;
}

/* The result of a completed CREATE + READ + CLOSE chain (bytes read or SMB3_E*). */
static ssize_t small_read_result(smb3_client *c, struct smb3_chain *ch, const char *path) {
  if (ch->msgs[0].status != NT_STATUS_SUCCESS) return small_result(c, ch, 1, "read", path);
  if (ch->msgs[1].status == NT_STATUS_END_OF_FILE) return 0;
  if (ch->msgs[1].status != NT_STATUS_SUCCESS) return small_result(c, ch, 2, "read", path);
  return (ssize_t)ch->msgs[1].rd_len;
}

/* ... of a CREATE + WRITE + CLOSE chain (bytes written: all of them, or SMB3_E*). */
static ssize_t small_write_result(smb3_client *c, struct smb3_chain *ch, const char *path, size_t len) {
  ssize_t n = small_result(c, ch, 3, "write", path);
  struct smb2_write_rsp w;
  if (!n && smb2_write_rsp_decode(ch->msgs[1].rsp, ch->msgs[1].rsp_len, &w))
    return client_fail(c, SMB3_EPROTO, 0, "write '%s': malformed WRITE response", path);
  if (!n) n = w.count == len ? (ssize_t)len : client_fail(c, SMB3_EIO, 0, "write '%s': short write", path);
  return n;
}

ssize_t smb3_read_file(smb3_client *c, const char *path, void *buf, size_t len) {
  if (!c || !path || (!buf && len)) return SMB3_EINVAL;
  int busy = client_sync_check(c, "read");
  if (busy) return busy;
  if (len > client_io_size(c, 1) || len == 0) return big_file(c, path, buf, len, 1);
  struct small s = {.buf = buf, .len = (uint32_t)len};
  create_args_from_flags(&s.ca, path, O_RDONLY);
  struct step st[3] = {{enc_create, &s}, {enc_read, &s}, {step_close, &s}};
  struct smb3_chain *ch;
  int rc = client_steps(c, st, 3, &ch);
  if (rc) return rc;
  ssize_t n = small_read_result(c, ch, path);
  chain_free(ch);
  return n;
}

ssize_t smb3_write_file(smb3_client *c, const char *path, const void *buf, size_t len) {
  if (!c || !path || (!buf && len)) return SMB3_EINVAL;
  int busy = client_sync_check(c, "write");
  if (busy) return busy;
  if (len > client_io_size(c, 0) || len == 0) return big_file(c, path, (void *)buf, len, 0);
  struct small s = {.buf = (void *)buf, .len = (uint32_t)len};
  create_args_from_flags(&s.ca, path, O_WRONLY | O_CREAT | O_TRUNC);
  struct step st[3] = {{enc_create, &s}, {enc_write, &s}, {step_close, &s}};
  struct smb3_chain *ch;
  int rc = client_steps(c, st, 3, &ch);
  if (rc) return rc;
  ssize_t n = small_write_result(c, ch, path, len);
  chain_free(ch);
  return n;
}

/* ---- asynchronous: the steps and their arguments live in one context until the callback ---- */
struct small_async {
  smb3_client *c;
  struct small s;
  struct step st[3];
  int is_read;
  smb3_cb cb;
  void *arg;
  char path[];
};

static void ignore_done(int rc, void *arg) {
  (void)rc;
  (void)arg;
}

static void small_done(struct smb3_chain *ch, int rc, void *arg) {
  struct small_async *a = arg;
  int64_t r = rc           ? rc
              : a->is_read ? small_read_result(a->c, ch, a->path)
                           : small_write_result(a->c, ch, a->path, a->s.len);
  /* created, but the data did not get in: no half-made file is left under the name (best effort) */
  if (!rc && !a->is_read && r < 0 && ch->msgs[0].status == NT_STATUS_SUCCESS)
    (void)smb3_unlink_async(a->c, a->path, ignore_done, NULL);
  chain_free(ch);
  smb3_cb cb = a->cb;
  void *cbarg = a->arg;
  free(a);
  cb(r, cbarg);
}

static int small_async(smb3_client *c, const char *path, void *buf, size_t len, int flags, smb3_cb cb,
                       void *arg) {
  int is_read = (flags & O_ACCMODE) == O_RDONLY;
  if (!c || !path || !cb || (!buf && len) || !len || len > client_io_size(c, is_read)) return SMB3_EINVAL;
  size_t pl = strlen(path) + 1;
  struct small_async *a = malloc(sizeof *a + pl);
  if (!a) return SMB3_ENOMEM;
  memcpy(a->path, path, pl);
  a->c = c;
  a->s = (struct small){.buf = buf, .len = (uint32_t)len};
  create_args_from_flags(&a->s.ca, a->path, flags);
  a->st[0] = (struct step){enc_create, &a->s};
  a->st[1] = (struct step){is_read ? enc_read : enc_write, &a->s};
  a->st[2] = (struct step){step_close, &a->s};
  a->is_read = is_read;
  a->cb = cb;
  a->arg = arg;
  int rc = client_steps_async(c, a->st, 3, 1, small_done, a);
  if (rc) free(a);
  return rc;
}

int smb3_read_file_async(smb3_client *c, const char *path, void *buf, size_t len, smb3_cb cb, void *arg) {
  return small_async(c, path, buf, len, O_RDONLY, cb, arg);
}

int smb3_create_file_async(smb3_client *c, const char *path, const void *buf, size_t len, smb3_cb cb,
                           void *arg) {
  return small_async(c, path, (void *)buf, len, O_WRONLY | O_CREAT | O_EXCL, cb, arg);
}

/* ---- a small file put in place under a temporary name, in one round trip ----
 * CREATE tmp (a new file) + WRITE + SET_INFO FileRenameInformation (tmp -> target, not replacing)
 * + CLOSE, one related compound (MS-SMB2 3.2.4.1.4). A server does not have to fail the rest of a
 * related chain when a request other than the CREATE fails (MS-SMB2 3.3.5.2.7.2: SHOULD; Samba
 * only passes on a failed CREATE), so the rename may take place after a failed WRITE: that is why
 * it does not replace. An existing target is replaced by a second round trip (a plain rename with
 * replace) only once the WRITE is known to have succeeded; a new target that received a failed
 * WRITE is unlinked again, it held nothing of anyone's before. */
struct put_async {
  smb3_client *c;
  struct create_args ca;
  const void *buf;
  uint32_t len;
  uint8_t *ren;
  uint32_t ren_len;
  struct step st[4];
  smb3_cb cb;
  void *arg;
  char *tmp, *target;
  char names[];
};

static int enc_put_write(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct put_async *p = arg;
  return build_write(c, m, fid, p->buf, p->len, 0);
}
static int enc_put_rename(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct put_async *p = arg;
  return build_set_info(c, m, fid, SMB2_0_INFO_FILE, FSCC_FILE_RENAME_INFORMATION, p->ren, p->ren_len);
}
static int enc_put_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, &((const struct put_async *)arg)->ca);
}

static void put_finish(struct put_async *p, int64_t r) {
  smb3_cb cb = p->cb;
  void *arg = p->arg;
  free(p->ren);
  free(p);
  cb(r, arg);
}

static void put_replace_done(int rc, void *arg) {
  struct put_async *p = arg;
  if (rc) (void)smb3_unlink_async(p->c, p->tmp, ignore_done, NULL);
  put_finish(p, rc ? rc : (int64_t)p->len);
}

static void put_done(struct smb3_chain *ch, int rc, void *arg) {
  struct put_async *p = arg;
  int iw = p->len ? 1 : -1, ir = p->len ? 2 : 1, ic = ir + 1;
  if (rc) {
    chain_free(ch);
    put_finish(p, rc);
    return;
  }
  char what[700];
  snprintf(what, sizeof what, "put '%s'", p->target);
  int64_t r = 0;
  if (ch->msgs[0].status != NT_STATUS_SUCCESS) {
    r = client_msg_result(p->c, ch, 0, what); /* nothing was made */
    chain_free(ch);
    put_finish(p, r);
    return;
  }
  if (iw > 0 && ch->msgs[iw].status != NT_STATUS_SUCCESS) {
    r = client_msg_result(p->c, ch, iw, what);
  } else if (iw > 0) {
    struct smb2_write_rsp w;
    if (smb2_write_rsp_decode(ch->msgs[iw].rsp, ch->msgs[iw].rsp_len, &w))
      r = client_fail(p->c, SMB3_EPROTO, 0, "%s: malformed WRITE response", what);
    else if (w.count != p->len)
      r = client_fail(p->c, SMB3_EIO, 0, "%s: short write", what);
  }
  uint32_t rs = ch->msgs[ir].status;
  if (r < 0) { /* the data did not get in: no file of ours is left under either name */
    (void)smb3_unlink_async(p->c, rs == NT_STATUS_SUCCESS ? p->target : p->tmp, ignore_done, NULL);
    chain_free(ch);
    put_finish(p, r);
    return;
  }
  if (rs == NT_STATUS_OBJECT_NAME_COLLISION) { /* target exists: replace it now the data is safe */
    chain_free(ch);
    int src = smb3_rename_async(p->c, p->tmp, p->target, 1, put_replace_done, p);
    if (src) {
      (void)smb3_unlink_async(p->c, p->tmp, ignore_done, NULL);
      put_finish(p, src);
    }
    return;
  }
  if (rs != NT_STATUS_SUCCESS) {
    r = client_msg_result(p->c, ch, ir, what);
    (void)smb3_unlink_async(p->c, p->tmp, ignore_done, NULL);
  } else if (ch->msgs[ic].status != NT_STATUS_SUCCESS) {
    r = client_msg_result(p->c, ch, ic, what); /* renamed, but the close reports a failure */
  } else {
    r = p->len;
  }
  chain_free(ch);
  put_finish(p, r);
}

int smb3_put_file_async(smb3_client *c, const char *tmp, const char *target, const void *buf, size_t len,
                        smb3_cb cb, void *arg) {
  if (!c || !tmp || !target || !cb || (!buf && len) || len > client_io_size(c, 0)) return SMB3_EINVAL;
  size_t tl = strlen(tmp) + 1, gl = strlen(target) + 1;
  struct put_async *p = calloc(1, sizeof *p + tl + gl);
  if (!p) return SMB3_ENOMEM;
  p->tmp = p->names;
  p->target = p->names + tl;
  memcpy(p->tmp, tmp, tl);
  memcpy(p->target, target, gl);
  size_t cap = 32 + 4 * gl;
  p->ren = malloc(cap);
  int n = p->ren ? fscc_rename_info_encode(p->ren, cap, 0, client_names(c), p->target) : SMB3_ENOMEM;
  if (n < 0) {
    free(p->ren);
    free(p);
    return n == SMB3_ENOMEM ? n : client_fail(c, SMB3_ENAMETOOLONG, 0, "put: bad target name '%s'", target);
  }
  p->ren_len = (uint32_t)n;
  p->c = c;
  p->buf = buf;
  p->len = (uint32_t)len;
  p->cb = cb;
  p->arg = arg;
  create_args_from_flags(&p->ca, p->tmp, O_WRONLY | O_CREAT | O_EXCL);
  p->ca.access |= SMB2_DELETE; /* a rename through the handle needs it */
  int k = 0;
  p->st[k++] = (struct step){enc_put_create, p};
  if (len) p->st[k++] = (struct step){enc_put_write, p};
  p->st[k++] = (struct step){enc_put_rename, p};
  p->st[k++] = (struct step){step_close, NULL};
  int rc = client_steps_async(c, p->st, k, 1, put_done, p);
  if (rc) {
    free(p->ren);
    free(p);
  }
  return rc;
}
