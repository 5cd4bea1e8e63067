/* openahead.c - small files opened ahead of a reader that follows the listing (openahead.h).
 * One table of OA_SLOTS opens under one lock; the CREATEs' answers come on the I/O thread, the
 * claims and the new opens ahead on the FUSE workers, drops on the notifier thread and on the
 * workers (closeq_drain). */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "cache.h"
#include "closeq.h"
#include "conn.h"
#include "dfs.h"
#include "dircache.h"
#include "file.h"
#include "memtrim.h"
#include "openahead.h"
#include "util.h"

struct oa_job {
  struct fs_ctx *fs;
  struct fs_inode *in; /* referenced */
  char *path;
  uint8_t *buf; /* NULL once a waiting open has it */
  size_t len;
  uint64_t dir;          /* the nodeid of the directory it was opened ahead in */
  uint64_t gen;          /* in->data_gen when sent */
  struct smb3_stat snap; /* in->st when sent */
  int done;              /* answered: f, st, got */
  int dropped;           /* to be closed when answered */
  smb3_file *f;
  struct smb3_stat st;
  int64_t got;
  double done_at;
  oa_wait_cb wait; /* an open waits for the answer */
  void *wait_arg;
};

struct openahead {
  pthread_mutex_t lock;
  struct oa_job *slot[OA_SLOTS];
  int stop;
  struct fs_inode *last_dir; /* the directory (referenced) and name of the last read-only open seen */
  char *last_name;
  int top;     /* the depth of the highest directory the walk went through (opens ahead go no higher) */
  int walking; /* ... which was in the listing's order (or by name: sorted) */
  int window;  /* files to keep opened ahead of it: OA_WINDOW_MIN, doubled by each open that took one */
  int sorted;
  uint64_t opens; /* atomic: the program's opens so far (oa_opening) */
  /* Tests only (fs_openahead.sh): microseconds the worker waits before it looks at each file of its
   * plan, and again between showing the job in its slot and sending it, as a worker slowed by a
   * loaded machine does (SMB3FS_TEST_AHEAD_DELAY_US, at most 0.1 s): plans then go out after the
   * program has opened the files they name, and its opens take jobs not yet sent, every time. The
   * I/O thread waits as long after it put an answer nobody waited for in its slot: the program's
   * open takes (and ends) it meanwhile. */
  unsigned test_delay_us;
};

size_t oa_read_len(const struct fs_ctx *fs, const struct fs_inode *in) {
  if (!S_ISREG(in->st.mode) || in->st.is_dir || in->lnk > 0 || wb_dirty((struct fs_inode *)in) ||
      cache_pages_kept(fs, in))
    return 0;
  size_t cap = OA_READ_MAX;
  if (fs->rsize < cap) cap = fs->rsize;
  return in->st.size && in->st.size < cap ? (size_t)in->st.size + 1 : 0;
}

int oa_start(struct fs_ctx *fs) {
  struct openahead *oa = calloc(1, sizeof *oa);
  if (!oa) return -1;
  pthread_mutex_init(&oa->lock, NULL);
  oa->window = OA_WINDOW_MIN;
  const char *delay = getenv("SMB3FS_TEST_AHEAD_DELAY_US");
  unsigned long us = delay ? strtoul(delay, NULL, 10) : 0;
  oa->test_delay_us = us > 100000 ? 100000 : (unsigned)us;
  fs->oa = oa;
  closeq_on_held(fs, oa_drop_all, oa_expire);
  return 0;
}

static void close_done(int rc, void *arg) {
  (void)rc; /* nothing of the application's was in it */
  closeq_unhold(arg);
}

/* The end of a job (its slot already emptied; oa->lock not held): its handle, if it still has
 * one, closed; its hold given back (at once, or when that CLOSE is answered) unless an open took it. */
static void job_end(struct oa_job *j) {
  struct fs_ctx *fs = j->fs;
  if (j->buf) {
    free(j->buf);
    fs_mem_release(fs, j->len);
  }
  inode_put(fs, j->in);
  free(j->path);
  smb3_file *f = j->f;
  int held = !j->wait;
  free(j);
  if (!held)
    file_close_quietly(f);
  else if (!f || smb3_close_async(f, close_done, fs)) /* (the call frees f either way) */
    closeq_unhold(fs);
}

/* A job made but neither held nor charged yet: what it has, freed. */
static void job_discard(struct oa_job *j) {
  free(j->buf);
  free(j->path);
  inode_put(j->fs, j->in);
  free(j);
}

