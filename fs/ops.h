/* ops.h - the FUSE handlers (ops_*.c): each fills its part of the operation table (main.c).
 *
 * A handler validates, hands the request to a mechanism or a libsmb3 *_async call, and returns.
 * Its "Reply:" comment names the thread that sends the reply (as libfuse lists the valid replies
 * of each operation): "this worker" is the FUSE worker running the handler; "I/O thread" is
 * libsmb3's, in a completion callback; "reconnect thread" answers an operation that waited for a
 * new connection (conn.c: resent, or failed when none came); the lock waiter thread (locks.c)
 * answers a lock that waits. An error found before anything is sent (a bad name, ENOMEM) is
 * always answered by this worker. The handlers of locks.c and xattr.c follow the same rule. */
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
