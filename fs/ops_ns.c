/* ops_ns.c - FUSE namespace and attribute operations: lookup, forget, getattr, setattr, mkdir,
 * unlink, rmdir, rename, statfs, and the stats xattr. Every handler submits an asynchronous
 * libsmb3 call and returns; the completion (on the I/O thread) replies. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "ops.h"
#include "reply.h"
#include "stats.h"
#include "symlink.h"
#include "writeback.h"
#include "file.h"
#include "conn.h"
#include "inode.h"
#include "smb3fs_ioctl.h"

/* MS-FSCC 2.6 */
#define ATTR_READONLY 0x1u
#define ATTR_NORMAL 0x80u

/* One operation in flight. */
struct nsop {
  struct fs_ctx *fs;
  fuse_req_t req;
  struct fs_inode *in, *parent, *newparent, *victim;
  char *name, *newname, *path, *dest, *path2, *hidden; /* path2: the hidden name's path */
  struct fs_file *fh;
  struct stat attr;
  int to_set;
  int step;
  int replace;
  int silly;
  double asked; /* entry operations: when the server was asked (inode_link) */
  /* Asked again on a new connection if the one it was sent on is lost (see fs_park): */
  void (*start)(struct nsop *); /* (re)sends it; NULL: never asked again */
  struct fs_retry retry;        /* retry.conn: the connection start() used */
  int unsent_only;              /* start() may be repeated only if its request never left */
  int sending;                  /* start() is submitting (cleared by the request's callback) */
};

static struct nsop *nsop_new(fuse_req_t req) {
  struct nsop *o = calloc(1, sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return NULL;
  }
  o->fs = fuse_req_userdata(req);
  o->req = req;
  return o;
}

static void nsop_free(struct nsop *o) {
  inode_put(o->fs, o->in);
  inode_put(o->fs, o->parent);
  inode_put(o->fs, o->newparent);
  inode_put(o->fs, o->victim);
  free(o->name);
  free(o->newname);
  free(o->path);
  free(o->dest);
  free(o->path2);
  free(o->hidden);
  free(o);
}

static void finish_err(struct nsop *o, int err) { /* err: positive errno or 0 */
  fuse_reply_err(o->req, err);
  nsop_free(o);
}

static void finish_rc(struct nsop *o, int rc) { finish_err(o, fs_errno(rc)); }

static void resume(void *arg, int ok) {
  struct nsop *o = arg;
  if (ok) o->start(o);
  else finish_rc(o, o->retry.rc);
}

/* A lost connection: wait for the next one and ask again, once, if the operation has a start()
 * (each of those can be asked twice without harm, or, for unsent_only ones (mkdir, rmdir,
 * unlink), when the request was refused before it left: the connection was known to be lost). */
static void finish_smb(struct nsop *o, int rc) {
  if (o->start && (!o->unsent_only || o->sending)) {
    if (fs_park_once(o->fs, &o->retry, rc, resume, o)) return;
  } else if (fs_conn_error(rc)) {
    reconnect_kick(o->fs);
  }
  finish_rc(o, rc);
}

/* Submission result: on failure the callback never runs, so finish here. */
static void submitted(struct nsop *o, int rc) {
  if (rc) finish_smb(o, rc);
}

/* Run start(o) now and again on the next connection if this one is lost. */
static void run(struct nsop *o, void (*start)(struct nsop *)) {
  o->start = start;
  start(o);
}

/* The same for an operation that must not be done twice: again only if it never left. */
static void run_unsent(struct nsop *o, void (*start)(struct nsop *)) {
  o->unsent_only = 1;
  run(o, start);
}

/* parent + name (+ its path) for an operation on a directory entry. */
static struct nsop *entry_op(fuse_req_t req, fuse_ino_t parent, const char *name, int bad_errno) {
  if (!fs_name_ok(name)) {
    fuse_reply_err(req, bad_errno);
    return NULL;
  }
  struct nsop *o = nsop_new(req);
  if (!o) return NULL;
  o->parent = inode_get(o->fs, parent);
  o->name = strdup(name);
  o->path = o->name ? inode_child_path(o->fs, o->parent, name) : NULL;
  if (!o->path) {
    finish_err(o, o->name ? ENOENT : ENOMEM);
    return NULL;
  }
  return o;
}

