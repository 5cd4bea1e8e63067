/* ops.h - the FUSE handlers (ops_*.c): each fills its part of the operation table (main.c). */
#ifndef SMB3FS_OPS_H
#define SMB3FS_OPS_H

#include "util.h"

void ops_ns_fill(struct fuse_lowlevel_ops *o);    /* lookup, forget, mkdir, unlink, rmdir, rename, link, symlinks */
void ops_attr_fill(struct fuse_lowlevel_ops *o);  /* getattr, setattr, statfs, the stats ioctl */
void ops_file_fill(struct fuse_lowlevel_ops *o);  /* open, create, read, write, flush, fsync, release */
void ops_range_fill(struct fuse_lowlevel_ops *o); /* lseek, fallocate, copy_file_range */
void ops_dir_fill(struct fuse_lowlevel_ops *o);   /* opendir, readdir(plus), releasedir */

#endif
