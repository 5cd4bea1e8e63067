/* cmd_tree.c - get -r, put -r, cp -r: whole trees, many files in flight on the one connection.
 *
 * The main thread runs a loop over jobs (list a directory, make one, move one file). Small files
 * and directory work go out through the library's asynchronous calls, at most TREE_WINDOW at a
 * time: a small file is one round trip (get: CREATE + READ + CLOSE, smb3_read_file_async; put:
 * CREATE + WRITE + rename + CLOSE, smb3_put_file_async). A big file gets a thread of its own
 * (at most TREE_BIG at a time) running one pipelined bulk transfer (the bulk engine's calls
 * block), as does each file of cp -r (the server-side copy's open/copy/close/rename sequence).
 * Completion callbacks run on the client's I/O thread and only hand the job back to the main
 * thread (a locked list and a condition variable); local file work happens on the main thread.
 * Every file is written under a temporary name and renamed when complete, like get and put, with
 * one exception: put -r writes a small file of a directory it has just made itself (so the name
 * was free) under its own name, CREATE (only if new) + WRITE + CLOSE in one round trip
 * (smb3_create_file_async), because the rename is about 40 % of the server's work per file.
 * A WRITE that fails takes the new file away again, as the rename path does for a new target; a
 * name another client made in between (EEXIST) goes the temporary way. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define TREE_WINDOW 32              /* jobs in flight at once */
#define TREE_BIG 4                  /* of them, threads (big files, cp -r files) */
#define TREE_SMALL_MAX (1u << 20)   /* at most this (and one request) is a small file */
#define FULL_MAX (2 * PATH_MAX + 2) /* a root, a slash and a path below it */

enum job_kind { J_LIST, J_MKDIR, J_GET_SMALL, J_GET_BIG, J_PUT_SMALL, J_PUT_BIG, J_CP };

struct job {
  struct job *next;
  enum job_kind kind;
  struct tree *t;
  char *rel;     /* path below the tree's root, "" for the root itself */
  uint64_t size; /* a file's size as listed */
  int64_t result;
  char err[600]; /* why it failed (result < 0) */
  void *buf;
  char tmp[FULL_MAX + 64]; /* get: the local temporary name, to rename at the end */
  size_t nent;             /* J_LIST: the entries (names and stats) */
  char **names;
  struct smb3_stat *sts;
  int fd; /* get, a big file: its finished temporary file, open */
  pthread_t th;
  int threaded;
  int fresh; /* put, a small file whose directory this run made: written under its own name */
};

struct tree {
  struct cli *cli;
  const char *cmd; /* "get -r" ... */
  smb3_client *c;
  char src[PATH_MAX], dst[PATH_MAX]; /* roots: a share path (no leading '/') or a local path */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct job *done, **done_tail; /* finished, for the main thread (under mu) */
  struct job *queue, **queue_tail, *big, **big_tail;
  int inflight, big_inflight;
  uint64_t files, dirs, bytes, failed, skipped;
  uint64_t big_done;    /* bytes of big transfers so far (atomic) */
  struct job **renames; /* get: finished files waiting for the final rename */
  size_t nren, capren;
  char **made; /* put: the directories this run made (relative), sorted once all are made */
  size_t nmade, capmade;
  unsigned serial;
  int progress_on;
  double start, last_draw;
};

/* snprintf for messages and for paths whose parts are bounded (path_join keeps a path below the
 * root under PATH_MAX; the buffers that hold a root and such a path are FULL_MAX). */
static void fmt(char *out, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *out, size_t n, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  vsnprintf(out, n, f, ap);
  va_end(ap);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void human(char *buf, size_t n, double v) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (v >= 1024 && i < 4)
    v /= 1024, i++;
  fmt(buf, n, "%.1f %s", v, u[i]);
}

/* "a/b" + "c" -> "a/b/c"; an empty half is left out. malloc'd (NULL: out of memory). */
static char *path_join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la + lb + 2 > PATH_MAX) return errno = ENAMETOOLONG, NULL;
  char *p = malloc(la + lb + 2);
  if (!p) return NULL;
  fmt(p, la + lb + 2, "%s%s%s", a, la && lb ? "/" : "", b);
  return p;
}

static void full_path(const char *root, const char *rel, char *out, size_t n) {
  fmt(out, n, "%s%s%s", root, root[0] && rel[0] ? "/" : "", rel);
}

static const char *base_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static void strip_slashes(char *p) {
  size_t l = strlen(p);
  while (l > 1 && p[l - 1] == '/')
    p[--l] = 0;
}

static struct job *job_new(struct tree *t, enum job_kind kind, char *rel, uint64_t size) {
  struct job *j = calloc(1, sizeof *j);
  if (!j) {
    free(rel);
    return NULL;
  }
  j->t = t;
  j->kind = kind;
  j->rel = rel;
  j->size = size;
  j->fd = -1;
  return j;
}

static void job_free(struct job *j) {
  for (size_t i = 0; i < j->nent; i++)
    free(j->names[i]);
  free(j->names);
  free(j->sts);
  free(j->buf);
  free(j->rel);
  free(j);
}

/* One failure line, naming the file; the tree goes on. */
static void tree_fail(struct tree *t, const char *what, const char *why) {
  if (t->progress_on) fputs("\r\033[K", stderr);
  cli_error(t->cmd, "%s: %s", what, why);
  t->failed++;
}