/* ---- lookup / mkdir: reply with an entry ---- */
/* The file at o->name is no longer of the type the kernel's inode o->in has (a symlink file
 * written through the mount, or replaced on the server): the name gets a new inode, which knows
 * what the old one learned; the lookup counted on the old one is not passed on. 0 or -ENOMEM. */
static int entry_retype(struct nsop *o) {
  struct fs_inode *old = o->in;
  pthread_mutex_lock(&old->lock);
  struct smb3_stat st = old->st;
  pthread_mutex_unlock(&old->lock);
  inode_detach(o->fs, old);
  struct fs_inode *in = inode_link(o->fs, o->parent, o->name, &st, o->asked);
  inode_forget(o->fs, old->nodeid, 1);
  if (!in) return -ENOMEM;
  pthread_mutex_lock(&old->lock);
  pthread_mutex_lock(&in->lock);
  int rc = mfsl_copy(in, old);
  pthread_mutex_unlock(&in->lock);
  pthread_mutex_unlock(&old->lock);
  inode_put(o->fs, old);
  o->in = in;
  return rc;
}

static void entry_reply(void *arg, int rc) {
  struct nsop *o = arg;
  if (rc) { /* whether it is a symlink could not be read: nothing is answered from a guess */
    inode_forget(o->fs, o->in->nodeid, 1);
    finish_smb(o, rc);
    return;
  }
  struct fuse_entry_param e;
  if (fs_fill_entry(o->fs, o->in, &e) && (entry_retype(o) || fs_fill_entry(o->fs, o->in, &e))) {
    inode_forget(o->fs, o->in->nodeid, 1);
    finish_err(o, ENOMEM);
    return;
  }
  struct fs_inode *in = o->in; /* the entry's lookup, counted by inode_link */
  pthread_mutex_lock(&in->lock);
  in->attr_lookup = fs_now();
  pthread_mutex_unlock(&in->lock);
  if (fuse_reply_entry(o->req, &e)) inode_forget(o->fs, in->nodeid, 1); /* interrupted */
  nsop_free(o);
}

static void entry_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  if (rc) {
    finish_smb(o, rc);
    return;
  }
  struct fs_inode *in = inode_link(o->fs, o->parent, o->name, st, o->asked);
  if (!in) {
    finish_err(o, ENOMEM);
    return;
  }
  inode_put(o->fs, o->in); /* from an earlier attempt, asked again after a reconnect */
  o->in = in;
  if (o->newname && mfsl_candidate(o->fs, st)) { /* ln -s: what it wrote is what the file holds */
    pthread_mutex_lock(&in->lock);
    int mrc = mfsl_set(in, o->newname);
    pthread_mutex_unlock(&in->lock);
    if (mrc) {
      inode_forget(o->fs, in->nodeid, 1);
      finish_err(o, ENOMEM);
      return;
    }
  }
  mfsl_check(o->fs, in, entry_reply, o);
}

/* An entry operation sent again after a wait: its parent may have been renamed meanwhile. Returns
 * 0, or -1 after answering the request. */
static int entry_again(struct nsop *o) {
  if (!o->retry.again) return 0;
  free(o->path);
  if ((o->path = inode_child_path(o->fs, o->parent, o->name))) return 0;
  finish_err(o, ENOENT);
  return -1;
}

static void lookup_start(struct nsop *o) {
  if (entry_again(o)) return;
  o->retry.conn = fs_conn(o->fs);
  o->asked = fs_now();
  submitted(o, smb3_stat_async(o->retry.conn, o->path, entry_done, o));
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (o) run(o, lookup_start);
}

static void mkdir_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  o->sending = 0; /* it left: never again */
  if (rc || st->ino) { /* the CREATE's attributes, file id included: one round trip in all */
    entry_done(rc, st, o);
    return;
  }
  /* A server that did not answer QFid: a second round trip for the file id. */
  submitted(o, smb3_stat_async(fs_conn(o->fs), o->path, entry_done, o));
}