/* Empty slot i and hand its job back: to end at once when answered, else when it is (oa->lock held). */
static struct oa_job *take_slot(struct openahead *oa, int i) {
  struct oa_job *j = oa->slot[i];
  oa->slot[i] = NULL;
  if (j->done) return j;
  j->dropped = 1; /* answered later: ahead_done ends it */
  return NULL;
}

void oa_stop(struct fs_ctx *fs) {
  struct openahead *oa = fs->oa;
  if (!oa) return;
  pthread_mutex_lock(&oa->lock);
  oa->stop = 1;
  pthread_mutex_unlock(&oa->lock);
  oa_drop_all(fs);
}

void oa_free(struct fs_ctx *fs) {
  struct openahead *oa = fs->oa;
  if (!oa) return;
  fs->oa = NULL;
  free(oa->last_name);
  if (oa->last_dir) inode_put(fs, oa->last_dir);
  pthread_mutex_destroy(&oa->lock);
  free(oa);
}

/* The version (fs_same_version: size, mtime) and the ctime, mode and attribute bits of a and b agree. */
static int same_attr(const struct smb3_stat *a, const struct smb3_stat *b) {
  return fs_same_version(a->size, a->mtime, b) && a->mode == b->mode && a->attributes == b->attributes &&
         a->ctime.sec == b->ctime.sec && a->ctime.nsec == b->ctime.nsec;
}

/* Whether what job j got still holds for in (its lock held): no change of the mount's to the data
 * or the attributes since it was sent, and the read lease it came with. */
static int still_true(const struct oa_job *j, const struct fs_inode *in) {
  return in->data_gen == j->gen && same_attr(&in->st, &j->snap) && !wb_dirty((struct fs_inode *)in) &&
         (smb3_file_lease(j->f) & SMB3_LEASE_READ);
}

/* j out of the slot that shows it, if one still does (oa->lock held). */
static void slot_clear(struct openahead *oa, const struct oa_job *j) {
  for (int i = 0; i < OA_SLOTS; i++)
    if (oa->slot[i] == j) oa->slot[i] = NULL;
}

static void ahead_done(int rc, smb3_file *f, const struct smb3_stat *st, int64_t nread, void *arg) {
  struct oa_job *j = arg;
  struct fs_ctx *fs = j->fs;
  struct openahead *oa = fs->oa;
  pthread_mutex_lock(&oa->lock);
  j->done = 1;
  j->f = rc ? NULL : f;
  if (!rc) j->st = *st;
  j->got = nread;
  double done_at = j->done_at = fs_now();
  oa_wait_cb wait = j->wait;
  int end = rc || j->dropped || oa->stop || !(smb3_file_lease(f) & SMB3_LEASE_READ);
  if (end) slot_clear(oa, j); /* (a waiting open took it out already) */
  pthread_mutex_unlock(&oa->lock);
  if (!wait) {
    if (end) {
      job_end(j);
      return;
    }
    /* j is its slot's from the unlock on: an open (oa_claim), a drop or an expiry on another thread
     * may end it at once, so nothing of it is read here any more (the test hook's pause lets them) */
    if (oa->test_delay_us) usleep(oa->test_delay_us);
    closeq_wake_at(fs, done_at + fs->actimeo);
    return;
  }
  /* An open waits for this answer: it is that open's now, if it still holds. */
  pthread_mutex_lock(&j->in->lock);
  int ok = !rc && still_true(j, j->in);
  pthread_mutex_unlock(&j->in->lock);
  if (!rc && ok) atomic_fetch_add(&fs->ctr.opens_ahead_used, 1);
  if (!rc && !ok) {
    j->wait(j->wait_arg, 0, NULL, NULL, 0); /* open it as usual */
    job_end(j);
    return;
  }
  j->f = NULL;
  j->wait(j->wait_arg, rc, rc ? NULL : f, st, nread);
  job_end(j); /* (its hold was given back when the open took it) */
}

/* Its CREATE could not be sent (the connection closing, out of memory): nothing came of it; an open
 * that waits for it is sent as usual. */
static void ahead_unsent(struct oa_job *j) {
  struct openahead *oa = j->fs->oa;
  pthread_mutex_lock(&oa->lock);
  slot_clear(oa, j);
  j->done = 1;
  oa_wait_cb wait = j->wait;
  pthread_mutex_unlock(&oa->lock);
  if (wait) wait(j->wait_arg, 0, NULL, NULL, 0);
  job_end(j);
}