static void tree_warn(struct tree *t, const char *fmt, const char *name) {
  if (t->progress_on) fputs("\r\033[K", stderr);
  fprintf(stderr, "smb3: %s: ", t->cmd);
  fprintf(stderr, fmt, name);
  fputc('\n', stderr);
  t->skipped++;
}

/* A name below root/parent that could not be made (too long, or out of memory). */
static void join_failed(struct tree *t, const char *root, const char *parent, const char *name) {
  char p[FULL_MAX], shown[FULL_MAX + NAME_MAX + 2];
  int e = errno;
  full_path(root, parent, p, sizeof p);
  fmt(shown, sizeof shown, "%s/%s", p, name);
  tree_fail(t, shown, strerror(e));
}

/* Queue j to be started: directory work first (it finds the rest of the work), threads apart. */
static void tree_queue(struct tree *t, struct job *j) {
  if (!j) {
    t->failed++;
    cli_error(t->cmd, "out of memory");
    return;
  }
  if (j->kind == J_GET_BIG || j->kind == J_PUT_BIG || j->kind == J_CP) {
    *t->big_tail = j;
    t->big_tail = &j->next;
  } else if (j->kind == J_LIST || j->kind == J_MKDIR) {
    j->next = t->queue;
    if (!t->queue) t->queue_tail = &j->next;
    t->queue = j;
  } else {
    *t->queue_tail = j;
    t->queue_tail = &j->next;
  }
}

