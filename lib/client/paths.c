/* paths.c - the public metadata API, synchronous and asynchronous, over pathop.c (one
 * description per operation; the sync form runs it and waits). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/pathop.h"
#include "util/status.h"

/* Create and prepare; NULL (with *rc) on failure. */
static struct pathop *op_make(smb3_client *c, enum pathop_kind kind, const char *path, int *rc) {
  if (!c || !path) { /* (handle operations pass the handle's own path) */
    *rc = SMB3_EINVAL;
    return NULL;
  }
  if (c->closed) {
    *rc = SMB3_ECLOSED;
    return NULL;
  }
  struct pathop *op = pathop_new(c, kind, path);
  *rc = op ? 0 : SMB3_ENOMEM;
  return op;
}

static int op_sync(struct pathop *op) {
  int rc = pathop_prepare(op);
  if (!rc) rc = pathop_run_sync(op);
  return rc;
}

static int op_async(struct pathop *op) {
  int rc = pathop_prepare(op);
  if (!rc) rc = pathop_run_async(op);
  if (rc) pathop_free(op);
  return rc;
}

/* SET_INFO payloads */
static int set_buf(struct pathop *op, const uint8_t *b, uint32_t len) {
  op->buf = malloc(len ? len : 1);
  if (!op->buf) return SMB3_ENOMEM;
  memcpy(op->buf, b, len);
  op->buflen = len;
  return 0;
}

static int rename_buf(struct pathop *op, const char *to, int replace) {
  size_t cap = 32 + 4 * strlen(to);
  op->buf = malloc(cap);
  if (!op->buf) return SMB3_ENOMEM;
  int len = fscc_rename_info_encode(op->buf, cap, replace, client_names(op->c), to);
  if (len < 0)
    return client_fail(op->c, SMB3_ENAMETOOLONG, 0, "%s: bad target name '%s'",
                       op->kind == OP_LINK ? "link" : "rename", to);
  op->buflen = (uint32_t)len;
  return 0;
}

static int eof_buf(struct pathop *op, uint64_t size) {
  uint8_t b[8];
  fscc_eof_info_encode(b, sizeof b, size);
  return set_buf(op, b, 8);
}

static int basic_buf(struct pathop *op, const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                     uint32_t attrs) {
  uint8_t b[40];
  fscc_basic_info_encode(b, sizeof b, 0, atime ? ts_to_filetime(atime) : 0, mtime ? ts_to_filetime(mtime) : 0,
                         0, attrs);
  return set_buf(op, b, 40);
}

/* ---- synchronous ---- */
int smb3_stat(smb3_client *c, const char *path, struct smb3_stat *st) {
  int rc;
  struct pathop *op = op_make(c, OP_STAT, path, &rc);
  if (op && !(rc = op_sync(op))) *st = op->st;
  pathop_free(op);
  return rc;
}

int smb3_statvfs(smb3_client *c, struct smb3_statvfs *sv) {
  int rc;
  struct pathop *op = op_make(c, OP_STATVFS, "", &rc);
  if (op && !(rc = op_sync(op))) *sv = op->sv;
  pathop_free(op);
  return rc;
}

static int simple_sync(smb3_client *c, enum pathop_kind kind, const char *path) {
  int rc;
  struct pathop *op = op_make(c, kind, path, &rc);
  if (op) rc = op_sync(op);
  pathop_free(op);
  return rc;
}

int smb3_mkdir(smb3_client *c, const char *path) {
  return simple_sync(c, OP_MKDIR, path);
}
int smb3_rmdir(smb3_client *c, const char *path) {
  int rc;
  struct pathop *op = op_make(c, OP_RMDIR, path, &rc);
  uint8_t one = 1;
  if (op && !(rc = set_buf(op, &one, 1))) rc = op_sync(op);
  pathop_free(op);
  return rc;
}
int smb3_unlink(smb3_client *c, const char *path) {
  return simple_sync(c, OP_UNLINK, path);
}

