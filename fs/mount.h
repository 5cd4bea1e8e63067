/* mount.h - the mount's context (struct fs_ctx, the FUSE userdata) and its counters. Types only.
 *
 * Threads (see docs/ARCHITECTURE.md, "fs/"):
 *   - FUSE workers (fuse_session_loop_mt, a few threads) run the request handlers. A handler
 *     validates, submits to a libsmb3 *_async call and returns; it never waits for the server,
 *     except the byte-range lock handlers (locks.c), which make synchronous calls, and a worker
 *     whose request must wait for put-off CREATEs (pending.c: in its read of /dev/fuse, before
 *     libfuse sees the request).
 *   - libsmb3's I/O thread runs every completion callback; callbacks call fuse_reply_*.
 *   - The notifier thread (notifier.c) handles lease breaks: flush, invalidate the kernel's page
 *     cache, acknowledge. It is the only thread that calls fuse_lowlevel_notify_*.
 *   - The reconnect thread (reconnect.c) logs on again after a lost connection and resumes the
 *     operations parked meanwhile (conn.c); the lock waiter thread (locks.c) retries F_SETLKW.
 *
 * Locks, outermost first: inode table lock (inode.c) > inode->lock > file->ra.lock, and
 * fs->pend_mu (pending.c) > inode->lock (pend_mu is never taken with another lock held). Nobody
 * holds a lock across a libsmb3 submission whose callback needs that lock (callbacks never run
 * inside the submitting call), and fuse_reply_* is called with at most file->ra.lock held. */
#ifndef SMB3FS_MOUNT_H
#define SMB3FS_MOUNT_H

#include "budget.h"
#include "util.h"
#include <stdatomic.h>
#include <sys/stat.h>

struct relist_job;

/* ---- per-mount counters (stats.c) ---- */
struct fs_counters {
  atomic_uint_fast64_t ra_hits;              /* FUSE reads served from read-ahead buffers */
  atomic_uint_fast64_t ra_misses;            /* FUSE reads that had to wait for / bypass read-ahead */
  atomic_uint_fast64_t ra_wire_reads;        /* wire READs issued by read-ahead */
  atomic_uint_fast64_t direct_reads;         /* wire READs issued for random reads */
  atomic_uint_fast64_t ra_piped;             /* read-ahead READs whose data came by pipe (readahead.c) */
  atomic_uint_fast64_t wb_writes;            /* FUSE writes absorbed by write-back */
  atomic_uint_fast64_t wb_wire_writes;       /* wire WRITEs issued by write-back */
  atomic_uint_fast64_t wb_throttled;         /* FUSE writes whose reply waited for the dirty bound */
  atomic_uint_fast64_t wb_errors;            /* failed wire WRITEs */
  atomic_uint_fast64_t lookups_known_absent; /* negative lookups answered from a directory we made */
  atomic_uint_fast64_t closes_batched;       /* read-only handles closed several to a compound (closeq.c) */
  atomic_uint_fast64_t
      creates_deferred;            /* creates answered at once, their CREATE sent with the data (pending.c) */
  atomic_uint_fast64_t open_reads; /* opens that read the file's first bytes in their compound */
  atomic_uint_fast64_t opens_ahead;      /* small files opened ahead of a reader (openahead.c) */
  atomic_uint_fast64_t opens_ahead_used; /* ... and taken by the reader's open */
  atomic_uint_fast64_t getattrs_held;    /* getattr answered from data and times held under a write lease */
  atomic_uint_fast64_t
      setattrs_unchanged;              /* chown/chmod that change nothing, answered locally (ops_attr.c) */
  atomic_uint_fast64_t times_deferred; /* setattr of times sent with the write-back (wb_set_times) */
  atomic_uint_fast64_t lookups_listed; /* lookups answered from a recent listing (relist.c) */
  atomic_uint_fast64_t relists;        /* listings asked for to answer lookups (relist.c) */
  atomic_uint_fast64_t listings_ahead; /* listings ahead of a tree walk, done or failed (relist.c) */
  atomic_uint_fast64_t listings_kept;  /* directory listings served again without a round trip (dircache.c) */
  atomic_uint_fast64_t direct_wr_opens;  /* cache=strict opens that write with direct I/O */
  atomic_uint_fast64_t direct_rd_opens;  /* cache=strict large read-only opens read with direct I/O */
  atomic_uint_fast64_t lease_breaks;     /* lease breaks handled */
  atomic_uint_fast64_t invalidations;    /* kernel page-cache invalidations sent */
  atomic_uint_fast64_t outages;          /* lost connections the reconnect thread noticed (reconnect.c) */
  atomic_uint_fast64_t reconnects;       /* new connections after a lost one (reconnect.c) */
  atomic_uint_fast64_t reopens;          /* open files reopened on a new connection */
  atomic_uint_fast64_t relocks;          /* byte-range locks taken again on a new connection (locks.c) */
  atomic_uint_fast64_t relocks_lost;     /* ... and refused: another client took the range meanwhile */
  atomic_uint_fast64_t mem_trims;        /* heap trims after the data memory went idle (memtrim.c) */
  atomic_uint_fast64_t dir_leases;       /* directory leases granted with a listing (dirlease.c) */
  atomic_uint_fast64_t dir_lease_breaks; /* ... and broken by the server */
};

