/* ops_dir.c - directory listing: opendir, readdir(plus), releasedir.
 *
 * One listing per open directory, fetched by the first readdir with smb3_listdir_async()
 * (CREATE + QUERY_DIRECTORY compounded, more QUERY_DIRECTORY rounds, the last one compounded with
 * the CLOSE): FileIdFullDirectoryInformation carries the file id, size, times and attributes of
 * every entry, so readdirplus needs no per-entry stat, and no thread waits for the server
 * (readdir calls that arrive meanwhile queue on the handle and are answered from the completion
 * callback). An opendir alone (cd, the stats ioctl) costs nothing. Entries are kept in the
 * handle so that any offset can be served again (rewinddir, or a reply the kernel could not
 * take whole); a rewind to offset 0 after the listing is complete lists the directory again.
 * A listing is also kept on the directory's inode and served again to the next opens for up to
 * actimeo seconds while nothing in the mount's namespace changes (dircache.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "dfs.h"
#include "dircache.h"
#include "dirlease.h"
#include "inode.h"
#include "ops.h"
#include "relist.h"
#include "reply.h"
#include "symlink.h"

struct dir_wait {
  struct dir_wait *next;
  fuse_req_t req;
  fuse_ino_t ino;
  size_t size;
  off_t off;
  int plus;
};

enum { DIR_EMPTY, DIR_LISTING, DIR_DONE };

struct dirh {
  pthread_mutex_t lock;
  struct fs_ctx *fs;
  char *path;
  int state;
  int rc;      /* a failed listing, reported to every readdir waiting for it */
  int release; /* releasedir came while listing (free when it completes) */
  struct fs_dent *v;
  size_t n;
  struct dir_wait *waiters;
  double asked;          /* when the listing was asked for (inode_link) */
  uint64_t gen;          /* dircache_gen() then */
  int kept;              /* the listing came from take_listing (the inode's kept one) */
  struct fs_inode *dir;  /* referenced */
  struct fs_retry retry; /* listed once more after a lost connection (one listing at a time) */
};

static void clear_entries(struct dirh *dh) {
  dircache_free_entries(dh->v, dh->n);
  dh->v = NULL;
  dh->n = 0;
  dh->kept = 0;
}

static void dirh_free(struct dirh *dh) {
  free(dh->path);
  clear_entries(dh);
  inode_put(dh->fs, dh->dir);
  pthread_mutex_destroy(&dh->lock);
  free(dh);
}

/* A listing asked for before this readdir becomes dh's (dh->lock held): files the kernel has keep
 * their inode's attributes (kept). */
static void set_kept(struct dirh *dh, struct fs_dent *v, size_t n, double asked) {
  clear_entries(dh);
  dh->v = v, dh->n = n, dh->asked = asked, dh->kept = 1, dh->rc = 0;
}

/* The directory's kept listing into dh if it may be served now (1; dh->lock held). */
static int take_listing(struct dirh *dh) {
  struct fs_dent *v = NULL;
  size_t n = 0;
  double asked = 0;
  pthread_mutex_lock(&dh->dir->lock);
  if (dircache_fresh(dh->fs, dh->dir->dl, &dh->dir->ns_moved)) v = dircache_copy(dh->dir->dl, &n, &asked);
  pthread_mutex_unlock(&dh->dir->lock); /* (a stale one stays for lookups: relist.h) */
  if (!v) return 0;
  set_kept(dh, v, n, asked);
  return 1;
}

/* Reply: this worker (nothing is asked of the server until the first readdir). */
static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  struct fs_inode *in = inode_get(fs, ino);
  struct dirh *dh = calloc(1, sizeof *dh);
  if (dh) dh->path = inode_path(fs, in);
  if (!dh || !dh->path) {
    inode_put(fs, in);
    fuse_reply_err(req, dh ? ESTALE : ENOMEM);
    free(dh);
    return;
  }
  dh->dir = in;
  dh->fs = fs;
  pthread_mutex_init(&dh->lock, NULL);
  fi->fh = (uint64_t)(uintptr_t)dh;
  if (fuse_reply_open(req, fi)) dirh_free(dh);
}