int oa_claim(struct fs_ctx *fs, struct fs_inode *in, const char *path, smb3_client *c, uint8_t **buf,
             size_t *len, uint64_t *gen, struct oa_got *g, oa_wait_cb cb, void *arg) {
  struct openahead *oa = fs->oa;
  if (!oa) return 0;
  struct oa_job *j = NULL, *stale = NULL;
  pthread_mutex_lock(&oa->lock);
  int i = 0;
  while (i < OA_SLOTS && !(oa->slot[i] && oa->slot[i]->in == in))
    i++;
  if (i == OA_SLOTS || (oa->slot[i]->wait)) { /* (a second open of it at once: sends its own) */
    pthread_mutex_unlock(&oa->lock);
    return 0;
  }
  j = oa->slot[i];
  if (strcmp(j->path, path) || (j->done && smb3_file_client(j->f) != c)) {
    stale = take_slot(oa, i);
    pthread_mutex_unlock(&oa->lock);
    if (stale) job_end(stale);
    return 0;
  }
  if (!j->done) { /* on its way: this open waits for it (the slot is free for the next) */
    oa->slot[i] = NULL;
    *buf = j->buf;
    *len = j->len;
    *gen = j->gen;
    j->wait = cb;
    j->wait_arg = arg;
    j->buf = NULL;
    pthread_mutex_unlock(&oa->lock);
    closeq_unhold(fs); /* the application's open now */
    return 2;
  }
  oa->slot[i] = NULL;
  pthread_mutex_unlock(&oa->lock);
  pthread_mutex_lock(&in->lock);
  int ok = still_true(j, in);
  pthread_mutex_unlock(&in->lock);
  if (!ok) {
    job_end(j);
    return 0;
  }
  *buf = j->buf;
  *len = j->len;
  *gen = j->gen;
  g->f = j->f;
  g->st = j->st;
  g->got = j->got;
  j->f = NULL;
  j->buf = NULL;
  atomic_fetch_add(&fs->ctr.opens_ahead_used, 1);
  job_end(j);
  return 1;
}

int oa_drop(struct fs_ctx *fs, struct fs_inode *in) {
  struct openahead *oa = fs->oa;
  if (!oa) return 0;
  struct oa_job *end[OA_SLOTS];
  int n = 0, had = 0;
  pthread_mutex_lock(&oa->lock);
  for (int i = 0; i < OA_SLOTS; i++)
    if (oa->slot[i] && (!in || oa->slot[i]->in == in) && !oa->slot[i]->wait) {
      had = 1;
      if ((end[n] = take_slot(oa, i))) n++;
    }
  pthread_mutex_unlock(&oa->lock);
  for (int i = 0; i < n; i++)
    job_end(end[i]);
  return had;
}

int oa_conflict(struct fs_ctx *fs, struct fs_inode *in, const char *path) {
  struct openahead *oa = fs->oa;
  int clash = 0;
  if (!oa || !path) return 0;
  pthread_mutex_lock(&oa->lock);
  for (int i = 0; i < OA_SLOTS && !clash; i++)
    clash = oa->slot[i] && oa->slot[i]->in == in && strcmp(oa->slot[i]->path, path);
  pthread_mutex_unlock(&oa->lock);
  return clash;
}

void oa_drop_all(struct fs_ctx *fs) {
  (void)oa_drop(fs, NULL);
}

/* Take the answered jobs nobody took within hold seconds into end[] (oa->lock held); returns how
 * many, *next: when the first of the others is due (0: none). */
static int take_expired(struct openahead *oa, double now, double hold, struct oa_job **end, double *next) {
  int n = 0;
  *next = 0;
  for (int i = 0; i < OA_SLOTS; i++) {
    struct oa_job *j = oa->slot[i];
    if (!j || !j->done || j->wait) continue;
    if (now - j->done_at >= hold)
      end[n++] = take_slot(oa, i);
    else if (!*next || j->done_at + hold < *next)
      *next = j->done_at + hold;
  }
  return n;
}

void oa_expire(struct fs_ctx *fs) {
  struct openahead *oa = fs->oa;
  if (!oa) return;
  struct oa_job *end[OA_SLOTS];
  double next;
  pthread_mutex_lock(&oa->lock);
  int n = take_expired(oa, fs_now(), fs->actimeo, end, &next);
  pthread_mutex_unlock(&oa->lock);
  for (int i = 0; i < n; i++)
    job_end(end[i]);
  if (next) closeq_wake_at(fs, next);
}