static void mkdir_start(struct nsop *o) {
  if (entry_again(o)) return;
  o->retry.conn = fs_conn(o->fs);
  o->asked = fs_now();
  o->sending = 1;
  submitted(o, smb3_mkdir_stat_async(o->retry.conn, o->path, mkdir_done, o));
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  (void)mode; /* dir_mode decides */
  struct nsop *o = entry_op(req, parent, name, EINVAL);
  if (o) run_unsent(o, mkdir_start);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  inode_forget(fuse_req_userdata(req), ino, nlookup);
  fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  for (size_t i = 0; i < count; i++) inode_forget(fs, forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

/* ---- getattr ---- */
#define FS_ATTR_SAME_OP 0.01 /* seconds */
static void reply_attr_of(struct nsop *o) {
  struct stat a;
  pthread_mutex_lock(&o->in->lock);
  fs_fill_stat(o->fs, &o->in->st, &a);
  mfsl_fill(o->in, &a);
  int changed = fs_type_changed(o->in, a.st_mode & S_IFMT);
  if (changed) {
    /* A FUSE inode cannot change type (the kernel would call it bad: EIO from then on); only a
     * lookup can give the name an inode of the new type (entry_retype). A regular file that now
     * holds a symlink file (written through an open descriptor, say) stays the regular file it is
     * for this inode; a link that became something else cannot be answered for: ESTALE, which
     * makes the kernel look the path up again. */
    o->in->attr_expiry = 0;
    if (o->in->kern_ifmt == S_IFREG) fs_fill_stat(o->fs, &o->in->st, &a), changed = 0;
  }
  pthread_mutex_unlock(&o->in->lock);
  if (changed) {
    finish_err(o, ESTALE);
    return;
  }
  fuse_reply_attr(o->req, &a, fs_attr_ttl(o->fs, o->in));
  nsop_free(o);
}
static void reply_attr_cb(void *arg, int rc) {
  struct nsop *o = arg;
  if (rc)
    finish_smb(o, rc);
  else
    reply_attr_of(o);
}

static void attr_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  if (rc) {
    finish_smb(o, rc);
    return;
  }
  inode_set_attr(o->fs, o->in, st);
  mfsl_check(o->fs, o->in, reply_attr_cb, o);
}

/* Ask the server: through the open handle when there is one (works after unlink too). */
static void stat_inode(struct nsop *o) {
  if (o->fh) {
    smb3_file *f = fh_handle(o->fh);
    o->retry.conn = smb3_file_client(f);
    submitted(o, smb3_fstat_async(f, attr_done, o));
    return;
  }
  free(o->path);
  o->path = inode_path(o->fs, o->in);
  if (!o->path) {
    finish_err(o, ESTALE);
    return;
  }
  o->retry.conn = fs_conn(o->fs);
  submitted(o, smb3_stat_async(o->retry.conn, o->path, attr_done, o));
}

/* getattr asked again after a reconnect: by path, unless only the handle names the file (its
 * reopen on the new connection may not have completed yet). */
static void getattr_again(struct nsop *o) {
  pthread_mutex_lock(&o->in->lock);
  if (!o->in->unlinked) o->fh = NULL;
  pthread_mutex_unlock(&o->in->lock);
  stat_inode(o);
}

static void getattr_flushed(int err, void *arg) {
  (void)err; /* reported by the next fsync/close, not by stat */
  stat_inode(arg);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct nsop *o = nsop_new(req);
  if (!o) return;
  o->in = inode_get(o->fs, ino);
  o->fh = fi ? (struct fs_file *)(uintptr_t)fi->fh : NULL;
  o->start = getattr_again;
  pthread_mutex_lock(&o->in->lock);
  int dirty = wb_dirty(o->in);
  double now = fs_now();
  int fresh = !dirty && o->in->attr_expiry > now;
  /* Even with actimeo=0: the kernel follows the LOOKUP of a path walk with a GETATTR of the same
   * inode; what that LOOKUP fetched a moment ago is what the server says. Asking again would
   * double every uncached stat() (the kernel's cifs client counts attributes from the current
   * jiffy as fresh for the same reason). One GETATTR per LOOKUP reply, within FS_ATTR_SAME_OP. */
  if (!dirty && o->in->attr_lookup > 0 && now - o->in->attr_lookup < FS_ATTR_SAME_OP) fresh = 1;
  o->in->attr_lookup = 0;
  /* An unlinked open file is delete-pending on the server: its path cannot be opened any more,
   * and nobody else can open it, so what we know (our own writes included) is its state. */
  if (o->in->unlinked) fresh = 1;
  pthread_mutex_unlock(&o->in->lock);
  if (fresh) /* (a file that may be a symlink file is read if that version was not) */
    mfsl_check(o->fs, o->in, reply_attr_cb, o);
  else if (dirty) /* the size the server reports must include what we hold */
    wb_flush(o->fs, o->in, 0, getattr_flushed, o);
  else
    stat_inode(o);
}

/* ---- setattr: flush, truncate, times/attributes, then fresh attributes ---- */
static void setattr_next(struct nsop *o, int rc);
static void setattr_done_cb(int rc, void *arg) { setattr_next(arg, rc); }
static void setattr_flushed(int err, void *arg) {
  (void)err;
  setattr_next(arg, 0);
}

static struct timespec_smb3 ts_of(const struct timespec *t, int now) {
  struct timespec n;
  if (now) clock_gettime(CLOCK_REALTIME, &n);
  const struct timespec *s = now ? &n : t;
  return (struct timespec_smb3){s->tv_sec, s->tv_nsec};
}

/* The attributes SET_INFO needs to apply a chmod (0 = leave them). */
static uint32_t chmod_attrs(struct nsop *o) {
  if (!(o->to_set & FUSE_SET_ATTR_MODE)) return 0;
  pthread_mutex_lock(&o->in->lock);
  uint32_t cur = o->in->st.attributes;
  int is_dir = o->in->st.is_dir;
  pthread_mutex_unlock(&o->in->lock);
  if (is_dir) return 0; /* FILE_ATTRIBUTE_READONLY means something else on directories */
  int ro = !(o->attr.st_mode & 0222);
  if (ro == !!(cur & ATTR_READONLY)) return 0;
  uint32_t a = ro ? (cur | ATTR_READONLY) : (cur & ~ATTR_READONLY);
  return a ? a : ATTR_NORMAL; /* 0 would mean "unchanged" */
}

static int setattr_truncate(struct nsop *o) {
  uint64_t size = (uint64_t)o->attr.st_size;
  pthread_mutex_lock(&o->in->lock);
  o->in->data_gen++;
  o->in->st.size = size;
  pthread_mutex_unlock(&o->in->lock);
  if (o->fh) return smb3_ftruncate_async(fh_handle(o->fh), size, setattr_done_cb, o);
  return smb3_truncate_async(fs_conn(o->fs), o->path, size, setattr_done_cb, o);
}

static int setattr_times(struct nsop *o, uint32_t attrs) {
  struct timespec_smb3 at, mt;
  int s = o->to_set;
  int has_at = s & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW);
  int has_mt = s & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW);
  if (has_at) at = ts_of(&o->attr.st_atim, s & FUSE_SET_ATTR_ATIME_NOW);
  if (has_mt) mt = ts_of(&o->attr.st_mtim, s & FUSE_SET_ATTR_MTIME_NOW);
  /* A file that lost its name (unlinked or replaced while open) is reached through its handle. */
  pthread_mutex_lock(&o->in->lock);
  int nameless = !o->path || o->in->unlinked;
  pthread_mutex_unlock(&o->in->lock);
  if (nameless && o->fh)
    return smb3_fsetattr_async(fh_handle(o->fh), has_at ? &at : NULL, has_mt ? &mt : NULL, attrs, setattr_done_cb, o);
  return smb3_setattr_async(fs_conn(o->fs), o->path, has_at ? &at : NULL, has_mt ? &mt : NULL, attrs, setattr_done_cb, o);
}

