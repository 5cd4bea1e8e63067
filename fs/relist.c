/* relist.c - lookups answered from a fresh listing of the directory (relist.h). */
#include "relist.h"

#include <stdlib.h>
#include <string.h>

#include "dfs.h"
#include "dirlease.h"
#include "reply.h"

/* Directories with more entries are not listed again for a lookup: a stat is cheaper there. */
#define RELIST_MAX 1024
/* Seconds a directory that proved too big to list, or could not be listed, is not listed for
 * misses. */
#define RELIST_QUIET 30.0
/* Listing read-ahead of a tree walk: directories listed ahead per readdir, and in flight at most. */
#define RELIST_AHEAD 4
#define RELIST_AHEAD_MAX 8

struct relist_wait {
  struct relist_wait *next;
  char *name; /* NULL: a readdir waiting for the listing itself (done) */
  relist_cb cb;
  relist_done_cb done;
  void *arg;
};

/* One listing for lookups in flight on a directory (fs_inode.relist, under its lock). */
struct relist_job {
  struct fs_ctx *fs;
  struct fs_inode *dir; /* referenced; NULL: an orphan not adopted yet (below) */
  double asked;
  uint64_t gen;
  int ahead; /* listed ahead of a tree walk (fs->ahead_inflight) */
  int walk;  /* asked for by a walk: its subdirectories are listed ahead once it is in */
  struct relist_wait *waiters;
  /* An orphan: a listing ahead of the directory `name` in `parent` (referenced), which the mount
   * has no inode of when it is asked for: a program that looks up every name of a tree (git
   * status) creates a directory's inode only when it reaches it. Kept on fs->orphans (under
   * orphans_mu) until the directory's inode adopts it (orphan_adopt): in flight, it becomes that
   * inode's listing for lookups; done, its entries are kept there as any listing. */
  struct fs_inode *parent;
  char *name;
  struct relist_job *onext;
  int done, rc; /* (under orphans_mu) */
  struct fs_dent *v;
  size_t nv;
};

/* Orphans kept at most (in flight or done, not adopted): each holds its parent's inode. */
#define RELIST_ORPHANS_MAX 64

enum { RL_NO, RL_ASK, RL_STALE, RL_YES };

/* Whether the time t (fs_now(); 0: never) is less than actimeo before now. */
static int recent(const struct fs_ctx *fs, double t, double now) {
  return t && now - t < fs->actimeo;
}

static int same_time(struct timespec_smb3 a, struct timespec_smb3 b) {
  return a.sec == b.sec && a.nsec == b.nsec;
}

/* Whether in (its lock held) and the listing's entry e are the same file, of the same type and
 * kind of share, with nothing of this mount's in it that a listing could not show (open, being
 * opened, unlinked, data held back). */
static int same_file(struct fs_inode *in, const struct smb3_stat *e) {
  const struct smb3_stat *s = &in->st;
  return dircache_stands_for_stat(e) && !in->nopen && !in->opening && !in->unlinked && !wb_dirty(in) &&
         s->ino == e->ino && s->is_dir == e->is_dir && s->posix == e->posix;
}

/* Whether in (its lock held) is what the listing's entry e says, with nothing of this mount's that
 * could be newer than the listing. */
static int confirms(struct fs_inode *in, const struct smb3_stat *e) {
  const struct smb3_stat *s = &in->st;
  if (!same_file(in, e) || s->size != e->size || !same_time(s->mtime, e->mtime) ||
      !same_time(s->ctime, e->ctime))
    return 0;
  return !e->posix || (s->mode == e->mode && s->uid == e->uid && s->gid == e->gid && s->nlink == e->nlink);
}

/* Whether a listing's entry e shows the directory in as a stat would, but for the times (and the
 * size and attributes) that the mount's own changes in it moved: the mount notes those with its own
 * clock (inode_dir_changed), which no listing matches. (Not on a POSIX share: confirms.) */
static int same_dir(struct fs_inode *in, const struct smb3_stat *e) {
  return same_file(in, e) && e->is_dir && !e->posix;
}

/* What the directory's kept listing says about name: RL_YES (*st, *asked filled: the inode it
 * confirms, or for a name the mount has no inode of, the entry of a listing that may be served),
 * RL_ASK (recent, but it does not confirm the inode), RL_STALE (it had the name, but is not recent:
 * a new listing may answer), RL_NO (nothing to go on: a name it lacks too, which another client may
 * have made since). */
