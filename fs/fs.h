/* fs.h - internals of smb3fs, the FUSE file system over libsmb3.
 *
 * Threads (see docs/ARCHITECTURE.md, "fs/"):
 *   - FUSE workers (fuse_session_loop_mt, a few threads) run the request handlers. A handler
 *     validates, submits to a libsmb3 *_async call and returns; it never waits for the server,
 *     except opendir/readdir/releasedir, which use the synchronous directory iterator.
 *   - libsmb3's I/O thread runs every completion callback; callbacks call fuse_reply_*.
 *   - The notifier thread (cache.c) handles lease breaks: flush, invalidate the kernel's page
 *     cache, acknowledge. It is the only thread that calls fuse_lowlevel_notify_*.
 *
 * Locks, outermost first: inode table lock (inode.c) > inode->lock > file->ra.lock. Nobody
 * holds a lock across a libsmb3 submission whose callback needs that lock (callbacks never run
 * inside the submitting call), and fuse_reply_* is called with at most file->ra.lock held. */
#ifndef SMB3FS_FS_H
#define SMB3FS_FS_H

#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include "extents.h"
#include "smb3/smb3.h"

/* ---- per-mount counters (stats.c) ---- */
struct fs_counters {
  atomic_uint_fast64_t ra_hits;       /* FUSE reads served from read-ahead buffers */
  atomic_uint_fast64_t ra_misses;     /* FUSE reads that had to wait for / bypass read-ahead */
  atomic_uint_fast64_t ra_wire_reads; /* wire READs issued by read-ahead */
  atomic_uint_fast64_t direct_reads;  /* wire READs issued for random reads */
  atomic_uint_fast64_t wb_writes;     /* FUSE writes absorbed by write-back */
  atomic_uint_fast64_t wb_wire_writes;/* wire WRITEs issued by write-back */
  atomic_uint_fast64_t wb_throttled;  /* FUSE writes whose reply waited for the dirty bound */
  atomic_uint_fast64_t wb_errors;     /* failed wire WRITEs */
  atomic_uint_fast64_t direct_wr_opens; /* cache=strict opens that write with direct I/O */
  atomic_uint_fast64_t lease_breaks;  /* lease breaks handled */
  atomic_uint_fast64_t invalidations; /* kernel page-cache invalidations sent */
  atomic_uint_fast64_t reconnects;    /* new connections after a lost one (reconnect.c) */
  atomic_uint_fast64_t reopens;       /* open files reopened on a new connection */
  atomic_uint_fast64_t relocks;       /* byte-range locks taken again on a new connection (locks.c) */
  atomic_uint_fast64_t relocks_lost;  /* ... and refused: another client took the range meanwhile */
};

struct fs_inode;
struct fs_file;
struct fs_lock;
struct piece;
struct lock_waits;
struct inode_table;
struct notifier;
struct reconn;

/* One per mount: the FUSE userdata. Immutable after init except where noted. */
struct fs_ctx {
  smb3_client *c; /* the current connection: read it with fs_conn() (reconnect.c replaces it) */
  const char *mountpoint;
  int ra_tuned;             /* fs_tune_readahead() ran (atomic) */
  struct smb3_options o;
  struct fuse_session *se;
  uint32_t rsize, wsize;
  uid_t uid;
  gid_t gid;
  mode_t file_mode, dir_mode;
  double actimeo;
  int cache; /* enum smb3_cache_mode */
  int ro;
  int mfsymlinks; /* symlinks as Minshall+French symlink files (symlink.c) */
  int debug;
  int leases; /* cache != none: opens ask for a lease (2.1+) or an oplock (2.0.2) */
  int wb_cache; /* cache=loose: the kernel's write-back cache is on (set at FUSE init) */
  uint8_t lease_salt[8];
  struct inode_table *it;
  struct notifier *nt;
  struct reconn *rc;
  pthread_mutex_t files_lock;
  pthread_mutex_t locks_mu; /* one byte-range lock change at a time (locks.c) */
  int nobrl;                /* locks stay in the kernel, on this machine only */
  struct lock_waits *lock_waits; /* F_SETLKW / flock waits (locks.c) */
  struct fs_file *files; /* every open file (reconnect.c reopens them) */
  struct fs_counters ctr;
};

