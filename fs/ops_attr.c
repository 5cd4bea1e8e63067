/* ops_attr.c - FUSE attribute operations: getattr, setattr, statfs, and the stats ioctl on the
 * mount root. Each submits an asynchronous libsmb3 call and returns; the completion (on the I/O
 * thread) replies. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "dfs.h"
#include "file.h"
#include "inode.h"
#include "nsop.h"
#include "ops.h"
#include "pending.h"
#include "relist.h"
#include "reply.h"
#include "smb3fs_ioctl.h"
#include "stats.h"
#include "symlink.h"
#include "writeback.h"

/* MS-FSCC 2.6 */
#define ATTR_READONLY 0x1u
#define ATTR_NORMAL 0x80u

/* ---- getattr ---- */
#define FS_ATTR_SAME_OP 0.01 /* seconds */
static void reply_attr_of(struct nsop *o) {
  struct stat a;
  pthread_mutex_lock(&o->in->lock);
  fs_fill_stat_in(o->fs, o->in, &a);
  mfsl_fill(o->in, &a);
  int changed = fs_type_changed(o->in, a.st_mode & S_IFMT);
  if (changed) {
    /* A FUSE inode cannot change type (the kernel would call it bad: EIO from then on); only a
     * lookup can give the name an inode of the new type (entry_retype). A regular file that now
     * holds a symlink file (written through an open descriptor, say) stays the regular file it is
     * for this inode; a link that became something else cannot be answered for: ESTALE, which
     * makes the kernel look the path up again. */
    o->in->attr_expiry = 0;
    if (o->in->kern_ifmt == S_IFREG) fs_fill_stat_in(o->fs, o->in, &a), changed = 0;
  }
  pthread_mutex_unlock(&o->in->lock);
  if (changed) {
    nsop_finish_err(o, ESTALE);
    return;
  }
  fuse_reply_attr(o->req, &a, fs_attr_ttl(o->fs, o->in));
  nsop_free(o);
}
static void reply_attr_cb(void *arg, int rc) {
  struct nsop *o = arg;
  if (rc)
    nsop_finish_smb(o, rc);
  else
    reply_attr_of(o);
}

static void stat_inode(struct nsop *o);

/* The file's name is gone (another client renamed it away, or removed it under POSIX rules) but it
 * is open here: the kernel's stat of an open file (fstat) comes without it, and one of its opens
 * still names it. 1: asked through that. */
static int by_open(struct nsop *o) {
  if (o->fh || o->fh_found || !(o->fh_found = files_find_open(o->fs, o->in))) return 0;
  o->fh = o->fh_found;
  stat_inode(o);
  return 1;
}

static void attr_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  if (rc == SMB3_ENOENT && !o->fh) { /* the kernel's entry is stale (relist.h) */
    relist_gone(o->fs, o->in);
    if (by_open(o)) return; /* (a stat by the name, within the entry's time, is answered too) */
    nsop_finish_err(o, ESTALE);
    return;
  }
  if (rc) {
    nsop_finish_smb(o, rc);
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
    nsop_submitted(o, smb3_fstat_async(f, attr_done, o));
    return;
  }
  free(o->path);
  o->path = inode_path(o->fs, o->in);
  if (!o->path && by_open(o)) return;
  if (!o->path) {
    nsop_finish_err(o, ESTALE);
    return;
  }
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  nsop_submitted(o, smb3_stat_async(r.c, r.path, attr_done, o));
  fs_route_done(&r);
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

/* Reply: this worker (fresh cached attributes), else I/O thread (the stat); reconnect thread if it waited
 * (for a new connection, or for a write-back flush that ended there: ops.h). */
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
  /* Data and times held here under a write lease (tar: write, futimens, then fchown, whose path in
   * the kernel asks for attributes): nobody else can have changed the file, and the compound that
   * will carry them sets the mtime last, so the server's size and mtime will be what we know. A
   * flush would cost that compound now and a stat after it; the close sends them anyway. */
  if (dirty && o->in->wb.times.pending && o->in->wb.times.has_mt && !o->in->wb.inflight &&
      (o->in->lease & SMB3_LEASE_WRITE)) {
    if (wb_end(o->in) > o->in->st.size) o->in->st.size = wb_end(o->in);
    atomic_fetch_add(&o->fs->ctr.getattrs_held, 1);
    fresh = 1;
  }
  /* A file whose CREATE is put off (pending.h): what we know is all there is (the kernel asks for
   * it before every write: its attributes are valid for no time); its inode number is a
   * provisional one until the CREATE is answered. */
  int pending = __atomic_load_n(&o->in->pending, __ATOMIC_ACQUIRE);
  if (pending) {
    if (wb_end(o->in) > o->in->st.size) o->in->st.size = wb_end(o->in);
    fresh = 1;
  }
  pthread_mutex_unlock(&o->in->lock);
  if (pending) /* (not a symlink file: we are writing it) */
    reply_attr_cb(o, 0);
  else if (fresh) /* (a file that may be a symlink file is read if that version was not) */
    mfsl_check(o->fs, o->in, reply_attr_cb, o);
  else if (dirty) /* the size the server reports must include what we hold */
    wb_flush(o->fs, o->in, 0, getattr_flushed, o);
  else
    stat_inode(o);
}