static int rename_or_link(smb3_client *c, enum pathop_kind kind, const char *from, const char *to,
                          int replace) {
  if (!to) return SMB3_EINVAL;
  int rc;
  struct pathop *op = op_make(c, kind, from, &rc);
  if (op && !(rc = rename_buf(op, to, replace))) rc = op_sync(op);
  pathop_free(op);
  return rc;
}
int smb3_rename(smb3_client *c, const char *from, const char *to, int replace) {
  return rename_or_link(c, OP_RENAME, from, to, replace);
}
int smb3_link(smb3_client *c, const char *existing, const char *newpath) {
  return rename_or_link(c, OP_LINK, existing, newpath, 0);
}

int smb3_truncate(smb3_client *c, const char *path, uint64_t size) {
  int rc;
  struct pathop *op = op_make(c, OP_TRUNCATE, path, &rc);
  if (op && !(rc = eof_buf(op, size))) rc = op_sync(op);
  pathop_free(op);
  return rc;
}

static int setattr_sync(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                        const struct timespec_smb3 *mtime, uint32_t attrs) {
  int rc;
  struct pathop *op = op_make(c, OP_SETATTR, path, &rc);
  if (op && !(rc = basic_buf(op, atime, mtime, attrs))) rc = op_sync(op);
  pathop_free(op);
  return rc;
}

int smb3_utimens(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                 const struct timespec_smb3 *mtime) {
  return setattr_sync(c, path, atime, mtime, 0);
}

int smb3_set_readonly(smb3_client *c, const char *path, int readonly) {
  struct smb3_stat st;
  int rc = smb3_stat(c, path, &st);
  if (rc) return rc;
  uint32_t attrs = st.attributes & ~SMB2_FILE_ATTRIBUTE_READONLY;
  if (readonly) attrs |= SMB2_FILE_ATTRIBUTE_READONLY;
  if (!attrs) attrs = SMB2_FILE_ATTRIBUTE_NORMAL; /* 0 would mean "unchanged" */
  return setattr_sync(c, path, NULL, NULL, attrs);
}

int smb3_open(smb3_client *c, const char *path, int flags, smb3_file **out, struct smb3_stat *st) {
  *out = NULL;
  int rc;
  struct pathop *op = op_make(c, OP_OPEN, path, &rc);
  if (op) {
    op->open_flags = flags;
    if (!(rc = op_sync(op))) {
      *out = op->file;
      if (st) *st = op->st;
    }
  }
  pathop_free(op);
  return rc;
}

static int handle_sync(smb3_file *f, enum pathop_kind kind, struct pathop **keep) {
  if (!f) return SMB3_EBADF;
  int rc;
  struct pathop *op = op_make(f->c, kind, f->path, &rc);
  if (op) {
    op->fid = f->fid;
    rc = op_sync(op);
  }
  if (keep && !rc)
    *keep = op;
  else
    pathop_free(op);
  return rc;
}

int smb3_close(smb3_file *f) {
  if (!f) return SMB3_EBADF;
  int rc = client_sync_check(f->c, "close");
  if (rc) return rc; /* nothing sent: f stays open (close it with smb3_close_async instead) */
  rc = f->c->closed ? SMB3_ECLOSED : handle_sync(f, OP_CLOSE, NULL);
  file_free(f);
  return rc;
}

int smb3_fstat(smb3_file *f, struct smb3_stat *st) {
  struct pathop *op = NULL;
  int rc = handle_sync(f, OP_FSTAT, &op);
  if (!rc) *st = op->st;
  pathop_free(op);
  return rc;
}

int smb3_fsync(smb3_file *f) {
  return handle_sync(f, OP_FSYNC, NULL);
}

/* The lock request's one element, or SMB3_EINVAL/SMB3_ERANGE. Locks never wait at the server:
 * a waiting lock would hold the server's answer (and this request's credits) indefinitely, and
 * the caller can ask again instead (the mount does, interruptibly). */
static int lock_element(uint64_t off, uint64_t len, int type, struct smb2_lock_element *el,
                        enum pathop_kind *kind) {
  if (len > UINT64_MAX - off) return SMB3_ERANGE;
  switch (type) {
  case SMB3_LOCK_SHARED:
    el->flags = SMB2_LOCKFLAG_SHARED_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;
    break;
  case SMB3_LOCK_EXCLUSIVE:
    el->flags = SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;
    break;
  case SMB3_LOCK_UNLOCK:
    el->flags = SMB2_LOCKFLAG_UNLOCK;
    break;
  default:
    return SMB3_EINVAL;
  }
  el->offset = off;
  el->length = len;
  *kind = type == SMB3_LOCK_UNLOCK ? OP_UNLOCK : OP_LOCK;
  return 0;
}