/* ---- write-back state of one inode (writeback.c); guarded by inode->lock ---- */
struct wb_chunk;
struct wb_waiter;
struct wb_parked;
struct wb_state {
  struct extent_set open;    /* extents being filled (not yet on the wire), by offset */
  struct wb_chunk *wire;     /* on the wire */
  struct wb_chunk *blocked;  /* waiting for an overlapping extent on the wire */
  size_t inflight_bytes;     /* wire + blocked bytes */
  int inflight;              /* wire + blocked extents */
  uint64_t dirty_end;        /* end of the data not yet confirmed by the server */
  int err;                   /* first failed wire WRITE (negative errno), until reported */
  struct wb_waiter *waiters; /* flushes waiting for inflight == 0 */
  struct wb_parked *parked;  /* FUSE writes whose reply waits for the dirty bound */
};

/* ---- inodes (inode.c) ---- */
struct fs_inode {
  /* guarded by the table lock */
  uint64_t nodeid;          /* what the kernel knows it by (FUSE_ROOT_ID for the root) */
  uint64_t generation;
  uint64_t srv_id;          /* the server's file id (IndexNumber): st_ino */
  struct fs_inode *parent;  /* holds a reference; NULL for the root and when detached */
  char *name;               /* NULL when detached (unlinked or replaced) */
  uint64_t nlookup;         /* kernel lookup count */
  uint32_t refs;            /* internal references: children, open files, operations */
  int hashed_id;            /* in the srv_id hash */
  struct fs_inode *id_next, *name_next, *node_next;
  /* guarded by lock */
  pthread_mutex_t lock;
  struct smb3_stat st;
  double attr_expiry;       /* monotonic seconds; 0 = invalid */
  double attr_lookup;       /* when a LOOKUP reply carried them (one GETATTR may use them); 0 = no */
  int nopen;                /* open files */
  int opening;              /* opens of this inode in flight (ops_file.c) */
  int unlinked;             /* renamed to a hidden name and delete-pending (ops_ns.c) */
  uint32_t lease;           /* SMB3_LEASE_* currently held by the key */
  uint8_t key[16];          /* lease key, shared by every open of this inode */
  uint64_t data_gen;        /* bumped by every local change of the data (read-ahead coherence) */
  struct timespec_smb3 cached_mtime; /* version of the data in the kernel page cache */
  uint64_t cached_size;
  int cached_valid;
  int direct_writers; /* cache=strict: open files written with direct I/O (cache_open_mode) */
  /* mfsymlinks (symlink.c): whether this version (size, mtime) of the file is a symlink file */
  int lnk;          /* 1 = a link to lnk_target, -1 = not one, 0 = not read */
  mode_t kern_ifmt; /* S_IFMT the kernel's inode was given (first entry), never changed */
  char *lnk_target;
  uint64_t lnk_size;
  struct timespec_smb3 lnk_mtime;
  /* cache=loose only (the kernel's write-back cache keeps its own size and mtime of a regular file
   * and ignores ours): the size and mtime the kernel's inode was made with or last agreed with us
   * on, and whether this mount changed the file since (open for writing, setattr). inode_link_gen
   * gives a file that changed on the server behind the kernel's back a new inode. */
  uint64_t kern_size;
  struct timespec_smb3 kern_mtime;
  int kern_valid;
  double kern_at;           /* when the server was asked for that view (fs_now()) */
  int local_mod;
  struct wb_state wb;
  struct fs_lock *locks; /* byte-range locks held (locks.c); changed with fs->locks_mu held too */
  struct piece *srv_locks; /* ... and what the server holds for them (locks.c) */
  int lock_changing;     /* a change (locks.c apply) has some of them out of the list */
};