static void setattr_next(struct nsop *o, int rc) {
  if (rc) {
    finish_smb(o, rc);
    return;
  }
  switch (o->step++) {
  case 0:
    wb_flush(o->fs, o->in, 0, setattr_flushed, o);
    return;
  case 1:
    if (o->to_set & FUSE_SET_ATTR_SIZE) {
      submitted(o, setattr_truncate(o));
      return;
    }
    /* fall through */
  case 2: {
    o->step = 3;
    uint32_t attrs = chmod_attrs(o);
    if (attrs || (o->to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME |
                               FUSE_SET_ATTR_MTIME_NOW))) {
      submitted(o, setattr_times(o, attrs));
      return;
    }
  }
    /* fall through */
  default:
    stat_inode(o);
  }
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  /* Ownership is the mount's (uid=/gid=): only a no-op chown succeeds. */
  if (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != fs->uid) ||
      ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != fs->gid)) {
    fuse_reply_err(req, EPERM);
    return;
  }
  struct nsop *o = nsop_new(req);
  if (!o) return;
  o->in = inode_get(fs, ino);
  pthread_mutex_lock(&o->in->lock);
  o->in->local_mod = 1; /* the kernel's view now comes from this change (see kernel_view_stale()) */
  pthread_mutex_unlock(&o->in->lock);
  o->fh = fi ? (struct fs_file *)(uintptr_t)fi->fh : NULL;
  o->attr = *attr;
  o->to_set = to_set;
  o->path = inode_path(fs, o->in);
  if (!o->path && !o->fh) {
    /* With the kernel's write-back cache (cache=loose) the kernel itself sends the times of a
     * file it is evicting, also after the file was deleted: nothing is left to update. */
    if (fs->wb_cache && !(to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MODE))) {
      reply_attr_of(o);
      return;
    }
    finish_err(o, ESTALE);
    return;
  }
  setattr_next(o, 0);
}