int oa_held(struct fs_ctx *fs) {
  struct openahead *oa = fs->oa;
  int n = 0;
  if (!oa) return 0;
  pthread_mutex_lock(&oa->lock);
  for (int i = 0; i < OA_SLOTS; i++)
    n += oa->slot[i] && oa->slot[i]->done && !oa->slot[i]->wait;
  pthread_mutex_unlock(&oa->lock);
  return n;
}

/* The inode of the file called name in dir's kept listing, made from its entry, when the kernel has
 * not seen the name yet (tar and cp -r list a directory when they get there, then open its first
 * file at once: the walk reached it first); NULL: not such a file. */
static struct fs_inode *unseen(struct fs_ctx *fs, struct fs_inode *dir, const char *name) {
  struct smb3_stat st;
  double asked = 0;
  pthread_mutex_lock(&dir->lock);
  /* (only from a listing that may be served: as readdirplus would give the entry) */
  const struct fs_dent *e = dircache_fresh(fs, dir->dl, &dir->ns_moved) ? dircache_find(dir->dl, name) : NULL;
  int ok = e && dircache_stands_for_stat(&e->st) && !e->st.is_dir && S_ISREG(e->st.mode);
  if (ok) {
    st = e->st;
    asked = dircache_asked(dir->dl);
  }
  pthread_mutex_unlock(&dir->lock);
  return ok ? inode_link_unseen(fs, dir, name, &st, asked) : NULL; /* (table lock: not under dir->lock) */
}

/* Open the file called name in dir ahead, if it is one to open and a slot is free (oa->lock not
 * held), and the program has not opened it since its plan was made (seen: oa->opens then; a plan
 * sent late, after the program took, read and closed the files it names, would open them again for
 * nothing). 0: stop (no slot left, a drain waits, out of memory). */
static int ahead_one(struct fs_ctx *fs, struct fs_inode *dir, const char *name, uint64_t seen) {
  struct openahead *oa = fs->oa;
  if (oa->test_delay_us) usleep(oa->test_delay_us);
  struct fs_inode *in = inode_find_child(fs, dir, name);
  if (!in) in = unseen(fs, dir, name);
  if (!in) return 1;
  struct oa_job *j = calloc(1, sizeof *j);
  if (!j) {
    inode_put(fs, in);
    return 0;
  }
  j->fs = fs;
  j->in = in;
  pthread_mutex_lock(&in->lock);
  j->len =
      in->nopen || in->opening || __atomic_load_n(&in->pending, __ATOMIC_ACQUIRE) ? 0 : oa_read_len(fs, in);
  j->gen = in->data_gen;
  j->snap = in->st;
  pthread_mutex_unlock(&in->lock);
  if (!j->len) { /* open, being made, or nothing to read with the open: the next file */
    job_discard(j);
    return 1;
  }
  if (!(j->path = inode_path(fs, in)) || !(j->buf = malloc(j->len))) {
    job_discard(j);
    return 0;
  }
  j->dir = dir->nodeid;
  /* held (a drain waits for it) and charged before a slot shows it: from then on a program's open
   * may take it (oa_claim: its buffer, its hold) before it is even sent */
  if (!closeq_hold(fs)) { /* a drain waits: none now */
    job_discard(j);
    return 0;
  }
  budget_charge(&fs->mem, j->len); /* (at most OA_SLOTS small files) */
  uint8_t *buf = j->buf;
  size_t len = j->len;
  /* a free slot, or the one of the oldest answer nobody took in another directory (find: those of
   * the directory it goes on with once it is through with the one it went down into) */
  int free_at = -1, there = 0, old = -1;
  struct oa_job *evicted = NULL;
  pthread_mutex_lock(&oa->lock);
  for (int i = 0; i < OA_SLOTS; i++) {
    struct oa_job *s = oa->slot[i];
    if (!s && free_at < 0) free_at = i;
    if (!s) continue;
    there |= s->in == in;
    if (s->dir != j->dir && s->done && !s->wait && (old < 0 || s->done_at < oa->slot[old]->done_at)) old = i;
  }
  /* (under oa->lock: oa_opening's store comes before that open's oa_claim, which takes the lock) */
  int passed = __atomic_load_n(&in->oa_opened, __ATOMIC_ACQUIRE) > seen;
  if (free_at < 0 && old >= 0 && !there && !passed) {
    evicted = take_slot(oa, old);
    free_at = old;
  }
  int more = free_at >= 0 && !oa->stop;
  int go = more && !there && !passed;
  if (go) oa->slot[free_at] = j;
  pthread_mutex_unlock(&oa->lock);
  if (evicted) job_end(evicted);
  if (go && closeq_draining(fs)) { /* a drain began, whose sweep (oa_drop_all) may have come first */
    pthread_mutex_lock(&oa->lock);
    int mine = oa->slot[free_at] == j && !j->wait; /* (else an open took it, or the sweep: it goes) */
    if (mine) oa->slot[free_at] = NULL;
    pthread_mutex_unlock(&oa->lock);
    if (mine) go = more = 0;
  }
  if (!go) {
    job_end(j); /* (its buffer given back, its hold too: nothing was sent) */
    return more;
  }
  if (oa->test_delay_us) usleep(oa->test_delay_us);
  struct fs_route r;
  smb3_client *c = fs_route_c(fs, j->path, &r);
  int rc = smb3_open_read_async(c, r.path, O_RDONLY, in->key, cache_lease_want(fs, O_RDONLY), buf, len,
                                ahead_done, j);
  fs_route_done(&r);
  if (rc)
    ahead_unsent(j);
  else
    atomic_fetch_add(&fs->ctr.opens_ahead, 1);
  return !rc;
}