struct inode_table *itab_new(void);
void itab_free(struct inode_table *t);
/* The root inode (nodeid FUSE_ROOT_ID) with the server's attributes. */
int itab_set_root(struct fs_ctx *fs, const struct smb3_stat *st);
/* Find by nodeid; returns a referenced inode (inode_put it) or NULL. */
struct fs_inode *inode_get(struct fs_ctx *fs, fuse_ino_t nodeid);
void inode_ref(struct fs_ctx *fs, struct fs_inode *in);
void inode_put(struct fs_ctx *fs, struct fs_inode *in);
/* The child `name` of parent that the server reported with attributes st: finds the inode by
 * server id (moving it to parent/name if it was elsewhere) or creates it; counts one kernel lookup
 * and stores st. Returns a referenced inode or NULL (ENOMEM). asked: when the server was asked
 * (fs_now()), to tell an older answer from a newer one under cache=loose. */
struct fs_inode *inode_link(struct fs_ctx *fs, struct fs_inode *parent, const char *name, const struct smb3_stat *st,
                            double asked);
/* The same, giving a newly created inode the generation gen (from itab_new_gen(), so that its
 * lease key was known before the file existed). */
struct fs_inode *inode_link_gen(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                const struct smb3_stat *st, uint64_t gen, double asked);
/* cache=loose (in->lock held): the kernel's inode holds st's size and mtime, as the server said
 * when asked at `asked` (see kernel_view_stale() in inode.c). */
void inode_kernel_view_set(struct fs_inode *in, const struct smb3_stat *st, double asked);
uint64_t itab_new_gen(struct fs_ctx *fs);
/* fn(in, arg) for every inode, each referenced and with no lock held. */
void itab_each(struct fs_ctx *fs, void (*fn)(struct fs_inode *, void *), void *arg);
/* Kernel forget. */
void inode_forget(struct fs_ctx *fs, fuse_ino_t nodeid, uint64_t n);
/* Path relative to the share ("" for the root), malloc'd; NULL when detached or ENOMEM. */
char *inode_path(struct fs_ctx *fs, struct fs_inode *in);
/* parent's path joined with name, malloc'd; NULL on ENOMEM/detached. */
char *inode_child_path(struct fs_ctx *fs, struct fs_inode *parent, const char *name);
/* The known inode at parent/name (referenced) or NULL. */
struct fs_inode *inode_find_child(struct fs_ctx *fs, struct fs_inode *parent, const char *name);
/* After a rename on the server: move in to newparent/newname. */
void inode_move(struct fs_ctx *fs, struct fs_inode *in, struct fs_inode *newparent, const char *newname);
/* The name is gone on the server (unlinked/replaced): drop it from the name and id indexes. */
void inode_detach(struct fs_ctx *fs, struct fs_inode *in);
/* Find by lease key (cache.c): referenced inode or NULL. */
struct fs_inode *inode_by_key(struct fs_ctx *fs, const uint8_t key[16]);

/* Attributes: cache st in `in` for actimeo, and convert to struct stat. */
void inode_set_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st);
void fs_fill_stat(const struct fs_ctx *fs, const struct smb3_stat *st, struct stat *out);
/* A FUSE entry for in (attributes from its cache). Returns 0, or -1 if the file now has another
 * type than the kernel's inode was made with (a symlink file written or replaced: a FUSE inode
 * must never change type; the caller gives the name a new inode). */
int fs_fill_entry(struct fs_ctx *fs, struct fs_inode *in, struct fuse_entry_param *e);
/* Is st the version of the file that (size, mtime) recorded? What the page cache (cache.c), the
 * kernel's view under cache=loose (inode.c) and symlink files (symlink.c) are keyed on. */
