/* posix.c - the SMB3 POSIX extensions' calls: chmod and chown (security descriptors Samba reads as
 * such), symlinks and special files (reparse points), readlink; whether the share speaks POSIX. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "client/pathop.h"
#include "util/status.h"

#define SD_MAX 128
#define SYMLINK_TARGET_MAX 4096
#define REPARSE_BUF_MAX (16 + 4 * 2 * SYMLINK_TARGET_MAX)

int smb3_posix(const smb3_client *c) {
  return c ? c->posix : 0;
}

static struct pathop *op_begin(smb3_client *c, enum pathop_kind kind, const char *path,
                               void (*cb)(int, void *), void *arg, int *rc) {
  *rc = 0;
  if (!c || !path) {
    *rc = SMB3_EINVAL;
    return NULL;
  }
  if (c->closed) {
    *rc = SMB3_ECLOSED;
    return NULL;
  }
  struct pathop *op = pathop_new(c, kind, path);
  if (!op) {
    *rc = SMB3_ENOMEM;
    return NULL;
  }
  op->cb.done = cb;
  op->arg = arg;
  return op;
}

/* Run op: synchronously when cb is NULL (then op is freed here), else in the background. */
static int op_go(struct pathop *op, int sync) {
  int rc = pathop_prepare(op);
  if (!rc) rc = sync ? pathop_run_sync(op) : pathop_run_async(op);
  if (rc || sync) pathop_free(op);
  return rc;
}

static int take_buf(struct pathop *op, const uint8_t *b, int len) {
  if (len < 0) return len;
  op->buf = malloc((size_t)len);
  if (!op->buf) return SMB3_ENOMEM;
  memcpy(op->buf, b, (size_t)len);
  op->buflen = (uint32_t)len;
  return 0;
}

static int chmod_run(smb3_client *c, const char *path, uint32_t mode, smb3_done_cb cb, void *arg, int sync) {
  int rc;
  if (!sync && !cb) return SMB3_EINVAL;
  if (mode & ~0777u) return SMB3_EINVAL;
  struct pathop *op = op_begin(c, OP_SET_SECURITY, path, cb, arg, &rc);
  if (!op) return rc;
  if (!c->posix) {
    pathop_free(op);
    return client_fail(c, SMB3_ENOTSUP, 0, "chmod '%s': the share does not speak the SMB3 POSIX extensions",
                       path);
  }
  uint8_t sd[SD_MAX];
  op->addl_info = FSCC_SECINFO_DACL;
  if ((rc = take_buf(op, sd, fscc_sd_mode_encode(sd, sizeof sd, mode)))) {
    pathop_free(op);
    return rc;
  }
  return op_go(op, sync);
}

int smb3_chmod(smb3_client *c, const char *path, uint32_t mode) {
  return chmod_run(c, path, mode, NULL, NULL, 1);
}
int smb3_chmod_async(smb3_client *c, const char *path, uint32_t mode, smb3_done_cb cb, void *arg) {
  return chmod_run(c, path, mode, cb, arg, 0);
}

static int chown_run(smb3_client *c, const char *path, uint32_t uid, uint32_t gid, smb3_done_cb cb, void *arg,
                     int sync) {
  int rc;
  if (!sync && !cb) return SMB3_EINVAL;
  if (uid == SMB3_NO_ID && gid == SMB3_NO_ID) return SMB3_EINVAL;
  struct pathop *op = op_begin(c, OP_SET_SECURITY, path, cb, arg, &rc);
  if (!op) return rc;
  if (!c->posix) {
    pathop_free(op);
    return client_fail(c, SMB3_ENOTSUP, 0, "chown '%s': the share does not speak the SMB3 POSIX extensions",
                       path);
  }
  uint8_t sd[SD_MAX];
  op->addl_info = (uid != SMB3_NO_ID ? FSCC_SECINFO_OWNER : 0) | (gid != SMB3_NO_ID ? FSCC_SECINFO_GROUP : 0);
  if ((rc = take_buf(op, sd, fscc_sd_owner_encode(sd, sizeof sd, uid, gid)))) {
    pathop_free(op);
    return rc;
  }
  return op_go(op, sync);
}

int smb3_chown(smb3_client *c, const char *path, uint32_t uid, uint32_t gid) {
  return chown_run(c, path, uid, gid, NULL, NULL, 1);
}
int smb3_chown_async(smb3_client *c, const char *path, uint32_t uid, uint32_t gid, smb3_done_cb cb,
                     void *arg) {
  return chown_run(c, path, uid, gid, cb, arg, 0);
}

static int symlink_run(smb3_client *c, const char *target, const char *path, smb3_done_cb cb, void *arg,
                       int sync) {
  int rc;
  if ((!sync && !cb) || !target || !target[0]) return SMB3_EINVAL;
  if (strlen(target) > SYMLINK_TARGET_MAX) return SMB3_ENAMETOOLONG;
  struct pathop *op = op_begin(c, OP_MKREPARSE, path, cb, arg, &rc);
  if (!op) return rc;
  uint8_t *b = malloc(REPARSE_BUF_MAX);
  rc = b ? take_buf(op, b, fscc_reparse_symlink_encode(b, REPARSE_BUF_MAX, target)) : SMB3_ENOMEM;
  free(b);
  if (rc) {
    pathop_free(op);
    return rc == SMB3_EINVAL ? SMB3_ENAMETOOLONG : rc;
  }
  op->symlink = 1;
  op->mode = 0777; /* what a symlink's mode is on POSIX systems */
  return op_go(op, sync);
}

