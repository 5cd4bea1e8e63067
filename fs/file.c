/* file.c - the open-file lifecycle: an fs_file per FUSE open, its references, its server handle
 * and, after a reconnect, the reopen that gives it a handle on the new connection.
 *
 * References (fh->refs, under in->lock): the open itself (dropped at release), a reopen in flight,
 * and each write-back extent with data that came through it. The last one unlinks the file from
 * fs->files (which the reconnect thread walks) and frees it. Handles of lost connections stay
 * until release (a FUSE worker may still be using one it loaded just before the swap). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "conn.h"
#include "dfs.h"
#include "file.h"
#include "fusereq.h"

struct fs_file *file_new(struct fs_ctx *fs, struct fs_inode *in, smb3_file *f, int flags) {
  struct fs_file *fh = calloc(1, sizeof *fh);
  if (!fh) return NULL;
  fh->fs = fs;
  fh->in = in;
  fh->f = f;
  fh->flags = flags;
  fh->refs = 1;
  inode_ref(fs, in);
  pthread_mutex_lock(&in->lock);
  in->nopen++;
  if ((flags & O_ACCMODE) != O_RDONLY) in->local_mod = 1; /* see kernel_view_stale() */
  pthread_mutex_unlock(&in->lock);
  pthread_mutex_lock(&fs->files_lock);
  fh->file_next = fs->files;
  if (fs->files) fs->files->file_prev = fh;
  fs->files = fh;
  pthread_mutex_unlock(&fs->files_lock);
  return fh;
}

void file_put(struct fs_file *fh) {
  struct fs_inode *in = fh->in;
  struct fs_ctx *fs = fh->fs;
  pthread_mutex_lock(&in->lock);
  int left = --fh->refs;
  pthread_mutex_unlock(&in->lock);
  if (left) return;
  pthread_mutex_lock(&fs->files_lock);
  if (fh->file_prev)
    fh->file_prev->file_next = fh->file_next;
  else
    fs->files = fh->file_next;
  if (fh->file_next) fh->file_next->file_prev = fh->file_prev;
  pthread_mutex_unlock(&fs->files_lock);
  pthread_mutex_lock(&in->lock);
  int last = --in->nopen == 0;
  in->direct_writers -= fh->direct_wr;
  in->nclosing -= fh->closing;
  if (last) in->lease = 0; /* the server drops the lease with the last open of its key */
  int gone = last && in->unlinked;
  pthread_mutex_unlock(&in->lock);
  if (gone) inode_detach(fh->fs, in);  /* the server deleted it at this close */
  pthread_mutex_destroy(&fh->ra.lock); /* (ra_init made it, right after file_new) */
  inode_put(fh->fs, in);
  free(fh);
}

void fh_unref(struct fs_file *fh) {
  file_put(fh);
}

static void quiet_done(int rc, void *arg) {
  (void)rc, (void)arg;
}
void file_close_quietly(smb3_file *f) {
  if (f) smb3_close_async(f, quiet_done, NULL); /* frees f even when it cannot be sent */
}

smb3_file *file_closing(struct fs_file *fh) {
  pthread_mutex_lock(&fh->in->lock);
  fh->released = 1; /* a reopen completing from now on closes its handle itself */
  smb3_file *f = fh->f;
  int nstale = fh->nstale;
  fh->nstale = 0;
  pthread_mutex_unlock(&fh->in->lock);
  for (int i = 0; i < nstale; i++)
    file_close_quietly(fh->stale[i]); /* lost connections: just freed */
  return f;
}

/* ---- reopening after a reconnect ---- */
struct reopen {
  struct fs_file *fh;
  char *path;
  void (*then)(struct fs_file *);
};

struct fh_waiter {
  struct fh_waiter *next;
  void (*fn)(void *arg, int ok);
  void *arg;
};