struct oa_plan {
  uint64_t seen; /* oa->opens when it was made */
  size_t n;
  struct fs_inode *dir[OA_WINDOW]; /* referenced */
  char *names[OA_WINDOW];
};

static void plan_clear(struct fs_ctx *fs, struct oa_plan *p) {
  for (size_t i = 0; i < p->n; i++) {
    inode_put(fs, p->dir[i]);
    free(p->names[i]);
  }
  p->n = 0;
}

/* How many directories up from in the share's root is (0: the root). */
static int depth_of(struct fs_ctx *fs, struct fs_inode *in) {
  int d = 0;
  inode_ref(fs, in);
  for (struct fs_inode *up; (up = inode_parent(fs, in, NULL)); d++) {
    inode_put(fs, in);
    in = up;
  }
  inode_put(fs, in);
  return d;
}

/* The directories a walk looks through for the next files, at most. */
#define OA_WALK_DIRS 16

/* Into p, up to k files that come after name (NULL: from the first) in dir, at depth depth: by name
 * (sorted), dir's own; in the listing's order, as find and tar walk a tree: down into each
 * directory met in the listing (if it is listed too: else the walk ends there), and once through
 * with a directory, on in its parent's listing after it, if that is not above depth top. */
static void walk_after(struct fs_ctx *fs, struct fs_inode *dir, const char *name, int sorted, int depth,
                       int top, struct oa_plan *p, size_t k) {
  char *after = NULL;
  if (name && !(after = strdup(name))) return;
  struct fs_inode *cur = dir;
  inode_ref(fs, cur);
  for (int seen = 0; cur && p->n < k && seen < OA_WALK_DIRS; seen++) {
    char *sub = NULL;
    pthread_mutex_lock(&cur->lock);
    int listed = cur->dl && (!after || dircache_find(cur->dl, after)); /* (not there: the walk ends) */
    size_t got =
        listed ? dircache_files_after(cur->dl, sorted, after, p->names + p->n, k - p->n, sorted ? NULL : &sub)
               : 0;
    pthread_mutex_unlock(&cur->lock);
    for (size_t i = 0; i < got; i++) {
      inode_ref(fs, cur);
      p->dir[p->n++] = cur;
    }
    free(after);
    after = NULL;
    struct fs_inode *next = NULL;
    if (sub && p->n < k) { /* down into it, if it is listed */
      if ((next = inode_find_child(fs, cur, sub))) {
        pthread_mutex_lock(&next->lock);
        int ok = next->dl != NULL;
        pthread_mutex_unlock(&next->lock);
        if (!ok) { /* (tar lists it when it gets there) */
          inode_put(fs, next);
          next = NULL;
        }
      }
      depth++;
    } else if (!sub && listed && !sorted && depth > top) { /* through with it: on in its parent */
      if ((next = inode_parent(fs, cur, &after)) && !after) {
        inode_put(fs, next);
        next = NULL;
      }
      depth--;
    }
    free(sub);
    inode_put(fs, cur);
    cur = next;
  }
  free(after);
  if (cur) inode_put(fs, cur);
}

