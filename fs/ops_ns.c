/* ops_ns.c - FUSE namespace operations: lookup, forget, mkdir, unlink, rmdir, rename, link,
 * symlink, readlink. Every handler submits an asynchronous libsmb3 call and returns; the
 * completion (on the I/O thread) replies. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "closeq.h"
#include "conn.h"
#include "dfs.h"
#include "dircache.h"
#include "dirlease.h"
#include "inode.h"
#include "notifier.h"
#include "nsop.h"
#include "openahead.h"
#include "ops.h"
#include "owner.h"
#include "pending.h"
#include "relist.h"
#include "reply.h"
#include "symlink.h"
#include "writeback.h"

/* parent + name (+ its path) for an operation on a directory entry. */
static struct nsop *entry_op(fuse_req_t req, fuse_ino_t parent, const char *name, int bad_errno) {
  if (!fs_name_ok(fuse_req_userdata(req), name)) {
    fuse_reply_err(req, bad_errno);
    return NULL;
  }
  struct nsop *o = nsop_new(req);
  if (!o) return NULL;
  o->parent = inode_get(o->fs, parent);
  o->name = strdup(name);
  o->gen = dircache_gen(o->fs); /* (before the path: a rename after it is seen by lookup_absent) */
  o->path = o->name ? inode_child_path(o->fs, o->parent, name) : NULL;
  if (!o->path) {
    nsop_finish_err(o, o->name ? ENOENT : ENOMEM);
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
    nsop_finish_smb(o, rc);
    return;
  }
  struct fuse_entry_param e;
  if (fs_fill_entry(o->fs, o->in, &e) && (entry_retype(o) || fs_fill_entry(o->fs, o->in, &e))) {
    inode_forget(o->fs, o->in->nodeid, 1);
    nsop_finish_err(o, ENOMEM);
    return;
  }
  struct fs_inode *in = o->in; /* the entry's lookup, counted by inode_link */
  double now = fs_now();
  pthread_mutex_lock(&in->lock);
  in->attr_lookup = now;
  if (o->listed) { /* as old as the listing that confirmed it, for the kernel too */
    double age = now - o->asked;
    e.entry_timeout = e.entry_timeout > age ? e.entry_timeout - age : 0;
    e.attr_timeout = e.attr_timeout > age ? e.attr_timeout - age : 0;
    if (in->attr_expiry > now + e.attr_timeout) in->attr_expiry = now + e.attr_timeout;
  }
  pthread_mutex_unlock(&in->lock);
  if (fuse_reply_entry(o->req, &e)) inode_forget(o->fs, in->nodeid, 1); /* interrupted */
  nsop_free(o);
}

static void entry_linked(struct nsop *o, const struct smb3_stat *st);
static void entry_owned(const struct smb3_stat *st, void *arg) {
  entry_linked(arg, st);
}

/* A lookup the server answered "no such file": the kernel keeps that for what is left of actimeo
 * (a negative entry), as it keeps a name it found, and as the kernel's cifs client keeps a name it
 * did not find (for a second): a program that tries the same missing name again and again (git's
 * packed-refs, a shell's PATH) asks once. This mount's own create, mkdir, link or rename of the
 * name replaces the kernel's entry; another client's new name shows once that time has passed.
 * Not when this mount changed names in the directory, or renamed a directory, while the lookup was
 * on its way (the path asked for may no longer be the directory's): then only this lookup fails. */
static void lookup_absent(struct nsop *o) {
  inode_known_forget(o->fs, o->parent); /* (as nsop_finish_smb: the server's word against ours) */
  if (!dircache_gen_fresh(o->fs, o->gen, &o->parent->ns_moved)) {
    nsop_finish_err(o, ENOENT);
    return;
  }
  struct fuse_entry_param e;
  memset(&e, 0, sizeof e); /* ino 0: a negative entry */
  double left = o->fs->actimeo - (fs_now() - o->asked);
  e.entry_timeout = left > 0 ? left : 0;
  fuse_reply_entry(o->req, &e);
  nsop_free(o);
}

