/* ops_dir.c - directory listing: opendir, readdir(plus), releasedir.
 *
 * One QUERY_DIRECTORY stream per open directory (FileIdFullDirectoryInformation carries the file
 * id, size, times and attributes of every entry), so readdirplus needs no per-entry stat.
 * libsmb3 has no asynchronous directory iterator, so readdir and releasedir run the synchronous
 * smb3_opendir/smb3_readdir/smb3_closedir on the FUSE worker thread; the other workers keep
 * serving meanwhile. The directory is opened on the server by the first readdir, not opendir. Entries are kept in the handle so that any offset can be served again
 * (rewinddir, or a reply the kernel could not take whole). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"

struct dent {
  char *name;
  struct smb3_stat st;
};

struct dirh {
  pthread_mutex_t lock;
  char *path;
  smb3_dir *d; /* opened by the first readdir: an opendir alone (cd, the stats ioctl) costs nothing */
  int rc;      /* a failed open, reported by every readdir */
  struct dent *v;
  size_t n, cap;
  int eof;
};

static void dirh_free(struct dirh *dh) {
  if (dh->d) smb3_closedir(dh->d);
  free(dh->path);
  for (size_t i = 0; i < dh->n; i++) free(dh->v[i].name);
  free(dh->v);
  pthread_mutex_destroy(&dh->lock);
  free(dh);
}

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  struct fs_inode *in = inode_get(fs, ino);
  struct dirh *dh = calloc(1, sizeof *dh);
  if (dh) dh->path = inode_path(fs, in);
  inode_put(fs, in);
  if (!dh || !dh->path) {
    fuse_reply_err(req, dh ? ESTALE : ENOMEM);
    free(dh);
    return;
  }
  pthread_mutex_init(&dh->lock, NULL);
  fi->fh = (uint64_t)(uintptr_t)dh;
  if (fuse_reply_open(req, fi)) dirh_free(dh);
}

/* Names the kernel must never see: the library already refuses '/' and NUL and skips "." and
 * ".."; we also hide '\\' (a separator on the wire) and our own hidden unlinked files. */
static int listable(const char *name) {
  return fs_name_ok(name) && strncmp(name, FS_HIDDEN_PREFIX, sizeof FS_HIDDEN_PREFIX - 1);
}

/* Read entries until index i exists or the listing ends (dh->lock held). */
static int fill_to(struct fs_ctx *fs, struct dirh *dh, size_t i) {
  if (!dh->d && !dh->rc) dh->rc = smb3_opendir(fs->c, dh->path, &dh->d);
  if (dh->rc) return dh->rc;
  while (dh->n <= i && !dh->eof) {
    struct smb3_dirent e;
    int rc = smb3_readdir(dh->d, &e);
    if (rc < 0) return rc;
    if (rc == 0) {
      dh->eof = 1;
      break;
    }
    if (!listable(e.name)) continue;
    if (dh->n == dh->cap) {
      size_t cap = dh->cap ? dh->cap * 2 : 64;
      struct dent *v = realloc(dh->v, cap * sizeof *v);
      if (!v) return SMB3_ENOMEM;
      dh->v = v;
      dh->cap = cap;
    }
    dh->v[dh->n].name = strdup(e.name);
    if (!dh->v[dh->n].name) return SMB3_ENOMEM;
    dh->v[dh->n].st = e.st;
    dh->n++;
  }
  return 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi, int plus) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  struct dirh *dh = (struct dirh *)(uintptr_t)fi->fh;
  char *buf = malloc(size);
  if (!buf) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  struct fs_inode *dir = inode_get(fs, ino);
  size_t pos = 0;
  int rc = 0;
  pthread_mutex_lock(&dh->lock);
  for (size_t i = (size_t)off;; i++) {
    size_t len;
    if (i < 2) { /* "." and "..": the kernel does not look them up, even in readdirplus */
      struct fuse_entry_param e;
      memset(&e, 0, sizeof e);
      e.attr.st_mode = S_IFDIR;
      e.attr.st_ino = dir->srv_id ? dir->srv_id : 1; /* glibc hides d_ino 0; ".." reuses it */
      const char *name = i == 0 ? "." : "..";
      len = plus ? fuse_add_direntry_plus(req, buf + pos, size - pos, name, &e, (off_t)i + 1)
                 : fuse_add_direntry(req, buf + pos, size - pos, name, &e.attr, (off_t)i + 1);
      if (len > size - pos) break;
      pos += len;
      continue;
    }
    rc = fill_to(fs, dh, i - 2);
    if (rc || i - 2 >= dh->n) break;
    struct dent *d = &dh->v[i - 2];
    if (plus) {
      struct fs_inode *in = inode_link(fs, dir, d->name, &d->st); /* counts as a lookup */
      if (!in) {
        rc = SMB3_ENOMEM;
        break;
      }
      struct fuse_entry_param e;
      fs_fill_entry(fs, in, &e);
      len = fuse_add_direntry_plus(req, buf + pos, size - pos, d->name, &e, (off_t)i + 1);
      if (len > size - pos) inode_forget(fs, in->nodeid, 1); /* did not fit: not passed on */
      inode_put(fs, in);
    } else {
      struct stat st;
      fs_fill_stat(fs, &d->st, &st);
      len = fuse_add_direntry(req, buf + pos, size - pos, d->name, &st, (off_t)i + 1);
    }
    if (len > size - pos) break;
    pos += len;
  }
  pthread_mutex_unlock(&dh->lock);
  inode_put(fs, dir);
  if (rc && !pos)
    fs_reply_smb_err(req, rc);
  else
    fuse_reply_buf(req, buf, pos);
  free(buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  do_readdir(req, ino, size, off, fi, 0);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  do_readdir(req, ino, size, off, fi, 1);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  dirh_free((struct dirh *)(uintptr_t)fi->fh);
  fuse_reply_err(req, 0);
}

void ops_dir_fill(struct fuse_lowlevel_ops *op) {
  op->opendir = ll_opendir;
  op->readdir = ll_readdir;
  op->readdirplus = ll_readdirplus;
  op->releasedir = ll_releasedir;
}
