/* main.c - smb3fs: mount an SMB2/SMB3 share with FUSE.
 *
 * Order matters: we fork first (unless -f) and the child connects, logs on and mounts while the
 * parent waits on a pipe; so a mount that cannot connect or log on fails with the cause on stderr
 * and a non-zero exit, and the connection's I/O thread is created in the process that keeps it
 * (fuse_daemonize() would fork after connecting and lose that thread). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "closeq.h"
#include "dfs.h"
#include "dirlease.h"
#include "file.h"
#include "fusereq.h"
#include "inode.h"
#include "locks.h"
#include "memtrim.h"
#include "notifier.h"
#include "openahead.h"
#include "ops.h"
#include "opts.h"
#include "pending.h"
#include "readahead.h"
#include "reconnect.h"
#include "relist.h"
#include "xattr.h"

/* FUSE workers: a few. Handlers only submit and return (replies come from libsmb3's I/O thread),
 * so these are for the kernel's requests that arrive together, not for waiting. */
#define FS_MAX_THREADS 4
/* Workers kept when idle: all of them. With fewer, libfuse ends a worker whenever more than that
 * many wait and starts another at the next burst: during a sequential read (the kernel's
 * read-ahead comes in bursts of up to max_background requests) that is a new thread, its stack
 * and its request buffer every few requests (measured: dozens of thread ids per GiB read, and
 * 1 GiB dd bs=1M reads took 0.67-1.93 s of daemon CPU with 2 idle workers against 0.66-0.88 s
 * with 4, 418-986 MB/s against 822-1039 MB/s over six fresh mounts each). */
#define FS_IDLE_THREADS FS_MAX_THREADS
#define FS_MAX_PAGES 256 /* libfuse's FUSE_MAX_MAX_PAGES (not exported) */

/* Reply (none: libfuse answers INIT with conn, on the worker that received it, before any other request). */
static void ll_init(void *userdata, struct fuse_conn_info *conn) {
  struct fs_ctx *fs = userdata;
  unsigned want = FUSE_CAP_ASYNC_READ | FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_READDIRPLUS |
                  FUSE_CAP_PARALLEL_DIROPS |
                  FUSE_CAP_IOCTL_DIR | /* the stats ioctl is on the root directory */
                  /* Setuid and setgid bits are the server's to clear: Samba's own chown(2) and write(2)
                   * do it on its disk, and without the POSIX extensions there are none. Without it the
                   * kernel asks for fresh attributes before every chown (a write-back flush and a round
                   * trip each, for tar and cp -a as root). */
                  FUSE_CAP_HANDLE_KILLPRIV;
  if (fs->cache != SMB3_CACHE_NONE) want |= FUSE_CAP_AUTO_INVAL_DATA;
  /* fcntl and flock locks come to us (locks.c), which takes them at the server; nobrl: the kernel keeps them
   */
  if (fs->nobrl)
    conn->want &= ~(unsigned)(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
  else
    want |= FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS;
  /* Read-ahead data that came by pipe goes on to the kernel by splice (fuse_reply_data); a
   * libfuse option only, the kernel sees plain writes of /dev/fuse. */
  want |= FUSE_CAP_SPLICE_WRITE;
  conn->want |= want & conn->capable;
  /* Always readdirplus: attributes come with the listing, no per-entry stat. */
  conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
  /* cache=strict and none: write-back is ours (writeback.c). The kernel's write-back cache would
   * gather small writes in the page cache, but it also keeps its own idea of a file's size and
   * mtime and ignores the server's from then on, so another client's changes would stay invisible
   * to open files: only cache=loose, which promises no such coherence, turns it on. writeback.c
   * then coalesces the kernel's page-sized write-backs into wsize WRITEs as before, and a failed
   * one still reaches the application at fsync or close. */
  if (fs->cache == SMB3_CACHE_LOOSE && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
    fs->wb_cache = 1;
  } else {
    conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
  }
  /* The largest requests the kernel and libfuse allow: libfuse 3.14 reads into buffers of
   * FUSE_MAX_MAX_PAGES (256) pages plus a header and derives max_pages from max_write; a larger
   * max_write makes every read of /dev/fuse fail with EINVAL. */
  conn->max_write = FS_MAX_PAGES * (unsigned)getpagesize();
  if (fs->fuse_read_max && !conn->max_read) conn->max_read = fs->fuse_read_max; /* (make_session) */
  conn->max_background = 64;
  conn->congestion_threshold = 48;
  if (fs->debug)
    fprintf(stderr, "smb3fs: init: capable 0x%x want 0x%x max_readahead %u\n", conn->capable, conn->want,
            conn->max_readahead);
}

static void salt_init(struct fs_ctx *fs) {
  if (getrandom(fs->lease_salt, sizeof fs->lease_salt, 0) != (ssize_t)sizeof fs->lease_salt) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    memcpy(fs->lease_salt, &v, 8);
  }
}