static void entry_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  if (!o->adds && !o->made && !o->listed && (!rc || rc == SMB3_ENOENT)) { /* a lookup's stat */
    relist_saw(o->parent, o->name, rc ? NULL : st, o->asked);
    if (rc) {
      lookup_absent(o);
      return;
    }
  }
  if (rc) {
    nsop_finish_smb(o, rc);
    return;
  }
  if (o->made == 1) { /* mkdir, mknod, symlink: the caller owns what it made (once) */
    o->made = 2;
    if (fs_own_new(o->fs, o->req, o->parent, o->path, st, entry_owned, o)) return;
  }
  entry_linked(o, st);
}

static void entry_linked(struct nsop *o, const struct smb3_stat *st) {
  if (o->adds) /* a new name in it: its times (mkdir: its links) changed; a lookup changes nothing */
    inode_dir_changed(o->fs, o->parent, st->is_dir);
  struct smb3_stat made = *st;
  if (o->rdev && (S_ISCHR(made.mode) || S_ISBLK(made.mode)))
    made.rdev = o->rdev; /* mknod: the numbers it set */
  struct fs_inode *in = o->listed ? inode_link_listed(o->fs, o->parent, o->name, &made, o->asked)
                                  : inode_link(o->fs, o->parent, o->name, &made, o->asked);
  if (!in) {
    nsop_finish_err(o, ENOMEM);
    return;
  }
  inode_put(o->fs, o->in); /* from an earlier attempt, asked again after a reconnect */
  o->in = in;
  if (o->made_dir) inode_known_empty(o->fs, in); /* ours: it holds what we put in it */
  if (o->newname && mfsl_candidate(o->fs, st)) { /* ln -s: what it wrote is what the file holds */
    pthread_mutex_lock(&in->lock);
    int mrc = mfsl_set(in, o->newname);
    pthread_mutex_unlock(&in->lock);
    if (mrc) {
      inode_forget(o->fs, in->nodeid, 1);
      nsop_finish_err(o, ENOMEM);
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
  o->gen = dircache_gen(o->fs);
  if ((o->path = inode_child_path(o->fs, o->parent, o->name))) return 0;
  nsop_finish_err(o, ENOENT);
  return -1;
}

static void lookup_start(struct nsop *o) {
  if (entry_again(o)) return;
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  o->asked = fs_now();
  nsop_submitted(o, smb3_stat_async(r.c, r.path, entry_done, o));
  fs_route_done(&r);
}

/* relist_lookup's answer: what a recent listing says of the name, or ask the server. */
/* A lookup of a name the directory's known names lack: "no such file", no round trip. */
static void known_absent(struct nsop *o) {
  atomic_fetch_add(&o->fs->ctr.lookups_known_absent, 1);
  nsop_finish_err(o, ENOENT);
}

static void lookup_listed(void *arg, const struct smb3_stat *st, double asked) {
  struct nsop *o = arg;
  if (!st) {
    if (inode_known(o->fs, o->parent, o->name) == KNOWN_ABSENT) /* the listing renewed what we knew */
      known_absent(o);
    else
      nsop_run(o, lookup_start);
    return;
  }
  o->asked = asked;
  o->listed = 1;
  entry_done(0, st, o);
}

/* Reply: this worker (a name known absent, or confirmed by a recent listing), else I/O thread (the
 * stat, the listing, or the symlink file's read); reconnect thread if it waited. */
static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (!o) return;
  enum known_answer k = inode_known(o->fs, o->parent, o->name);
  if (k == KNOWN_ABSENT) {
    known_absent(o);
    return;
  }
  int r = relist_lookup(o->fs, o->parent, o->name, k == KNOWN_EXPIRED, lookup_listed, o);
  if (r == RELIST_ABSENT)
    known_absent(o);
  else if (!r)
    nsop_run(o, lookup_start);
}

static void mkdir_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  o->sending = 0; /* it left: never again */
  o->made_dir = !rc;
  if (!rc) o->made = 1;
  if (!rc && st->created) fs_clock_note(o->fs, &st->mtime);
  if (rc || st->ino) { /* the CREATE's attributes, file id included: one round trip in all */
    entry_done(rc, st, o);
    return;
  }
  /* A server that did not answer QFid: a second round trip for the file id. */
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  nsop_submitted(o, smb3_stat_async(r.c, r.path, entry_done, o));
  fs_route_done(&r);
}

