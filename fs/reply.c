/* reply.c - what the FUSE handlers answer the kernel with: the errno of a library error, which
 * names may be passed on, and a file's attributes as struct stat and as a FUSE entry. */
#include <string.h>
#include <sys/stat.h>

#include "conn.h"
#include "reply.h"
#include "symlink.h"

void fs_reply_smb_err(fuse_req_t req, int rc) {
  fuse_reply_err(req, rc ? fs_errno(rc) : EIO);
}

int fs_name_ok(struct fs_ctx *fs, const char *name) {
  if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")) return 0;
  /* '\\' is the separator on the wire: a name containing it would address another file; a POSIX
   * share's names are separated by '/' and '\\' is a character like any other. */
  return !strpbrk(name, smb3_posix(fs_conn(fs)) ? "/" : "/\\");
}

int fs_name_listable(struct fs_ctx *fs, const char *name) {
  return fs_name_ok(fs, name) && strncmp(name, FS_HIDDEN_PREFIX, sizeof FS_HIDDEN_PREFIX - 1);
}

/* MS-FSCC 2.6 file attributes */
#define ATTR_READONLY 0x1u

/* An owner or group the server named (a POSIX share): its own, unless forceuid/forcegid; one it
 * could not name as a Unix id (SMB3_NO_ID: Samba names a user of its passdb, the session's own user
 * included, by a domain SID) is the mount's uid=/gid=, as every owner is without the extensions. */
static uint32_t owner_of(uint32_t srv, int force, uint32_t mount) {
  return force || srv == SMB3_NO_ID ? mount : srv;
}

void fs_fill_stat(const struct fs_ctx *fs, const struct smb3_stat *st, struct stat *a) {
  memset(a, 0, sizeof *a);
  a->st_ino = st->ino;
  a->st_uid = fs->uid;
  a->st_gid = fs->gid;
  if (st->posix) { /* the server's own mode (type included), owner, group and link count */
    a->st_mode = (mode_t)st->mode;
    a->st_nlink = st->nlink ? st->nlink : 1;
    a->st_uid = owner_of(st->uid, fs->forceuid, fs->uid);
    a->st_gid = owner_of(st->gid, fs->forcegid, fs->gid);
    if (S_ISCHR(a->st_mode) || S_ISBLK(a->st_mode)) a->st_rdev = (dev_t)st->rdev;
  } else if (st->is_dir) {
    a->st_mode = S_IFDIR | fs->dir_mode;
    a->st_nlink = 2;
  } else {
    a->st_mode = S_IFREG | fs->file_mode;
    /* Like cifs: the read-only attribute takes the write bits away. */
    if (st->attributes & ATTR_READONLY) a->st_mode &= ~(mode_t)0222;
    a->st_nlink = st->nlink ? st->nlink : 1;
  }
  a->st_size = (off_t)st->size;
  a->st_blksize = 128 * 1024; /* stdio and cp size their buffers from this */
  a->st_blocks = (blkcnt_t)((st->alloc_size + 511) / 512);
  a->st_atim.tv_sec = st->atime.sec, a->st_atim.tv_nsec = st->atime.nsec;
  a->st_mtim.tv_sec = st->mtime.sec, a->st_mtim.tv_nsec = st->mtime.nsec;
  a->st_ctim.tv_sec = st->ctime.sec, a->st_ctim.tv_nsec = st->ctime.nsec;
}

void fs_fill_stat_in(const struct fs_ctx *fs, const struct fs_inode *in, struct stat *a) {
  fs_fill_stat(fs, &in->st, a);
  if (!a->st_ino) a->st_ino = (ino_t)in->nodeid;
  /* An open file that lost its name (start_silly) still has its hidden name on the server, which
   * the server's link count includes: the name the application removed is gone (fstat after
   * unlink of the last name: 0). */
  if (in->unlinked && a->st_nlink > 0) a->st_nlink--;
  /* Blocks cover the data, on the server or still in write-back here: cp, tar and rsync take a file
   * with fewer blocks than its size for sparse, and one with none for all holes. Under cache=loose
   * the kernel holds written pages of its own: the size it knows (kern_size) is what they reach as
   * far as they were sent; pages it has not sent yet are not known here (smb3fs(8)). */
  uint64_t size = (uint64_t)a->st_size;
  if (fs->wb_cache && in->local_mod && in->kern_size > size) size = in->kern_size;
  blkcnt_t need = (blkcnt_t)((size + 511) / 512);
  if ((wb_dirty(in) || (fs->wb_cache && in->local_mod)) && a->st_blocks < need) a->st_blocks = need;
}

ino_t fs_ino_of_name(const char *name) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return (ino_t)(h ? h : 1);
}

int fs_fill_entry(struct fs_ctx *fs, struct fs_inode *in, struct fuse_entry_param *e) {
  memset(e, 0, sizeof *e);
  e->ino = in->nodeid;
  e->generation = in->generation;
  pthread_mutex_lock(&in->lock);
  fs_fill_stat_in(fs, in, &e->attr);
  mfsl_fill(in, &e->attr);
  mode_t ifmt = e->attr.st_mode & S_IFMT;
  int changed = fs_type_changed(in, ifmt);
  if (!in->kern_ifmt) in->kern_ifmt = ifmt;
  pthread_mutex_unlock(&in->lock);
  e->attr_timeout = fs_attr_ttl(fs, in);
  e->entry_timeout = fs->actimeo;
  return changed ? -1 : 0;
}
