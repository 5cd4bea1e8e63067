/* ops.h - the FUSE handlers (ops_*.c): each fills its part of the operation table (main.c).
 *
 * A handler validates, hands the request to a mechanism or a libsmb3 *_async call, and returns.
 * Its "Reply:" comment names the thread that sends the reply (as libfuse lists the valid replies
 * of each operation): "this worker" is the FUSE worker running the handler; "I/O thread" is
 * libsmb3's, in a completion callback; "reconnect thread" answers an operation that waited for a
 * new connection (conn.c: resent, or failed when none came); the lock waiter thread (locks.c)
 * answers a lock that waits; the notifier thread (notifier.c) answers a lock granted without a
 * write lease, once the kernel's pages of the file are dropped. An error found before anything is
 * sent (a bad name, ENOMEM) is always answered by this worker. The handlers of locks.c and
 * xattr.c follow the same rule.
 *
 * A handler that first flushes the inode's write-back (read, getattr, open with O_TRUNC, setattr,
 * rename, lseek, fallocate, copy_file_range, flush, fsync, release) goes on on the thread that
 * ends the flush: this worker when nothing is in flight, else the I/O thread (the last WRITE
 * completion), or the reconnect thread (a WRITE parked for a new connection that timed out, or
 * was sent again from there and refused at once: writeback.c, chunk_resume -> chunk_done ->
 * run_waiters). A write held back past the dirty bound is answered the same way (reply_parked).
 * What fails at once after the flush is answered on that thread; their "Reply:" comments say
 * "after the write-back flush". */
#ifndef SMB3FS_OPS_H
#define SMB3FS_OPS_H

#include "util.h"

void ops_ns_fill(
    struct fuse_lowlevel_ops *o); /* lookup, forget, mkdir, unlink, rmdir, rename, link, symlinks */
void ops_attr_fill(struct fuse_lowlevel_ops *o);  /* getattr, setattr, statfs, the stats ioctl */
void ops_file_fill(struct fuse_lowlevel_ops *o);  /* open, create, read, write, flush, fsync, release */
void ops_range_fill(struct fuse_lowlevel_ops *o); /* lseek, fallocate, copy_file_range */
void ops_dir_fill(struct fuse_lowlevel_ops *o);   /* opendir, readdir(plus), releasedir */

#endif