int smb3_lock(smb3_file *f, uint64_t off, uint64_t len, int type) {
  if (!f) return SMB3_EBADF;
  struct smb2_lock_element el;
  enum pathop_kind kind;
  int rc = lock_element(off, len, type, &el, &kind);
  if (rc) return rc;
  struct pathop *op = op_make(f->c, kind, f->path, &rc);
  if (op) {
    op->fid = f->fid;
    op->lock = el;
    rc = op_sync(op);
  }
  pathop_free(op);
  return rc;
}

int smb3_ftruncate(smb3_file *f, uint64_t size) {
  if (!f) return SMB3_EBADF;
  int rc;
  struct pathop *op = op_make(f->c, OP_FTRUNCATE, f->path, &rc);
  if (op) {
    op->fid = f->fid;
    if (!(rc = eof_buf(op, size))) rc = op_sync(op);
  }
  pathop_free(op);
  return rc;
}

/* ---- asynchronous ---- */
#define ASYNC_OP(kind_, path_, field_, cb_)                                                                  \
  int rc;                                                                                                    \
  if (!(cb_)) return SMB3_EINVAL;                                                                            \
  struct pathop *op = op_make(c, kind_, path_, &rc);                                                         \
  if (!op) return rc;                                                                                        \
  op->cb.field_ = cb_;                                                                                       \
  op->arg = arg

int smb3_stat_async(smb3_client *c, const char *path, smb3_stat_cb cb, void *arg) {
  ASYNC_OP(OP_STAT, path, stat, cb);
  return op_async(op);
}

int smb3_statvfs_async(smb3_client *c, smb3_statvfs_cb cb, void *arg) {
  ASYNC_OP(OP_STATVFS, "", statvfs, cb);
  return op_async(op);
}

static int done_async(smb3_client *c, enum pathop_kind kind, const char *path, smb3_done_cb cb, void *arg,
                      struct pathop **out) {
  ASYNC_OP(kind, path, done, cb);
  *out = op;
  return 0;
}

int smb3_mkdir_async(smb3_client *c, const char *path, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = done_async(c, OP_MKDIR, path, cb, arg, &op);
  return rc ? rc : op_async(op);
}

int smb3_mkdir_stat_async(smb3_client *c, const char *path, smb3_stat_cb cb, void *arg) {
  ASYNC_OP(OP_MKDIR, path, stat, cb);
  op->mkdir_stat = 1;
  return op_async(op);
}

int smb3_mkdir_mode_async(smb3_client *c, const char *path, uint32_t mode, smb3_stat_cb cb, void *arg) {
  ASYNC_OP(OP_MKDIR, path, stat, cb);
  op->mkdir_stat = 1;
  op->mode_set = 1;
  op->mode = mode & 07777;
  return op_async(op);
}

int smb3_unlink_async(smb3_client *c, const char *path, smb3_done_cb cb, void *arg) {
  return smb3_close_unlink_async(c, NULL, path, cb, arg);
}

/* A removal with f (or NULL) as the lead CLOSE of its compound (steps.c: closed before it, in the
 * same round trip); another connection's handle is closed on its own. On failure f is freed and cb
 * never runs. */
static int remove_op(smb3_client *c, smb3_file *f, enum pathop_kind kind, const char *path, smb3_done_cb cb,
                     void *arg, struct pathop **out) {
  if (f && f->c != c) { /* another connection's handle (DFS): closed on its own */
    (void)smb3_close_async(f, NULL, NULL);
    f = NULL;
  }
  int rc = done_async(c, kind, path, cb, arg, out);
  if (rc) {
    if (f) (void)smb3_close_async(f, NULL, NULL);
    return rc;
  }
  (*out)->lead = f;
  return 0;
}

int smb3_close_unlink_async(smb3_client *c, smb3_file *f, const char *path, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = remove_op(c, f, OP_UNLINK, path, cb, arg, &op);
  return rc ? rc : op_async(op);
}

static void stat_instead(int rc, void *arg) { /* (a placeholder: cb.stat replaces it) */
  (void)rc, (void)arg;
}