static void mkdir_start(struct nsop *o) {
  if (entry_again(o)) return;
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  o->asked = fs_now();
  o->sending = 1;
  /* (the mode goes only to a POSIX share: elsewhere dir_mode decides what the mount shows) */
  nsop_submitted(o, smb3_mkdir_mode_async(r.c, r.path, o->mode, mkdir_done, o));
  fs_route_done(&r);
}

/* Reply: I/O thread (the CREATE, or the stat after it); reconnect thread if it waited. */
static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  inode_names_changing(fuse_req_userdata(req), parent); /* no listing asked before is served again */
  struct nsop *o = entry_op(req, parent, name, EINVAL);
  if (!o) return;
  o->adds = 1;
  o->mode = mode & 07777; /* the kernel applied the umask */
  nsop_run_unsent(o, mkdir_start);
}

/* ---- mknod: FIFOs, sockets and devices as the server's special files (POSIX share) ---- */
static void mknod_done(int rc, void *arg) {
  struct nsop *o = arg;
  o->sending = 0; /* it left: never again */
  if (rc) {
    nsop_finish_smb(o, rc);
    return;
  }
  o->unsent_only = 0; /* the lookup of the new entry may be asked again, the request before it never */
  o->made = 1;
  nsop_run(o, lookup_start);
}

/* A regular file (mknod(2) of S_IFREG): created empty with its mode and closed. */
static void mknod_reg_opened(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  (void)st;
  struct nsop *o = arg;
  if (!rc) rc = smb3_close_async(f, mknod_done, o);
  if (rc) mknod_done(rc, o);
}

static void mknod_start(struct nsop *o) {
  if (entry_again(o)) return;
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  o->asked = fs_now();
  o->sending = 1;
  if (S_ISREG(o->mode))
    nsop_submitted(o, smb3_open_mode_async(r.c, r.path, O_WRONLY | O_CREAT | O_EXCL, o->mode & 07777,
                                           mknod_reg_opened, o));
  else
    nsop_submitted(o, smb3_mknod_async(r.c, r.path, o->mode, o->rdev, mknod_done, o));
  fs_route_done(&r);
}

/* Reply: I/O thread (the new file, then its lookup); reconnect thread if it waited. Without the
 * POSIX extensions there is nothing a FIFO or device could be stored as: EPERM, what mknod(2) says
 * for "the file system does not support the type of node requested". */
static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  inode_names_changing(fs, parent);
  if (!smb3_posix(fs_conn(fs))) {
    fuse_reply_err(req, EPERM);
    return;
  }
  if (fs->ro) {
    fuse_reply_err(req, EROFS);
    return;
  }
  mode_t type = mode & S_IFMT;
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR && type != S_IFBLK) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  struct nsop *o = entry_op(req, parent, name, EINVAL);
  if (!o) return;
  o->adds = 1;
  o->mode = mode & (S_IFMT | 07777);
  o->rdev = type == S_IFCHR || type == S_IFBLK ? rdev : 0;
  nsop_run_unsent(o, mknod_start);
}

/* Reply (none): this worker. */
static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  inode_forget(fuse_req_userdata(req), ino, nlookup);
  fuse_reply_none(req);
}

