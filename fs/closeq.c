/* closeq.c - handles whose CLOSE changes nothing, closed together (see closeq.h). One thread sends the
 * batches; their completions (I/O thread) drop the files and run the drains that waited for them. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "closeq.h"
#include "inode.h"
#include "util.h"

struct cq_item {
  struct cq_item *next;
  struct fs_file *fh;
  smb3_file *f;
  char *path; /* the name it was opened by (NULL: unknown) */
  int timed;  /* fh->time_set (final: its data and times went before it was queued) */
};

struct cq_wait {
  struct cq_wait *next;
  void (*then)(void *);
  void *arg;
};

struct closeq {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* monotonic */
  pthread_t thread;
  struct cq_item *head, **tail;
  int n;
  double due;            /* when the oldest queued handle must go */
  double srtt;           /* smoothed seconds from a batch's sending to its answer (0: none yet) */
  int inflight;          /* batches sent, not completed ... */
  struct cq_batch *sent; /* ... these, until answered ... */
  int putting;           /* ... and these many answered, their handles being given back */
  int urgent;            /* a drain waits: send everything now */
  int held;              /* opens ahead not yet taken or closed (closeq_hold) */
  double wake;           /* when to run expire (0: no need) */
  void (*drop_held)(struct fs_ctx *); /* closeq_on_held's */
  void (*expire)(struct fs_ctx *);
  int stop;
  struct cq_wait *waiters;
  /* Tests only (fs_smallfiles.sh): microseconds batch_done waits after it gave back the handles of
   * a batch, as a thread slowed by a loaded machine does (SMB3FS_TEST_CLOSE_DELAY_US, at most 0.1 s):
   * removals meanwhile meet a batch whose handles are gone. */
  unsigned test_delay_us;
};

struct cq_batch {
  struct cq_batch *next, **pprev; /* on q->sent */
  struct fs_ctx *fs;
  int n;
  double sent; /* fs_now() when it left */
  struct fs_file *fh[SMB3_CLOSE_MANY_MAX];
};

/* Waiters to run once nothing is queued or in flight (q->lock held). */
static struct cq_wait *take_waiters(struct closeq *q) {
  if (q->n || q->inflight || q->held) return NULL;
  struct cq_wait *w = q->waiters;
  q->waiters = NULL;
  q->urgent = 0;
  return w;
}

static void run_waiters(struct cq_wait *w) {
  while (w) {
    struct cq_wait *n = w->next;
    w->then(w->arg);
    free(w);
    w = n;
  }
}

static void batch_done(int rc, void *arg) {
  (void)rc; /* its data was on the server before it was queued: nothing of the application's to lose */
  struct cq_batch *b = arg;
  struct closeq *q = b->fs->closeq;
  double took = fs_now() - b->sent;
  /* Off q->sent, whose handles closeq_take reads, before they are given back (the last reference
   * to one frees it); in flight until they are (a removal meanwhile drains: q->putting). */
  pthread_mutex_lock(&q->lock);
  if (!rc) q->srtt = q->srtt > 0 ? q->srtt + (took - q->srtt) / 8 : took;
  *b->pprev = b->next;
  if (b->next) b->next->pprev = b->pprev;
  q->putting++;
  pthread_mutex_unlock(&q->lock);
  for (int i = 0; i < b->n; i++)
    file_put(b->fh[i]);
  atomic_fetch_add(&b->fs->ctr.closes_batched, (uint64_t)b->n);
  if (q->test_delay_us) usleep(q->test_delay_us);
  pthread_mutex_lock(&q->lock);
  q->putting--;
  q->inflight--;
  struct cq_wait *w = take_waiters(q);
  pthread_mutex_unlock(&q->lock);
  free(b);
  run_waiters(w);
}

/* How long the first handle of a batch may wait for others (q->lock held): CLOSEQ_RTTS round trips
 * as the batches so far took, within [CLOSEQ_DELAY, CLOSEQ_DELAY_MAX]. A program that closes one
 * file per round trip or two fills a batch in that time on any link. */
static double delay(const struct closeq *q) {
  double d = CLOSEQ_RTTS * q->srtt;
  return d < CLOSEQ_DELAY ? CLOSEQ_DELAY : d > CLOSEQ_DELAY_MAX ? CLOSEQ_DELAY_MAX : d;
}

/* Take up to max (at most SMB3_CLOSE_MANY_MAX) handles of connection c (NULL: the first one's) as a
 * batch in flight, sent now (q->lock held; q->n > 0). NULL: none of c's, or ENOMEM. */