static inline int fs_same_version(uint64_t size, struct timespec_smb3 mtime, const struct smb3_stat *st) {
  return size == st->size && mtime.sec == st->mtime.sec && mtime.nsec == st->mtime.nsec;
}
/* in->lock held: would attributes of type ifmt contradict the kernel's inode? */
static inline int fs_type_changed(const struct fs_inode *in, mode_t ifmt) {
  return in->kern_ifmt && in->kern_ifmt != ifmt;
}
double fs_now(void);
/* Raise the kernel's read-ahead for this mount to FS_KERNEL_RA(fs) (main.c); once, after INIT. */
void fs_tune_readahead(struct fs_ctx *fs);
#define FS_KERNEL_RA(fs) ((fs)->rsize > (1u << 20) ? (fs)->rsize : (1u << 20))
/* Seconds the kernel and we may keep an inode's attributes: actimeo, except for the share root,
 * whose attributes are kept at least FS_ROOT_ATTR_TTL: every path walk checks the root's
 * permissions (default_permissions), and what decides them (uid, gid, dir_mode) comes from the
 * mount options, not from the server; with actimeo=0 each stat() would otherwise cost a round
 * trip for the root on top of the file's own. */
#define FS_ROOT_ATTR_TTL 1.0
double fs_attr_ttl(const struct fs_ctx *fs, const struct fs_inode *in);

/* ---- read-ahead state of one open file (readahead.c) ---- */
struct ra_buf;
struct ra_wait;
struct ra_state {
  pthread_mutex_t lock;
  uint64_t next_off;     /* where a sequential reader reads next */
  int started;           /* a stream was started on this file */
  unsigned window;       /* buffers to keep ahead (grows while sequential) */
  struct ra_buf *bufs;   /* contiguous, ascending */
  uint64_t gen;          /* inode data_gen the buffers were read at */
  int inflight;          /* wire READs of this file not yet completed */
  struct ra_wait *waiters;
  void (*drained)(struct fs_file *); /* set by release: run when inflight drops to 0 */
};

/* ---- open files ---- */
#define FS_STALE_MAX 4
struct fs_file {
  struct fs_ctx *fs;
  struct fs_inode *in; /* referenced */
  smb3_file *f;        /* read with fh_handle(): a reconnect puts a reopened handle here */
  int flags;
  int direct;
  int direct_wr; /* counted in in->direct_writers (cache_open_mode) */
  struct ra_state ra;
  fuse_req_t release_req;
  double close_asked; /* cache=loose: when the closing CLOSE (with attributes) was sent */
  /* guarded by in->lock */
  int refs;            /* the open + a reopen in flight */
  int released;        /* release began: a reopen that completes now closes what it got */
  smb3_file *stale[FS_STALE_MAX]; /* handles of lost connections, freed at release */
  int nstale;
  int reopening;       /* reopens in flight (two losses close together: two) */
  struct fh_waiter *reopen_waiters; /* fh_when_current() callers waiting for it */
  /* guarded by fs->files_lock */
  struct fs_file *file_next, *file_prev;
};
/* The file's current server handle (may belong to a lost connection until reopened). */
static inline smb3_file *fh_handle(struct fs_file *fh) { return __atomic_load_n(&fh->f, __ATOMIC_ACQUIRE); }
/* After a reconnect (reconnect thread): every open file is marked as being reopened (before the
 * new connection is published, so that nothing sees a file between the two), then opened again
 * on the new connection. */
struct reopen_list;
struct reopen_list *files_reopen_prepare(struct fs_ctx *fs);
void files_reopen(struct fs_ctx *fs, struct reopen_list *l);
/* fn(arg, ok) once fh's handle is one of the current connection: at once, or when its reopen
 * completes; ok = 0 if it is not and will not be (the reopen failed or none was possible). */
void fh_when_current(struct fs_file *fh, void (*fn)(void *arg, int ok), void *arg);
/* Drop a reference to fh taken as fh->refs++ under fh->in->lock (write-back extents hold one);
 * without that lock held. */
void fh_unref(struct fs_file *fh);

/* readahead.c */
void ra_init(struct fs_file *fh);
void ra_read(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off);
/* Drop buffers; calls done(fh) once no wire READ of fh is outstanding (maybe right away). */
void ra_shutdown(struct fs_file *fh, void (*done)(struct fs_file *));

