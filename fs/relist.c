/* relist.c - lookups answered from a fresh listing of the directory (relist.h). */
#include "relist.h"

#include <stdlib.h>
#include <string.h>

#include "dfs.h"
#include "reply.h"

/* Directories with more entries are not listed again for a lookup: a stat is cheaper there. */
#define RELIST_MAX 1024
#define ATTR_REPARSE_POINT 0x400u /* MS-FSCC 2.6 */

struct relist_wait {
  struct relist_wait *next;
  char *name;
  relist_cb cb;
  void *arg;
};

/* One listing for lookups in flight on a directory (fs_inode.relist, under its lock). */
struct relist_job {
  struct fs_ctx *fs;
  struct fs_inode *dir; /* referenced */
  double asked;
  uint64_t gen;
  struct relist_wait *waiters;
};

enum { RL_NO, RL_ASK, RL_STALE, RL_YES };

static int same_time(struct timespec_smb3 a, struct timespec_smb3 b) {
  return a.sec == b.sec && a.nsec == b.nsec;
}

/* Whether in (its lock held) is what the listing's entry e says, with nothing of this mount's that
 * could be newer than the listing. */
static int confirms(struct fs_inode *in, const struct smb3_stat *e) {
  const struct smb3_stat *s = &in->st;
  if (!e->ino || (e->attributes & ATTR_REPARSE_POINT) || in->nopen || in->opening || in->unlinked ||
      wb_dirty(in))
    return 0;
  if (s->ino != e->ino || s->is_dir != e->is_dir || s->size != e->size || !same_time(s->mtime, e->mtime) ||
      !same_time(s->ctime, e->ctime) || s->posix != e->posix)
    return 0;
  return !e->posix || (s->mode == e->mode && s->uid == e->uid && s->gid == e->gid && s->nlink == e->nlink);
}

/* What the directory's kept listing says about name: RL_YES (*st, *asked filled), RL_ASK (recent,
 * but it does not confirm the inode), RL_STALE (it had the name and the inode, but is not recent:
 * a new listing may confirm it), RL_NO (nothing to go on). */
static int answer(struct fs_ctx *fs, struct fs_inode *dir, const char *name, struct smb3_stat *st,
                  double *asked) {
  struct smb3_stat e;
  int r = RL_NO;
  pthread_mutex_lock(&dir->lock);
  const struct fs_dent *d = dircache_find(dir->dl, name);
  if (d) {
    e = d->st;
    *asked = dircache_asked(dir->dl);
    r = dircache_recent(fs, dir->dl) ? RL_ASK : dircache_count(dir->dl) <= RELIST_MAX ? RL_STALE : RL_NO;
  }
  pthread_mutex_unlock(&dir->lock);
  if (r == RL_NO) return RL_NO;                          /* (most lookups: no table lock for them) */
  struct fs_inode *in = inode_find_child(fs, dir, name); /* (table lock: never under dir->lock) */
  if (!in) return RL_NO;
  if (r == RL_ASK) {
    pthread_mutex_lock(&in->lock);
    if (confirms(in, &e)) {
      *st = in->st; /* its own: a listing has no link count without the POSIX extensions */
      r = RL_YES;
    }
    pthread_mutex_unlock(&in->lock);
  }
  inode_put(fs, in);
  return r;
}

int relist_dents(struct fs_ctx *fs, const struct smb3_dirent *e, size_t n, struct fs_dent **out,
                 size_t *nout) {
  *out = NULL;
  *nout = 0;
  if (!n) return 0;
  struct fs_dent *v = calloc(n, sizeof *v);
  if (!v) return SMB3_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!fs_name_listable(fs, e[i].name)) continue;
    if (!(v[k].name = strdup(e[i].name))) {
      dircache_free_entries(v, k);
      return SMB3_ENOMEM;
    }
    v[k++].st = e[i].st;
  }
  *out = v;
  *nout = k;
  return 0;
}