/* ---- symbolic links (mfsymlinks, symlink.c) ---- */
static void readlink_checked(void *arg, int rc) {
  struct nsop *o = arg;
  char *t = rc ? NULL : mfsl_target(o->in);
  if (t)
    fuse_reply_readlink(o->req, t);
  else
    fuse_reply_err(o->req, rc ? fs_errno(rc) : EINVAL); /* EINVAL: not a link */
  free(t);
  nsop_free(o);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino) {
  struct nsop *o = nsop_new(req);
  if (!o) return;
  o->in = inode_get(o->fs, ino);
  mfsl_check(o->fs, o->in, readlink_checked, o); /* (reads the file if this version was not) */
}

static void symlink_written(int64_t result, void *arg) {
  struct nsop *o = arg;
  free(o->dest); /* the file's content */
  o->dest = NULL;
  if (result >= 0 && result != MFSL_SIZE) result = SMB3_EIO;
  if (result < 0) {
    finish_smb(o, (int)result); /* never sent again: a second create would find the first */
    return;
  }
  run(o, lookup_start); /* the entry, read back as the link it now is */
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  if (!fs->mfsymlinks) { /* no symlinks on SMB without it (like mount.cifs) */
    fuse_reply_err(req, EPERM);
    return;
  }
  if (fs->ro) {
    fuse_reply_err(req, EROFS);
    return;
  }
  struct nsop *o = entry_op(req, parent, name, EINVAL);
  if (!o) return;
  uint8_t *buf = malloc(MFSL_SIZE);
  int rc = buf ? smb3_mfsymlink_format(link, buf) : SMB3_ENOMEM;
  if (rc) {
    free(buf);
    finish_rc(o, rc);
    return;
  }
  o->dest = (char *)buf;
  o->newname = strdup(link); /* entry_done: the new inode is that link */
  if (!o->newname) {
    finish_err(o, ENOMEM);
    return;
  }
  o->retry.conn = fs_conn(fs);
  o->asked = fs_now();
  rc = smb3_create_file_async(o->retry.conn, o->path, buf, MFSL_SIZE, symlink_written, o);
  if (rc) symlink_written(rc, o);
}

/* ---- hard links: the new name's entry is the same inode (found by its server file id) ---- */
static void link_done(int rc, void *arg) {
  struct nsop *o = arg;
  o->sending = 0; /* it left: never again */
  if (rc) {
    finish_smb(o, rc);
    return;
  }
  o->asked = fs_now();
  submitted(o, smb3_stat_async(fs_conn(o->fs), o->path, entry_done, o));
}

static void link_start(struct nsop *o) {
  if (entry_again(o)) return;
  free(o->dest);
  o->dest = inode_path(o->fs, o->in); /* the file's name now (it may have been renamed meanwhile) */
  if (!o->dest) {
    finish_err(o, ESTALE);
    return;
  }
  o->retry.conn = fs_conn(o->fs);
  o->sending = 1;
  submitted(o, smb3_link_async(o->retry.conn, o->dest, o->path, link_done, o));
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  struct nsop *o = entry_op(req, newparent, newname, EINVAL);
  if (!o) return;
  o->in = inode_get(o->fs, ino);
  run_unsent(o, link_start);
}