int smb3_close_unlink_stat_async(smb3_client *c, smb3_file *f, const char *path, smb3_stat_cb cb, void *arg) {
  if (!cb) {
    if (f) (void)smb3_close_async(f, NULL, NULL);
    return SMB3_EINVAL;
  }
  struct pathop *op;
  int rc = remove_op(c, f, OP_UNLINK, path, stat_instead, arg, &op);
  if (rc) return rc;
  op->cb.stat = cb;
  op->then_stat = 1;
  return op_async(op);
}

/* Attach a SET_INFO payload, then run; frees op on any failure. */
static int with_buf_async(struct pathop *op, int rc) {
  if (rc) {
    pathop_free(op);
    return rc;
  }
  return op_async(op);
}

int smb3_get_eas_async(smb3_client *c, const char *path, smb3_eas_cb cb, void *arg) {
  ASYNC_OP(OP_GET_EAS, path, eas, cb);
  return op_async(op);
}

int smb3_set_ea_async(smb3_client *c, const char *path, const char *name, const void *value, size_t len,
                      smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = done_async(c, OP_SET_EA, path, cb, arg, &op);
  if (rc) return rc;
  size_t cap = 8 + (name ? strlen(name) : 0) + 1 + len; /* the one entry (the encoder checks the limits) */
  uint8_t *b = malloc(cap);
  int n = b ? fscc_ea_encode(b, cap, name, value, len) : SMB3_ENOMEM;
  if (n >= 0) {
    op->buf = b;
    op->buflen = (uint32_t)n;
  } else {
    free(b);
  }
  return with_buf_async(op, n < 0 ? n : 0);
}

int smb3_rmdir_async(smb3_client *c, const char *path, smb3_done_cb cb, void *arg) {
  return smb3_close_rmdir_async(c, NULL, path, cb, arg);
}

int smb3_close_rmdir_async(smb3_client *c, smb3_file *f, const char *path, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  uint8_t one = 1;
  int rc = remove_op(c, f, OP_RMDIR, path, cb, arg, &op);
  return rc ? rc : with_buf_async(op, set_buf(op, &one, 1));
}

static int rename_or_link_async(smb3_client *c, enum pathop_kind kind, const char *from, const char *to,
                                int replace, smb3_done_cb cb, void *arg) {
  if (!to) return SMB3_EINVAL;
  struct pathop *op;
  int rc = done_async(c, kind, from, cb, arg, &op);
  return rc ? rc : with_buf_async(op, rename_buf(op, to, replace));
}
int smb3_rename_async(smb3_client *c, const char *from, const char *to, int replace, smb3_done_cb cb,
                      void *arg) {
  return rename_or_link_async(c, OP_RENAME, from, to, replace, cb, arg);
}
int smb3_link_async(smb3_client *c, const char *existing, const char *newpath, smb3_done_cb cb, void *arg) {
  return rename_or_link_async(c, OP_LINK, existing, newpath, 0, cb, arg);
}

int smb3_link_stat_async(smb3_client *c, const char *existing, const char *newpath, smb3_stat_cb cb,
                         void *arg) {
  if (!newpath) return SMB3_EINVAL;
  ASYNC_OP(OP_LINK, existing, stat, cb);
  op->then_stat = 1;
  return with_buf_async(op, rename_buf(op, newpath, 0));
}

int smb3_truncate_async(smb3_client *c, const char *path, uint64_t size, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = done_async(c, OP_TRUNCATE, path, cb, arg, &op);
  return rc ? rc : with_buf_async(op, eof_buf(op, size));
}

int smb3_setattr_async(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                       const struct timespec_smb3 *mtime, uint32_t attributes, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = done_async(c, OP_SETATTR, path, cb, arg, &op);
  return rc ? rc : with_buf_async(op, basic_buf(op, atime, mtime, attributes));
}

int smb3_setattr_stat_async(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                            const struct timespec_smb3 *mtime, uint32_t attributes, smb3_stat_cb cb,
                            void *arg) {
  ASYNC_OP(OP_SETATTR, path, stat, cb);
  op->then_stat = 1;
  return with_buf_async(op, basic_buf(op, atime, mtime, attributes));
}

static void lease_ask(smb3_client *c, struct pathop *op, const uint8_t *key, uint32_t want);