static int fh_current(struct fs_file *fh) {
  if (!fh_handle(fh) && __atomic_load_n(&fh->pend, __ATOMIC_ACQUIRE))
    return 1; /* its CREATE goes on whatever connection is current */
  return fs_dfs_current(fh->fs, smb3_file_client(fh_handle(fh)));
}

void fh_when_current(struct fs_file *fh, void (*fn)(void *arg, int ok), void *arg) {
  struct fh_waiter *w = malloc(sizeof *w);
  pthread_mutex_lock(&fh->in->lock);
  if (fh->reopening && w) {
    *w = (struct fh_waiter){fh->reopen_waiters, fn, arg};
    fh->reopen_waiters = w;
    pthread_mutex_unlock(&fh->in->lock);
    return;
  }
  pthread_mutex_unlock(&fh->in->lock);
  free(w);
  fn(arg, fh_current(fh));
}

/* A reopen of fh ended (in->lock not held): once none is left, wake what waited, in arrival order. */
static void reopen_ended(struct fs_file *fh) {
  pthread_mutex_lock(&fh->in->lock);
  struct fh_waiter *w = NULL, *rev = NULL;
  if (--fh->reopening == 0) {
    w = fh->reopen_waiters;
    fh->reopen_waiters = NULL;
  }
  pthread_mutex_unlock(&fh->in->lock);
  while (w) {
    struct fh_waiter *next = w->next;
    w->next = rev;
    rev = w;
    w = next;
  }
  int ok = rev && fh_current(fh);
  while (rev) {
    struct fh_waiter *next = rev->next;
    rev->fn(rev->arg, ok);
    free(rev);
    rev = next;
  }
}

static void reopened(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  (void)st;
  struct reopen *r = arg;
  struct fs_file *fh = r->fh;
  struct fs_inode *in = fh->in;
  void (*then)(struct fs_file *) = r->then;
  free(r->path);
  free(r);
  if (!rc) {
    pthread_mutex_lock(&in->lock);
    /* not the handle of a connection lost again meanwhile (a later reopen brings the current one) */
    int keep = !fh->released && fh->nstale < FS_STALE_MAX && fs_dfs_current(fh->fs, smb3_file_client(f));
    if (keep) {
      fh->stale[fh->nstale++] = fh->f; /* a worker may still be using it: freed at release */
      __atomic_store_n(&fh->f, f, __ATOMIC_RELEASE);
      uint32_t lease = smb3_file_lease(f);
      if (lease) in->lease = lease;
    }
    pthread_mutex_unlock(&in->lock);
    if (keep) {
      atomic_fetch_add(&fh->fs->ctr.reopens, 1);
      if (then) then(fh);
    } else {
      file_close_quietly(f);
    }
  }
  /* else: gone or not ours any more (deleted, renamed, access changed): it stays broken */
  reopen_ended(fh);
  file_put(fh);
}

struct fs_file *files_find_open(struct fs_ctx *fs, struct fs_inode *in) {
  struct fs_file *got = NULL;
  pthread_mutex_lock(&fs->files_lock);
  for (struct fs_file *fh = fs->files; fh && !got; fh = fh->file_next) {
    if (fh->in != in) continue;
    pthread_mutex_lock(&in->lock); /* (the order files_reopen_prepare takes them in) */
    if (!fh->released && fh->refs > 0 && fh->f) {
      fh->refs++;
      got = fh;
    }
    pthread_mutex_unlock(&in->lock);
  }
  pthread_mutex_unlock(&fs->files_lock);
  return got;
}

struct reopen_list {
  size_t n;
  struct fs_file *fh[];
};

