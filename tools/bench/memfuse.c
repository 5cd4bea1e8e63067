/* memfuse.c - the benchmark's floor: a FUSE file system with no network behind it.
 *
 *   smb3-memfuse MOUNTPOINT [-f] [--direct] [--file NAME=BYTES]...
 *
 * It serves the files named by --file (their bytes a fixed pattern, answered from one buffer that
 * stays in memory, so no read waits for anything) and accepts new files whose data it drops (only
 * the size is kept). It asks the kernel for what smb3fs asks (FUSE request size of 256 pages,
 * asynchronous reads, the same worker threads and background queue, direct I/O for a write-only
 * open as smb3fs's cache=strict), so a dd through it costs
 * what any page-cache FUSE mount costs on this machine: the kernel's copies into page-cache
 * folios, their allocation, the context switches. smb3-bench mounts it next to smb3fs ("floor")
 * to tell the part of a mount's time that is FUSE and the page cache from the part that is ours.
 * Not installed; not a file system anyone should use. */
#define FUSE_USE_VERSION 314 /* as fs/util.h: fuse_session_loop_mt with a fuse_loop_config */
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MF_MAX_FILES 64
#define MF_PATTERN (1u << 20)
#define MF_MAX_PAGES 256

struct mf_file {
  char name[256];
  off_t size;
  int used;
};

static struct mf_file files[MF_MAX_FILES]; /* inode = index + 2 (1 is the root) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *pattern; /* 2 * MF_PATTERN: any read of up to MF_PATTERN bytes at any offset is one slice */

static struct mf_file *file_of(fuse_ino_t ino) {
  if (ino < 2 || ino - 2 >= MF_MAX_FILES || !files[ino - 2].used) return NULL;
  return &files[ino - 2];
}

static void fill_attr(fuse_ino_t ino, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_uid = getuid();
  st->st_gid = getgid();
  if (ino == FUSE_ROOT_ID) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return;
  }
  st->st_mode = S_IFREG | 0644;
  st->st_nlink = 1;
  pthread_mutex_lock(&lock);
  st->st_size = files[ino - 2].size;
  pthread_mutex_unlock(&lock);
  st->st_blocks = (st->st_size + 511) / 512;
}

static void reply_entry(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct fuse_entry_param e;
  memset(&e, 0, sizeof e);
  e.ino = ino;
  e.attr_timeout = e.entry_timeout = 1.0;
  fill_attr(ino, &e.attr);
  if (fi)
    fuse_reply_create(req, &e, fi);
  else
    fuse_reply_entry(req, &e);
}

static int direct_all; /* --direct */

/* As smb3fs under cache=strict with a read lease (fs/cache.c, cache_open_mode): a write-only open
 * writes with direct I/O, every other open goes through the page cache, which a fresh mount has empty.
 * --direct: every open with direct I/O, as smb3fs's for a big file opened read-only, so that each
 * read(2) is a FUSE request. */
static void open_mode(struct fuse_file_info *fi) {
  fi->direct_io = direct_all || (fi->flags & O_ACCMODE) == O_WRONLY;
  fi->keep_cache = 0;
}

static void mf_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  conn->want |= (FUSE_CAP_ASYNC_READ | FUSE_CAP_ATOMIC_O_TRUNC) & conn->capable;
  conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE; /* as smb3fs under its default cache=strict */
  conn->max_write = MF_MAX_PAGES * (unsigned)getpagesize();
  conn->max_background = 64;
  conn->congestion_threshold = 48;
}

static void mf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  if (parent != FUSE_ROOT_ID) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  for (unsigned i = 0; i < MF_MAX_FILES; i++)
    if (files[i].used && strcmp(files[i].name, name) == 0) {
      reply_entry(req, i + 2, NULL);
      return;
    }
  fuse_reply_err(req, ENOENT);
}

static void mf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  if (ino != FUSE_ROOT_ID && !file_of(ino)) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  struct stat st;
  fill_attr(ino, &st);
  fuse_reply_attr(req, &st, 1.0);
}

static void mf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) {
  struct mf_file *f = file_of(ino);
  if (f && (to_set & FUSE_SET_ATTR_SIZE)) {
    pthread_mutex_lock(&lock);
    f->size = attr->st_size;
    pthread_mutex_unlock(&lock);
  }
  mf_getattr(req, ino, fi);
}

static void mf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi) {
  (void)mode;
  if (parent != FUSE_ROOT_ID || strlen(name) >= sizeof files[0].name) {
    fuse_reply_err(req, parent != FUSE_ROOT_ID ? ENOENT : ENAMETOOLONG);
    return;
  }
  pthread_mutex_lock(&lock);
  int at = -1;
  for (int i = 0; i < MF_MAX_FILES; i++) {
    if (files[i].used && strcmp(files[i].name, name) == 0) {
      at = i;
      break;
    }
    if (!files[i].used && at < 0) at = i;
  }
  if (at >= 0 && !files[at].used) {
    snprintf(files[at].name, sizeof files[at].name, "%s", name);
    files[at].used = 1;
  }
  if (at >= 0 && (fi->flags & O_TRUNC)) files[at].size = 0;
  pthread_mutex_unlock(&lock);
  if (at < 0) {
    fuse_reply_err(req, ENOSPC);
    return;
  }
  open_mode(fi);
  reply_entry(req, (fuse_ino_t)at + 2, fi);
}