void oa_opening(struct fs_ctx *fs, struct fs_inode *in) {
  struct openahead *oa = fs->oa;
  if (!oa) return;
  uint64_t n = __atomic_add_fetch(&oa->opens, 1, __ATOMIC_ACQ_REL);
  __atomic_store_n(&in->oa_opened, n, __ATOMIC_RELEASE);
}

struct oa_plan *oa_note(struct fs_ctx *fs, struct fs_inode *in, int taken) {
  struct openahead *oa = fs->oa;
  if (!oa || fs->actimeo <= 0 || !(cache_lease_want(fs, O_RDONLY) & SMB3_LEASE_READ)) return NULL;
  char *name = NULL;
  struct fs_inode *dir = inode_parent(fs, in, &name);
  if (!dir) return NULL;
  struct oa_plan *p = calloc(1, sizeof *p);
  if (!p) {
    free(name);
    inode_put(fs, dir);
    return NULL;
  }
  p->seen = __atomic_load_n(&oa->opens, __ATOMIC_ACQUIRE);
  int depth = depth_of(fs, dir);
  char *at = strdup(name); /* (name is the walk's once noted: another open may free it) */
  pthread_mutex_lock(&oa->lock);
  struct oa_job *end[OA_SLOTS];
  double next;
  int nend = take_expired(oa, fs_now(), fs->actimeo, end, &next);
  struct fs_inode *last = oa->last_dir;
  char *last_name = oa->last_name;
  int walking = oa->walking, sorted = oa->sorted;
  oa->last_dir = NULL; /* (the last open's, the caller's now: it is this one's once decided) */
  oa->last_name = NULL;
  pthread_mutex_unlock(&oa->lock);
  /* The next file of the walk the last open was in: in the listing's order, the file after it,
   * down into the directories the listing has (find, tar: walk_after); or the file after it in its
   * directory by name (git add, rsync, a glob); or, while a walk goes on, the first file of another
   * directory */
  int seq = taken;
  if (!seq && last && last_name) {
    for (int s = 0; s < 2 && !seq && (last == dir || walking); s++) {
      char *nx = NULL;
      pthread_mutex_lock(&dir->lock);
      seq =
          dircache_files_after(dir->dl, s, last == dir ? last_name : NULL, &nx, 1, NULL) && !strcmp(nx, name);
      pthread_mutex_unlock(&dir->lock);
      if (seq) sorted = s;
      free(nx);
    }
    if (!seq) {
      struct oa_plan w = {0};
      /* (no top, -1: its depth only has to stay above that, and the share's root ends the walk) */
      walk_after(fs, last, last_name, 0, INT_MAX / 2, -1, &w, 1);
      seq = w.n && w.dir[0] == dir && !strcmp(w.names[0], name);
      if (seq) sorted = 0;
      plan_clear(fs, &w);
    }
  }
  free(last_name);
  if (last) inode_put(fs, last);
  pthread_mutex_lock(&oa->lock);
  if (!seq || (!taken && !oa->walking))
    oa->window = OA_WINDOW_MIN; /* (a walk begins: a guess until it goes on) */
  if (taken) oa->window = oa->window * 2 > OA_WINDOW ? OA_WINDOW : oa->window * 2;
  if (!seq || !oa->walking || depth < oa->top) oa->top = depth;
  oa->walking = seq;
  oa->sorted = sorted;
  struct fs_inode *was = oa->last_dir; /* (another open's, noted meanwhile) */
  free(oa->last_name);
  oa->last_dir = dir;
  oa->last_name = name;
  inode_ref(fs, dir);
  int k = seq && !oa->stop && at ? oa->window : 0, top = oa->top;
  pthread_mutex_unlock(&oa->lock);
  if (was) inode_put(fs, was);
  if (k) walk_after(fs, dir, at, sorted, depth, top, p, (size_t)k);
  free(at);
  inode_put(fs, dir);
  for (int i = 0; i < nend; i++)
    job_end(end[i]);
  return p;
}

void oa_go(struct fs_ctx *fs, struct oa_plan *p, int send) {
  if (!p) return;
  for (size_t i = 0; send && i < p->n && ahead_one(fs, p->dir[i], p->names[i], p->seen); i++)
    ;
  plan_clear(fs, p);
  free(p);
}