int smb3_symlink(smb3_client *c, const char *target, const char *path) {
  return symlink_run(c, target, path, NULL, NULL, 1);
}
int smb3_symlink_async(smb3_client *c, const char *target, const char *path, smb3_done_cb cb, void *arg) {
  return symlink_run(c, target, path, cb, arg, 0);
}

static uint64_t nfs_type(uint32_t mode) {
  switch (mode & S_IFMT) {
  case S_IFIFO:
    return FSCC_NFS_SPECFILE_FIFO;
  case S_IFSOCK:
    return FSCC_NFS_SPECFILE_SOCK;
  case S_IFCHR:
    return FSCC_NFS_SPECFILE_CHR;
  case S_IFBLK:
    return FSCC_NFS_SPECFILE_BLK;
  default:
    return 0;
  }
}

static int mknod_run(smb3_client *c, const char *path, uint32_t mode, uint64_t dev, smb3_done_cb cb,
                     void *arg, int sync, int existing) {
  int rc;
  uint64_t type = nfs_type(mode);
  if ((!sync && !cb) || !type) return SMB3_EINVAL;
  struct pathop *op = op_begin(c, OP_MKREPARSE, path, cb, arg, &rc);
  if (!op) return rc;
  uint8_t b[32];
  if ((rc = take_buf(op, b, fscc_reparse_nfs_encode(b, sizeof b, type, major(dev), minor(dev))))) {
    pathop_free(op);
    return rc;
  }
  op->mode = mode & 07777;
  op->existing = existing;
  return op_go(op, sync);
}

int smb3_mknod(smb3_client *c, const char *path, uint32_t mode, uint64_t dev) {
  return mknod_run(c, path, mode, dev, NULL, NULL, 1, 0);
}
int smb3_mknod_async(smb3_client *c, const char *path, uint32_t mode, uint64_t dev, smb3_done_cb cb,
                     void *arg) {
  return mknod_run(c, path, mode, dev, cb, arg, 0, 0);
}
int smb3_mknod_restore(smb3_client *c, const char *path, uint32_t mode, uint64_t dev) {
  return mknod_run(c, path, mode, dev, NULL, NULL, 1, 1);
}
int smb3_mknod_restore_async(smb3_client *c, const char *path, uint32_t mode, uint64_t dev, smb3_done_cb cb,
                             void *arg) {
  return mknod_run(c, path, mode, dev, cb, arg, 0, 1);
}

static int readdev_op(smb3_client *c, const char *path, struct pathop **out) {
  int rc;
  struct pathop *op = op_begin(c, OP_READLINK, path, NULL, NULL, &rc);
  if (!op) return rc;
  op->want_dev = 1;
  *out = op;
  return 0;
}

int smb3_readdev(smb3_client *c, const char *path, uint64_t *dev) {
  struct pathop *op = NULL;
  if (!dev) return SMB3_EINVAL;
  int rc = readdev_op(c, path, &op);
  if (rc) return rc;
  rc = pathop_prepare(op);
  if (!rc) rc = pathop_run_sync(op);
  if (!rc) *dev = op->rdev;
  pathop_free(op);
  return rc;
}

int smb3_readdev_async(smb3_client *c, const char *path, smb3_readdev_cb cb, void *arg) {
  struct pathop *op = NULL;
  if (!cb) return SMB3_EINVAL;
  int rc = readdev_op(c, path, &op);
  if (rc) return rc;
  op->cb.readdev = cb;
  op->arg = arg;
  return op_go(op, 0);
}

ssize_t smb3_readlink(smb3_client *c, const char *path, char *buf, size_t size) {
  int rc;
  if (!buf || !size) return SMB3_EINVAL;
  struct pathop *op = op_begin(c, OP_READLINK, path, NULL, NULL, &rc);
  if (!op) return rc;
  rc = pathop_prepare(op);
  if (!rc) rc = pathop_run_sync(op);
  ssize_t n = rc;
  if (!rc) {
    size_t len = strlen(op->target);
    size_t k = len < size - 1 ? len : size - 1;
    memcpy(buf, op->target, k);
    buf[k] = 0;
    n = (ssize_t)len;
  }
  pathop_free(op);
  return n;
}

int smb3_readlink_async(smb3_client *c, const char *path, smb3_readlink_cb cb, void *arg) {
  int rc;
  if (!cb) return SMB3_EINVAL;
  struct pathop *op = op_begin(c, OP_READLINK, path, NULL, arg, &rc);
  if (!op) return rc;
  op->cb.readlink = cb;
  return op_go(op, 0);
}

static int probe_enc_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, arg);
}
static int probe_enc_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_close(c, m, fid, 0);
}

/* Connect time, after TREE_CONNECT on a connection that negotiated POSIX: Samba honours the POSIX
 * create context only on a share with 'smb3 unix extensions' too, and answers it then; one CREATE
 * + CLOSE of the share root tells. */
int client_posix_probe(smb3_client *c) {
  struct create_args ca = {.path = "",
                           .access = SMB2_FILE_READ_ATTRIBUTES | SMB2_SYNCHRONIZE,
                           .share = SMB2_FILE_SHARE_ALL,
                           .disposition = SMB2_FILE_OPEN};
  struct step steps[2] = {{probe_enc_create, &ca}, {probe_enc_close, NULL}};
  struct smb3_chain *ch = NULL;
  int rc = client_steps(c, steps, 2, &ch);
  struct smb2_create_rsp r;
  if (!rc && ch->msgs[0].status == NT_STATUS_SUCCESS &&
      !smb2_create_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &r))
    c->posix = r.have_posix;
  if (ch) chain_free(ch);
  return rc;
}
