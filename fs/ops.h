/* ops.h - the FUSE handlers (ops_*.c): each fills its part of the operation table (main.c). */
#ifndef SMB3FS_OPS_H
#define SMB3FS_OPS_H

#include "util.h"

void ops_ns_fill(struct fuse_lowlevel_ops *o);   /* the namespace and attributes */
void ops_file_fill(struct fuse_lowlevel_ops *o);  /* open files */
void ops_dir_fill(struct fuse_lowlevel_ops *o);   /* opendir, readdir(plus), releasedir */

#endif