/* writeback.c */
typedef void (*wb_done_fn)(int err, void *arg); /* err: 0 or negative errno */
void wb_write(struct fs_file *fh, fuse_req_t req, const char *buf, size_t size, uint64_t off);
/* Send everything dirty of in and call done once it is on the server. consume: report (and
 * clear) a pending write error, as fsync/flush/close do; otherwise only report it. done may run
 * before wb_flush returns (nothing to do) or later on the I/O thread. */
void wb_flush(struct fs_ctx *fs, struct fs_inode *in, int consume, wb_done_fn done, void *arg);
int wb_dirty(struct fs_inode *in); /* caller holds in->lock */
/* Pending size including data not yet on the server (caller holds in->lock). */
uint64_t wb_end(struct fs_inode *in);

/* cache.c */
/* Set *flag and wake the thread waiting on cv (the notifier's and the reconnect thread's stop/kick). */
static inline void fs_poke(pthread_mutex_t *lock, pthread_cond_t *cv, int *flag) {
  pthread_mutex_lock(lock);
  *flag = 1;
  pthread_cond_signal(cv);
  pthread_mutex_unlock(lock);
}

/* ---- reconnect.c ---- */
smb3_client *fs_conn(struct fs_ctx *fs);
/* A library error that means the connection is gone (SMB3_ECLOSED, SMB3_ETIMEDOUT...). */
int fs_conn_error(int rc);
/* An operation saw the connection fail: look now rather than at the next tick. */
void reconnect_kick(struct fs_ctx *fs);
/* An operation that failed because the connection `seen` was lost waits for the next one:
 * resume(arg, 1) runs once the mount has another connection (at once if it already has, else on
 * the reconnect thread), or resume(arg, 0) when none came within FS_PARK_SECONDS of the outage's
 * start or the mount is ending. Returns -1 when it cannot wait (the outage is older than that, or
 * the mount is ending: the caller then fails the operation itself). */
#define FS_PARK_SECONDS 15.0
int fs_park(struct fs_ctx *fs, smb3_client *seen, void (*resume)(void *arg, int ok), void *arg);
/* What an operation that may be sent once more after a lost connection keeps. */
struct fs_retry {
  smb3_client *conn; /* the connection it was (last) sent on; NULL: never sent, never again */
  int again;         /* parked once already */
  int rc;            /* the lost connection's error, to answer if no new connection comes */
};
/* rc from an operation: if it means the connection is lost, kick the reconnect thread and, the
 * first time for r, park the operation (fs_park on r->conn). 1 when parked (resume runs later),
 * 0 when the caller finishes the operation with rc itself. */
int fs_park_once(struct fs_ctx *fs, struct fs_retry *r, int rc, void (*resume)(void *arg, int ok), void *arg);
int reconnect_start(struct fs_ctx *fs);
/* Stops the thread (fs_park refuses from then on); reconnect_free once fs->c is disconnected. */
void reconnect_stop(struct fs_ctx *fs);
void reconnect_free(struct fs_ctx *fs);

int notifier_start(struct fs_ctx *fs);
void notifier_stop(struct fs_ctx *fs);
void cache_break_cb(const uint8_t key[16], uint32_t new_state, int ack_required, void *arg);
/* Drop the kernel's pages of an inode, later, on the notifier thread (an invalidation can wait for
 * reads in progress, which must not wait for the caller). */
void cache_invalidate_later(struct fs_ctx *fs, uint64_t nodeid);
/* The same, then then(arg) on the notifier thread (at once when it cannot be queued). */
void cache_invalidate_then(struct fs_ctx *fs, uint64_t nodeid, void (*then)(void *), void *arg);
/* Wait until the notifier has handled everything queued so far, at most timeout seconds. */
void cache_drain(struct fs_ctx *fs, double timeout);
/* in->lock held: what the mount cached of in is not to be trusted any more: read-ahead buffers
 * (data_gen), the next open's page cache (cached_valid), the attributes. The kernel's pages of
 * open files are the caller's to drop (cache_invalidate_later). */