/* ---- setattr: flush, truncate, times/attributes, then fresh attributes ---- */
static void setattr_next(struct nsop *o, int rc);
static void setattr_done_cb(int rc, void *arg) {
  setattr_next(arg, rc);
}
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
  o->in->kern_size = size;
  pthread_mutex_unlock(&o->in->lock);
  if (o->fh) return smb3_ftruncate_async(fh_handle(o->fh), size, setattr_done_cb, o);
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = smb3_truncate_async(r.c, r.path, size, setattr_done_cb, o);
  fs_route_done(&r);
  return rc;
}

/* last: no step after the times (a POSIX chown or chmod), so the attributes the reply needs come
 * from the same compound (smb3_setattr_stat_async) and setattr_next's final stat is not needed. */
static int setattr_times(struct nsop *o, uint32_t attrs, int last) {
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
    return smb3_fsetattr_async(fh_handle(o->fh), has_at ? &at : NULL, has_mt ? &mt : NULL, attrs,
                               setattr_done_cb, o);
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = last ? smb3_setattr_stat_async(r.c, r.path, has_at ? &at : NULL, has_mt ? &mt : NULL, attrs,
                                          attr_done, o)
                : smb3_setattr_async(r.c, r.path, has_at ? &at : NULL, has_mt ? &mt : NULL, attrs,
                                     setattr_done_cb, o);
  fs_route_done(&r);
  return rc;
}

/* chmod and chown on a POSIX share: the server's refusal (not the owner, no WRITE_OWNER) is what
 * chmod(2) and chown(2) call EPERM. */
static void setattr_perm_cb(int rc, void *arg) {
  struct nsop *o = arg;
  if (rc == SMB3_EACCES) {
    nsop_finish_err(o, EPERM);
    return;
  }
  setattr_next(o, rc);
}

static int setattr_chown(struct nsop *o) {
  uint32_t uid = (o->to_set & FUSE_SET_ATTR_UID) ? (uint32_t)o->attr.st_uid : SMB3_NO_ID;
  uint32_t gid = (o->to_set & FUSE_SET_ATTR_GID) ? (uint32_t)o->attr.st_gid : SMB3_NO_ID;
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = smb3_chown_async(r.c, r.path, uid, gid, setattr_perm_cb, o);
  fs_route_done(&r);
  return rc;
}

static int setattr_chmod(struct nsop *o) {
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = smb3_chmod_async(r.c, r.path, (uint32_t)o->attr.st_mode & 0777, setattr_perm_cb, o);
  fs_route_done(&r);
  return rc;
}

/* A setattr that changed something moves the ctime (POSIX: chmod, chown, truncate, utimensat), a
 * truncation the mtime too, unless the call set it; an mtime set is the mtime from then on. */
static void setattr_touch(struct fs_inode *in, int to_set) {
  int mt = (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) != 0;
  pthread_mutex_lock(&in->lock);
  if (mt) in->written_at = (struct timespec_smb3){0, 0};
  inode_touch_locked(in, (to_set & FUSE_SET_ATTR_SIZE) && !mt ? INODE_TOUCH_DATA : INODE_TOUCH_CTIME);
  pthread_mutex_unlock(&in->lock);
}

/* The steps of a setattr, each sent once its predecessor completed: write-back flush, truncate,
 * times (and, without POSIX, the read-only attribute a chmod stands for), then on a POSIX share
 * the owner and the mode (after the times: a mode without the owner's write bit must not stop
 * them), and fresh attributes last. */
