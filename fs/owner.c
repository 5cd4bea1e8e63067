/* owner.c - a new entry's owner on a POSIX share: the caller's uid and group (owner.h). */
#include <stdlib.h>
#include <sys/stat.h>

#include "conn.h"
#include "owner.h"
#include "reply.h"

struct own {
  struct fs_ctx *fs;
  struct smb3_stat st;
  uint32_t uid, gid; /* asked for (SMB3_NO_ID: unchanged) */
  fs_owned_cb cb;
  void *arg;
};

static void owned(int rc, void *arg) {
  struct own *w = arg;
  if (!rc) {
    if (w->uid != SMB3_NO_ID) w->st.uid = w->uid;
    if (w->gid != SMB3_NO_ID) w->st.gid = w->gid;
  } else if (rc == SMB3_EACCES) {
    __atomic_store_n(&w->fs->chown_refused, 1, __ATOMIC_RELAXED);
  }
  w->cb(&w->st, w->arg);
  free(w);
}

int fs_own_new(struct fs_ctx *fs, fuse_req_t req, struct fs_inode *parent, const char *path,
               const struct smb3_stat *st, fs_owned_cb cb, void *arg) {
  smb3_client *c = fs_conn(fs);
  if (!st->posix || !smb3_posix(c) || __atomic_load_n(&fs->chown_refused, __ATOMIC_RELAXED)) return 0;
  const struct fuse_ctx *ctx = fuse_req_ctx(req);
  struct stat now, dir;
  fs_fill_stat(fs, st, &now);
  gid_t want_gid = ctx->gid;
  if (parent) {
    pthread_mutex_lock(&parent->lock);
    fs_fill_stat(fs, &parent->st, &dir);
    pthread_mutex_unlock(&parent->lock);
    if (dir.st_mode & S_ISGID) want_gid = dir.st_gid;
  }
  uint32_t uid = !fs->forceuid && now.st_uid != ctx->uid ? (uint32_t)ctx->uid : SMB3_NO_ID;
  uint32_t gid = !fs->forcegid && now.st_gid != want_gid ? (uint32_t)want_gid : SMB3_NO_ID;
  if (uid == SMB3_NO_ID && gid == SMB3_NO_ID) return 0;
  struct own *w = malloc(sizeof *w);
  if (!w) return 0;
  *w = (struct own){fs, *st, uid, gid, cb, arg};
  if (smb3_chown_async(c, path, uid, gid, owned, w)) {
    free(w);
    return 0;
  }
  return 1;
}