static void settings_init(struct fs_ctx *fs) {
  const struct smb3_options *o = &fs->o;
  fs->uid = o->uid >= 0 ? (uid_t)o->uid : getuid();
  fs->gid = o->gid >= 0 ? (gid_t)o->gid : getgid();
  fs->forceuid = o->forceuid;
  fs->forcegid = o->forcegid;
  fs->file_mode = o->file_mode >= 0 ? (mode_t)o->file_mode : 0644;
  fs->dir_mode = o->dir_mode >= 0 ? (mode_t)o->dir_mode : 0755;
  fs->actimeo = o->actimeo;
  fs->directio_min = o->directio_min;
  fs->cache = o->cache;
  fs->ro = o->ro;
  fs->mfsymlinks = o->mfsymlinks;
  fs->lazyexcl = o->lazyexcl;
  fs->dirleases = o->dirleases;
  fs->nobrl = o->nobrl;
}

/* ---- background start: the parent reports the child's result ---- */
static int wait_for_child(int rfd, pid_t pid) {
  unsigned char status = 1;
  ssize_t n;
  do
    n = read(rfd, &status, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || status != 0) /* a failed mount: return only once the child is gone too */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
  return n == 1 ? status : 1; /* no byte: the child died; its message is on stderr */
}

static void report(int *wfd, unsigned char status) {
  if (*wfd < 0) return;
  ssize_t n = write(*wfd, &status, 1);
  (void)n;
  close(*wfd);
  *wfd = -1;
}

/* The file SMB3FS_STDERR names, NULL when it is unset or empty. */
static const char *stderr_file(void) {
  const char *log = getenv("SMB3FS_STDERR");
  return log && log[0] ? log : NULL;
}

/* The background daemon's standard streams go to /dev/null, or its standard error to the file
 * SMB3FS_STDERR names (appended; syslog messages are copied there too: see run()). */
static void detach_stdio(void) {
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
    if (fd > 2) close(fd);
  }
  const char *log = stderr_file();
  int lfd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
  if (lfd >= 0) {
    dup2(lfd, 2);
    close(lfd);
  }
  if (chdir("/")) { /* nothing to do about it */
  }
}

/* ---- connect and mount ---- */
static int replace_opt(char **dst, const char *src) {
  char *n = src ? strdup(src) : NULL;
  if (src && !n) return -1;
  free(*dst);
  *dst = n;
  return 0;
}

/* The mounted directory is under a DFS link: follow the referrals (smb3_dfs_follow) and mount the
 * target instead, so that fs->o (what a reconnect uses) names the target share and path. At most
 * SMB3_DFS_MAX_HOPS hops; a place reached twice is a loop. */
