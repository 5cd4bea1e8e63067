/* xattr.h - extended attributes as SMB extended attributes (xattr.c). */
#ifndef SMB3FS_XATTR_H
#define SMB3FS_XATTR_H

#include "util.h"

void ops_xattr_fill(struct fuse_lowlevel_ops *o);

#endif