static struct cq_batch *take_batch(struct closeq *q, struct fs_ctx *fs, smb3_client *c, smb3_file **files,
                                   int max) {
  struct cq_batch *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->fs = fs;
  if (!c) c = smb3_file_client(q->head->f);
  for (struct cq_item **pp = &q->head; *pp && b->n < max && b->n < SMB3_CLOSE_MANY_MAX;) {
    struct cq_item *it = *pp;
    if (smb3_file_client(it->f) != c) {
      pp = &it->next;
      continue;
    }
    *pp = it->next;
    files[b->n] = it->f;
    b->fh[b->n++] = it->fh;
    free(it->path);
    free(it);
    q->n--;
  }
  q->tail = &q->head;
  while (*q->tail)
    q->tail = &(*q->tail)->next;
  if (!b->n) {
    free(b);
    return NULL;
  }
  q->inflight++;
  b->sent = fs_now();
  b->next = q->sent;
  b->pprev = &q->sent;
  if (q->sent) q->sent->pprev = &b->next;
  q->sent = b;
  return b;
}

static void *closeq_thread(void *arg) {
  struct fs_ctx *fs = arg;
  struct closeq *q = fs->closeq;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    if (q->wake && fs_now() >= q->wake) { /* handles opened ahead that nobody took in time */
      q->wake = 0;
      pthread_mutex_unlock(&q->lock);
      if (q->expire) q->expire(fs);
      pthread_mutex_lock(&q->lock);
      continue;
    }
    if (!q->n) {
      if (q->stop) break;
      if (q->wake) {
        struct timespec until = fs_timespec_of(q->wake);
        pthread_cond_timedwait(&q->cond, &q->lock, &until);
      } else
        pthread_cond_wait(&q->cond, &q->lock);
      continue;
    }
    if (!q->stop && !q->urgent && q->n < SMB3_CLOSE_MANY_MAX && fs_now() < q->due) {
      struct timespec until = fs_timespec_of(q->wake && q->wake < q->due ? q->wake : q->due);
      pthread_cond_timedwait(&q->cond, &q->lock, &until);
      continue;
    }
    smb3_file *files[SMB3_CLOSE_MANY_MAX];
    struct cq_batch *b = take_batch(q, fs, NULL, files, SMB3_CLOSE_MANY_MAX);
    if (q->n) q->due = fs_now(); /* the rest was queued meanwhile: it is due too */
    pthread_mutex_unlock(&q->lock);
    if (!b) { /* ENOMEM: try again in a moment */
      pthread_mutex_lock(&q->lock);
      struct timespec until = fs_timespec_of(fs_now() + 0.01);
      pthread_cond_timedwait(&q->cond, &q->lock, &until);
      continue;
    }
    if (smb3_close_many_async(files, b->n, batch_done, b)) batch_done(0, b); /* the handles are freed */
    pthread_mutex_lock(&q->lock);
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

int closeq_start(struct fs_ctx *fs) {
  struct closeq *q = calloc(1, sizeof *q);
  if (!q) return -ENOMEM;
  pthread_mutex_init(&q->lock, NULL);
  fs_cond_init_mono(&q->cond);
  q->tail = &q->head;
  const char *delay = getenv("SMB3FS_TEST_CLOSE_DELAY_US");
  unsigned long us = delay ? strtoul(delay, NULL, 10) : 0;
  q->test_delay_us = us > 100000 ? 100000 : (unsigned)us;
  fs->closeq = q;
  int rc = pthread_create(&q->thread, NULL, closeq_thread, fs);
  if (rc) {
    fs->closeq = NULL;
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
    return -rc;
  }
  return 0;
}

void closeq_stop(struct fs_ctx *fs) {
  struct closeq *q = fs->closeq;
  if (!q) return;
  pthread_mutex_lock(&q->lock);
  q->stop = 1;
  pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->lock);
  pthread_join(q->thread, NULL); /* it sends everything queued before it ends */
}

void closeq_free(struct fs_ctx *fs) {
  struct closeq *q = fs->closeq;
  if (!q) return;
  fs->closeq = NULL;
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->lock);
  free(q);
}

int closeq_add(struct fs_file *fh, smb3_file *f) {
  struct closeq *q = fh->fs->closeq;
  if (!q) return -1;
  struct cq_item *it = malloc(sizeof *it);
  if (!it) return -1;
  *it = (struct cq_item){NULL, fh, f, inode_path(fh->fs, fh->in), 0};
  pthread_mutex_lock(&fh->in->lock);
  it->timed = fh->time_set;
  pthread_mutex_unlock(&fh->in->lock);
  pthread_mutex_lock(&q->lock);
  if (q->stop) {
    pthread_mutex_unlock(&q->lock);
    free(it->path);
    free(it);
    return -1;
  }
  if (!q->n) q->due = fs_now() + delay(q);
  *q->tail = it;
  q->tail = &it->next;
  q->n++;
  if (q->n == 1 || q->n >= SMB3_CLOSE_MANY_MAX || q->urgent) pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->lock);
  return 0;
}

int closeq_conflict(struct fs_ctx *fs, struct fs_inode *in, const char *path, int writing) {
  struct closeq *q = fs->closeq;
  if (!q) return 0;
  int clash = 0;
  pthread_mutex_lock(&q->lock);
  for (struct cq_item *it = q->head; it && !clash; it = it->next)
    clash = it->fh->in == in && (!it->path || !path || strcmp(it->path, path) || (writing && it->timed));
  pthread_mutex_unlock(&q->lock);
  return clash;
}

