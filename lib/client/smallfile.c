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
static int enc_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_close(c, m, fid, 0);
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
  struct step st[3] = {{enc_create, &s}, {enc_read, &s}, {enc_close, &s}};
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
  struct step st[3] = {{enc_create, &s}, {enc_write, &s}, {enc_close, &s}};
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
  a->st[2] = (struct step){enc_close, &a->s};
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