/* Reply (none): this worker. */
static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  for (size_t i = 0; i < count; i++)
    inode_forget(fs, forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

/* ---- symbolic links: the server's own on a POSIX share, else mfsymlinks (symlink.c) ---- */
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

/* Reply: this worker when the link's target is known, else I/O thread (the server's link, or the
 * symlink file, read). */
static void ll_readlink(fuse_req_t req, fuse_ino_t ino) {
  struct nsop *o = nsop_new(req);
  if (!o) return;
  o->in = inode_get(o->fs, ino);
  mfsl_check(o->fs, o->in, readlink_checked, o); /* (reads the link if this version was not) */
}

static void symlink_written(int64_t result, void *arg) {
  struct nsop *o = arg;
  free(o->dest); /* the file's content */
  o->dest = NULL;
  if (result >= 0 && result != MFSL_SIZE) result = SMB3_EIO;
  if (result < 0) {
    nsop_finish_smb(o, (int)result); /* never sent again: a second create would find the first */
    return;
  }
  nsop_run(o, lookup_start); /* the entry, read back as the link it now is */
}

static void symlink_posix_start(struct nsop *o) {
  if (entry_again(o)) return;
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  o->asked = fs_now();
  o->sending = 1;
  nsop_submitted(o, smb3_symlink_async(r.c, o->newname, r.path, mknod_done, o));
  fs_route_done(&r);
}

/* Reply: I/O thread (the server's symlink, or the write of the symlink file; then the lookup of
 * the new entry); reconnect thread if it waited. */
static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  inode_names_changing(fs, parent);
  if (smb3_posix(fs_conn(fs))) { /* a symlink the server keeps and reports as one */
    if (fs->ro) {
      fuse_reply_err(req, EROFS);
      return;
    }
    struct nsop *o = entry_op(req, parent, name, EINVAL);
    if (!o) return;
    o->adds = 1;
    if (!(o->newname = strdup(link))) {
      nsop_finish_err(o, ENOMEM);
      return;
    }
    nsop_run_unsent(o, symlink_posix_start);
    return;
  }
  if (!fs->mfsymlinks) { /* nomfsymlinks: no symlinks on SMB (as mount.cifs without a symlink= option) */
    fuse_reply_err(req, EPERM);
    return;
  }
  if (fs->ro) {
    fuse_reply_err(req, EROFS);
    return;
  }
  struct nsop *o = entry_op(req, parent, name, EINVAL);
  if (!o) return;
  o->adds = 1;
  uint8_t *buf = malloc(MFSL_SIZE);
  int rc = buf ? smb3_mfsymlink_format(link, buf) : SMB3_ENOMEM;
  if (rc) {
    free(buf);
    nsop_finish_rc(o, rc);
    return;
  }
  o->dest = (char *)buf;
  o->newname = strdup(link); /* entry_done: the new inode is that link */
  if (!o->newname) {
    nsop_finish_err(o, ENOMEM);
    return;
  }
  struct fs_route r;
  o->retry.conn = fs_route_c(fs, o->path, &r);
  o->asked = fs_now();
  rc = smb3_create_file_async(r.c, r.path, buf, MFSL_SIZE, symlink_written, o);
  fs_route_done(&r);
  if (rc) symlink_written(rc, o);
}

/* ---- hard links: the new name's entry is the same inode (found by its server file id) ---- */
/* The link and the file's attributes after it (its new link count) came in one compound. */
static void link_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  o->sending = 0;                      /* it left: never again */
  if (!rc) dircache_ns_changed(o->fs); /* (as at its start: nor one asked while it was on its way) */
  if (!rc) inode_touch(o->in, INODE_TOUCH_CTIME); /* a link moves the file's ctime */
  entry_done(rc, st, o);
}

static void link_start(struct nsop *o) {
  if (entry_again(o)) return;
  free(o->dest);
  o->dest = inode_path(o->fs, o->in); /* the file's name now (it may have been renamed meanwhile) */
  if (!o->dest) {
    nsop_finish_err(o, ESTALE);
    return;
  }
  struct fs_route r1, r2;
  int xdev = fs_route2(o->fs, o->dest, o->path, &r1, &r2);
  o->retry.conn = r1.c;
  o->asked = fs_now();
  o->sending = 1;
  nsop_submitted(o, xdev ? xdev : smb3_link_stat_async(r1.c, r1.path, r2.path, link_done, o));
  fs_route2_done(&r1, &r2);
}

/* Reply: I/O thread (the link with the file's attributes); reconnect thread if it waited. */
static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  /* every directory: the file's link count changes in the listings of its other names */
  dircache_ns_changed(fuse_req_userdata(req));
  struct nsop *o = entry_op(req, newparent, newname, EINVAL);
  if (!o) return;
  o->adds = 1;
  o->in = inode_get(o->fs, ino);
  nsop_run_unsent(o, link_start);
}

/* ---- unlink / rmdir ---- */
static int victim_linked(struct fs_inode *v) {
  pthread_mutex_lock(&v->lock);
  int linked = v->st.nlink > 1;
  pthread_mutex_unlock(&v->lock);
  return linked;
}