/* ---- unlink / rmdir ---- */
static void unlink_done(int rc, void *arg) {
  struct nsop *o = arg;
  o->sending = 0; /* it left: never again */
  if (o->silly) { /* the name is already gone; a failure leaves a hidden file behind */
    finish_err(o, 0);
    return;
  }
  if (!rc && o->victim) inode_detach(o->fs, o->victim);
  finish_smb(o, rc);
}

static int victim_open(struct fs_inode *v) {
  if (!v) return 0;
  pthread_mutex_lock(&v->lock);
  int n = v->nopen;
  pthread_mutex_unlock(&v->lock);
  return n > 0;
}

/* POSIX lets an open file lose its name; SMB keeps a delete-pending name until the last close
 * and refuses to open it meanwhile. So an open file is first renamed to a hidden name in the
 * same directory (like NFS's .nfsXXXX), which readdir never shows, and then marked
 * delete-on-close: the server deletes it at our last close. */
static int start_silly(struct nsop *o, struct fs_inode *dir, const char *from, smb3_done_cb cb) {
  char hidden[64];
  snprintf(hidden, sizeof hidden, FS_HIDDEN_PREFIX "%016" PRIx64, o->victim->generation);
  o->hidden = strdup(hidden);
  o->path2 = o->hidden ? inode_child_path(o->fs, dir, hidden) : NULL;
  if (!o->path2) return SMB3_ENOMEM;
  return smb3_rename_async(fs_conn(o->fs), from, o->path2, 1, cb, o);
}

/* The victim now has its hidden name (in the directory it was in). */
static int silly_moved(struct nsop *o, struct fs_inode *dir, int rc, smb3_done_cb then) {
  if (rc) return rc;
  inode_move(o->fs, o->victim, dir, o->hidden);
  pthread_mutex_lock(&o->victim->lock);
  o->victim->unlinked = 1; /* its last close detaches it */
  pthread_mutex_unlock(&o->victim->lock);
  o->silly = 1;
  return smb3_unlink_async(fs_conn(o->fs), o->path2, then, o);
}

static void unlink_silly_done(int rc, void *arg) {
  struct nsop *o = arg;
  submitted(o, silly_moved(o, o->parent, rc, unlink_done));
}

static void unlink_start(struct nsop *o) {
  if (entry_again(o)) return;
  o->retry.conn = fs_conn(o->fs);
  o->sending = 1;
  submitted(o, smb3_unlink_async(o->retry.conn, o->path, unlink_done, o));
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (!o) return;
  o->victim = inode_find_child(o->fs, o->parent, name);
  if (victim_open(o->victim)) {
    submitted(o, start_silly(o, o->parent, o->path, unlink_silly_done));
    return;
  }
  run_unsent(o, unlink_start);
}

static void rmdir_start(struct nsop *o) {
  if (entry_again(o)) return;
  o->retry.conn = fs_conn(o->fs);
  o->sending = 1;
  submitted(o, smb3_rmdir_async(o->retry.conn, o->path, unlink_done, o));
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (!o) return;
  o->victim = inode_find_child(o->fs, o->parent, name);
  run_unsent(o, rmdir_start);
}

/* ---- rename ---- */
static void rename_done(int rc, void *arg) {
  struct nsop *o = arg;
  if (rc) {
    finish_smb(o, rc);
    return;
  }
  if (o->victim && o->victim != o->in && !o->silly) inode_detach(o->fs, o->victim);
  if (o->in) inode_move(o->fs, o->in, o->newparent, o->newname);
  finish_err(o, 0);
}

static void rename_go(struct nsop *o) {
  submitted(o, smb3_rename_async(fs_conn(o->fs), o->path, o->dest, o->replace, rename_done, o));
}

static void rename_victim_gone(int rc, void *arg) {
  (void)rc; /* the target name is free either way; at worst a hidden file stays behind */
  rename_go(arg);
}