struct reopen_list *files_reopen_prepare(struct fs_ctx *fs) {
  pthread_mutex_lock(&fs->files_lock);
  size_t n = 0;
  for (struct fs_file *fh = fs->files; fh; fh = fh->file_next)
    n++;
  struct reopen_list *l = calloc(1, sizeof *l + (n ? n : 1) * sizeof l->fh[0]);
  for (struct fs_file *fh = fs->files; l && fh; fh = fh->file_next) {
    pthread_mutex_lock(&fh->in->lock);
    /* refs 0: being freed (file_put unlinks it next); no handle: a CREATE put off or failed */
    if (!fh->released && fh->refs > 0 && fh->f) {
      fh->refs++;
      fh->reopening++;
      l->fh[l->n++] = fh;
    }
    pthread_mutex_unlock(&fh->in->lock);
  }
  pthread_mutex_unlock(&fs->files_lock);
  return l;
}

void files_reopen(struct fs_ctx *fs, struct reopen_list *l, void (*then)(struct fs_file *)) {
  for (size_t i = 0; l && i < l->n; i++) {
    struct fs_file *fh = l->fh[i];
    struct reopen *r = calloc(1, sizeof *r);
    if (r) {
      r->fh = fh;
      r->path = inode_path(fs, fh->in);
      r->then = then;
    }
    /* never again O_CREAT/O_EXCL/O_TRUNC: the file exists and its data must stay */
    int flags = fh->flags & ~(O_CREAT | O_EXCL | O_TRUNC);
    struct fs_route rt = {0};
    if (r && r->path) fs_route(fs, r->path, &rt);
    int rc = r && r->path ? smb3_open_lease_async(rt.c, rt.path, flags, fh->in->key,
                                                  cache_lease_want(fs, flags), reopened, r)
                          : SMB3_ENOMEM;
    fs_route_done(&rt);
    if (rc) {
      if (r) free(r->path);
      free(r);
      reopen_ended(fh);
      file_put(fh);
    }
  }
  free(l);
}

/* ---- the order of RELEASEs and the requests after them (file.h) ---- */
static __thread uint64_t rel_before; /* RELEASEs read before the request this worker serves */

void files_request_read(struct fs_ctx *fs, const struct fs_req *r) {
  struct fuse_release_in in;
  if (r && r->opcode == FUSE_RELEASE && r->arg_len >= sizeof in) {
    memcpy(&in, r->arg, sizeof in);
    struct fs_file *fh = (struct fs_file *)(uintptr_t)in.fh;
    __atomic_add_fetch(&fs->rel_undone, 1, __ATOMIC_RELAXED); /* (published by the next line) */
    __atomic_store_n(&fh->rel_seq, __atomic_add_fetch(&fs->rel_read, 1, __ATOMIC_ACQ_REL), __ATOMIC_RELEASE);
  }
  rel_before = __atomic_load_n(&fs->rel_read, __ATOMIC_ACQUIRE);
}

void files_release_done(struct fs_file *fh) {
  struct fs_ctx *fs = fh->fs;
  pthread_mutex_lock(&fs->files_lock);
  if (!fh->rel_done && __atomic_load_n(&fh->rel_seq, __ATOMIC_ACQUIRE))
    __atomic_sub_fetch(&fs->rel_undone, 1, __ATOMIC_RELEASE);
  fh->rel_done = 1;
  pthread_cond_broadcast(&fs->rel_cv);
  pthread_mutex_unlock(&fs->files_lock);
}

void files_wait_releases(struct fs_ctx *fs) {
  /* none undone: every RELEASE read before this request (its count was raised before rel_read,
   * which this worker read) has reached its CLOSE, and the open files need no walk */
  if (!__atomic_load_n(&fs->rel_undone, __ATOMIC_ACQUIRE)) return;
  uint64_t upto = rel_before;
  pthread_mutex_lock(&fs->files_lock);
  for (;;) {
    struct fs_file *fh = fs->files;
    for (; fh; fh = fh->file_next) {
      uint64_t seq = __atomic_load_n(&fh->rel_seq, __ATOMIC_ACQUIRE);
      if (seq && seq <= upto && !fh->rel_done) break;
    }
    if (!fh) break;
    pthread_cond_wait(&fs->rel_cv, &fs->files_lock);
  }
  pthread_mutex_unlock(&fs->files_lock);
}