static void setattr_next(struct nsop *o, int rc) {
  if (rc) {
    nsop_finish_smb(o, rc);
    return;
  }
  for (;;) {
    switch (o->step++) {
    case 0:
      wb_flush(o->fs, o->in, 0, setattr_flushed, o);
      return;
    case 1: /* (the answers that follow keep these times: inode_touch) */
      setattr_touch(o->in, o->to_set);
      if (o->to_set & FUSE_SET_ATTR_SIZE) {
        nsop_submitted(o, setattr_truncate(o));
        return;
      }
      continue;
    case 2: {
      uint32_t attrs = o->posix ? 0 : chmod_attrs(o);
      if (attrs || (o->to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME |
                                 FUSE_SET_ATTR_MTIME_NOW))) {
        int last = !(o->posix && (o->to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_MODE)));
        nsop_submitted(o, setattr_times(o, attrs, last));
        return;
      }
      continue;
    }
    case 3:
      if (o->posix && (o->to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
        nsop_submitted(o, setattr_chown(o));
        return;
      }
      continue;
    case 4:
      if (o->posix && (o->to_set & FUSE_SET_ATTR_MODE)) {
        /* Samba 4.22 sets only the 0777 bits over SMB (the library refuses the others rather
         * than drop them): a change of the setuid, setgid or sticky bits is not permitted here
         * (keeping those the file has, a setgid directory's say, is). */
        pthread_mutex_lock(&o->in->lock);
        mode_t high = o->in->st.posix ? (mode_t)o->in->st.mode & 07000 : 0;
        pthread_mutex_unlock(&o->in->lock);
        if ((o->attr.st_mode & 07000) != high)
          nsop_finish_err(o, EPERM);
        else
          nsop_submitted(o, setattr_chmod(o));
        return;
      }
      continue;
    default:
      stat_inode(o);
      return;
    }
  }
}

/* A POSIX share: drop from to_set an owner or group the file already shows (chown to the same
 * ids, as cp -a and tar do as root, needs no WRITE_OWNER and no round trip). */
static int owner_unchanged(struct fs_ctx *fs, fuse_ino_t ino, const struct stat *attr, int to_set) {
  if (!(to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) return to_set;
  struct fs_inode *in = inode_get(fs, ino);
  if (!in) return to_set;
  struct stat cur;
  pthread_mutex_lock(&in->lock);
  fs_fill_stat(fs, &in->st, &cur);
  pthread_mutex_unlock(&in->lock);
  inode_put(fs, in);
  if ((to_set & FUSE_SET_ATTR_UID) && attr->st_uid == cur.st_uid) to_set &= ~FUSE_SET_ATTR_UID;
  if ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid == cur.st_gid) to_set &= ~FUSE_SET_ATTR_GID;
  return to_set;
}

#define TIME_BITS                                                                                            \
  (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)

/* Times alone on a file whose written data is still gathered here (tar: write, futimens, close):
 * they go to the server with that data (wb_set_times) and the reply is what we then know. 1 when
 * answered. */
static int setattr_times_deferred(fuse_req_t req, struct fs_ctx *fs, fuse_ino_t ino, const struct stat *attr,
                                  int to_set) {
  if (fs->wb_cache || !(to_set & TIME_BITS) || (to_set & ~(TIME_BITS | FUSE_SET_ATTR_CTIME))) return 0;
  struct fs_inode *in = inode_get(fs, ino);
  if (!in) return 0;
  struct timespec_smb3 at, mt;
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW))
    at = ts_of(&attr->st_atim, to_set & FUSE_SET_ATTR_ATIME_NOW);
  if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
    mt = ts_of(&attr->st_mtim, to_set & FUSE_SET_ATTR_MTIME_NOW);
  if (wb_set_times(in, (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)) ? &at : NULL,
                   (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) ? &mt : NULL)) {
    inode_put(fs, in);
    return 0;
  }
  setattr_touch(in, to_set);
  struct stat a;
  pthread_mutex_lock(&in->lock);
  in->local_mod = 1;
  fs_fill_stat_in(fs, in, &a);
  pthread_mutex_unlock(&in->lock);
  atomic_fetch_add(&fs->ctr.times_deferred, 1);
  fuse_reply_attr(req, &a, fs_attr_ttl(fs, in));
  inode_put(fs, in);
  return 1;
}