static int follow_dfs(struct fs_ctx *fs, const char *source) {
  char seen[SMB3_DFS_MAX_HOPS + 1][1024];
  int nseen = 0;
  char url_host[256];
  snprintf(url_host, sizeof url_host, "%s", fs->o.host);
  snprintf(seen[nseen++], sizeof seen[0], "%s\\%s\\%s", fs->o.host, fs->o.share,
           fs->o.path ? fs->o.path : "");
  for (int hop = 0; smb3_dfs_share(fs->c); hop++) {
    smb3_client *t;
    char *path;
    int rc = smb3_dfs_follow(fs->c, fs->o.path ? fs->o.path : "", &t, &path);
    if (rc) {
      fprintf(stderr, "smb3fs: cannot mount %s: %s\n", source, smb3_last_error(fs->c));
      return -1;
    }
    if (t == fs->c) return 0;
    smb3_disconnect(fs->c);
    fs->c = t;
    int bad = replace_opt(&fs->o.path, path) || replace_opt(&fs->o.host, smb3_client_host(t)) ||
              replace_opt(&fs->o.share, smb3_client_share(t));
    free(path);
    if (bad) {
      fprintf(stderr, "smb3fs: out of memory\n");
      return -1;
    }
    if (fs->o.ip && strcasecmp(fs->o.host, url_host))
      replace_opt(&fs->o.ip, NULL); /* ip= is the URL host's */
    char place[1024];
    snprintf(place, sizeof place, "%s\\%s\\%s", fs->o.host, fs->o.share, fs->o.path);
    for (int i = 0; i < nseen; i++)
      if (!strcasecmp(seen[i], place) || hop == SMB3_DFS_MAX_HOPS) {
        fprintf(stderr, "smb3fs: cannot mount %s: DFS: the referrals lead back to %s (a loop of links)\n",
                source, place);
        return -1;
      }
    if (nseen <= SMB3_DFS_MAX_HOPS) snprintf(seen[nseen++], sizeof seen[0], "%s", place);
  }
  return 0;
}

/* An inode is freed (inode table lock held, its own lock gone): its byte-range lock records and its
 * directory lease go with it. */
static void inode_dropped(struct fs_inode *in) {
  locks_free(in);
  dirlease_free(in);
}

static int connect_share(struct fs_ctx *fs, const char *source) {
  char err[512] = "";
  int rc = smb3_connect(&fs->o, &fs->c, err, sizeof err);
  if (rc) {
    fprintf(stderr, "smb3fs: cannot mount %s: %s\n", source, err[0] ? err : smb3_strerror(rc));
    return -1;
  }
  if (follow_dfs(fs, source)) return -1;
  struct smb3_stat st;
  rc = smb3_stat(fs->c, fs->o.path ? fs->o.path : "", &st);
  if (!rc && !st.is_dir) rc = SMB3_ENOTDIR;
  if (rc) {
    fprintf(stderr, "smb3fs: cannot mount %s: %s\n", source,
            smb3_last_error(fs->c)[0] ? smb3_last_error(fs->c) : smb3_strerror(rc));
    return -1;
  }
  /* Symbolic links: the server's own on a POSIX share, else Minshall+French symlink files unless
   * nomfsymlinks (mfsymlinks asks for them on a POSIX share too) */
  if (fs->mfsymlinks < 0) fs->mfsymlinks = !smb3_posix(fs->c);
  fs->rsize = smb3_rsize(fs->c);
  fs->wsize = smb3_wsize(fs->c);
  fs->leases = fs->cache != SMB3_CACHE_NONE; /* leases on 2.1+, oplocks on 2.0.2 (the library picks) */
  fs->it = itab_new(inode_dropped);          /* what an inode holds goes with it */
  if (!fs->it || itab_set_root(fs, &st)) {
    fprintf(stderr, "smb3fs: out of memory\n");
    return -1;
  }
  return 0;
}

/* ---- the session's I/O: FUSE_DIRECT_IO_ALLOW_MMAP ----
 * Large read-only opens are direct I/O (cache.c). Such a file can still be mmap'ed shared (through
 * the page cache) only if the INIT reply sets FUSE_DIRECT_IO_ALLOW_MMAP (kernel 6.6 and later);
 * otherwise mmap(MAP_SHARED) of it fails with ENODEV. libfuse 3.14 has no capability for that flag,
 * so the session's reads and writes of /dev/fuse are ours (fuse_session_custom_io): they are the
 * same system calls, and the INIT reply gets the flag when the kernel's INIT offered it. Only then
 * does cache.c use direct I/O for reading (fs->dio_mmap). */