static int open_async(smb3_client *c, const char *path, int flags, const uint8_t *key, uint32_t want,
                      int64_t mode, smb3_open_cb cb, void *arg) {
  ASYNC_OP(OP_OPEN, path, open, cb);
  op->open_flags = flags;
  op->mode_set = mode >= 0;
  op->mode = (uint32_t)(mode & 07777);
  lease_ask(c, op, key, want);
  return op_async(op);
}

int smb3_open_read_async(smb3_client *c, const char *path, int flags, const uint8_t key[16], uint32_t want,
                         void *buf, size_t len, smb3_open_read_cb cb, void *arg) {
  if (!buf || !len || (c && len > c->rsize) || (flags & O_ACCMODE) == O_WRONLY) return SMB3_EINVAL;
  ASYNC_OP(OP_OPEN, path, open_read, cb);
  op->open_flags = flags;
  op->rd_buf = buf;
  op->rd_len = (uint32_t)len;
  lease_ask(c, op, key, want);
  return op_async(op);
}

int smb3_create_write_async(smb3_client *c, const char *path, int flags, const uint8_t key[16], uint32_t want,
                            int64_t mode, const void *buf, size_t len, uint64_t off,
                            const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                            smb3_open_write_cb cb, void *arg) {
  if ((!buf && len) || (c && len > c->wsize) || off > INT64_MAX - len || (flags & O_ACCMODE) == O_RDONLY)
    return SMB3_EINVAL;
  ASYNC_OP(OP_OPEN, path, open_write, cb);
  op->open_flags = flags;
  op->mode_set = mode >= 0;
  op->mode = (uint32_t)(mode & 07777);
  op->wr = 1;
  op->wr_buf = buf;
  op->wr_len = (uint32_t)len;
  op->wr_off = off;
  op->wr_times = atime || mtime;
  fscc_basic_info_encode(op->wr_basic, sizeof op->wr_basic, 0, atime ? ts_to_filetime(atime) : 0,
                         mtime ? ts_to_filetime(mtime) : 0, 0, 0);
  lease_ask(c, op, key, want);
  return op_async(op);
}

static void lease_ask(smb3_client *c, struct pathop *op, const uint8_t *key, uint32_t want) {
  if (key && want && client_leasing(c)) {
    op->ca.oplock = SMB2_OPLOCK_LEVEL_LEASE;
    op->ca.lease.version = core_negotiated(c->core)->dialect >= SMB2_DIALECT_300 ? 2 : 1;
    memcpy(op->ca.lease.key, key, 16);
    op->ca.lease.state = want & (SMB3_LEASE_READ | SMB3_LEASE_WRITE | SMB3_LEASE_HANDLE);
  } else if (key && (want & SMB3_LEASE_READ)) {
    /* No leases: an oplock on this handle (3.2.4.3.8 uses BATCH for what a RWH lease gives;
     * a read-only want asks for LEVEL_II). The key is kept for the break handler. */
    op->ca.oplock =
        want & (SMB3_LEASE_WRITE | SMB3_LEASE_HANDLE) ? SMB2_OPLOCK_LEVEL_BATCH : SMB2_OPLOCK_LEVEL_II;
    memcpy(op->ca.lease.key, key, 16); /* lease.version stays 0: no lease context is sent */
  }
}

int smb3_open_async(smb3_client *c, const char *path, int flags, smb3_open_cb cb, void *arg) {
  return open_async(c, path, flags, NULL, 0, -1, cb, arg);
}

int smb3_open_mode_async(smb3_client *c, const char *path, int flags, uint32_t mode, smb3_open_cb cb,
                         void *arg) {
  return open_async(c, path, flags, NULL, 0, mode, cb, arg);
}

int smb3_open_lease_async(smb3_client *c, const char *path, int flags, const uint8_t key[16], uint32_t want,
                          smb3_open_cb cb, void *arg) {
  return open_async(c, path, flags, key, want, -1, cb, arg);
}

int smb3_open_lease_mode_async(smb3_client *c, const char *path, int flags, const uint8_t key[16],
                               uint32_t want, uint32_t mode, smb3_open_cb cb, void *arg) {
  return open_async(c, path, flags, key, want, mode, cb, arg);
}