static void unlink_done(int rc, void *arg) {
  struct nsop *o = arg;
  o->sending = 0; /* it left: never again */
  if (o->silly) { /* the name is already gone; a failure leaves a hidden file behind */
    inode_dir_changed(o->fs, o->parent, 0);
    nsop_finish_err(o, 0);
    return;
  }
  if (!rc) {
    inode_known_del(o->fs, o->parent, o->name);
    inode_dir_changed(o->fs, o->parent, o->rmdir ? -1 : 0); /* its times (rmdir: its links) changed */
  }
  if (!rc && !o->rmdir && (!o->victim || o->links_left > 0 || victim_linked(o->victim)))
    dircache_ns_changed(o->fs); /* the link count in the listings of its other names changed */
  if (!rc && o->victim) {
    if (o->rmdir)
      inode_detach(o->fs, o->victim);
    else { /* a hard link's other names keep the inode, one link less: the kernel must ask again */
      inode_unlinked(o->fs, o->victim, o->links_left, o->parent, o->name);
      if (o->links_left > 0) notifier_attrs_later(o->fs, o->victim->nodeid);
    }
  } else if (!rc && !o->rmdir) {
    itab_expire_linked(o->fs); /* the name was another of some inode's hard links */
  }
  nsop_finish_smb(o, rc);
}

/* The unlink of a file the mount knows: its link count at the removal came in the same compound. */
static void unlink_stat_done(int rc, const struct smb3_stat *st, void *arg) {
  struct nsop *o = arg;
  o->links_left = st && st->nlink ? (int64_t)st->nlink - 1 : -1;
  /* a name of a file the mount knows by another of its names (the kernel's one inode for all) */
  if (!rc && st && !o->victim) o->victim = inode_find_id(o->fs, st->ino);
  unlink_done(rc, o);
}

/* Is the victim open, but for the handle its unlink closes in its own compound (o->closing)? */
static int victim_open(struct nsop *o) {
  struct fs_inode *v = o->victim;
  if (!v) return 0;
  pthread_mutex_lock(&v->lock);
  int n = v->nopen - (o->closing && o->closing_fh->in == v);
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
  struct fs_route r1, r2;
  int rc = fs_route2(o->fs, from, o->path2, &r1, &r2);
  if (!rc) rc = smb3_rename_async(r1.c, r1.path, r2.path, 1, cb, o);
  fs_route2_done(&r1, &r2);
  return rc;
}

/* The victim now has its hidden name (in the directory it was in). */
static int silly_moved(struct nsop *o, struct fs_inode *dir, int rc, smb3_done_cb then) {
  if (rc) return rc;
  inode_known_del(o->fs, dir, o->newname ? o->newname : o->name); /* the victim's name (rename: the target) */
  inode_move(o->fs, o->victim, dir, o->hidden);
  pthread_mutex_lock(&o->victim->lock);
  o->victim->unlinked = 1; /* its last close detaches it */
  pthread_mutex_unlock(&o->victim->lock);
  o->silly = 1;
  struct fs_route r;
  fs_route(o->fs, o->path2, &r);
  rc = smb3_unlink_async(r.c, r.path, then, o);
  fs_route_done(&r);
  return rc;
}

static void unlink_silly_done(int rc, void *arg) {
  struct nsop *o = arg;
  nsop_submitted(o, silly_moved(o, o->parent, rc, unlink_done));
}

/* unlink and rmdir are one operation that differs only in its request (and, for unlink, in the
 * hidden rename an open file needs first: start_silly). */
static void remove_start(struct nsop *o) {
  if (entry_again(o)) return;
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  o->sending = 1;
  if (o->rmdir) /* its directory lease's handle, if it holds one, closed in the same compound */
    nsop_submitted(
        o, smb3_close_rmdir_async(r.c, o->victim ? dirlease_take(o->victim) : NULL, r.path, unlink_done, o));
  else { /* the file's own handle that waited to be closed, closed in the same compound */
    smb3_file *f = o->closing;
    o->closing = NULL;
    o->links_left = -1;
    nsop_submitted(o, smb3_close_unlink_stat_async(r.c, f, r.path, unlink_stat_done, o));
  }
  fs_route_done(&r);
}

/* After the handles waiting to be closed are closed (closeq_drain): a file still open on the server
 * would only become delete-pending, and keep its directory from being empty. */
static void remove_go(void *arg) {
  struct nsop *o = arg;
  if (!o->rmdir && victim_open(o)) {
    nsop_submitted(o, start_silly(o, o->parent, o->path, unlink_silly_done));
    return;
  }
  nsop_run_unsent(o, remove_start);
}

/* After the close queue: nothing below a directory about to be removed holds a directory lease
 * any more (dirlease.h: Samba keeps a directory with handles open below it); its own lease handle
 * is closed in the rmdir's compound (remove_start). */