#define FS_DIO_ALLOW_MMAP2 (1u << 4) /* FUSE_DIRECT_IO_ALLOW_MMAP (1 << 36), in flags2 (Linux 6.6) */
#define FS_INIT_OUT_FLAGS2 offsetof(struct fuse_init_out, flags2)
static _Atomic uint64_t init_unique; /* the kernel's INIT request, until its reply is sent */
static atomic_int init_offers_mmap;

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata) {
  ssize_t n = read(fd, buf, len);
  if (n <= 0) return n;
  struct fs_req r;
  int whole = !fs_req_parse(buf, (size_t)n, &r);
  files_request_read(userdata, whole ? &r : NULL);
  if (!whole) return n;
  pending_barrier(userdata, &r);
  struct fuse_init_in in;
  if (r.opcode == FUSE_INIT && r.arg_len >= offsetof(struct fuse_init_in, unused)) {
    memset(&in, 0, sizeof in);
    memcpy(&in, r.arg, r.arg_len < sizeof in ? r.arg_len : sizeof in);
    atomic_store(&init_offers_mmap, (in.flags & FUSE_INIT_EXT) && (in.flags2 & FS_DIO_ALLOW_MMAP2));
    atomic_store(&init_unique, r.unique);
  }
  return n;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata) {
  uint64_t want = atomic_load(&init_unique);
  struct fuse_out_header h;
  if (!want || count < 2 || iov[0].iov_len < sizeof h) return writev(fd, iov, count);
  memcpy(&h, iov[0].iov_base, sizeof h);
  if (h.unique != want) return writev(fd, iov, count);
  atomic_store(&init_unique, 0);
  uint8_t out[256];
  uint32_t flags2;
  if (h.error || count != 2 || iov[1].iov_len < FS_INIT_OUT_FLAGS2 + 4 || iov[1].iov_len > sizeof out ||
      !atomic_load(&init_offers_mmap))
    return writev(fd, iov, count);
  memcpy(out, iov[1].iov_base, iov[1].iov_len);
  struct fuse_init_out io;
  memcpy(&io, out, offsetof(struct fuse_init_out, flags2)); /* (the part before flags2) */
  if (!(io.flags & FUSE_INIT_EXT)) return writev(fd, iov, count);
  memcpy(&flags2, out + FS_INIT_OUT_FLAGS2, 4);
  flags2 |= FS_DIO_ALLOW_MMAP2;
  memcpy(out + FS_INIT_OUT_FLAGS2, &flags2, 4);
  struct iovec v[2] = {iov[0], {out, iov[1].iov_len}};
  ssize_t n = writev(fd, v, 2);
  if (n >= 0) __atomic_store_n(&((struct fs_ctx *)userdata)->dio_mmap, 1, __ATOMIC_RELEASE);
  return n;
}

/* fuse_reply_data's splice to /dev/fuse (read-ahead data that came by pipe, readahead.c) */
static ssize_t io_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len, unsigned flags,
                              void *userdata) {
  (void)userdata;
  return splice(fdin, offin, fdout, offout, len, flags);
}

static const struct fuse_custom_io fs_io = {
    .writev = io_writev, .read = io_read, .splice_send = io_splice_send};

static struct fuse_session *make_session(struct fs_ctx *fs, const struct fs_args *a, const char *argv0) {
  struct fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.init = ll_init;
  ops_ns_fill(&ops);
  ops_attr_fill(&ops);
  ops_file_fill(&ops);
  ops_range_fill(&ops);
  ops_dir_fill(&ops);
  ops_xattr_fill(&ops);
  ops_locks_fill(&ops, fs->nobrl);
  char *fargv[7], maxread[32];
  int fargc = 0;
  fargv[fargc++] = (char *)argv0;
  fargv[fargc++] = "-o";
  fargv[fargc++] = a->fuse_opts;
  /* read-ahead pipes capped (ra_pipes_init): FUSE reads no larger than libfuse's pipe can splice */
  if (fs->fuse_read_max && !strstr(a->fuse_opts, "max_read=")) {
    snprintf(maxread, sizeof maxread, "max_read=%u", fs->fuse_read_max);
    fargv[fargc++] = "-o";
    fargv[fargc++] = maxread;
  }
  if (a->debug) fargv[fargc++] = "-d";
  fargv[fargc] = NULL;
  struct fuse_args args = FUSE_ARGS_INIT(fargc, fargv);
  struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, fs);
  fuse_opt_free_args(&args);
  return se;
}