uint32_t smb3_file_lease(const smb3_file *f) {
  return f ? f->lease : 0;
}
smb3_client *smb3_file_client(const smb3_file *f) {
  return f ? f->c : NULL;
}

static int handle_async(smb3_file *f, enum pathop_kind kind, smb3_done_cb cb, void *arg,
                        struct pathop **out) {
  if (!f) return SMB3_EBADF;
  smb3_client *c = f->c;
  ASYNC_OP(kind, f->path, done, cb);
  op->fid = f->fid;
  *out = op;
  return 0;
}

static int close_async(smb3_file *f, struct pathop *op, int rc) {
  if (!rc) {
    op->closing = f;
    rc = op_async(op); /* on failure op is freed, f is not */
  }
  if (rc && f) file_free(f); /* the handle is gone with its connection or never reached: f goes anyway */
  return rc;
}

static void close_ignored(int rc, void *arg) {
  (void)rc, (void)arg;
}

int smb3_close_async(smb3_file *f, smb3_done_cb cb, void *arg) {
  struct pathop *op = NULL;
  int rc = handle_async(f, OP_CLOSE, cb ? cb : close_ignored, arg, &op); /* (cb NULL: nobody to tell) */
  return close_async(f, op, rc);
}

/* ---- several handles closed in one round trip: an unrelated compound of CLOSEs (MS-SMB2
 * 3.2.4.1.4), or one request each with nocompound ---- */
struct close_many {
  smb3_done_cb cb;
  void *arg;
  int left, rc;
  smb3_file **files; /* the compound's, freed when it completes */
  pthread_mutex_t lock;
};

static void close_many_end(struct close_many *x, int rc) {
  pthread_mutex_lock(&x->lock);
  if (rc && !x->rc) x->rc = rc;
  int last = --x->left == 0;
  pthread_mutex_unlock(&x->lock);
  if (!last) return;
  smb3_done_cb cb = x->cb;
  void *arg = x->arg;
  rc = x->rc;
  pthread_mutex_destroy(&x->lock);
  free(x);
  cb(rc, arg);
}

static void close_many_one(int rc, void *arg) {
  close_many_end(arg, rc);
}

static void close_many_done(struct smb3_chain *ch, void *arg) {
  int rc = ch->error;
  for (int i = 0; !rc && i < ch->n; i++)
    if (ch->msgs[i].status != NT_STATUS_SUCCESS) rc = smb3_status_to_err(ch->msgs[i].status);
  struct close_many *x = arg;
  if (rc == SMB3_ERANGE) { /* the server's whole credit window is smaller than the compound: one each */
    smb3_file **files = x->files;
    int n = ch->n;
    x->files = NULL;
    chain_free(ch);
    pthread_mutex_lock(&x->lock);
    x->left += n;
    pthread_mutex_unlock(&x->lock);
    for (int i = 0; i < n; i++) {
      int r = smb3_close_async(files[i], close_many_one, x); /* frees the file even when not sent */
      if (r) close_many_end(x, r);
    }
    free(files);
    close_many_end(x, 0); /* the compound's own count */
    return;
  }
  for (int i = 0; i < ch->n; i++)
    file_free(x->files[i]);
  free(x->files);
  chain_free(ch);
  close_many_end(arg, rc ? rc : 0);
}

_Static_assert(SMB3_CLOSE_MANY_MAX <= CORE_MAX_CHAIN, "one compound holds every CLOSE");