static void remove_drained(void *arg) {
  struct nsop *o = arg;
  if (o->rmdir)
    dirlease_release_inside(o->fs, o->victim, remove_go, o);
  else
    remove_go(o);
}

static void entry_remove(fuse_req_t req, fuse_ino_t parent, const char *name, int rmdir) {
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (!o) return;
  files_wait_releases(o->fs); /* a file closed just before: its handle is queued or closed (file.h) */
  o->victim = inode_find_child(o->fs, o->parent, name);
  o->rmdir = rmdir;
  /* An unlink needs only the file's own handles closed: one that waits goes in its compound (one
   * opened ahead: the drain waits for its CLOSE). */
  if (!rmdir && !(o->victim && oa_drop(o->fs, o->victim))) {
    struct fs_route r;
    smb3_client *c = fs_route_c(o->fs, o->path, &r);
    int took = closeq_take(o->fs, o->victim, o->path, c, &o->closing_fh, &o->closing);
    fs_route_done(&r);
    if (took >= 0) {
      remove_drained(o);
      return;
    }
  }
  closeq_drain(o->fs, remove_drained, o);
}

/* Reply: I/O thread (the delete, or an open file's hidden rename + delete); reconnect thread if it waited. */
static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  inode_names_changing(fuse_req_userdata(req), parent);
  entry_remove(req, parent, name, 0);
}

/* Reply: I/O thread (the delete); reconnect thread if it waited. */
static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  inode_names_changing(fuse_req_userdata(req), parent);
  entry_remove(req, parent, name, 1);
}

/* ---- rename ---- */
static void rename_restored(int rc, void *arg) {
  (void)rc; /* at worst it shows as the regular file Samba made of it */
  nsop_finish_err(arg, 0);
}

/* Samba 4.22 drops a special file's FILE_ATTRIBUTE_REPARSE_POINT when renaming it (smb3_mknod_restore)
 * and calls it a regular file from then on: its reparse point is set again under the new name.
 * 1 when that was sent (rename_restored answers). */
static int rename_restore_special(struct nsop *o) {
  if (!o->in) return 0;
  pthread_mutex_lock(&o->in->lock);
  uint32_t mode = o->in->st.mode;
  uint64_t rdev = o->in->st.rdev;
  int special = o->in->st.posix && (S_ISFIFO(mode) || S_ISSOCK(mode) || S_ISCHR(mode) || S_ISBLK(mode));
  pthread_mutex_unlock(&o->in->lock);
  if (!special || ((S_ISCHR(mode) || S_ISBLK(mode)) && !rdev)) return 0; /* a device: its numbers unknown */
  int rc = smb3_mknod_restore_async(fs_conn(o->fs), o->dest, mode, rdev, rename_restored, o);
  return rc == 0;
}

/* Whether a rename changes listings beyond its two directories, which then may not be served (dircache.h):
 * a directory moved (or what moves is unknown here), since a listing in flight of it asked for it by its
 * old path; or a file replaced that has other names (their link count), or may have (unknown here,
 * on a POSIX share, whose listings carry link counts). */
static int rename_spoils_all(struct nsop *o) {
  if (!o->in || o->in->st.is_dir) return 1;
  if (!o->replace || o->victim == o->in) return 0;
  return o->victim ? victim_linked(o->victim) : smb3_posix(fs_conn(o->fs));
}

static void rename_done(int rc, void *arg) {
  struct nsop *o = arg;
  if (rc) {
    nsop_finish_smb(o, rc);
    return;
  }
  inode_known_del(o->fs, o->parent, o->name);
  inode_known_add(o->fs, o->newparent, o->newname);
  if (rename_spoils_all(o)) dircache_ns_changed(o->fs); /* (nor one asked while it was on its way) */
  /* both directories' times (and, moving a directory, their link counts) and the file's ctime changed */
  int moved_dir = o->in && o->in->st.is_dir && o->parent != o->newparent;
  inode_dir_changed(o->fs, o->parent, moved_dir ? -1 : 0);
  if (o->newparent != o->parent) inode_dir_changed(o->fs, o->newparent, moved_dir ? 1 : 0);
  inode_attr_expire(o->in);
  inode_touch(o->in, INODE_TOUCH_CTIME); /* as Linux's file systems: a rename moves the file's ctime */
  if (o->victim && o->victim != o->in && !o->silly) {
    if (o->victim->st.is_dir)
      inode_detach(o->fs, o->victim);
    else /* a file replaced that has other names keeps them, one link less */
      inode_unlinked(o->fs, o->victim, -1, o->newparent, o->newname);
  }
  if (o->in) inode_move(o->fs, o->in, o->newparent, o->newname);
  if (rename_restore_special(o)) return;
  nsop_finish_err(o, 0);
}