static void rename_silly_done(int rc, void *arg) {
  struct nsop *o = arg;
  submitted(o, silly_moved(o, o->newparent, rc, rename_victim_gone));
}

static void rename_flushed(int err, void *arg) {
  (void)err;
  struct nsop *o = arg;
  /* Samba refuses to replace a file that is open: move an open target out of the way first. */
  if (o->replace && o->victim && o->victim != o->in && victim_open(o->victim)) {
    submitted(o, start_silly(o, o->newparent, o->dest, rename_silly_done));
    return;
  }
  rename_go(o);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
                      unsigned int flags) {
  if (flags & ~RENAME_NOREPLACE) { /* RENAME_EXCHANGE / WHITEOUT have no SMB equivalent */
    fuse_reply_err(req, EINVAL);
    return;
  }
  if (!fs_name_ok(newname)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (!o) return;
  o->newparent = inode_get(o->fs, newparent);
  o->newname = strdup(newname);
  o->dest = o->newname ? inode_child_path(o->fs, o->newparent, newname) : NULL;
  if (!o->dest) {
    finish_err(o, o->newname ? ENOENT : ENOMEM);
    return;
  }
  o->replace = !(flags & RENAME_NOREPLACE);
  o->in = inode_find_child(o->fs, o->parent, name);
  o->victim = inode_find_child(o->fs, o->newparent, newname);
  /* The server should see the data under the old name before the name changes. */
  if (o->in)
    wb_flush(o->fs, o->in, 0, rename_flushed, o);
  else
    rename_flushed(0, o);
}

/* ---- statfs ---- */
static void statfs_done(int rc, const struct smb3_statvfs *sv, void *arg) {
  struct nsop *o = arg;
  if (rc) {
    finish_smb(o, rc);
    return;
  }
  struct statvfs v = {0};
  v.f_bsize = v.f_frsize = sv->bsize ? sv->bsize : 4096;
  v.f_blocks = sv->blocks;
  v.f_bfree = sv->bfree;
  v.f_bavail = sv->bavail;
  v.f_namemax = 255;
  fuse_reply_statfs(o->req, &v);
  nsop_free(o);
}

static void statfs_start(struct nsop *o) {
  o->retry.conn = fs_conn(o->fs);
  submitted(o, smb3_statvfs_async(o->retry.conn, statfs_done, o));
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino) {
  (void)ino;
  struct nsop *o = nsop_new(req);
  if (o) run(o, statfs_start);
}

/* ---- the stats ioctl (smb3fs_ioctl.h) on the mount root ---- */
static void ll_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg, struct fuse_file_info *fi,
                     unsigned flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz) {
  (void)arg, (void)fi, (void)in_buf, (void)in_bufsz;
  struct fs_ctx *fs = fuse_req_userdata(req);
  if (cmd != SMB3FS_IOC_STATS || ino != FUSE_ROOT_ID || (flags & FUSE_IOCTL_COMPAT) || out_bufsz < SMB3FS_STATS_MAX) {
    fuse_reply_err(req, ENOTTY);
    return;
  }
  char *j = stats_json(fs);
  char *buf = calloc(1, SMB3FS_STATS_MAX);
  if (!j || !buf || strlen(j) >= SMB3FS_STATS_MAX) {
    fuse_reply_err(req, j && buf ? ERANGE : ENOMEM);
  } else {
    memcpy(buf, j, strlen(j) + 1);
    fuse_reply_ioctl(req, 0, buf, SMB3FS_STATS_MAX);
  }
  free(j);
  free(buf);
}

void ops_ns_fill(struct fuse_lowlevel_ops *op) {
  op->lookup = ll_lookup;
  op->forget = ll_forget;
  op->forget_multi = ll_forget_multi;
  op->getattr = ll_getattr;
  op->setattr = ll_setattr;
  op->mkdir = ll_mkdir;
  op->unlink = ll_unlink;
  op->rmdir = ll_rmdir;
  op->rename = ll_rename;
  op->link = ll_link;
  op->statfs = ll_statfs;
  op->readlink = ll_readlink;
  op->symlink = ll_symlink;
  /* No getxattr/listxattr: ENOSYS makes the kernel stop asking (see smb3fs_ioctl.h). */
  op->ioctl = ll_ioctl;
}