void relist_keep(struct fs_ctx *fs, struct fs_inode *dir, const struct fs_dent *v, size_t n, double asked,
                 uint64_t gen) {
  struct fs_dlist *d = dircache_new(fs, v, n, asked, gen); /* NULL: none may be kept */
  pthread_mutex_lock(&dir->lock);
  struct fs_dlist *drop = dir->dl;
  if (drop && dircache_asked(drop) > asked) /* a later one completed first: it stays */
    drop = d;
  else
    dir->dl = d;
  pthread_mutex_unlock(&dir->lock);
  dircache_free(drop);
}

void relist_saw(struct fs_inode *dir, const char *name, const struct smb3_stat *st, double asked) {
  pthread_mutex_lock(&dir->lock);
  if (dir->dl && asked > dircache_asked(dir->dl)) {
    const struct fs_dent *d = dircache_find(dir->dl, name);
    int wrong = st ? !d || d->st.is_dir != st->is_dir || (d->st.ino && st->ino && d->st.ino != st->ino) : !!d;
    if (wrong) dircache_spoil(dir->dl);
  }
  pthread_mutex_unlock(&dir->lock);
}

/* The listing is in (I/O thread): keep it, answer every lookup that waited for it. */
static void relisted(int rc, const struct smb3_dirent *e, size_t n, void *arg) {
  struct relist_job *j = arg;
  struct fs_ctx *fs = j->fs;
  struct fs_inode *dir = j->dir;
  struct fs_dent *v = NULL;
  size_t nv = 0;
  if (!rc && !(rc = relist_dents(fs, e, n, &v, &nv))) relist_keep(fs, dir, v, nv, j->asked, j->gen);
  dircache_free_entries(v, nv);
  pthread_mutex_lock(&dir->lock);
  struct relist_wait *w = j->waiters;
  dir->relist = NULL;
  pthread_mutex_unlock(&dir->lock);
  free(j);
  while (w) { /* (a failed listing: each asks the server, which has its own retries) */
    struct relist_wait *next = w->next;
    struct smb3_stat st;
    double asked = 0;
    int yes = !rc && answer(fs, dir, w->name, &st, &asked) == RL_YES;
    if (yes) atomic_fetch_add(&fs->ctr.lookups_listed, 1);
    w->cb(w->arg, yes ? &st : NULL, asked);
    free(w->name);
    free(w);
    w = next;
  }
  inode_put(fs, dir);
}

static void relist_start(struct relist_job *j) {
  char *path = inode_path(j->fs, j->dir);
  if (!path) {
    relisted(SMB3_ENOENT, NULL, 0, j);
    return;
  }
  struct fs_route r;
  smb3_client *c = fs_route_c(j->fs, path, &r);
  j->asked = fs_now();
  j->gen = dircache_gen(j->fs);
  atomic_fetch_add(&j->fs->ctr.relists, 1);
  int rc = smb3_listdir_async(c, r.path, relisted, j); /* (copies the path) */
  fs_route_done(&r);
  free(path);
  if (rc) relisted(rc, NULL, 0, j);
}

int relist_lookup(struct fs_ctx *fs, struct fs_inode *dir, const char *name, relist_cb cb, void *arg) {
  if (fs->actimeo <= 0) return 0;
  struct smb3_stat st;
  double asked = 0;
  int r = answer(fs, dir, name, &st, &asked);
  if (r == RL_YES) {
    atomic_fetch_add(&fs->ctr.lookups_listed, 1);
    cb(arg, &st, asked);
    return 1;
  }
  if (r != RL_STALE) return 0;
  struct relist_wait *w = calloc(1, sizeof *w);
  if (!w || !(w->name = strdup(name))) {
    free(w);
    return 0;
  }
  w->cb = cb;
  w->arg = arg;
  pthread_mutex_lock(&dir->lock);
  struct relist_job *j = dir->relist;
  int start = !j;
  if (start && (j = calloc(1, sizeof *j))) {
    j->fs = fs;
    j->dir = dir;
    dir->relist = j;
  }
  if (j) {
    w->next = j->waiters;
    j->waiters = w;
  }
  pthread_mutex_unlock(&dir->lock);
  if (!j) {
    free(w->name);
    free(w);
    return 0;
  }
  if (start) {
    inode_ref(fs, dir);
    relist_start(j);
  }
  return 1;
}
