/* readahead.h - sequential read detection and the read-ahead window (readahead.c). */
#ifndef SMB3FS_READAHEAD_H
#define SMB3FS_READAHEAD_H

#include "file.h"

/* The kernel's read-ahead for the mount (raised at the first open), in bytes. */
#define FS_KERNEL_RA(fs) ((fs)->rsize > (1u << 20) ? (fs)->rsize : (1u << 20))

void ra_init(struct fs_file *fh);
void ra_read(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off);
/* Drop buffers; calls done(fh) once no wire READ of fh is outstanding (maybe right away). */
void ra_shutdown(struct fs_file *fh, void (*done)(struct fs_file *));

#endif