struct fs_inode;
struct fs_file;
struct fs_lock;
struct piece;
struct lock_waits;
struct inode_table;
struct notifier;
struct reconn;
struct conn;
struct memtrim;
struct closeq;
struct openahead;
struct fs_dfs;
struct fs_pending;

/* One per mount: the FUSE userdata. Immutable after init except where noted. */
struct fs_ctx {
  smb3_client *c; /* the current connection: read it with fs_conn() (conn.c; reconnect.c replaces it) */
  const char *mountpoint;
  int ra_tuned; /* the kernel's read-ahead was raised (ll_open; atomic) */
  struct smb3_options o;
  struct fuse_session *se;
  uint32_t rsize, wsize;
  struct budget mem;     /* read-ahead buffers and write-back extents of all files (budget.h) */
  struct memtrim *trim;  /* memtrim.c */
  struct closeq *closeq; /* closeq.c */
  struct openahead *oa;  /* openahead.c */
  uid_t uid; /* uid=/gid=: every file's owner, or on a POSIX share those the server does not name */
  gid_t gid;
  int forceuid, forcegid; /* uid=/gid= even where the server names the owner (POSIX share) */
  int chown_refused;      /* the server refused to give a new entry its creator's ids (owner.c; atomic) */
  mode_t file_mode, dir_mode;
  double actimeo;
  int cache; /* enum smb3_cache_mode */
  /* directio_min=: cache=strict read-only opens of files this large read with direct I/O (cache.c);
   * only once the kernel agreed that such files may still be mmap'ed shared (dio_mmap, main.c) */
  uint64_t directio_min;
  int dio_mmap;
  int ro;
  int mfsymlinks; /* symlinks as Minshall+French symlink files (symlink.c) */
  int lazyexcl;   /* O_EXCL creates may be put off too (pending.c) */
  int dirleases;  /* listings ask for directory leases (dirlease.h) */
  int debug;
  int leases;   /* cache != none: opens ask for a lease (2.1+) or an oplock (2.0.2) */
  int wb_cache; /* cache=loose: the kernel's write-back cache is on (set at FUSE init) */
  uint8_t lease_salt[8];
  struct inode_table *it;
  struct notifier *nt;
  struct conn *conn;  /* connection state shared with the reconnect thread (conn.c) */
  struct reconn *rc;  /* the reconnect thread (reconnect.c) */
  struct fs_dfs *dfs; /* DFS links below the mount and their connections (dfs.c) */
  pthread_mutex_t files_lock;
  /* RELEASEs read from /dev/fuse and the requests after them (file.h: files_request_read) */
  pthread_cond_t rel_cv;         /* (with files_lock) a RELEASE read earlier has reached its CLOSE */
  uint64_t rel_read;             /* RELEASEs read so far (atomic) */
  uint64_t rel_undone;           /* of them, those not at their CLOSE yet (atomic; 0: none to wait for) */
  pthread_mutex_t locks_mu;      /* one byte-range lock change at a time (locks.c) */
  int nobrl;                     /* locks stay in the kernel, on this machine only */
  struct lock_waits *lock_waits; /* F_SETLKW / flock waits (locks.c) */
  struct fs_file *files;         /* every open file (reconnect.c reopens them) */
  struct fs_counters ctr;
  atomic_uint_fast64_t ns_gen; /* moved by every namespace change of the mount (dircache.h) */
  atomic_int ahead_inflight;   /* listings ahead of a tree walk in flight (relist.c) */
  /* listings ahead of directories the mount has no inode of yet, by parent and name (relist.c) */
  pthread_mutex_t orphans_mu;
  struct relist_job *orphans;
  atomic_int norphans;
  atomic_uint_fast64_t ns_all; /* ns_gen at the last change that may touch any directory (dircache.h) */
  /* creates put off (pending.c) */
  pthread_mutex_t pend_mu;
  pthread_cond_t pend_cv;         /* a pending CREATE was answered */
  struct fs_pending *pend;        /* those not yet answered */
  atomic_int npending;            /* how many: the barrier's test without the lock */
  uint64_t pend_seq;              /* pending_start's order */
  int pend_barrier_on;            /* the session's reads are ours (main.c): pending_barrier runs */
  struct timespec_smb3 clock_srv; /* the server's clock when last seen (fs_clock_note), under pend_mu */
  double clock_loc;
  int clock_known;
  /* empty pipes for read-ahead data spliced from the socket (readahead.c) */
  pthread_mutex_t pipes_mu;
  int (*pipes)[2];
  int npipes;
  uint32_t pipe_cap; /* each read-ahead pipe: rsize, or pipe-max-size below it (several a buffer); 0: no pipes
                      * (a session that signs or seals, or no pipe of 256 KiB or more) */
  uint32_t fuse_read_max; /* pipes capped below rsize: the FUSE read size libfuse's own pipe can take */
};

#endif