/* A chown or chmod that would change nothing on the server, answered here from what we know: no
 * write-back flush, no round trip (tar and cp -a as root: fchown to the ids the file shows, then
 * fchmod). Without the POSIX extensions the owner is the mount's (a chown to it changes nothing;
 * ll_setattr refuses others) and a mode only stands for the read-only attribute, so a chmod that
 * keeps the owner's write bit as the attribute says changes nothing either; on a POSIX share the
 * mode must be the file's own (owner_unchanged has dropped an unchanged owner already). 1 when answered. */
static int setattr_unchanged(fuse_req_t req, struct fs_ctx *fs, fuse_ino_t ino, const struct stat *attr,
                             int to_set, int posix) {
  if (to_set & ~(FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_CTIME)) return 0;
  if (posix && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) return 0;
  struct fs_inode *in = inode_get(fs, ino);
  if (!in) return 0;
  pthread_mutex_lock(&in->lock);
  int same = 1;
  if (to_set & FUSE_SET_ATTR_MODE) {
    if (posix)
      same = in->st.posix && ((mode_t)in->st.mode & 07777) == (attr->st_mode & 07777);
    else if (!in->st.is_dir) /* a directory's mode is the mount's: chmod_attrs changes nothing */
      same = !(attr->st_mode & 0222) == !!(in->st.attributes & ATTR_READONLY);
  }
  struct stat a;
  if (same) {
    inode_touch_locked(in, INODE_TOUCH_CTIME); /* changed or not, as chmod(2) and chown(2) */
    fs_fill_stat_in(fs, in, &a);
    mfsl_fill(in, &a); /* an mfsymlinks link is a symlink to the kernel, whatever the server stores */
    same = !fs_type_changed(in, a.st_mode & S_IFMT);
  }
  pthread_mutex_unlock(&in->lock);
  if (same) {
    atomic_fetch_add(&fs->ctr.setattrs_unchanged, 1);
    fuse_reply_attr(req, &a, fs_attr_ttl(fs, in));
  }
  inode_put(fs, in);
  return same;
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi);
struct setattr_later {
  fuse_req_t req;
  fuse_ino_t ino;
  struct stat attr;
  int to_set;
  int has_fi;
  struct fuse_file_info fi;
};
static void setattr_created(void *arg, int rc) {
  struct setattr_later *l = arg;
  if (rc)
    fuse_reply_err(l->req, fs_errno(rc));
  else
    ll_setattr(l->req, l->ino, &l->attr, l->to_set, l->has_fi ? &l->fi : NULL);
  free(l);
}

/* A change the server must make, to a file whose CREATE is put off (pending.h): made first. 1
 * when it waits for that. */
static int setattr_pending(fuse_req_t req, struct fs_ctx *fs, fuse_ino_t ino, const struct stat *attr,
                           int to_set, const struct fuse_file_info *fi) {
  struct fs_inode *in = inode_get(fs, ino);
  if (!in || !__atomic_load_n(&in->pending, __ATOMIC_ACQUIRE)) {
    inode_put(fs, in);
    return 0;
  }
  struct setattr_later *l = calloc(1, sizeof *l);
  if (!l) {
    inode_put(fs, in);
    fuse_reply_err(req, ENOMEM);
    return 1;
  }
  *l = (struct setattr_later){.req = req, .ino = ino, .attr = *attr, .to_set = to_set, .has_fi = fi != NULL};
  if (fi) l->fi = *fi;
  int waits = pending_when_inode_created(fs, in, setattr_created, l);
  inode_put(fs, in);
  if (!waits) free(l);
  return waits;
}

/* Reply: this worker for times deferred to the write-back, and for a chown or chmod that changes nothing; I/O
 * thread (the stat after the last change); this worker for a deleted file under cache=loose; what fails at
 * once after the write-back flush: the thread that ended it (this worker, I/O or reconnect thread: ops.h). */
