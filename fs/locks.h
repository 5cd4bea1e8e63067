/* locks.h - fcntl/flock locks as SMB2 byte-range locks (locks.c). */
#ifndef SMB3FS_LOCKS_H
#define SMB3FS_LOCKS_H

#include "file.h"

/* The lock handlers (none with nobrl). */
void ops_locks_fill(struct fuse_lowlevel_ops *o, int nobrl);
void locks_flush(struct fs_file *fh, uint64_t owner); /* close(2): the owner's POSIX locks go */
void locks_release(struct fs_file *fh);               /* release: fh's locks go with its CLOSE */
void locks_reacquire(struct fs_file *fh);             /* a reopen gave fh a new handle */
void locks_free(struct fs_inode *in);                 /* the inode table frees in (itab_new's drop) */
int locks_start(struct fs_ctx *fs);                   /* before the session runs */
void locks_stop(struct fs_ctx *fs);                   /* after it: pending waits end with EINTR */

#endif