static int answer(struct fs_ctx *fs, struct fs_inode *dir, const char *name, struct smb3_stat *st,
                  double *asked) {
  struct smb3_stat e;
  int r = RL_NO, fresh = 0;
  uint64_t gen = 0;
  pthread_mutex_lock(&dir->lock);
  const struct fs_dent *d = dircache_find(dir->dl, name);
  if (d) {
    e = d->st;
    gen = dircache_list_gen(dir->dl);
    *asked = dircache_vouched(dir->dl);
    fresh = dircache_fresh(fs, dir->dl, &dir->ns_moved);
    r = dircache_recent(fs, dir->dl) ? RL_ASK : dircache_count(dir->dl) <= RELIST_MAX ? RL_STALE : RL_NO;
  }
  pthread_mutex_unlock(&dir->lock);
  if (r == RL_NO) return RL_NO;                          /* (most lookups: no table lock for them) */
  struct fs_inode *in = inode_find_child(fs, dir, name); /* (table lock: never under dir->lock) */
  if (!in) {
    if (r == RL_ASK && fresh && dircache_stands_for_stat(&e)) {
      *st = e;
      return RL_YES;
    }
    return r == RL_STALE ? r : RL_NO;
  }
  if (r == RL_ASK) {
    pthread_mutex_lock(&in->lock);
    if (confirms(in, &e)) {
      *st = in->st; /* its own: a listing has no link count without the POSIX extensions */
      r = RL_YES;
    } else if (same_dir(in, &e)) {
      /* A directory the mount changed (tar filling it, git's object directories): it notes its own
       * changes with its own clock, which no listing matches. Asked for after the last of them,
       * the listing has its times after them, as a stat would; asked for before, the mount's own
       * note of them is the newer one. Either way the listing, recent, shows it there. */
      *st = in->st;
      if (dircache_gen_fresh(fs, gen, &in->ns_moved)) {
        st->atime = e.atime;
        st->mtime = e.mtime;
        st->ctime = e.ctime;
        st->size = e.size;
        st->alloc_size = e.alloc_size;
        st->attributes = e.attributes;
      }
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
  if (dir->dlh && asked >= dir->dlease_at) dircache_set_leased(d, 1); /* (dirlease.h) */
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
  if (st) dir->relist_found_at = asked; /* names are looked up one by one here: the next is listed */
  pthread_mutex_unlock(&dir->lock);
}

void relist_gone(struct fs_ctx *fs, struct fs_inode *in) {
  pthread_mutex_lock(&in->lock);
  in->attr_expiry = 0; /* (the LOOKUP that follows asks the server) */
  in->attr_lookup = 0;
  pthread_mutex_unlock(&in->lock);
  char *name;
  struct fs_inode *dir = inode_parent(fs, in, &name);
  if (!dir) return;
  relist_saw(dir, name, NULL, fs_now());
  free(name);
  inode_put(fs, dir);
}

/* Answer with what answer() said (r). */
static void reply(struct fs_ctx *fs, int r, relist_cb cb, void *arg, const struct smb3_stat *st,
                  double asked) {
  if (r == RL_YES) atomic_fetch_add(&fs->ctr.lookups_listed, 1);
  cb(arg, r == RL_YES ? st : NULL, asked);
}

/* A lookup in dir, with no listing of it in flight, found nothing to go on (RL_NO): whether to list
 * it now: when a stat found another name in it less than actimeo ago, and no listing of it is recent
 * (dir->lock held). Lookups of names that do not exist (a compiler's include search, PATH) never
 * list: a listing answers no such lookup, except in a directory whose names the mount knew
 * (KNOWN_EXPIRED): the listing renews that (inode_known_renew), and then answers them. Nor does a
 * path walk through it, unless its parent was listed for lookups less than actimeo ago
 * (parent_walk): a program that looks up every name of a tree (git status, git add) goes on in
 * the subdirectories, and the first name there is answered by the listing, not by a stat first. */
enum { MISS_NO, MISS_LIST, MISS_FOUND, MISS_IF_WALK }; /* MISS_IF_WALK: only when parent_walk() */
static int miss_kind(struct fs_ctx *fs, struct fs_inode *dir, int known_expired) {
  double now = fs_now();
  if (dircache_recent(fs, dir->dl) || now < dir->relist_quiet_until) return MISS_NO;
  if (known_expired) return MISS_LIST; /* a directory this mount made, its names no longer answered */
  return recent(fs, dir->relist_found_at, now) ? MISS_FOUND : MISS_IF_WALK;
}
static int missed(struct fs_ctx *fs, struct fs_inode *dir, int known_expired, int parent_walk) {
  int k = miss_kind(fs, dir, known_expired);
  if (k == MISS_FOUND) dir->relist_found_at = 0;
  return k == MISS_LIST || k == MISS_FOUND || (k == MISS_IF_WALK && parent_walk);
}

/* Whether dir's parent was listed for lookups less than actimeo ago. */
static int parent_walk(struct fs_ctx *fs, struct fs_inode *dir) {
  struct fs_inode *p = inode_parent(fs, dir, NULL);
  if (!p) return 0;
  pthread_mutex_lock(&p->lock);
  int walk = recent(fs, p->relist_at, fs_now());
  pthread_mutex_unlock(&p->lock);
  inode_put(fs, p);
  return walk;
}

static void ahead_in(struct fs_ctx *fs, struct fs_inode *p, const char *after);

/* The listing is in (I/O thread): keep it (and the directory lease that came with it), answer every
 * lookup that waited for it. */
static void relisted(int rc, const struct smb3_dirent *e, size_t n, smb3_file *lh, void *arg) {
  struct relist_job *j = arg;
  struct fs_ctx *fs = j->fs;
  if (j->parent) { /* an orphan: its directory's inode adopted it by now, or it waits for that */
    pthread_mutex_lock(&fs->orphans_mu);
    int adopted = j->dir != NULL;
    if (!adopted) {
      /* (too big to keep on the chance: that directory is listed when the walk reaches it) */
      j->rc = rc ? rc : n > RELIST_MAX ? SMB3_ENOMEM : relist_dents(fs, e, n, &j->v, &j->nv);
      j->done = 1;
    }
    pthread_mutex_unlock(&fs->orphans_mu);
    if (!adopted) {
      if (lh) smb3_close_async(lh, NULL, NULL); /* (none was asked for) */
      atomic_fetch_sub(&fs->ahead_inflight, 1);
      atomic_fetch_add(&fs->ctr.listings_ahead, 1);
      return;
    }
  }
  struct fs_inode *dir = j->dir;
  struct fs_dent *v = NULL;
  size_t nv = 0;
  dirlease_got(fs, dir, lh, j->asked);
  if (!rc) inode_known_renew(fs, dir, e, n, j->asked); /* (all names: the set compares them its way) */
  if (!rc && !(rc = relist_dents(fs, e, n, &v, &nv))) relist_keep(fs, dir, v, nv, j->asked, j->gen);
  pthread_mutex_lock(&dir->lock);
  struct relist_wait *w = j->waiters;
  dir->relist = NULL;
  if (rc || nv > RELIST_MAX) dir->relist_quiet_until = fs_now() + RELIST_QUIET;
  pthread_mutex_unlock(&dir->lock);
  if (j->ahead) {
    atomic_fetch_sub(&fs->ahead_inflight, 1);
    atomic_fetch_add(&fs->ctr.listings_ahead, 1);
  }
  double asked = j->asked;
  uint64_t gen = j->gen;
  int walk = j->walk && !rc;
  if (j->parent) {
    inode_put(fs, j->parent);
    free(j->name);
  }
  free(j);
  while (w) { /* (a failed listing: each asks the server, which has its own retries) */
    struct relist_wait *next = w->next;
    if (!w->name) { /* a readdir: the listing itself */
      w->done(w->arg, rc, v, nv, asked, gen);
      free(w);
      w = next;
      continue;
    }
    struct smb3_stat st;
    double asked = 0;
    int r = rc ? RL_NO : answer(fs, dir, w->name, &st, &asked);
    reply(fs, r, w->cb, w->arg, &st, asked);
    free(w->name);
    free(w);
    w = next;
  }
  dircache_free_entries(v, nv);
  if (walk) ahead_in(fs, dir, NULL); /* its first subdirectories: where the walk goes next */
  inode_put(fs, dir);
}

/* Ask for j's listing of path (taken over; NULL: out of memory). */
static void relist_send(struct relist_job *j, char *path) {
  if (!path) {
    relisted(SMB3_ENOMEM, NULL, 0, NULL, j);
    return;
  }
  struct fs_route r;
  smb3_client *c = fs_route_c(j->fs, path, &r);
  j->asked = fs_now();
  j->gen = dircache_gen(j->fs);
  if (!j->ahead) atomic_fetch_add(&j->fs->ctr.relists, 1);
  uint8_t key[16];
  int lease = j->dir && dirlease_want(j->fs, j->dir, key);
  int rc = smb3_listdir_lease_async(c, r.path, lease ? key : NULL, relisted, j);
  fs_route_done(&r);
  free(path);
  if (rc) relisted(rc, NULL, 0, NULL, j);
}

static void relist_start(struct relist_job *j) {
  char *path = inode_path(j->fs, j->dir);
  if (!path) {
    relisted(SMB3_ENOENT, NULL, 0, NULL, j);
    return;
  }
  relist_send(j, path);
}

/* ---- orphans: listings ahead of directories the mount has no inode of (struct relist_job) ---- */

static void orphan_free(struct fs_ctx *fs, struct relist_job *j) {
  dircache_free_entries(j->v, j->nv);
  free(j->name);
  inode_put(fs, j->parent);
  free(j);
}

/* Drop the done orphans no longer recent (nothing could use them), and when the list is full after
 * that, every done one. */
static void orphans_trim(struct fs_ctx *fs) {
  struct relist_job *drop = NULL;
  double now = fs_now();
  pthread_mutex_lock(&fs->orphans_mu);
  for (int all = 0; all < 2 && (!all || fs->norphans >= RELIST_ORPHANS_MAX); all++)
    for (struct relist_job **pp = &fs->orphans; *pp;) {
      struct relist_job *j = *pp;
      if (j->done && (all || !recent(fs, j->asked, now))) {
        *pp = j->onext;
        fs->norphans--;
        j->onext = drop;
        drop = j;
      } else {
        pp = &j->onext;
      }
    }
  pthread_mutex_unlock(&fs->orphans_mu);
  while (drop) {
    struct relist_job *next = drop->onext;
    orphan_free(fs, drop);
    drop = next;
  }
}

/* List the directory name in p ahead (no inode of it here), unless it is listed so already, too
 * many orphans are kept, or RELIST_AHEAD_MAX listings ahead are in flight. */
static void orphan_start(struct fs_ctx *fs, struct fs_inode *p, const char *name) {
  if (atomic_load(&fs->norphans)) orphans_trim(fs);
  struct relist_job *j = calloc(1, sizeof *j);
  if (!j || !(j->name = strdup(name))) {
    free(j);
    return;
  }
  j->fs = fs;
  j->parent = p;
  j->ahead = j->walk = 1;
  inode_ref(fs, p);
  int go = 1;
  pthread_mutex_lock(&fs->orphans_mu);
  for (struct relist_job *o = fs->orphans; o && go; o = o->onext)
    if (o->parent == p && !strcmp(o->name, name)) go = 0;
  if (go && fs->norphans >= RELIST_ORPHANS_MAX) go = 0;
  if (go && atomic_fetch_add(&fs->ahead_inflight, 1) >= RELIST_AHEAD_MAX) {
    atomic_fetch_sub(&fs->ahead_inflight, 1);
    go = 0;
  }
  if (go) {
    j->onext = fs->orphans;
    fs->orphans = j;
    fs->norphans++;
  }
  pthread_mutex_unlock(&fs->orphans_mu);
  if (!go) {
    orphan_free(fs, j);
    return;
  }
  relist_send(j, inode_child_path(fs, p, name));
}

/* dir (a directory with no listing recent or in flight) takes the orphan listed ahead for it: one
 * in flight becomes its listing for lookups (NULL returned); a done one is returned, out of the
 * list, for the caller to use and free (orphan_free). walk: the walk goes on, dir's next siblings
 * are listed ahead. */
static struct relist_job *orphan_adopt(struct fs_ctx *fs, struct fs_inode *dir, int walk) {
  if (!atomic_load(&fs->norphans)) return NULL;
  pthread_mutex_lock(&dir->lock); /* (most lookups: in a directory listed already) */
  int bare = dir->st.is_dir && !dir->relist && !dircache_recent(fs, dir->dl);
  pthread_mutex_unlock(&dir->lock);
  if (!bare) return NULL;
  char *name = NULL;
  struct fs_inode *p = inode_parent(fs, dir, &name);
  if (!p) return NULL;
  inode_ref(fs, dir); /* (the job's, when it adopts one in flight; table lock: not under dir->lock) */
  struct relist_job *j = NULL;
  int attached = 0;
  pthread_mutex_lock(&dir->lock);
  if (dir->st.is_dir && !dir->relist && !dircache_recent(fs, dir->dl)) {
    pthread_mutex_lock(&fs->orphans_mu);
    for (struct relist_job **pp = &fs->orphans; *pp; pp = &(*pp)->onext)
      if ((*pp)->parent == p && !strcmp((*pp)->name, name)) {
        j = *pp;
        *pp = j->onext;
        fs->norphans--;
        if (!j->done) {
          j->dir = dir;
          dir->relist = j;
          attached = 1;
        }
        break;
      }
    pthread_mutex_unlock(&fs->orphans_mu);
    if (j) dir->relist_at = fs_now(); /* (a walk: the first lookup in a subdirectory lists it) */
  }
  pthread_mutex_unlock(&dir->lock);
  if (!attached) inode_put(fs, dir);
  if (j && walk) ahead_in(fs, p, name);
  inode_put(fs, p);
  free(name);
  return attached ? NULL : j;
}

/* A done orphan adopted by dir: its listing kept there (below: and its subdirectories listed
 * ahead, the walk going on in it). */
static void orphan_keep(struct fs_ctx *fs, struct fs_inode *dir, struct relist_job *o, int below) {
  if (o->rc) return;
  relist_keep(fs, dir, o->v, o->nv, o->asked, o->gen);
  if (below) ahead_in(fs, dir, NULL);
}

void relist_init(struct fs_ctx *fs) {
  pthread_mutex_init(&fs->orphans_mu, NULL);
}

void relist_free(struct fs_ctx *fs) {
  while (fs->orphans) {
    struct relist_job *j = fs->orphans;
    fs->orphans = j->onext;
    orphan_free(fs, j);
  }
  fs->norphans = 0;
  pthread_mutex_destroy(&fs->orphans_mu);
}

int relist_lookup(struct fs_ctx *fs, struct fs_inode *dir, const char *name, int known_expired, relist_cb cb,
                  void *arg) {
  if (fs->actimeo <= 0) return 0;
  struct relist_job *o = orphan_adopt(fs, dir, 1);
  if (o) {
    orphan_keep(fs, dir, o, 1);
    orphan_free(fs, o);
  }
  struct smb3_stat st;
  double asked = 0;
  int r = answer(fs, dir, name, &st, &asked);
  if (r == RL_YES) {
    reply(fs, r, cb, arg, &st, asked);
    return 1;
  }
  if (r == RL_NO && fs_name_listable(fs, name)) { /* (a name the kernel may see: the listing would have it) */
    pthread_mutex_lock(&dir->lock);
    int absent = dircache_absent(fs, dir->dl, &dir->ns_moved, name);
    pthread_mutex_unlock(&dir->lock);
    if (absent) return RELIST_ABSENT;
  }
  if (r != RL_STALE && r != RL_NO) return 0;
  struct relist_wait *w = calloc(1, sizeof *w);
  if (!w || !(w->name = strdup(name))) {
    free(w);
    return 0;
  }
  w->cb = cb;
  w->arg = arg;
  int pwalk = 0;
  if (r == RL_NO && !known_expired) {
    pthread_mutex_lock(&dir->lock);
    pwalk = !dir->relist && miss_kind(fs, dir, 0) == MISS_IF_WALK; /* (only then is it asked) */
    pthread_mutex_unlock(&dir->lock);
    if (pwalk) pwalk = parent_walk(fs, dir); /* (table lock: never under dir->lock) */
  }
  pthread_mutex_lock(&dir->lock);
  struct relist_job *j = dir->relist; /* in flight: wait for it, whatever r */
  int start = !j && (r == RL_STALE || missed(fs, dir, r == RL_NO && known_expired, pwalk));
  if (start && (j = calloc(1, sizeof *j))) {
    j->fs = fs;
    j->dir = dir;
    j->walk = pwalk;
    dir->relist = j;
    dir->relist_at = fs_now();
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
    /* a walk through the parent: its next subdirectories are listed ahead, after this one (its
     * parent found first: once the job is sent, its answer may end the caller's and the job's
     * references to dir before this thread goes on) */
    char *me = NULL;
    struct fs_inode *p = pwalk ? inode_parent(fs, dir, &me) : NULL;
    relist_start(j);
    if (p) {
      ahead_in(fs, p, me);
      inode_put(fs, p);
    }
    free(me);
  }
  return 1;
}

int relist_join(struct fs_ctx *fs, struct fs_inode *dir, relist_done_cb done, void *arg) {
  if (fs->actimeo <= 0) return 0;
  struct relist_job *o = orphan_adopt(fs, dir, 1);
  if (o) {                      /* listed ahead and done: served from here */
    orphan_keep(fs, dir, o, 0); /* (its readdir lists ahead below once it has the entries) */
    done(arg, o->rc, o->v, o->nv, o->asked, o->gen);
    orphan_free(fs, o);
    return 1;
  }
  struct relist_wait *w = calloc(1, sizeof *w);
  if (!w) return 0;
  w->done = done;
  w->arg = arg;
  pthread_mutex_lock(&dir->lock);
  struct relist_job *j = dir->relist;
  if (j) {
    w->next = j->waiters;
    j->waiters = w;
  }
  pthread_mutex_unlock(&dir->lock);
  if (!j) free(w);
  return !!j;
}

/* List c ahead unless it is listed, being listed, was read less than actimeo ago, or is quiet; and
 * while fewer than RELIST_AHEAD_MAX are in flight. */
static void ahead_start(struct fs_ctx *fs, struct fs_inode *c) {
  double now = fs_now();
  struct relist_job *j = NULL;
  pthread_mutex_lock(&c->lock);
  int go = c->st.is_dir && !c->relist && !dircache_recent(fs, c->dl) && now >= c->relist_quiet_until &&
           !recent(fs, c->walked_at, now);
  if (go && atomic_fetch_add(&fs->ahead_inflight, 1) < RELIST_AHEAD_MAX && (j = calloc(1, sizeof *j))) {
    j->fs = fs;
    j->dir = c;
    j->ahead = 1;
    j->walk = 1; /* (its first subdirectories listed ahead in turn once it is in: find goes down there) */
    c->relist = j;
  } else if (go) {
    atomic_fetch_sub(&fs->ahead_inflight, 1);
  }
  pthread_mutex_unlock(&c->lock);
  if (!j) return;
  inode_ref(fs, c);
  relist_start(j);
}

/* List ahead the directories of p's recent listing that come after the entry `after` (NULL: the
 * first ones). */
static void ahead_in(struct fs_ctx *fs, struct fs_inode *p, const char *after) {
  char *names[RELIST_AHEAD];
  pthread_mutex_lock(&p->lock);
  size_t n = dircache_recent(fs, p->dl) ? dircache_dirs_after(p->dl, after, names, RELIST_AHEAD) : 0;
  /* A name with no inode is listed by path only while the listing still shows what the server has
   * as far as this mount knows: not after the mount changed names there (rm -rf removed it) */
  int fresh = dircache_fresh(fs, p->dl, &p->ns_moved);
  pthread_mutex_unlock(&p->lock);
  for (size_t i = 0; i < n; i++) {
    struct fs_inode *c = inode_find_child(fs, p, names[i]);   /* (table lock: never under p->lock) */
    struct relist_job *o = c ? orphan_adopt(fs, c, 0) : NULL; /* (listed ahead before c was looked up) */
    if (o) {
      orphan_keep(fs, c, o, 0);
      orphan_free(fs, o);
    }
    if (c)
      ahead_start(fs, c); /* (not when that orphan is its listing now) */
    else if (fresh)
      orphan_start(fs, p, names[i]);
    inode_put(fs, c);
    free(names[i]);
  }
}

void relist_ahead(struct fs_ctx *fs, struct fs_inode *dir) {
  if (fs->actimeo <= 0) return;
  char *name = NULL;
  struct fs_inode *p = inode_parent(fs, dir, &name);
  double now = fs_now();
  int walk = 0;
  if (p) {
    pthread_mutex_lock(&p->lock);
    walk = recent(fs, p->walked_at, now);
    pthread_mutex_unlock(&p->lock);
  }
  pthread_mutex_lock(&dir->lock);
  dir->walked_at = now;
  dir->walk_in = walk;
  pthread_mutex_unlock(&dir->lock);
  if (walk) ahead_in(fs, p, name); /* its next siblings */
  free(name);
  inode_put(fs, p);
}

void relist_ahead_below(struct fs_ctx *fs, struct fs_inode *dir) {
  if (fs->actimeo <= 0) return;
  pthread_mutex_lock(&dir->lock);
  int walk = dir->walk_in;
  pthread_mutex_unlock(&dir->lock);
  if (walk) ahead_in(fs, dir, NULL); /* its first subdirectories: where find descends next */
}
