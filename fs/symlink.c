/* symlink.c - symbolic links as Minshall+French symlink files (option mfsymlinks, as mount.cifs).
 *
 * SMB2/3 without POSIX extensions has no symlink that a client can create and a Linux client can
 * read back, so, like the kernel's cifs client, a link is stored as a regular file of exactly
 * MFSL_SIZE (1067) bytes in the Minshall+French format (libsmb3's smb3_mfsymlink_format/parse,
 * lib/fscc/mfsymlink.c). Files the kernel's cifs client made this way are links here and the
 * other way round.
 *
 * Only a regular file of exactly that size can be one, and only its content tells. So a lookup or
 * getattr that finds such a file reads it (one compounded CREATE + READ + CLOSE) before answering,
 * and the inode remembers the answer for that version of the file (size and mtime); a listing
 * gives these entries to the kernel without attributes, so that it looks each one up.
 *
 * On a POSIX share the server has symlinks of its own (S_IFLNK in the POSIX mode): the same
 * machinery reads their target (smb3_readlink_async) before a lookup or getattr answers, so that
 * st_size is the target's length, as lstat(2) promises (the server reports 0), and readlink is
 * answered from the inode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conn.h"
#include "dfs.h"
#include "symlink.h"

/* A symlink of the server's own (POSIX share). */
static int srv_link(const struct smb3_stat *st) {
  return st->posix && S_ISLNK(st->mode);
}

int mfsl_candidate(const struct fs_ctx *fs, const struct smb3_stat *st) {
  if (srv_link(st)) return 1;
  /* (on a POSIX share only a regular file: the server's own links and special files are not) */
  return fs->mfsymlinks && !st->is_dir && (!st->posix || S_ISREG(st->mode)) && st->size == MFSL_SIZE;
}

/* in->lock held: does what the inode knows apply to the version st of the file? */
static int known_for(const struct fs_inode *in, const struct smb3_stat *st) {
  return in->lnk && fs_same_version(in->lnk_size, in->lnk_mtime, st);
}
static int same_version(const struct fs_inode *in) {
  return known_for(in, &in->st);
}

/* in->lock held: record what the version (size, mtime) is: a link to target (taken over, not
 * NULL), or not one (target NULL). */
static void lnk_record(struct fs_inode *in, char *target, uint64_t size, struct timespec_smb3 mtime) {
  free(in->lnk_target);
  in->lnk_target = target;
  in->lnk = target ? 1 : -1;
  in->lnk_size = size;
  in->lnk_mtime = mtime;
}

void mfsl_fill(const struct fs_inode *in, struct stat *a) {
  if (in->lnk != 1 || !same_version(in)) return;
  a->st_mode = S_IFLNK | 0777;
  a->st_size = (off_t)strlen(in->lnk_target);
  if (!in->st.posix) a->st_nlink = 1; /* (the server's own link has its own count) */
}

int mfsl_entry_known(struct fs_ctx *fs, struct fs_inode *dir, const char *name, const struct smb3_stat *st) {
  struct fs_inode *in = inode_find_child(fs, dir, name);
  if (!in) return 0;
  pthread_mutex_lock(&in->lock);
  int known = known_for(in, st) && (!in->srv_id || in->srv_id == st->ino);
  pthread_mutex_unlock(&in->lock);
  inode_put(fs, in);
  return known;
}

char *mfsl_target(struct fs_inode *in) {
  pthread_mutex_lock(&in->lock);
  char *t = in->lnk == 1 && same_version(in) ? strdup(in->lnk_target) : NULL;
  pthread_mutex_unlock(&in->lock);
  return t;
}

int mfsl_set(struct fs_inode *in, const char *target) {
  char *t = strdup(target);
  if (!t) return -ENOMEM;
  lnk_record(in, t, in->st.size, in->st.mtime);
  return 0;
}

int mfsl_copy(struct fs_inode *to, const struct fs_inode *from) {
  if (!from->lnk) return 0;
  char *t = from->lnk_target ? strdup(from->lnk_target) : NULL;
  if (from->lnk_target && !t) return -ENOMEM;
  lnk_record(to, t, from->lnk_size, from->lnk_mtime);
  return 0;
}

struct check {
  struct fs_ctx *fs;
  struct fs_inode *in; /* referenced */
  uint64_t size;
  struct timespec_smb3 mtime;
  void (*then)(void *arg, int rc);
  void *arg;
  uint8_t buf[MFSL_SIZE];
};

/* A server link's target: read (a link), or refused as not a link or not readable by us (the type
 * stays what the server says, its target unknown); anything else decides nothing. */