static void mf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct mf_file *f = file_of(ino);
  if (!f) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  if (fi->flags & O_TRUNC) {
    pthread_mutex_lock(&lock);
    f->size = 0;
    pthread_mutex_unlock(&lock);
  }
  open_mode(fi);
  fuse_reply_open(req, fi);
}

/* The file of an open descriptor, or NULL with EBADF answered. */
static struct mf_file *open_file_of(fuse_req_t req, fuse_ino_t ino) {
  struct mf_file *f = file_of(ino);
  if (!f) fuse_reply_err(req, EBADF);
  return f;
}

static void mf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)fi;
  struct mf_file *f = open_file_of(req, ino);
  if (!f) return;
  pthread_mutex_lock(&lock);
  off_t end = f->size;
  pthread_mutex_unlock(&lock);
  if (off >= end) size = 0;
  if (size > (size_t)(end - off)) size = (size_t)(end - off);
  if (size > MF_PATTERN) size = MF_PATTERN;
  fuse_reply_buf(req, pattern + (off % MF_PATTERN), size);
}

static void mf_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi) {
  (void)buf;
  (void)fi;
  struct mf_file *f = open_file_of(req, ino);
  if (!f) return;
  pthread_mutex_lock(&lock);
  if (off + (off_t)size > f->size) f->size = off + (off_t)size;
  pthread_mutex_unlock(&lock);
  fuse_reply_write(req, size);
}

static void mf_ok(fuse_req_t req) {
  fuse_reply_err(req, 0);
}
static void mf_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  (void)fi;
  mf_ok(req);
}
static void mf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
  (void)ino;
  (void)datasync;
  (void)fi;
  mf_ok(req);
}
static void mf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  (void)fi;
  mf_ok(req);
}

static void mf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  int err = ENOENT;
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; parent == FUSE_ROOT_ID && i < MF_MAX_FILES; i++)
    if (files[i].used && strcmp(files[i].name, name) == 0) {
      files[i].used = 0;
      err = 0;
    }
  pthread_mutex_unlock(&lock);
  fuse_reply_err(req, err);
}

static const struct fuse_lowlevel_ops ops = {
    .init = mf_init,
    .lookup = mf_lookup,
    .getattr = mf_getattr,
    .setattr = mf_setattr,
    .create = mf_create,
    .open = mf_open,
    .read = mf_read,
    .write = mf_write,
    .flush = mf_flush,
    .fsync = mf_fsync,
    .release = mf_release,
    .unlink = mf_unlink,
};

static int add_file(const char *spec) {
  const char *eq = strrchr(spec, '=');
  char *end = NULL;
  long long n = eq ? strtoll(eq + 1, &end, 10) : -1;
  size_t len = eq ? (size_t)(eq - spec) : 0;
  if (!eq || n < 0 || !end || *end || len == 0 || len >= sizeof files[0].name || memchr(spec, '/', len)) {
    fprintf(stderr, "smb3-memfuse: bad --file '%s' (want NAME=BYTES)\n", spec);
    return -1;
  }
  for (unsigned i = 0; i < MF_MAX_FILES; i++)
    if (!files[i].used) {
      memcpy(files[i].name, spec, len);
      files[i].name[len] = 0;
      files[i].size = (off_t)n;
      files[i].used = 1;
      return 0;
    }
  fprintf(stderr, "smb3-memfuse: more than %d files\n", MF_MAX_FILES);
  return -1;
}

int main(int argc, char **argv) {
  const char *mnt = NULL;
  int foreground = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-f") == 0)
      foreground = 1;
    else if (strcmp(argv[i], "--direct") == 0)
      direct_all = 1;
    else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
      if (add_file(argv[++i])) return 2;
    } else if (argv[i][0] != '-' && !mnt)
      mnt = argv[i];
    else {
      fprintf(stderr, "usage: smb3-memfuse MOUNTPOINT [-f] [--direct] [--file NAME=BYTES]...\n");
      return 2;
    }
  }
  if (!mnt) {
    fprintf(stderr, "usage: smb3-memfuse MOUNTPOINT [-f] [--direct] [--file NAME=BYTES]...\n");
    return 2;
  }
  pattern = malloc(2 * MF_PATTERN);
  if (!pattern) return 1;
  for (size_t i = 0; i < 2 * MF_PATTERN; i++)
    pattern[i] = (char)(i * 131 + 7);
  char *fargv[] = {argv[0], "-o", "fsname=memfuse,subtype=memfuse,default_permissions", NULL};
  struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
  struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (!se) return 1;
  if (fuse_set_signal_handlers(se) || fuse_session_mount(se, mnt)) {
    fuse_session_destroy(se);
    return 1;
  }
  if (!foreground && fuse_daemonize(0)) return 1;
  struct fuse_loop_config *cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, 4); /* smb3fs's FS_MAX_THREADS and FS_IDLE_THREADS */
  fuse_loop_cfg_set_idle_threads(cfg, 4);
  int rc = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);
  free(pattern);
  return rc ? 1 : 0;
}