void cache_forget(struct fs_inode *in);
void cache_make_key(struct fs_ctx *fs, uint64_t generation, uint8_t key[16]);
uint32_t cache_lease_want(const struct fs_ctx *fs, int flags);
/* Decide direct_io / keep_cache for a new open (caller holds in->lock; in->nopen counts it).
 * Returns 1 if the open is a direct writer the caller must count in in->direct_writers until
 * its release. */
int cache_open_mode(struct fs_ctx *fs, struct fs_inode *in, uint32_t lease, struct fuse_file_info *fi);

/* symlink.c (mfsymlinks) */
#define MFSL_SIZE SMB3_MFSYMLINK_SIZE
/* Could the server's file st be a symlink file (mfsymlinks, regular, MFSL_SIZE bytes)? */
int mfsl_candidate(const struct fs_ctx *fs, const struct smb3_stat *st);
/* in->lock held: make a (stat of a) link of it if this version is one. */
void mfsl_fill(const struct fs_inode *in, struct stat *a);
/* The link's target (malloc'd), or NULL if in is not a link. */
char *mfsl_target(struct fs_inode *in);
/* then(arg, 0) once it is known whether in (its current attributes) is a link: at once when it
 * cannot be one or is known, else after reading the file (on the I/O thread); then(arg, rc < 0)
 * if the file could not be read for a reason that says nothing about it (a lost connection). */
void mfsl_check(struct fs_ctx *fs, struct fs_inode *in, void (*then)(void *arg, int rc), void *arg);
/* in->lock held: in is the link to target that ln -s just wrote, in this version (0 or -ENOMEM). */
int mfsl_set(struct fs_inode *in, const char *target);
/* in->lock of both held: to (a new inode of the same file) learns what from knows. */
int mfsl_copy(struct fs_inode *to, const struct fs_inode *from);
/* Listings: is the entry name of dir with attributes st a link, known for that version? */
int mfsl_entry_known(struct fs_ctx *fs, struct fs_inode *dir, const char *name, const struct smb3_stat *st);

/* stats.c */
char *stats_json(struct fs_ctx *fs);

/* ops_*.c: the FUSE operation table */
void ops_ns_fill(struct fuse_lowlevel_ops *o);
void ops_file_fill(struct fuse_lowlevel_ops *o);
void ops_dir_fill(struct fuse_lowlevel_ops *o);
void ops_xattr_fill(struct fuse_lowlevel_ops *o); /* xattr.c */
/* locks.c: fcntl/flock locks as SMB2 byte-range locks (none with nobrl) */
void ops_locks_fill(struct fuse_lowlevel_ops *o, int nobrl);
void locks_flush(struct fs_file *fh, uint64_t owner); /* close(2): the owner's POSIX locks go */
void locks_release(struct fs_file *fh);               /* release: fh's locks go with its CLOSE */
void locks_reacquire(struct fs_file *fh);             /* a reopen gave fh a new handle */
void locks_free(struct fs_inode *in);
int locks_start(struct fs_ctx *fs); /* before the session runs */
void locks_stop(struct fs_ctx *fs);  /* after it: pending waits end with EINTR */
/* The errno for an SMB3_E* code (EIO for one with no closer errno), 0 for 0. */
static inline int fs_errno(int rc) { return rc ? (smb3_err_to_errno(rc) ?: EIO) : 0; }
/* Reply to a FUSE request with an SMB3_E* code. */
void fs_reply_smb_err(fuse_req_t req, int rc);
/* Reject names the server can't represent or we never pass on ('/', '\\', NUL, ".", ".."). */
int fs_name_ok(const char *name);
/* Names of unlinked-but-open files (hidden from listings). */
#define FS_HIDDEN_PREFIX ".smb3fs-unlinked-"

/* mount options split (opts.c) */
struct fs_args {
  const char *source;     /* //HOST/SHARE[/path] or smb://... */
  const char *mountpoint;
  int foreground, debug;
  char *fuse_opts;        /* comma-separated options for libfuse (malloc'd) */
};
int fs_parse_args(int argc, char **argv, struct fs_args *a, struct smb3_options *o, char *err, size_t errlen);

#endif