int smb3_close_many_async(smb3_file *const *files, int n, smb3_done_cb cb, void *arg) {
  if (!files || n < 1 || n > SMB3_CLOSE_MANY_MAX || !cb) return SMB3_EINVAL;
  for (int i = 0; i < n; i++)
    if (!files[i] || files[i]->c != files[0]->c) return SMB3_EINVAL;
  smb3_client *c = files[0]->c;
  struct close_many *x = calloc(1, sizeof *x);
  if (!x) return SMB3_ENOMEM;
  *x = (struct close_many){.cb = cb, .arg = arg};
  pthread_mutex_init(&x->lock, NULL);
  if (c->opts.nocompound || n == 1) {
    x->left = n + 1; /* +1: ours, so that nothing finishes x while we submit */
    for (int i = 0; i < n; i++) {
      int rc = smb3_close_async(files[i], close_many_one, x); /* frees the file even when not sent */
      if (rc) close_many_end(x, rc);
    }
    close_many_end(x, 0);
    return 0;
  }
  x->left = 1;
  struct smb3_chain *ch = chain_new(n);
  smb3_file **keep = malloc(sizeof *keep * (size_t)n);
  int rc = ch && keep ? 0 : SMB3_ENOMEM;
  for (int i = 0; i < n && !rc; i++)
    rc = build_close(c, &ch->msgs[i], files[i]->fid, 0);
  if (!rc) {
    memcpy(keep, files, sizeof *keep * (size_t)n);
    x->files = keep;
    ch->cb = close_many_done;
    ch->arg = x;
    rc = client_submit(c, ch);
  }
  if (rc) {
    chain_free(ch);
    free(keep);
    pthread_mutex_destroy(&x->lock);
    free(x);
    for (int i = 0; i < n; i++) /* the handles go with their connection or were never reached */
      file_free(files[i]);
  }
  return rc;
}

int smb3_close_stat_async(smb3_file *f, smb3_stat_cb cb, void *arg) {
  if (!f) return SMB3_EBADF;
  smb3_client *c = f->c;
  int rc = 0;
  struct pathop *op = cb ? op_make(c, OP_CLOSE, f->path, &rc) : NULL;
  if (op) {
    op->cb.stat = cb;
    op->arg = arg;
    op->fid = f->fid;
    op->close_stat = 1;
  } else if (!rc) {
    rc = SMB3_EINVAL;
  }
  return close_async(f, op, rc);
}

int smb3_fsync_async(smb3_file *f, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = handle_async(f, OP_FSYNC, cb, arg, &op);
  return rc ? rc : op_async(op);
}

int smb3_lock_async(smb3_file *f, uint64_t off, uint64_t len, int type, smb3_done_cb cb, void *arg) {
  struct smb2_lock_element el;
  enum pathop_kind kind;
  int rc = lock_element(off, len, type, &el, &kind);
  struct pathop *op;
  if (!rc) rc = handle_async(f, kind, cb, arg, &op);
  if (rc) return rc;
  op->lock = el;
  return op_async(op);
}

int smb3_ftruncate_async(smb3_file *f, uint64_t size, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = handle_async(f, OP_FTRUNCATE, cb, arg, &op);
  return rc ? rc : with_buf_async(op, eof_buf(op, size));
}

int smb3_fallocate_async(smb3_file *f, uint64_t alloc_size, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = handle_async(f, OP_FALLOCATE, cb, arg, &op);
  return rc ? rc : with_buf_async(op, eof_buf(op, alloc_size)); /* the same 8 bytes: AllocationSize */
}

int smb3_set_sparse_async(smb3_file *f, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = handle_async(f, OP_SET_SPARSE, cb, arg, &op);
  return rc ? rc : op_async(op);
}

int smb3_punch_hole_async(smb3_file *f, uint64_t off, uint64_t len, smb3_done_cb cb, void *arg) {
  if (off > INT64_MAX || len > INT64_MAX - off) return SMB3_ERANGE;
  struct pathop *op;
  int rc = handle_async(f, OP_ZERO_DATA, cb, arg, &op);
  if (rc) return rc;
  uint8_t b[16]; /* FILE_ZERO_DATA_INFORMATION: FileOffset, BeyondFinalZero */
  struct le_wr w;
  le_wr_init(&w, b, sizeof b);
  le_put_u64(&w, off);
  le_put_u64(&w, off + len);
  return with_buf_async(op, set_buf(op, b, sizeof b));
}

int smb3_fsetattr_async(smb3_file *f, const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                        uint32_t attributes, smb3_done_cb cb, void *arg) {
  struct pathop *op;
  int rc = handle_async(f, OP_FSETATTR, cb, arg, &op);
  return rc ? rc : with_buf_async(op, basic_buf(op, atime, mtime, attributes));
}

int smb3_fstat_async(smb3_file *f, smb3_stat_cb cb, void *arg) {
  if (!f) return SMB3_EBADF;
  smb3_client *c = f->c;
  ASYNC_OP(OP_FSTAT, f->path, stat, cb);
  op->fid = f->fid;
  return op_async(op);
}