static void rename_go(struct nsop *o) {
  struct fs_route r1, r2;
  int rc = fs_route2(o->fs, o->path, o->dest, &r1, &r2);
  nsop_submitted(o, rc ? rc : smb3_rename_async(r1.c, r1.path, r2.path, o->replace, rename_done, o));
  fs_route2_done(&r1, &r2);
}

static void rename_victim_gone(int rc, void *arg) {
  (void)rc; /* the target name is free either way; at worst a hidden file stays behind */
  rename_go(arg);
}

static void rename_silly_done(int rc, void *arg) {
  struct nsop *o = arg;
  nsop_submitted(o, silly_moved(o, o->newparent, rc, rename_victim_gone));
}

static void rename_flushed(int err, void *arg) {
  (void)err;
  struct nsop *o = arg;
  /* Samba refuses to replace a file that is open: move an open target out of the way first. */
  if (o->replace && o->victim && o->victim != o->in && victim_open(o)) {
    nsop_submitted(o, start_silly(o, o->newparent, o->dest, rename_silly_done));
    return;
  }
  rename_go(o);
}

/* Reply: I/O thread (the rename, after the write-back flush and moving an open target away); what fails
 * at once after the flush: the thread that ended it (this worker, I/O or reconnect thread: ops.h). */
/* The server should see the data under the old name before the name changes. */
static void rename_go_flush(void *arg) {
  struct nsop *o = arg;
  if (o->in)
    wb_flush(o->fs, o->in, 0, rename_flushed, o);
  else
    rename_flushed(0, o);
}

/* ... nor directory lease handles (dirlease.h), at or below the directory renamed, and of a directory
 * it replaces. */
static void rename_released(void *arg) {
  struct nsop *o = arg;
  dirlease_release_below(o->fs, o->in, rename_go_flush, o);
}

static void rename_drained(void *arg) {
  struct nsop *o = arg;
  dirlease_release_below(o->fs, o->victim, rename_released, o);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags) {
  inode_names_changing(fuse_req_userdata(req), parent);
  inode_names_changing(fuse_req_userdata(req), newparent);
  if (flags & ~RENAME_NOREPLACE) { /* RENAME_EXCHANGE / WHITEOUT have no SMB equivalent */
    fuse_reply_err(req, EINVAL);
    return;
  }
  if (!fs_name_ok(fuse_req_userdata(req), newname)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  struct nsop *o = entry_op(req, parent, name, ENOENT);
  if (!o) return;
  o->newparent = inode_get(o->fs, newparent);
  o->newname = strdup(newname);
  o->dest = o->newname ? inode_child_path(o->fs, o->newparent, newname) : NULL;
  if (!o->dest) {
    nsop_finish_err(o, o->newname ? ENOENT : ENOMEM);
    return;
  }
  o->replace = !(flags & RENAME_NOREPLACE);
  o->in = inode_find_child(o->fs, o->parent, name);
  o->victim = inode_find_child(o->fs, o->newparent, newname);
  if (rename_spoils_all(o)) dircache_ns_changed(o->fs);
  files_wait_releases(o->fs);             /* files closed just before: queued or closed (file.h) */
  closeq_drain(o->fs, rename_drained, o); /* Samba refuses to rename a directory with open files below */
}

void ops_ns_fill(struct fuse_lowlevel_ops *op) {
  op->lookup = ll_lookup;
  op->forget = ll_forget;
  op->forget_multi = ll_forget_multi;
  op->mkdir = ll_mkdir;
  op->unlink = ll_unlink;
  op->rmdir = ll_rmdir;
  op->rename = ll_rename;
  op->link = ll_link;
  op->readlink = ll_readlink;
  op->symlink = ll_symlink;
  op->mknod = ll_mknod;
}