static void srv_link_read(int rc, const char *target, void *arg) {
  struct check *k = arg;
  int decided = !rc || rc == SMB3_EINVAL || rc == SMB3_EACCES;
  char *t = !rc && target[0] ? strdup(target) : NULL;
  if (!rc && target[0] && !t) decided = 0, rc = SMB3_ENOMEM;
  struct fs_inode *in = k->in;
  pthread_mutex_lock(&in->lock);
  if (decided) lnk_record(in, t, k->size, k->mtime);
  pthread_mutex_unlock(&in->lock);
  inode_put(k->fs, in);
  void (*then)(void *, int) = k->then;
  void *targ = k->arg;
  free(k);
  then(targ, decided ? 0 : rc);
}

static void checked(int64_t result, void *arg) {
  struct check *k = arg;
  /* Read: a link or not. Not readable by us (access denied, opened exclusively elsewhere): not a
   * link we could follow either, so a regular file, as for the kernel's cifs client. Anything else
   * (a lost connection, the file gone) decides nothing: the operation fails with it. */
  int decided = result >= 0 || result == SMB3_EACCES || result == SMB3_EBUSY;
  char target[SMB3_MFSYMLINK_MAX + 1];
  char *t =
      result == MFSL_SIZE && smb3_mfsymlink_parse(k->buf, MFSL_SIZE, target) > 0 ? strdup(target) : NULL;
  struct fs_inode *in = k->in;
  pthread_mutex_lock(&in->lock);
  if (decided) {
    lnk_record(in, t, k->size, k->mtime);
    t = NULL;
  }
  pthread_mutex_unlock(&in->lock);
  free(t);
  inode_put(k->fs, in);
  void (*then)(void *, int) = k->then;
  void *targ = k->arg;
  free(k);
  then(targ, decided ? 0 : (int)result);
}

/* A device's numbers: in the reparse point (the POSIX information has no rdev). One that cannot be
 * read shows as 0,0 (the type is still the server's). */
static void rdev_read(int rc, uint64_t dev, void *arg) {
  struct check *k = arg;
  if (!rc) {
    pthread_mutex_lock(&k->in->lock);
    if (S_ISCHR(k->in->st.mode) || S_ISBLK(k->in->st.mode)) k->in->st.rdev = dev;
    pthread_mutex_unlock(&k->in->lock);
  }
  k->then(k->arg, 0);
  inode_put(k->fs, k->in);
  free(k);
}

static void rdev_check(struct fs_ctx *fs, struct fs_inode *in, void (*then)(void *arg, int rc), void *arg) {
  char *path = inode_path(fs, in);
  struct check *k = path ? malloc(sizeof *k) : NULL;
  int rc = path ? SMB3_ENOMEM : SMB3_ENOENT;
  if (k) {
    *k = (struct check){fs, in, 0, {0, 0}, then, arg, {0}};
    inode_ref(fs, in);
    rc = smb3_readdev_async(fs_conn(fs), path, rdev_read, k);
    if (rc) {
      inode_put(fs, in);
      free(k);
    }
  }
  free(path);
  if (rc) then(arg, 0);
}

void mfsl_check(struct fs_ctx *fs, struct fs_inode *in, void (*then)(void *arg, int rc), void *arg) {
  /* (every getattr and lookup comes through here: no lock for nothing) */
  if (!fs->mfsymlinks && !smb3_posix(fs_conn(fs))) {
    then(arg, 0);
    return;
  }
  pthread_mutex_lock(&in->lock);
  int dev = in->st.posix && (S_ISCHR(in->st.mode) || S_ISBLK(in->st.mode)) && !in->st.rdev;
  pthread_mutex_unlock(&in->lock);
  if (dev) {
    rdev_check(fs, in, then, arg);
    return;
  }
  pthread_mutex_lock(&in->lock);
  int need = mfsl_candidate(fs, &in->st) && !same_version(in);
  int server = srv_link(&in->st);
  uint64_t size = in->st.size;
  struct timespec_smb3 mtime = in->st.mtime;
  pthread_mutex_unlock(&in->lock);
  if (!need) {
    then(arg, 0);
    return;
  }
  char *path = inode_path(fs, in);
  struct check *k = path ? malloc(sizeof *k) : NULL;
  int rc = path ? SMB3_ENOMEM : SMB3_ENOENT;
  if (k) {
    *k = (struct check){fs, in, size, mtime, then, arg, {0}};
    inode_ref(fs, in);
    struct fs_route r;
    fs_route(fs, path, &r);
    rc = server ? smb3_readlink_async(r.c, r.path, srv_link_read, k)
                : smb3_read_file_async(r.c, r.path, k->buf, MFSL_SIZE, checked, k);
    fs_route_done(&r);
    if (rc) {
      inode_put(fs, in);
      free(k);
    }
  }
  free(path);
  if (rc) then(arg, rc);
}