int closeq_holds(struct fs_ctx *fs, struct fs_inode *in) {
  return closeq_conflict(fs, in, NULL, 0);
}

void closeq_drain(struct fs_ctx *fs, void (*then)(void *), void *arg) {
  struct closeq *q = fs->closeq;
  struct cq_wait *w = q ? malloc(sizeof *w) : NULL;
  if (q) {
    pthread_mutex_lock(&q->lock);
    q->urgent |= !!q->held; /* no new open ahead while the ones there are closed */
    void (*drop_held)(struct fs_ctx *) = q->drop_held;
    pthread_mutex_unlock(&q->lock);
    if (drop_held) drop_held(fs);
    pthread_mutex_lock(&q->lock);
  }
  if (!q || (!q->n && !q->inflight && !q->held) || !w) {
    if (q) pthread_mutex_unlock(&q->lock);
    free(w);
    then(arg); /* (out of memory: go on; the server answers what it answers) */
    return;
  }
  *w = (struct cq_wait){q->waiters, then, arg};
  q->waiters = w;
  q->urgent = 1;
  pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&q->lock);
}

int closeq_hold(struct fs_ctx *fs) {
  struct closeq *q = fs->closeq;
  if (!q) return 0;
  pthread_mutex_lock(&q->lock);
  int ok = !q->urgent && !q->stop;
  q->held += ok;
  pthread_mutex_unlock(&q->lock);
  return ok;
}

void closeq_on_held(struct fs_ctx *fs, void (*drop)(struct fs_ctx *), void (*expire)(struct fs_ctx *)) {
  struct closeq *q = fs->closeq;
  pthread_mutex_lock(&q->lock);
  q->drop_held = drop;
  q->expire = expire;
  pthread_mutex_unlock(&q->lock);
}

void closeq_wake_at(struct fs_ctx *fs, double t) {
  struct closeq *q = fs->closeq;
  pthread_mutex_lock(&q->lock);
  if (!q->wake || t < q->wake) {
    q->wake = t;
    pthread_cond_signal(&q->cond);
  }
  pthread_mutex_unlock(&q->lock);
}

int closeq_draining(struct fs_ctx *fs) {
  struct closeq *q = fs->closeq;
  if (!q) return 1;
  pthread_mutex_lock(&q->lock);
  int d = q->urgent || q->stop;
  pthread_mutex_unlock(&q->lock);
  return d;
}

void closeq_unhold(struct fs_ctx *fs) {
  struct closeq *q = fs->closeq;
  pthread_mutex_lock(&q->lock);
  q->held--;
  struct cq_wait *w = take_waiters(q);
  pthread_mutex_unlock(&q->lock);
  run_waiters(w);
}

int closeq_take(struct fs_ctx *fs, struct fs_inode *in, const char *path, smb3_client *c, struct fs_file **fh,
                smb3_file **f) {
  struct closeq *q = fs->closeq;
  *fh = NULL;
  *f = NULL;
  if (!q) return 0;
  pthread_mutex_lock(&q->lock);
  /* a file the caller does not know by that name: the one whose handle was opened by it */
  for (struct cq_item *it = q->head; it && !in; it = it->next)
    if (it->path && !strcmp(it->path, path)) in = it->fh->in;
  int mine = 0;
  struct cq_item **at = NULL;
  for (struct cq_item **pp = &q->head; *pp; pp = &(*pp)->next)
    if ((*pp)->fh->in == in || ((*pp)->path && !strcmp((*pp)->path, path))) mine++, at = pp;
  /* one of in's CLOSEs on its way (the server may not have done it yet), or handles of a batch
   * being given back (in's may still count as open) */
  int sent = q->putting > 0;
  for (struct cq_batch *b = q->sent; b && !sent; b = b->next)
    for (int i = 0; i < b->n && !sent; i++)
      sent = b->fh[i]->in == in;
  /* (a drain waiting: it was promised everything queued before it, this handle too) */
  int rc = !in && (q->n || q->sent || q->putting)                                          ? -1
           : sent || mine > 1 || (mine && (q->waiters || smb3_file_client((*at)->f) != c)) ? -1
                                                                                           : mine;
  if (rc == 1) {
    struct cq_item *it = *at;
    *at = it->next;
    if (q->tail == &it->next) q->tail = at;
    q->n--;
    *fh = it->fh;
    *f = it->f;
    free(it->path);
    free(it);
  }
  pthread_mutex_unlock(&q->lock);
  return rc;
}

int closeq_riders(void *arg, smb3_client *c, smb3_file **files, int max, smb3_done_cb *done,
                  void **done_arg) {
  struct fs_ctx *fs = arg;
  struct closeq *q = fs->closeq;
  if (!q) return 0;
  pthread_mutex_lock(&q->lock);
  struct cq_batch *b = q->n && !q->stop ? take_batch(q, fs, c, files, max) : NULL;
  pthread_mutex_unlock(&q->lock);
  if (!b) return 0;
  *done = batch_done;
  *done_arg = b;
  return b->n;
}