static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  int posix = smb3_posix(fs_conn(fs));
  /* Without the POSIX extensions ownership is the mount's (uid=/gid=): only a no-op chown
   * succeeds. With them the server decides (setattr_chown). */
  if (!posix && (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != fs->uid) ||
                 ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != fs->gid))) {
    fuse_reply_err(req, EPERM);
    return;
  }
  if (posix) to_set = owner_unchanged(fs, ino, attr, to_set);
  if (setattr_times_deferred(req, fs, ino, attr, to_set) ||
      setattr_unchanged(req, fs, ino, attr, to_set, posix) || setattr_pending(req, fs, ino, attr, to_set, fi))
    return;
  struct nsop *o = nsop_new(req);
  if (!o) return;
  o->in = inode_get(fs, ino);
  pthread_mutex_lock(&o->in->lock);
  o->in->local_mod = 1; /* the kernel's view now comes from this change (see kernel_view_stale()) */
  pthread_mutex_unlock(&o->in->lock);
  o->fh = fi ? (struct fs_file *)(uintptr_t)fi->fh : NULL;
  o->attr = *attr;
  o->to_set = to_set;
  o->posix = posix;
  o->path = inode_path(fs, o->in);
  if (!o->path && !o->fh) {
    /* With the kernel's write-back cache (cache=loose) the kernel itself sends the times of a
     * file it is evicting, also after the file was deleted: nothing is left to update. */
    if (fs->wb_cache &&
        !(to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
      reply_attr_of(o);
      return;
    }
    nsop_finish_err(o, ESTALE);
    return;
  }
  setattr_next(o, 0);
}

/* ---- statfs ---- */
static void statfs_done(int rc, const struct smb3_statvfs *sv, void *arg) {
  struct nsop *o = arg;
  if (rc) {
    nsop_finish_smb(o, rc);
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
  nsop_submitted(o, smb3_statvfs_async(o->retry.conn, statfs_done, o));
}

/* Reply: I/O thread (the QUERY_INFO); reconnect thread if it waited. */
static void ll_statfs(fuse_req_t req, fuse_ino_t ino) {
  (void)ino;
  struct nsop *o = nsop_new(req);
  if (o) nsop_run(o, statfs_start);
}

/* ---- the ioctls (smb3fs_ioctl.h) on the mount root: stats, remount ---- */
/* What a remount may change while mounted: "ro", "rw", "actimeo=N" (the kernel's own flags are set
 * by mount(2) in the process that asked). 0 or EINVAL; nothing changes unless all are good. */
static int remount_apply(struct fs_ctx *fs, const char *s) {
  int ro = fs->ro;
  double actimeo = fs->actimeo;
  char buf[SMB3FS_REMOUNT_MAX];
  snprintf(buf, sizeof buf, "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    struct smb3_options o;
    smb3_options_init(&o);
    int bad = smb3_options_parse(&o, t, 0, NULL, 0);
    if (!bad && (!strcmp(t, "ro") || !strcmp(t, "rw")))
      ro = o.ro;
    else if (!bad && !strncmp(t, "actimeo=", 8))
      actimeo = o.actimeo;
    else
      bad = 1;
    smb3_options_free(&o);
    if (bad) return EINVAL;
  }
  fs->ro = ro; /* (read by handlers without a lock: an int and a double, each written whole) */
  fs->actimeo = actimeo;
  return 0;
}

/* Reply: this worker (the counters are local; a remount changes two settings). */
static void ll_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg, struct fuse_file_info *fi,
                     unsigned flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz) {
  (void)arg, (void)fi;
  struct fs_ctx *fs = fuse_req_userdata(req);
  if (cmd == SMB3FS_IOC_REMOUNT && ino == FUSE_ROOT_ID && !(flags & FUSE_IOCTL_COMPAT)) {
    const struct fuse_ctx *who = fuse_req_ctx(req);
    if (who->uid != 0 && who->uid != getuid())
      fuse_reply_err(req, EPERM);
    else if (in_bufsz != SMB3FS_REMOUNT_MAX || !memchr(in_buf, 0, in_bufsz))
      fuse_reply_err(req, EINVAL);
    else {
      int rc = remount_apply(fs, in_buf);
      if (rc)
        fuse_reply_err(req, rc);
      else
        fuse_reply_ioctl(req, 0, NULL, 0);
    }
    return;
  }
  if (cmd != SMB3FS_IOC_STATS || ino != FUSE_ROOT_ID || (flags & FUSE_IOCTL_COMPAT) ||
      out_bufsz < SMB3FS_STATS_MAX) {
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

void ops_attr_fill(struct fuse_lowlevel_ops *op) {
  op->getattr = ll_getattr;
  op->setattr = ll_setattr;
  op->statfs = ll_statfs;
  /* No getxattr/listxattr here: xattr.c (see smb3fs_ioctl.h for the stats). */
  op->ioctl = ll_ioctl;
}
