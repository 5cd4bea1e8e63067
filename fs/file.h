/* file.h - open files (file.c): struct fs_file, its references, its handle and the reopen after
 * a reconnect. */
#ifndef SMB3FS_FILE_H
#define SMB3FS_FILE_H

#include "inode.h"

/* ---- read-ahead state of one open file: readahead.c is its mechanism (ra_init makes it);
 * here because every open file holds one. ---- */
struct ra_buf;
struct ra_wait;
struct ra_state {
  pthread_mutex_t lock;
  uint64_t next_off;   /* where a sequential reader reads next */
  int started;         /* a stream was started on this file */
  unsigned window;     /* buffers to keep ahead (grows while sequential) */
  struct ra_buf *bufs; /* contiguous, ascending */
  uint64_t gen;        /* inode data_gen the buffers were read at */
  int inflight;        /* wire READs of this file not yet completed */
  struct ra_wait *waiters;
  void (*drained)(struct fs_file *); /* set by release: run when inflight drops to 0 */
  size_t last_size;                  /* the FUSE read being answered: small ones read into memory */
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
  int closing;   /* released, its CLOSE sent or queued: counted in in->nclosing (in->lock) */
  int direct_rd; /* a large read-only open made direct (CACHE_DIRECT_READER) */
  struct ra_state ra;
  fuse_req_t release_req;
  double close_asked; /* cache=loose: when the closing CLOSE (with attributes) was sent */
  /* guarded by in->lock */
  int refs;         /* the open + a reopen in flight */
  int released;     /* release began: a reopen that completes now closes what it got */
  int mtime_forced; /* its last data went with a SET_INFO of the mtime, answered: its CLOSE moves no time */
  uint64_t writes;  /* application writes through it (a time set before the last of them is not its last) */
  int time_set;     /* a SET_INFO of the mtime went through it once: the server no longer moves the time for
                     * its writes, and gives the file that time again when it closes (a later write
                     * through any handle of the file needs another, writeback.c) */
  uint64_t pin_gen; /* in->data_gen when the time last set through it was sent (writeback.c) */
  /* The server's clock when this open created the file (its mtime in the CREATE answer) and ours
   * (fs_now) when the answer came: the time the server would give a write now is born_srv plus the
   * time since (writeback.c). Set before the open is answered, read-only after. */
  int born_known;
  struct timespec_smb3 born_srv;
  double born_loc;
  /* A create put off (pending.h): its state until the CREATE is answered (f is NULL until then),
   * and that answer's error (0: made). Under fs->pend_mu. */
  struct fs_pending *pend;
  int pend_rc;
  int deferred;                   /* its CREATE was put off (set before the create is answered) */
  smb3_file *stale[FS_STALE_MAX]; /* handles of lost connections, freed at release */
  int nstale;
  int reopening;                    /* reopens in flight (two losses close together: two) */
  struct fh_waiter *reopen_waiters; /* fh_when_current() callers waiting for it */
  /* guarded by fs->files_lock */
  struct fs_file *file_next, *file_prev;
  uint64_t rel_seq; /* (atomic) its RELEASE was the rel_seq-th read (0: none yet) ... */
  int rel_done;     /* ... and has reached its CLOSE (queued or sent) */
};
/* The file's current server handle (may belong to a lost connection until reopened). */
static inline smb3_file *fh_handle(struct fs_file *fh) {
  return __atomic_load_n(&fh->f, __ATOMIC_ACQUIRE);
}
/* After a reconnect (reconnect thread): every open file is marked as being reopened (before the
 * new connection is published, so that nothing sees a file between the two), then opened again
 * on the new connection. */
struct reopen_list;
struct reopen_list *files_reopen_prepare(struct fs_ctx *fs);
/* then(fh) for each file whose reopen gave it a handle on the new connection (the reopen's
 * callback, on the I/O thread). */
void files_reopen(struct fs_ctx *fs, struct reopen_list *l, void (*then)(struct fs_file *));
/* fn(arg, ok) once fh's handle is one of the current connection: at once, or when its reopen
 * completes; ok = 0 if it is not and will not be (the reopen failed or none was possible). */
void fh_when_current(struct fs_file *fh, void (*fn)(void *arg, int ok), void *arg);
/* Drop a reference to fh taken as fh->refs++ under fh->in->lock (write-back extents hold one);
 * without that lock held. */
void fh_unref(struct fs_file *fh);
/* A new open of in with server handle f (refs 1, on fs->files, counted in in->nopen). The caller
 * runs ra_init() on it before anything reads through it. */
struct fs_file *file_new(struct fs_ctx *fs, struct fs_inode *in, smb3_file *f, int flags);
/* Drop a reference (in->lock not held); the last one frees fh. */
void file_put(struct fs_file *fh);
/* Release began: a reopen that completes from now on closes what it gets; the handles of lost
 * connections are freed. Returns the handle to CLOSE. */
smb3_file *file_closing(struct fs_file *fh);
/* The kernel queues a file's RELEASE before close(2) returns, but it is served after the read-ahead
 * READs in flight and the write-back flush, and several workers read /dev/fuse: a rename or rmdir
 * of its directory (or an unlink of it) that the program sends right after the close could be
 * served first and find the file still open on the server (Samba refuses to rename a directory
 * with an open file below it). So each RELEASE is numbered as soon as it is read, and those
 * namespace operations wait for the RELEASEs read before them. (Reads of /dev/fuse stay parallel:
 * one at a time cost a quarter of the 4 KiB read and write rate; a worker paused between its read's
 * return and the numbering, a few instructions, is the window left.)
 * files_request_read: the session's read got a request (r: its head, NULL if it was too short
 * to have one), on the worker that serves it. */
struct fs_req;
void files_request_read(struct fs_ctx *fs, const struct fs_req *r);
/* fh's RELEASE reached its CLOSE (queued or sent). */
void files_release_done(struct fs_file *fh);
/* On the worker serving a request: wait until every RELEASE read before that request has reached
 * its CLOSE. */
void files_wait_releases(struct fs_ctx *fs);
/* An open file of in that has a handle and is not being released (referenced: file_put it), or
 * NULL: what names the file when its path does not any more (another client renamed it away). */
struct fs_file *files_find_open(struct fs_ctx *fs, struct fs_inode *in);
/* CLOSE f without waiting for (or reporting) the answer; f is freed either way. */
void file_close_quietly(smb3_file *f);

#endif