/* From any thread: j is finished; the main thread takes it from here. */
static void job_done(struct job *j, int64_t result, const char *why) {
  struct tree *t = j->t;
  j->result = result;
  if (result < 0 && !j->err[0]) {
    const char *m = why ? why : smb3_last_error(t->c);
    fmt(j->err, sizeof j->err, "%s", m && m[0] ? m : smb3_strerror((int)result));
  }
  pthread_mutex_lock(&t->mu);
  j->next = NULL;
  *t->done_tail = j;
  t->done_tail = &j->next;
  pthread_cond_signal(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

/* ---- callbacks (the client's I/O thread) ---- */
static void on_result(int64_t result, void *arg) {
  job_done(arg, result, NULL);
}
static void on_rc(int rc, void *arg) {
  job_done(arg, rc, NULL);
}
static void on_list(int rc, const struct smb3_dirent *e, size_t n, void *arg) {
  struct job *j = arg;
  if (rc == SMB3_EDFS) { /* one connection walks the tree: a link to elsewhere is named, not entered */
    char path[FULL_MAX], why[FULL_MAX + 160];
    full_path(j->t->src, j->rel, path, sizeof path);
    fmt(why, sizeof why, "'%s' is a DFS link: not followed inside a recursive transfer (give its own path)",
        path);
    job_done(j, rc, why);
    return;
  }
  if (rc) {
    job_done(j, rc, NULL);
    return;
  }
  j->names = calloc(n ? n : 1, sizeof *j->names);
  j->sts = calloc(n ? n : 1, sizeof *j->sts);
  int64_t r = j->names && j->sts ? 0 : SMB3_ENOMEM;
  for (size_t i = 0; i < n && !r; i++) {
    if (!(j->names[i] = strdup(e[i].name))) r = SMB3_ENOMEM;
    j->sts[i] = e[i].st;
    j->nent = i + 1;
  }
  job_done(j, r, r ? "out of memory" : NULL);
}

/* ---- local files ---- */
static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* A hidden temporary file next to local (".NAME.smb3-XXXXXX"), mode 0600 until finished. */
static int local_temp(const char *local, char *tmp, size_t n) {
  const char *b = base_of(local);
  fmt(tmp, n, "%.*s.%s.smb3-XXXXXX", (int)(b - local), local, b);
  return mkstemp(tmp);
}

/* The array v of *cap elements of size bytes, n of them used, with room for one more: v itself,
 * or v moved to twice the room (`first` elements to begin with), or NULL (out of memory: v is
 * unchanged and still the caller's). */
static void *room_for_one(void *v, size_t *cap, size_t n, size_t size, size_t first) {
  if (n < *cap) return v;
  size_t c = *cap ? 2 * *cap : first;
  void *p = realloc(v, c * size);
  if (p) *cap = c;
  return p;
}

/* The finished temporary file gets the mode a new file would; it is renamed at the end. */
static int local_finish(struct tree *t, struct job *j, int fd) {
  mode_t um = umask(0);
  umask(um);
  int rc = fchmod(fd, 0666 & ~um);
  if (close(fd) || rc) return -1;
  struct job **r = room_for_one(t->renames, &t->capren, t->nren, sizeof *r, 256);
  if (!r) return errno = ENOMEM, -1;
  t->renames = r;
  t->renames[t->nren++] = j;
  return 0;
}

/* get: a small file's bytes into its temporary file. 0, or -1 with errno. */
static int local_store(struct tree *t, struct job *j, const void *buf, size_t n) {
  char local[FULL_MAX];
  full_path(t->dst, j->rel, local, sizeof local);
  int fd = local_temp(local, j->tmp, sizeof j->tmp);
  if (fd < 0) return -1;
  if (write_all(fd, buf, n)) {
    int e = errno;
    close(fd);
    unlink(j->tmp);
    return errno = e, -1;
  }
  if (local_finish(t, j, fd)) {
    int e = errno;
    unlink(j->tmp);
    return errno = e, -1;
  }
  return 0;
}

/* ---- threads: one bulk transfer or server-side copy each ---- */
struct sink {
  int fd, err;
  struct tree *t;
};

static int sink_local(const void *buf, size_t n, uint64_t off, void *arg) {
  (void)off;
  struct sink *s = arg;
  if (write_all(s->fd, buf, n)) {
    s->err = errno;
    return SMB3_EIO;
  }
  __atomic_add_fetch(&s->t->big_done, n, __ATOMIC_RELAXED);
  return 0;
}

static void *thread_get(void *arg) {
  struct job *j = arg;
  struct tree *t = j->t;
  char remote[FULL_MAX], local[FULL_MAX];
  full_path(t->src, j->rel, remote, sizeof remote);
  full_path(t->dst, j->rel, local, sizeof local);
  smb3_file *f;
  struct smb3_stat st;
  int rc = smb3_open(t->c, remote, O_RDONLY, &f, &st);
  if (rc) {
    job_done(j, rc, NULL);
    return NULL;
  }
  int fd = local_temp(local, j->tmp, sizeof j->tmp);
  if (fd < 0) {
    fmt(j->err, sizeof j->err, "cannot create '%s': %s", j->tmp, strerror(errno));
    smb3_close(f);
    job_done(j, SMB3_EIO, NULL);
    return NULL;
  }
  struct sink s = {fd, 0, t};
  int64_t n = smb3_read_stream(f, 0, st.size, sink_local, &s, NULL, NULL); /* up to the size at open */
  char why[600] = "";
  if (n < 0 && s.err)
    fmt(why, sizeof why, "%s: %s", local, strerror(s.err));
  else if (n < 0)
    fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  int crc = smb3_close(f);
  if (!why[0] && crc) fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  if (why[0]) {
    close(fd);
    unlink(j->tmp);
    job_done(j, SMB3_EIO, why);
    return NULL;
  }
  j->fd = fd; /* the main thread finishes it (mode, close, rename list) */
  job_done(j, n, NULL);
  return NULL;
}

static ssize_t source_local(void *buf, size_t n, uint64_t off, void *arg) {
  (void)off;
  struct sink *s = arg;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(s->fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      s->err = errno;
      return SMB3_EIO;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  __atomic_add_fetch(&s->t->big_done, got, __ATOMIC_RELAXED);
  return (ssize_t)got;
}

/* A remote temporary name next to target: hidden, unique for this run. */
static void remote_temp(struct tree *t, const char *target, char *tmp, size_t n) {
  unsigned r = (unsigned)getpid() * 2654435761u ^ __atomic_add_fetch(&t->serial, 1, __ATOMIC_RELAXED);
  const char *b = base_of(target);
  fmt(tmp, n, "%.*s.%s.smb3-%08x", (int)(b - target), target, b, r);
}

static void *thread_put(void *arg) {
  struct job *j = arg;
  struct tree *t = j->t;
  char local[FULL_MAX], target[FULL_MAX], tmp[FULL_MAX + 64];
  full_path(t->src, j->rel, local, sizeof local);
  full_path(t->dst, j->rel, target, sizeof target);
  remote_temp(t, target, tmp, sizeof tmp);
  int fd = open(local, O_RDONLY | O_CLOEXEC);
  struct stat ls;
  if (fd < 0 || fstat(fd, &ls)) {
    fmt(j->err, sizeof j->err, "cannot open: %s", strerror(errno));
    if (fd >= 0) close(fd);
    job_done(j, SMB3_EIO, NULL);
    return NULL;
  }
  smb3_file *f;
  int rc = smb3_open(t->c, tmp, O_WRONLY | O_CREAT | O_EXCL, &f, NULL);
  if (rc) {
    close(fd);
    job_done(j, rc, NULL);
    return NULL;
  }
  struct sink s = {fd, 0, t};
  int sendable = S_ISREG(ls.st_mode) && ls.st_size > 0 && ls.st_blocks > 0;
  int64_t n = sendable ? smb3_write_from_fd(f, 0, fd, 0, (uint64_t)ls.st_size, NULL, NULL)
                       : smb3_write_stream(f, 0, source_local, &s, NULL, NULL);
  if (sendable && n > 0) __atomic_add_fetch(&t->big_done, (uint64_t)n, __ATOMIC_RELAXED);
  char why[600] = "";
  if (n < 0 && s.err)
    fmt(why, sizeof why, "cannot read: %s", strerror(s.err));
  else if (n < 0)
    fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  close(fd);
  int crc = smb3_close(f);
  if (!why[0] && crc) fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  if (!why[0] && (rc = smb3_rename(t->c, tmp, target, 1))) fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  if (why[0]) smb3_unlink(t->c, tmp); /* best effort: no partial file left behind */
  j->size = n > 0 ? (uint64_t)n : 0;
  job_done(j, why[0] ? SMB3_EIO : n, why[0] ? why : NULL);
  return NULL;
}

/* A copy through this client, for servers that cannot copy themselves. */
static int sink_remote(const void *buf, size_t n, uint64_t off, void *arg) {
  ssize_t w = smb3_write_range(arg, buf, n, off);
  return w < 0 ? (int)w : 0;
}

static void *thread_cp(void *arg) {
  struct job *j = arg;
  struct tree *t = j->t;
  char from[FULL_MAX], target[FULL_MAX], tmp[FULL_MAX + 64], why[600] = "";
  full_path(t->src, j->rel, from, sizeof from);
  full_path(t->dst, j->rel, target, sizeof target);
  remote_temp(t, target, tmp, sizeof tmp);
  smb3_file *src, *dst;
  struct smb3_stat st;
  int rc = smb3_open(t->c, from, O_RDONLY, &src, &st);
  if (rc) {
    job_done(j, rc, NULL);
    return NULL;
  }
  if ((rc = smb3_open(t->c, tmp, O_WRONLY | O_CREAT | O_EXCL, &dst, NULL))) {
    fmt(why, sizeof why, "%s", smb3_last_error(t->c));
    smb3_close(src);
    job_done(j, rc, why);
    return NULL;
  }
  uint64_t done = 0;
  int64_t n = 0;
  while (done < st.size) { /* the server copies (FSCTL_SRV_COPYCHUNK_WRITE) */
    n = smb3_copy_range(src, done, dst, done, st.size - done);
    if (n <= 0) break;
    done += (uint64_t)n;
  }
  if (n == SMB3_ENOTSUP && done == 0) { /* a server that cannot copy: through this client */
    n = smb3_read_stream(src, 0, st.size, sink_remote, dst, NULL, NULL);
    if (n > 0) done = (uint64_t)n;
  }
  if (n < 0) fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  int src_rc = smb3_close(src);
  int dst_rc = smb3_close(dst);
  if (!why[0] && (dst_rc || src_rc)) fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  if (!why[0] && smb3_rename(t->c, tmp, target, 1)) fmt(why, sizeof why, "%s", smb3_last_error(t->c));
  if (why[0]) smb3_unlink(t->c, tmp);
  __atomic_add_fetch(&t->big_done, done, __ATOMIC_RELAXED);
  j->size = done;
  job_done(j, why[0] ? SMB3_EIO : (int64_t)done, why[0] ? why : NULL);
  return NULL;
}

/* put: a small local file's bytes into j->buf. 0; 1 when it is larger than listed now (it goes
 * the big way); SMB3_EIO with j->err naming the file when it cannot be read. */
static int local_load(struct tree *t, struct job *j) {
  char local[FULL_MAX];
  full_path(t->src, j->rel, local, sizeof local);
  int fd = open(local, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fmt(j->err, sizeof j->err, "cannot open: %s", strerror(errno)); /* the line names the file */
    return SMB3_EIO;
  }
  if (!(j->buf = malloc(j->size + 1))) {
    close(fd);
    return SMB3_ENOMEM;
  }
  size_t got = 0;
  while (got < j->size + 1) { /* one byte more than listed: a file that grew shows it */
    ssize_t r = read(fd, (char *)j->buf + got, j->size + 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      fmt(j->err, sizeof j->err, "cannot read: %s", strerror(errno));
      close(fd);
      return SMB3_EIO;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got > j->size) return 1;
  j->size = got;
  return 0;
}

/* ---- starting jobs (main thread) ---- */
static int job_start(struct tree *t, struct job *j) {
  char path[FULL_MAX];
  int rc = 0;
  switch (j->kind) {
  case J_LIST:
    full_path(t->src, j->rel, path, sizeof path);
    return smb3_listdir_async(t->c, path, on_list, j);
  case J_MKDIR:
    full_path(t->dst, j->rel, path, sizeof path);
    return smb3_mkdir_async(t->c, path, on_rc, j);
  case J_GET_SMALL:
    /* one byte more than listed: a file that grew since shows it, and goes the big way */
    full_path(t->src, j->rel, path, sizeof path);
    if (!(j->buf = malloc(j->size + 1))) return SMB3_ENOMEM;
    return smb3_read_file_async(t->c, path, j->buf, j->size + 1, on_result, j);
  case J_PUT_SMALL: {
    if ((rc = local_load(t, j))) return rc;
    char target[FULL_MAX], tmp[FULL_MAX + 64];
    full_path(t->dst, j->rel, target, sizeof target);
    if (j->fresh && j->size) return smb3_create_file_async(t->c, target, j->buf, j->size, on_result, j);
    remote_temp(t, target, tmp, sizeof tmp);
    return smb3_put_file_async(t->c, tmp, target, j->buf, j->size, on_result, j);
  }
  case J_GET_BIG:
    rc = pthread_create(&j->th, NULL, thread_get, j);
    break;
  case J_PUT_BIG:
    rc = pthread_create(&j->th, NULL, thread_put, j);
    break;
  case J_CP:
    rc = pthread_create(&j->th, NULL, thread_cp, j);
    break;
  }
  if (rc) return SMB3_ENOMEM;
  j->threaded = 1;
  t->big_inflight++;
  return 0;
}

/* Start what the window allows. */
static void tree_pump(struct tree *t) {
  while (t->inflight < TREE_WINDOW && (t->queue || (t->big && t->big_inflight < TREE_BIG))) {
    struct job *j;
    if (t->big && t->big_inflight < TREE_BIG && (!t->queue || t->inflight % 4 == 0)) {
      j = t->big;
      if (!(t->big = j->next)) t->big_tail = &t->big;
    } else {
      j = t->queue;
      if (!(t->queue = j->next)) t->queue_tail = &t->queue;
    }
    j->next = NULL;
    t->inflight++;
    int rc = job_start(t, j);
    if (rc == SMB3_EINVAL && j->kind == J_GET_SMALL) { /* more than one request now: the big way */
      free(j->buf);
      j->buf = NULL;
      j->kind = J_GET_BIG;
      rc = job_start(t, j);
    }
    if (rc == 1 && j->kind == J_PUT_SMALL) { /* it grew past a small file: the big way */
      free(j->buf);
      j->buf = NULL;
      j->kind = J_PUT_BIG;
      rc = job_start(t, j);
    }
    if (rc) /* it never started: finished at once, with its reason (inflight stays counted) */
      job_done(j, rc, j->err[0] ? j->err : smb3_strerror(rc));
  }
}

static void tree_draw(struct tree *t, int final) {
  if (!t->progress_on) return;
  double n = now_s();
  if (!final && n - t->last_draw < 0.1) return;
  t->last_draw = n;
  uint64_t b = t->bytes + __atomic_load_n(&t->big_done, __ATOMIC_RELAXED);
  char hb[32], hr[32];
  human(hb, sizeof hb, (double)b);
  human(hr, sizeof hr, n > t->start ? (double)b / (n - t->start) : 0);
  fprintf(stderr, "\r%llu files  %s  %s/s  %d in flight   ", (unsigned long long)t->files, hb, hr,
          t->inflight);
  if (final) fputs("\r\033[K", stderr);
}

/* Run the loop until every job is done; handle(t, j) deals with each finished one. */
static void tree_run(struct tree *t, void (*handle)(struct tree *, struct job *)) {
  for (;;) {
    tree_pump(t);
    pthread_mutex_lock(&t->mu);
    if (!t->done && t->inflight == 0) {
      pthread_mutex_unlock(&t->mu);
      break;
    }
    while (!t->done) {
      if (!t->progress_on) {
        pthread_cond_wait(&t->cv, &t->mu);
        continue;
      }
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 100000000;
      if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&t->cv, &t->mu, &ts);
      if (!t->done) {
        pthread_mutex_unlock(&t->mu);
        tree_draw(t, 0);
        pthread_mutex_lock(&t->mu);
      }
    }
    struct job *list = t->done;
    t->done = NULL;
    t->done_tail = &t->done;
    pthread_mutex_unlock(&t->mu);
    while (list) {
      struct job *j = list;
      list = j->next;
      j->next = NULL;
      t->inflight--;
      if (j->threaded) {
        pthread_join(j->th, NULL);
        j->threaded = 0;
        t->big_inflight--;
      }
      handle(t, j);
    }
    tree_draw(t, 0);
  }
  tree_draw(t, 1);
}

/* A remote entry that is not a regular file or a directory (a POSIX share shows symlinks,
 * FIFOs, devices): skipped with a warning, as put -r skips local ones. */
static int remote_special(const struct smb3_stat *st) {
  return st->posix && !st->is_dir && (st->mode & S_IFMT) != S_IFREG;
}

/* ---- get -r ---- */
static void get_handle(struct tree *t, struct job *j) {
  char shown[FULL_MAX];
  full_path(t->src, j->rel, shown, sizeof shown);
  if (j->result < 0) {
    tree_fail(t, shown, j->err);
    job_free(j);
    return;
  }
  if (j->kind == J_LIST) {
    t->dirs++;
    for (size_t i = 0; i < j->nent; i++) {
      char *rel = path_join(j->rel, j->names[i]);
      const struct smb3_stat *st = &j->sts[i];
      if (!rel) {
        join_failed(t, t->src, j->rel, j->names[i]);
        continue;
      }
      if (remote_special(st)) {
        char s[FULL_MAX];
        full_path(t->src, rel, s, sizeof s);
        tree_warn(t, "skipping '%s': not a regular file or directory", s);
        free(rel);
        continue;
      }
      if (st->is_dir) {
        char local[FULL_MAX];
        full_path(t->dst, rel, local, sizeof local);
        if (mkdir(local, 0777) && errno != EEXIST) {
          tree_fail(t, local, strerror(errno));
          free(rel);
          continue;
        }
        tree_queue(t, job_new(t, J_LIST, rel, 0));
      } else {
        int small = st->size < TREE_SMALL_MAX && st->size < smb3_rsize(t->c);
        tree_queue(t, job_new(t, small ? J_GET_SMALL : J_GET_BIG, rel, st->size));
      }
    }
    job_free(j);
    return;
  }
  if (j->kind == J_GET_SMALL && (uint64_t)j->result > j->size) { /* it grew: fetch it whole */
    free(j->buf);
    j->buf = NULL;
    j->kind = J_GET_BIG;
    tree_queue(t, j);
    return;
  }
  int rc;
  if (j->kind == J_GET_SMALL) {
    rc = local_store(t, j, j->buf, (size_t)j->result);
    free(j->buf);
    j->buf = NULL;
  } else {
    rc = local_finish(t, j, j->fd);
    j->fd = -1;
    if (rc) unlink(j->tmp);
  }
  if (rc) {
    char local[FULL_MAX];
    full_path(t->dst, j->rel, local, sizeof local);
    tree_fail(t, local, strerror(errno));
    job_free(j);
    return;
  }
  t->files++;
  if (j->kind == J_GET_SMALL) t->bytes += (uint64_t)j->result;
  /* (a big file's bytes are in big_done already) */
}

/* The files are renamed into place after one syncfs(2) of the destination: the data of every
 * file is on disk before any of them has its final name (as get's fsync before its rename), for
 * one flush instead of one per file. */
static void get_renames(struct tree *t) {
  int dfd = open(t->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int bad = dfd < 0 || syncfs(dfd);
  int err = errno;
  if (dfd >= 0) close(dfd);
  for (size_t i = 0; i < t->nren; i++) {
    struct job *j = t->renames[i];
    char local[FULL_MAX];
    full_path(t->dst, j->rel, local, sizeof local);
    if (bad || rename(j->tmp, local)) {
      if (!bad) err = errno;
      unlink(j->tmp);
      t->files--;
      tree_fail(t, local, bad ? "cannot sync the destination" : strerror(err));
    }
    job_free(j);
  }
  free(t->renames);
  t->renames = NULL;
  t->nren = 0;
}

/* put: rel is a directory this run made (its names were all free). */
static void made_add(struct tree *t, const char *rel) {
  char **m = room_for_one(t->made, &t->capmade, t->nmade, sizeof *m, 64);
  if (!m) return; /* (then its files go the temporary way) */
  t->made = m;
  char *d = strdup(rel);
  if (d) t->made[t->nmade++] = d;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the directory holding rel is one this run made (t->made sorted). */
static int parent_made(const struct tree *t, const char *rel) {
  if (!t->nmade) return 0;
  const char *slash = strrchr(rel, '/');
  size_t n = slash ? (size_t)(slash - rel) : 0;
  char parent[PATH_MAX];
  if (n >= sizeof parent) return 0;
  memcpy(parent, rel, n);
  parent[n] = 0;
  const char *key = parent;
  return bsearch(&key, t->made, t->nmade, sizeof *t->made, str_cmp) != NULL;
}

static void made_free(struct tree *t) {
  for (size_t i = 0; i < t->nmade; i++)
    free(t->made[i]);
  free(t->made);
  t->made = NULL;
  t->nmade = t->capmade = 0;
}

static void tree_init(struct tree *t, struct cli *cli, const char *cmd) {
  memset(t, 0, sizeof *t);
  t->cli = cli;
  t->cmd = cmd;
  t->c = cli->client;
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->done_tail = &t->done;
  t->queue_tail = &t->queue;
  t->big_tail = &t->big;
  t->progress_on = !cli->quiet && isatty(2);
  t->start = now_s();
}

/* The summary line, and the exit status: 1 when anything failed. */
static int tree_end(struct tree *t) {
  uint64_t b = t->bytes + __atomic_load_n(&t->big_done, __ATOMIC_RELAXED);
  if (!t->cli->quiet) {
    char hb[32];
    human(hb, sizeof hb, (double)b);
    fprintf(stderr, "smb3: %s: %llu files, %llu directories, %llu bytes (%s) in %.2f s", t->cmd,
            (unsigned long long)t->files, (unsigned long long)t->dirs, (unsigned long long)b, hb,
            now_s() - t->start);
    if (t->skipped) fprintf(stderr, ", %llu skipped", (unsigned long long)t->skipped);
    if (t->failed) fprintf(stderr, ", %llu failed", (unsigned long long)t->failed);
    fputc('\n', stderr);
  }
  made_free(t);
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  return t->failed ? CLI_FAILED : CLI_OK;
}

/* Wait for the one job j (the tree's root listing) alone: its failure is the command's one error. */
static int tree_first(struct tree *t, struct job *j) {
  t->inflight++;
  int rc = job_start(t, j);
  if (rc) {
    t->inflight--;
    return rc;
  }
  pthread_mutex_lock(&t->mu);
  while (!t->done)
    pthread_cond_wait(&t->cv, &t->mu);
  t->done = NULL;
  t->done_tail = &t->done;
  pthread_mutex_unlock(&t->mu);
  t->inflight--;
  return j->result < 0 ? (int)j->result : 0;
}

int cmd_get_tree(struct cli *cli, int argc, char **argv) {
  int rc = cli_parse(cli, "get -r", argv[0]);
  if (rc) return rc;
  if ((rc = cli_connect(cli, "get -r"))) return rc;
  struct tree t;
  tree_init(&t, cli, "get -r");
  fmt(t.src, sizeof t.src, "%s", cli->opts.path);
  strip_slashes(t.src);
  if (!strcmp(t.src, "/")) t.src[0] = 0;
  /* as cp -r: into LOCAL/NAME when LOCAL is a directory, else LOCAL is the copy */
  const char *name = t.src[0] ? base_of(t.src) : "";
  struct stat ls;
  if (argc == 2 && stat(argv[1], &ls) == 0 && S_ISDIR(ls.st_mode) && name[0])
    fmt(t.dst, sizeof t.dst, "%s/%s", argv[1], name);
  else if (argc == 2)
    fmt(t.dst, sizeof t.dst, "%s", argv[1]);
  else
    fmt(t.dst, sizeof t.dst, "%s", name[0] ? name : ".");
  strip_slashes(t.dst);
  struct job *root = job_new(&t, J_LIST, strdup(""), 0);
  if (!root || !root->rel) return cli_error("get -r", "out of memory");
  if ((rc = tree_first(&t, root))) {
    rc =
        cli_error("get -r", "'%s': %s", t.src[0] ? t.src : "/", root->err[0] ? root->err : smb3_strerror(rc));
    job_free(root);
    return rc;
  }
  if (mkdir(t.dst, 0777) && errno != EEXIST) {
    job_free(root);
    return cli_error("get -r", "cannot create '%s': %s", t.dst, strerror(errno));
  }
  get_handle(&t, root);
  tree_run(&t, get_handle);
  get_renames(&t);
  return tree_end(&t);
}

/* ---- put -r ---- */
struct local_dir {
  char *rel;
  int depth;
};

struct walk {
  struct tree *t;
  struct local_dir *dirs;
  size_t ndirs, capdirs;
  struct job *files, **files_tail;
};

static int walk_add_dir(struct walk *w, char *rel, int depth) {
  struct local_dir *d = room_for_one(w->dirs, &w->capdirs, w->ndirs, sizeof *d, 64);
  if (!d) return -1;
  w->dirs = d;
  w->dirs[w->ndirs++] = (struct local_dir){rel, depth};
  return 0;
}

/* The local tree below rel (pre-order: a directory before what it holds). Symbolic links and
 * special files are skipped with a warning: SMB has no portable form for them (a share may not
 * keep reparse points or POSIX types), and following a link could leave the tree or loop. */
static void walk_local(struct walk *w, const char *rel, int depth) {
  struct tree *t = w->t;
  char path[FULL_MAX];
  full_path(t->src, rel, path, sizeof path);
  DIR *d = opendir(path);
  if (!d) {
    tree_fail(t, path, strerror(errno));
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *crel = path_join(rel, e->d_name);
    char cpath[FULL_MAX];
    struct stat st;
    if (!crel) {
      join_failed(t, t->src, rel, e->d_name);
      continue;
    }
    full_path(t->src, crel, cpath, sizeof cpath);
    if (lstat(cpath, &st)) {
      tree_fail(t, cpath, strerror(errno));
      free(crel);
    } else if (S_ISDIR(st.st_mode)) {
      if (walk_add_dir(w, crel, depth + 1)) {
        free(crel);
        tree_queue(t, NULL);
        continue;
      }
      walk_local(w, crel, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      int small = (uint64_t)st.st_size < TREE_SMALL_MAX && (uint64_t)st.st_size <= smb3_wsize(t->c);
      struct job *j = job_new(t, small ? J_PUT_SMALL : J_PUT_BIG, crel, (uint64_t)st.st_size);
      if (!j) {
        tree_queue(t, NULL);
        continue;
      }
      *w->files_tail = j;
      w->files_tail = &j->next;
    } else {
      tree_warn(t,
                S_ISLNK(st.st_mode) ? "skipping symbolic link '%s'"
                                    : "skipping '%s': not a regular file or directory",
                cpath);
      free(crel);
    }
  }
  closedir(d);
}

static void put_handle(struct tree *t, struct job *j) {
  char shown[FULL_MAX];
  if (j->kind == J_MKDIR) {
    full_path(t->dst, j->rel, shown, sizeof shown);
    if (j->result < 0 && j->result != SMB3_EEXIST)
      tree_fail(t, shown, j->err);
    else
      t->dirs++;
    if (j->result == 0) made_add(t, j->rel);
  } else if (j->kind == J_PUT_SMALL && j->fresh && j->result == SMB3_EEXIST) {
    /* another client made the name since: replace it the safe way */
    j->fresh = 0;
    free(j->buf);
    j->buf = NULL;
    j->err[0] = 0;
    tree_queue(t, j);
    return;
  } else if (j->result < 0) {
    full_path(t->src, j->rel, shown, sizeof shown);
    tree_fail(t, shown, j->err);
  } else {
    t->files++;
    if (j->kind == J_PUT_SMALL) t->bytes += j->size; /* a big one's bytes are in big_done */
  }
  job_free(j);
}

/* Where a tree goes on the share (put -r, cp -r), as cp -r: into URL/NAME when URL is a
 * directory (or the share's root), else URL is the copy. 0, or the exit status after a message. */
static int remote_dest(struct tree *t, const char *to, const char *name) {
  char dst[PATH_MAX];
  fmt(dst, sizeof dst, "%s", to);
  strip_slashes(dst);
  if (!strcmp(dst, "/")) dst[0] = 0;
  struct smb3_stat st;
  int rc = dst[0] ? smb3_stat(t->c, dst, &st) : 0;
  if (!dst[0] || (!rc && st.is_dir))
    fmt(t->dst, sizeof t->dst, "%s%s%s", dst, dst[0] ? "/" : "", name);
  else if (rc == SMB3_ENOENT)
    fmt(t->dst, sizeof t->dst, "%s", dst);
  else if (!rc)
    return cli_error(t->cmd, "'%s' exists and is not a directory", dst);
  else
    return cli_fail(t->cli, t->cmd, rc);
  return 0;
}

/* The destination's root directory (it may exist already); put: remember it when this run made
 * it (its files go under their own names, made_add). */
static int remote_root(struct tree *t, int put) {
  struct job *j = job_new(t, J_MKDIR, strdup(""), 0);
  if (!j || !j->rel) return cli_error(t->cmd, "out of memory");
  int rc = tree_first(t, j);
  if (rc && rc != SMB3_EEXIST) {
    rc = cli_error(t->cmd, "cannot create '%s': %s", t->dst, j->err[0] ? j->err : smb3_strerror(rc));
  } else {
    if (!rc && put) made_add(t, "");
    rc = 0;
    t->dirs++;
  }
  job_free(j);
  return rc;
}

int cmd_put_tree(struct cli *cli, int argc, char **argv) {
  (void)argc;
  int rc = cli_parse(cli, "put -r", argv[1]);
  if (rc) return rc;
  struct stat ls;
  if (stat(argv[0], &ls)) return cli_error("put -r", "cannot open '%s': %s", argv[0], strerror(errno));
  if (!S_ISDIR(ls.st_mode)) return cli_error("put -r", "'%s' is not a directory", argv[0]);
  if ((rc = cli_connect(cli, "put -r"))) return rc;
  struct tree t;
  tree_init(&t, cli, "put -r");
  fmt(t.src, sizeof t.src, "%s", argv[0]);
  strip_slashes(t.src);
  char real[PATH_MAX];
  const char *name = realpath(t.src, real) ? base_of(real) : base_of(t.src);
  if ((rc = remote_dest(&t, cli->opts.path, name[0] ? name : "root"))) return rc;
  if ((rc = remote_root(&t, 1))) return rc;
  struct walk w = {.t = &t};
  w.files_tail = &w.files;
  walk_local(&w, "", 0);
  /* directories first, a level at a time (a directory's parent exists before it is made) */
  for (int depth = 1;; depth++) {
    int any = 0;
    for (size_t i = 0; i < w.ndirs; i++)
      if (w.dirs[i].depth == depth) {
        tree_queue(&t, job_new(&t, J_MKDIR, w.dirs[i].rel, 0));
        w.dirs[i].rel = NULL;
        any = 1;
      }
    if (!any) break;
    tree_run(&t, put_handle);
  }
  free(w.dirs);
  if (t.nmade) qsort(t.made, t.nmade, sizeof *t.made, str_cmp);
  while (w.files) {
    struct job *j = w.files;
    w.files = j->next;
    j->next = NULL;
    j->fresh = j->kind == J_PUT_SMALL && parent_made(&t, j->rel);
    tree_queue(&t, j);
  }
  tree_run(&t, put_handle);
  return tree_end(&t);
}

/* ---- cp -r: inside the share ---- */
static void cp_handle(struct tree *t, struct job *j) {
  char shown[FULL_MAX];
  if (j->kind == J_LIST) {
    full_path(t->src, j->rel, shown, sizeof shown);
    if (j->result < 0) {
      tree_fail(t, shown, j->err);
      job_free(j);
      return;
    }
    for (size_t i = 0; i < j->nent; i++) {
      const struct smb3_stat *st = &j->sts[i];
      char *rel = path_join(j->rel, j->names[i]);
      if (!rel) {
        join_failed(t, t->src, j->rel, j->names[i]);
      } else if (remote_special(st)) {
        full_path(t->src, rel, shown, sizeof shown);
        tree_warn(t, "skipping '%s': not a regular file or directory", shown);
        free(rel);
      } else {
        tree_queue(t, job_new(t, st->is_dir ? J_MKDIR : J_CP, rel, st->size));
      }
    }
    job_free(j);
    return;
  }
  if (j->kind == J_MKDIR) {
    full_path(t->dst, j->rel, shown, sizeof shown);
    if (j->result < 0 && j->result != SMB3_EEXIST) {
      tree_fail(t, shown, j->err);
      job_free(j);
      return;
    }
    t->dirs++;
    j->kind = J_LIST; /* made: now what it is to hold */
    j->result = 0;
    j->err[0] = 0;
    tree_queue(t, j);
    return;
  }
  if (j->result < 0) {
    full_path(t->src, j->rel, shown, sizeof shown);
    tree_fail(t, shown, j->err);
  } else {
    t->files++; /* its bytes are in big_done */
  }
  job_free(j);
}

int cmd_cp_tree(struct cli *cli, int argc, char **argv) {
  (void)argc;
  char to[PATH_MAX];
  int rc = cli_parse(cli, "cp -r", argv[0]);
  if (rc || (rc = cli_same_share_path(cli, "cp -r", argv[1], to, sizeof to))) return rc;
  if ((rc = cli_connect(cli, "cp -r")) || (rc = cli_dfs_rebase(cli, "cp -r", to, sizeof to))) return rc;
  struct tree t;
  tree_init(&t, cli, "cp -r");
  fmt(t.src, sizeof t.src, "%s", cli->opts.path);
  strip_slashes(t.src);
  if (!strcmp(t.src, "/")) t.src[0] = 0;
  struct job *root = job_new(&t, J_LIST, strdup(""), 0);
  if (!root || !root->rel) return cli_error("cp -r", "out of memory");
  if ((rc = tree_first(&t, root))) {
    rc = cli_error("cp -r", "'%s': %s", t.src[0] ? t.src : "/", root->err[0] ? root->err : smb3_strerror(rc));
    job_free(root);
    return rc;
  }
  if ((rc = remote_dest(&t, to, t.src[0] ? base_of(t.src) : "root"))) {
    job_free(root);
    return rc;
  }
  size_t sl = strlen(t.src);
  if (!strcmp(t.dst, t.src) || !sl || (!strncmp(t.dst, t.src, sl) && t.dst[sl] == '/')) {
    job_free(root);
    return cli_error("cp -r", "cannot copy '%s' into itself ('%s')", t.src[0] ? t.src : "/", t.dst);
  }
  if ((rc = remote_root(&t, 0))) {
    job_free(root);
    return rc;
  }
  cp_handle(&t, root);
  tree_run(&t, cp_handle);
  return tree_end(&t);
}
