/* dirlease.c - directory leases (dirlease.h). */
#include "dirlease.h"

#include <stdlib.h>
#include <string.h>

#include "dircache.h"

/* Lease handles held (one mount per daemon process). */
static atomic_int held;
/* When this mount last started to rename or remove a directory (fs_now()): a lease that
 * comes with a listing asked for before then is not kept (its handle could be in or below that
 * directory, which a handle left open would keep from going: dirlease_release_below). */
static _Atomic double fence;

int dirlease_held(void) {
  return atomic_load(&held);
}

int dirlease_want(struct fs_ctx *fs, struct fs_inode *dir, uint8_t key[16]) {
  if (!fs->dirleases || fs->actimeo <= 0 || !fs->leases || atomic_load(&held) >= DIRLEASE_MAX ||
      __atomic_load_n(&dir->made_in, __ATOMIC_ACQUIRE))
    return 0;
  pthread_mutex_lock(&dir->lock);
  int want = dir->st.is_dir && !dir->dlh;
  memcpy(key, dir->key, 16);
  pthread_mutex_unlock(&dir->lock);
  return want;
}

void dirlease_got(struct fs_ctx *fs, struct fs_inode *dir, smb3_file *dh, double asked) {
  if (!dh) return;
  pthread_mutex_lock(&dir->lock);
  smb3_file *spare = dh;
  /* A break handled since the listing was asked for may have been this very lease's, come before
   * its CREATE's answer was handled: not to be relied on. */
  if (!dir->dlh && dir->dlease_broken < asked && atomic_load(&fence) < asked) {
    dir->dlh = dh;
    dir->dlease_at = asked;
    atomic_fetch_add(&held, 1);
    spare = NULL;
  }
  pthread_mutex_unlock(&dir->lock);
  if (spare) /* broken, or a second listing's (the same key: one lease, one handle is enough) */
    smb3_close_async(spare, NULL, NULL);
  else
    atomic_fetch_add(&fs->ctr.dir_leases, 1);
}

/* Take dir's handle away (dir->lock held): the kept listing is no longer vouched for. */
static smb3_file *take(struct fs_inode *dir, int spoil) {
  smb3_file *dh = dir->dlh;
  dir->dlh = NULL;
  if (dh) atomic_fetch_sub(&held, 1);
  if (spoil)
    dircache_spoil(dir->dl);
  else
    dircache_set_leased(dir->dl, 0);
  return dh;
}

smb3_file *dirlease_take(struct fs_inode *dir) {
  pthread_mutex_lock(&dir->lock);
  smb3_file *dh = dir->dlh ? take(dir, 0) : NULL;
  pthread_mutex_unlock(&dir->lock);
  return dh;
}

void dirlease_drop(struct fs_inode *dir) {
  smb3_file *dh = dirlease_take(dir);
  if (dh) smb3_close_async(dh, NULL, NULL);
}

void dirlease_free(struct fs_inode *dir) {
  if (!dir->dlh) return; /* (not take(): the inode's listing is freed already) */
  atomic_fetch_sub(&held, 1);
  smb3_close_async(dir->dlh, NULL, NULL);
  dir->dlh = NULL;
}

int dirlease_break(struct fs_ctx *fs, const uint8_t key[16], uint32_t new_state) {
  struct fs_inode *in = inode_by_key(fs, key);
  if (!in) return 0;
  pthread_mutex_lock(&in->lock);
  int dir = in->st.is_dir;
  smb3_file *dh = dir ? take(in, !(new_state & SMB3_LEASE_READ)) : NULL;
  if (dir) in->dlease_broken = fs_now();
  pthread_mutex_unlock(&in->lock);
  if (dir) {
    atomic_fetch_add(&fs->ctr.dir_lease_breaks, 1);
    if (!(new_state & SMB3_LEASE_READ)) dircache_dir_changed(fs, &in->ns_moved); /* nor served to a readdir */
  }
  inode_put(fs, in);
  if (dh) smb3_close_async(dh, NULL, NULL); /* (closing the handle ends the break too) */
  return dir;
}

/* ---- before a rename or removal of a directory ---- */
struct below {
  struct fs_ctx *fs;
  struct fs_inode *top;
  int inside; /* not top's own handle */
  pthread_mutex_t lock;
  int left; /* CLOSEs unanswered + 1 while the walk goes on */
  void (*then)(void *);
  void *arg;
};

static void below_put(struct below *b) {
  pthread_mutex_lock(&b->lock);
  int last = --b->left == 0;
  pthread_mutex_unlock(&b->lock);
  if (!last) return;
  pthread_mutex_destroy(&b->lock);
  void (*then)(void *) = b->then;
  void *arg = b->arg;
  free(b);
  then(arg);
}

static void below_closed(int rc, void *arg) {
  (void)rc; /* a CLOSE that failed: the handle is gone with its connection, or the rename says so */
  below_put(arg);
}

/* Whether `top` is in or one of in's ancestors. */
static int under(struct fs_ctx *fs, struct fs_inode *in, struct fs_inode *top) {
  struct fs_inode *p = in;
  inode_ref(fs, p);
  int found = 0;
  while (p && !found) {
    found = p == top;
    struct fs_inode *up = found ? NULL : inode_parent(fs, p, NULL);
    inode_put(fs, p);
    p = up;
  }
  inode_put(fs, p);
  return found;
}

static void release_one(struct fs_inode *in, void *arg) {
  struct below *b = arg;
  pthread_mutex_lock(&in->lock);
  int has = in->dlh != NULL;
  pthread_mutex_unlock(&in->lock);
  if (!has || (b->inside && in == b->top) || !under(b->fs, in, b->top)) return;
  pthread_mutex_lock(&in->lock);
  smb3_file *dh = in->dlh ? take(in, 0) : NULL;
  pthread_mutex_unlock(&in->lock);
  if (!dh) return;
  pthread_mutex_lock(&b->lock);
  b->left++;
  pthread_mutex_unlock(&b->lock);
  if (smb3_close_async(dh, below_closed, b)) below_put(b); /* (the handle is freed all the same) */
}

static void release(struct fs_ctx *fs, struct fs_inode *dir, int inside, void (*then)(void *), void *arg) {
  int is_dir = 0;
  if (dir) {
    pthread_mutex_lock(&dir->lock);
    is_dir = dir->st.is_dir;
    pthread_mutex_unlock(&dir->lock);
  }
  if (is_dir) atomic_store(&fence, fs_now()); /* (listings in flight: their leases are not kept) */
  struct below *b = is_dir && atomic_load(&held) ? calloc(1, sizeof *b) : NULL;
  if (!b) { /* none held (or no memory: the server answers what it answers) */
    then(arg);
    return;
  }
  *b = (struct below){fs, dir, inside, PTHREAD_MUTEX_INITIALIZER, 1, then, arg};
  itab_each(fs, release_one, b);
  below_put(b);
}

void dirlease_release_below(struct fs_ctx *fs, struct fs_inode *dir, void (*then)(void *), void *arg) {
  release(fs, dir, 0, then, arg);
}

void dirlease_release_inside(struct fs_ctx *fs, struct fs_inode *dir, void (*then)(void *), void *arg) {
  release(fs, dir, 1, then, arg);
}