/* Answer one readdir from the complete listing (dh->lock held). */
static void serve(struct dirh *dh, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus) {
  struct fs_ctx *fs = dh->fs;
  if (dh->rc) {
    fs_reply_smb_err(req, dh->rc);
    return;
  }
  char *buf = malloc(size);
  if (!buf) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  struct fs_inode *dir = inode_get(fs, ino);
  size_t pos = 0;
  int rc = 0;
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
    if (i - 2 >= dh->n) break;
    struct fs_dent *d = &dh->v[i - 2];
    if (plus) {
      struct fuse_entry_param e;
      struct fs_inode *in = NULL;
      /* An entry without attributes (type unknown, no nodeid: no lookup counted) makes the kernel
       * look the name up: for a possible symlink file not read in this version, for a file of
       * another type than the kernel's inode, and for an entry without a file id (impacket lists
       * every file with FileId 0 but answers QUERY_INFO with its IndexNumber: the lookup's inode
       * then has the one st_ino that stat will show from then on). */
      if (d->st.ino && (!mfsl_candidate(fs, &d->st) || mfsl_entry_known(fs, dir, d->name, &d->st))) {
        in = dh->kept ? inode_link_kept(fs, dir, d->name, &d->st, dh->asked)
                      : inode_link_listed(fs, dir, d->name, &d->st, dh->asked); /* counts as a lookup */
        if (!in) {
          rc = SMB3_ENOMEM;
          break;
        }
        if (fs_fill_entry(fs, in, &e)) {
          inode_forget(fs, in->nodeid, 1);
          inode_put(fs, in);
          in = NULL;
        }
      }
      if (!in) {
        memset(&e, 0, sizeof e);
        e.attr.st_ino = d->st.ino ? d->st.ino : fs_ino_of_name(d->name);
      }
      len = fuse_add_direntry_plus(req, buf + pos, size - pos, d->name, &e, (off_t)i + 1);
      if (in && len > size - pos) inode_forget(fs, in->nodeid, 1); /* did not fit: not passed on */
      inode_put(fs, in);
    } else {
      struct stat st;
      fs_fill_stat(fs, &d->st, &st);
      if (!st.st_ino) st.st_ino = fs_ino_of_name(d->name); /* no file id from the server */
      if (mfsl_candidate(fs, &d->st) && !S_ISLNK(st.st_mode))
        st.st_mode = 0; /* DT_UNKNOWN: maybe a symlink */
      len = fuse_add_direntry(req, buf + pos, size - pos, d->name, &st, (off_t)i + 1);
    }
    if (len > size - pos) break;
    pos += len;
  }
  inode_put(fs, dir);
  if (rc && !pos)
    fs_reply_smb_err(req, rc);
  else
    fuse_reply_buf(req, buf, pos);
  free(buf);
}

/* The listing is complete (I/O thread): keep the entries, answer every queued readdir. */
static void list_start(struct dirh *dh);
static void listed(int rc, const struct smb3_dirent *entries, size_t n, smb3_file *lh, void *arg);
static void served(struct dirh *dh);

static void list_resume(void *arg, int ok) {
  struct dirh *dh = arg;
  if (ok)
    list_start(dh);
  else
    listed(dh->retry.rc, NULL, 0, NULL, dh);
}

/* lh: the directory lease that came with the listing (dirlease.h), or NULL. */
static void listed(int rc, const struct smb3_dirent *entries, size_t n, smb3_file *lh, void *arg) {
  struct dirh *dh = arg;
  dirlease_got(dh->fs, dh->dir, lh, dh->asked); /* (kept before the listing is: relist_keep) */
  /* a lost connection: list again on the next one (unless releasedir came meanwhile) */
  pthread_mutex_lock(&dh->lock);
  int released = dh->release;
  pthread_mutex_unlock(&dh->lock);
  if (!released && (fs_dfs_retry(dh->fs, &dh->retry, rc, dh->path, list_resume, dh) ||
                    fs_park_once(dh->fs, &dh->retry, rc, list_resume, dh)))
    return;
  if (released && fs_conn_error(rc)) reconnect_kick(dh->fs);
  pthread_mutex_lock(&dh->lock);
  clear_entries(dh);
  dh->rc = rc ? rc : relist_dents(dh->fs, entries, n, &dh->v, &dh->n);
  /* kept on the directory's inode (dh->lock held; then the inode's: the order everywhere) */
  if (!dh->rc) relist_keep(dh->fs, dh->dir, dh->v, dh->n, dh->asked, dh->gen);
  served(dh);
}

/* The listing is in dh (dh->lock held): answer the readdirs that waited for it, list ahead below it
 * (relist.h), and free dh if it was released meanwhile. Unlocks dh->lock. */
static void served(struct dirh *dh) {
  dh->state = DIR_DONE;
  struct dir_wait *w = dh->waiters;
  dh->waiters = NULL;
  while (w) {
    struct dir_wait *next = w->next;
    serve(dh, w->req, w->ino, w->size, w->off, w->plus);
    free(w);
    w = next;
  }
  int release = dh->release, ok = !dh->rc;
  struct fs_ctx *fs = dh->fs;
  struct fs_inode *dir = dh->dir;
  if (ok) inode_ref(fs, dir); /* (once unlocked, a releasedir may free dh) */
  pthread_mutex_unlock(&dh->lock);
  if (ok) {
    relist_ahead_below(fs, dir);
    inode_put(fs, dir);
  }
  if (release) dirh_free(dh);
}