static int run_loop(struct fuse_session *se) {
  struct fuse_loop_config *cfg = fuse_loop_cfg_create();
  if (!cfg) return -1;
  fuse_loop_cfg_set_max_threads(cfg, FS_MAX_THREADS);
  fuse_loop_cfg_set_idle_threads(cfg, FS_IDLE_THREADS);
  int rc = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  return rc;
}

static int run(int argc, char **argv) {
  struct fs_ctx fs;
  struct fs_args a;
  char err[512] = "";
  memset(&fs, 0, sizeof fs);
  pthread_mutex_init(&fs.files_lock, NULL);
  pthread_cond_init(&fs.rel_cv, NULL);
  pthread_mutex_init(&fs.pipes_mu, NULL);
  pending_init(&fs);
  relist_init(&fs);
  pthread_mutex_init(&fs.locks_mu, NULL);
  budget_init(&fs.mem, BUDGET_DEFAULT_CAP);
  /* Read-ahead and write-back buffers are rsize/wsize (4 MiB) and live for one wire request.
   * Served by mmap (glibc's default above 128 KiB until its threshold adapts, and again after
   * every trim) each one is faulted in page by page and zeroed: measured, page faults took
   * about a third of the daemon's CPU on a sequential read. Keep them in the heap and keep
   * freed memory mapped up to about the read-ahead window plus the dirty limit. One arena: the
   * buffers are allocated and freed on the FUSE workers and the I/O thread, and glibc unmaps a
   * per-thread arena's heap as soon as it is all free, whatever the trim threshold (measured: 28 000
   * page faults per GiB read with per-thread arenas, 10 000 (the first window, once) with one). */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  mallopt(M_ARENA_MAX, 1);
  smb3_options_init(&fs.o);
  int st = fs_parse_args(argc, argv, &a, &fs.o, err, sizeof err);
  if (st) { /* 2: a usage error; 1: out of memory, a failure like any other */
    fprintf(stderr, "smb3fs: %s\n", st == 2 && err[0] ? err : "out of memory");
    smb3_options_free(&fs.o);
    return st;
  }
  if (a.remount) {
    st = fs_remount(&a);
    free(a.remount_live);
    free(a.remount_fixed);
    smb3_options_free(&fs.o);
    return st;
  }
  if (fs.o.credentials_exposed)
    fprintf(stderr, "smb3fs: warning: the credentials file is readable by group or others (chmod 600 it)\n");
  /* The daemon holds the password for the life of the mount (reconnects): no core dump, and no
   * ptrace or /proc/PID/mem by other processes of the same user. Inherited across the fork below. */
  if (fs.o.password && fs.o.password[0]) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  settings_init(&fs);
  fs.debug = a.debug;
  salt_init(&fs);
  int pipefd[2] = {-1, -1};
  if (!a.foreground) {
    if (pipe(pipefd)) return perror("smb3fs: pipe"), 1;
    pid_t pid = fork();
    if (pid < 0) return perror("smb3fs: fork"), 1;
    if (pid > 0) {
      close(pipefd[1]);
      free(a.fuse_opts);
      smb3_options_free(&fs.o);
      return wait_for_child(pipefd[0], pid);
    }
    close(pipefd[0]);
    setsid();
  }
  /* In the foreground (-f, -d) the daemon's messages (lost connection, a logon that fails
   * meanwhile, reconnected) also go to standard error, where the user is looking. */
  if (a.foreground || stderr_file()) openlog("smb3fs", LOG_PERROR, LOG_DAEMON);
  int wfd = pipefd[1], status = 1;
  struct fuse_session *se = NULL;
  if (connect_share(&fs, a.source)) goto out;
  ra_pipes_init(&fs);
  se = make_session(&fs, &a, argv[0]);
  if (!se) {
    fprintf(stderr, "smb3fs: cannot set up FUSE (bad mount options?)\n");
    goto out;
  }
  if (fuse_set_signal_handlers(se) || fuse_session_mount(se, a.mountpoint)) {
    fprintf(stderr, "smb3fs: cannot mount on %s\n", a.mountpoint);
    goto out;
  }
  if (fuse_session_custom_io(se, &fs_io, fuse_session_fd(se))) {
    if (a.debug)
      fprintf(stderr, "smb3fs: no custom session I/O: large files are read through the page cache\n");
  } else {
    fs.pend_barrier_on = 1; /* without it no create may be put off */
  }
  fs.se = se;
  fs.mountpoint = a.mountpoint;
  if (locks_start(&fs)) {
    fprintf(stderr, "smb3fs: out of memory\n");
    fuse_session_unmount(se);
    goto out;
  }
  if (notifier_start(&fs)) {
    fprintf(stderr, "smb3fs: cannot start the notifier thread\n");
    fuse_session_unmount(se);
    goto out;
  }
  smb3_set_break_handler(fs.c, notifier_break_cb, &fs);
  if (fs_dfs_init(&fs, notifier_break_cb)) /* without it a DFS link below the mount stays EOPNOTSUPP */
    fprintf(stderr, "smb3fs: out of memory for DFS links\n");
  if (reconnect_start(&fs)) {
    fprintf(stderr, "smb3fs: cannot start the reconnect thread\n");
    fuse_session_unmount(se);
    notifier_stop(&fs);
    goto out;
  }
  if (closeq_start(&fs)) /* without it every handle is closed at once: slower, not wrong */
    fprintf(stderr, "smb3fs: cannot start the close thread (each file is closed on its own)\n");
  else if (oa_start(&fs)) /* (needs the close queue: its drains wait for the handles opened ahead) */
    fprintf(stderr, "smb3fs: out of memory for opens ahead (each file is opened when asked for)\n");
  smb3_set_close_riders(fs.c, closeq_riders, &fs); /* (the reconnect thread moves it to a new connection) */
  if (memtrim_start(&fs)) /* without it the daemon keeps its peak memory: not a reason to fail */
    fprintf(stderr, "smb3fs: cannot start the memory trim thread (memory stays at its peak)\n");
  report(&wfd, 0);
  if (!a.foreground) detach_stdio();
  int loop = run_loop(se);
  /* > 0: the signal that stopped it (SIGTERM, SIGINT, SIGHUP); < 0: /dev/fuse failed */
  if (loop > 0) syslog(LOG_NOTICE, "stopped by signal %d (%s)", loop, strsignal(loop));
  if (loop < 0) syslog(LOG_ERR, "the FUSE session failed: %s", strerror(-loop));
  status = loop ? 1 : 0;
  oa_stop(&fs);     /* no open comes any more: close what was opened ahead */
  closeq_stop(&fs); /* no release comes any more: send what waits */
  fuse_session_unmount(se);
  locks_stop(&fs);     /* before the reconnect thread: a waiting lock may wait for a reopen */
  reconnect_stop(&fs); /* fs.c stays as it is from here on */
  fs_dfs_free(&fs);    /* the links' connections (their callbacks still reply, and may ask the notifier) */
  smb3_set_break_handler(fs.c, NULL, NULL);
  smb3_set_close_riders(fs.c, NULL, NULL);
  notifier_stop(&fs);
out:
  locks_stop(&fs); /* a start that failed half-way (done already otherwise) */
  report(&wfd, 1);
  /* Disconnect before destroying the session: it completes whatever is still in flight (each
   * callback replies to its request) while the session is still valid. */
  fs_dfs_free(&fs); /* (a start that failed half-way) */
  smb3_disconnect(fs.c);
  memtrim_stop(&fs); /* after the last callback: completions release budget */
  oa_free(&fs);      /* (the disconnect ended every open ahead) */
  closeq_free(&fs);
  reconnect_free(&fs);
  relist_free(&fs); /* (its listings ended with the connection) */
  if (se) {
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
  }
  itab_free(fs.it);
  ra_pipes_free(&fs);
  free(a.fuse_opts);
  smb3_options_free(&fs.o);
  return status;
}

int main(int argc, char **argv) {
  /* The daemon runs as long as the mount: keep a password given on the command line out of ps. */
  char **args = smb3_argv_hide_secrets(argc, argv);
  if (!args) {
    fprintf(stderr, "smb3fs: out of memory\n");
    return 1;
  }
  int rc = run(argc, args);
  smb3_argv_free(args);
  return rc;
}