/* A listing of the directory for lookups or ahead of a walk (relist.h) that this readdir waited for
 * is done: served if it may be (also one too big to be kept on the inode), else listed for the handle
 * (I/O thread, or the one that failed it). */
static void joined(void *arg, int rc, const struct fs_dent *v, size_t n, double asked, uint64_t gen) {
  struct dirh *dh = arg;
  struct fs_dent *copy = NULL;
  if (!rc && dircache_gen_fresh(dh->fs, gen, &dh->dir->ns_moved)) copy = dircache_copy_entries(v, n);
  pthread_mutex_lock(&dh->lock);
  if (copy) {
    set_kept(dh, copy, n, asked);
    atomic_fetch_add(&dh->fs->ctr.listings_kept, 1);
    served(dh);
    return;
  }
  pthread_mutex_unlock(&dh->lock);
  list_start(dh);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi,
                       int plus) {
  struct dirh *dh = (struct dirh *)(uintptr_t)fi->fh;
  pthread_mutex_lock(&dh->lock);
  /* rewinddir() after a complete listing: list again (what ls -R, find and friends expect) */
  if (dh->state == DIR_DONE && off == 0) dh->state = DIR_EMPTY;
  int first = dh->state == DIR_EMPTY;
  if (first && take_listing(dh)) { /* the last listing, served again */
    dh->state = DIR_DONE;
    atomic_fetch_add(&dh->fs->ctr.listings_kept, 1);
  }
  if (dh->state == DIR_DONE) {
    serve(dh, req, ino, size, off, plus);
    struct fs_ctx *fs = dh->fs;
    struct fs_inode *dir = dh->dir;
    if (first) inode_ref(fs, dir); /* (once answered and unlocked, a releasedir may free dh) */
    pthread_mutex_unlock(&dh->lock);
    if (first) { /* (no lock held: listings ahead may complete at once) */
      relist_ahead(fs, dir);
      relist_ahead_below(fs, dir);
      inode_put(fs, dir);
    }
    return;
  }
  struct dir_wait *w = malloc(sizeof *w);
  if (!w) {
    pthread_mutex_unlock(&dh->lock);
    fuse_reply_err(req, ENOMEM);
    return;
  }
  *w = (struct dir_wait){dh->waiters, req, ino, size, off, plus};
  dh->waiters = w;
  int start = dh->state == DIR_EMPTY;
  if (start) dh->retry.again = dh->retry.dfs = 0;
  dh->state = DIR_LISTING;
  pthread_mutex_unlock(&dh->lock);
  if (!start) return;
  relist_ahead(dh->fs, dh->dir);
  if (!relist_join(dh->fs, dh->dir, joined, dh)) list_start(dh); /* (one in flight: wait for it) */
}

static void list_start(struct dirh *dh) {
  struct fs_route r;
  smb3_client *c = fs_route_c(dh->fs, dh->path, &r);
  pthread_mutex_lock(&dh->lock);
  dh->asked = fs_now();
  dh->gen = dircache_gen(dh->fs);
  dh->retry.conn = c;
  pthread_mutex_unlock(&dh->lock);
  uint8_t key[16];
  int rc = smb3_listdir_lease_async(c, r.path, dirlease_want(dh->fs, dh->dir, key) ? key : NULL, listed, dh);
  fs_route_done(&r);
  if (rc) listed(rc, NULL, 0, NULL, dh); /* the callback will not run: answer the waiters now */
}

/* Reply: this worker if the listing is done, else I/O thread (the listing); reconnect thread if it waited. */
static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  do_readdir(req, ino, size, off, fi, 0);
}

/* Reply: as readdir. */
static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                           struct fuse_file_info *fi) {
  do_readdir(req, ino, size, off, fi, 1);
}

/* Reply: this worker. */
static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  struct dirh *dh = (struct dirh *)(uintptr_t)fi->fh;
  pthread_mutex_lock(&dh->lock);
  int listing = dh->state == DIR_LISTING;
  if (listing) dh->release = 1; /* freed by the listing's callback */
  pthread_mutex_unlock(&dh->lock);
  if (!listing) dirh_free(dh);
  fuse_reply_err(req, 0);
}

void ops_dir_fill(struct fuse_lowlevel_ops *op) {
  op->opendir = ll_opendir;
  op->readdir = ll_readdir;
  op->readdirplus = ll_readdirplus;
  op->releasedir = ll_releasedir;
}
