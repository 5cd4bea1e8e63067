/* writeback.h - coalescing writes into wire WRITEs (writeback.c); wb_dirty/wb_end are in inode.h. */
#ifndef SMB3FS_WRITEBACK_H
#define SMB3FS_WRITEBACK_H

#include "file.h"

typedef void (*wb_done_fn)(int err, void *arg); /* err: 0 or negative errno */
void wb_write(struct fs_file *fh, fuse_req_t req, const char *buf, size_t size, uint64_t off);
/* Send everything dirty of in and call done once it is on the server. consume: report (and
 * clear) a pending write error, as fsync/flush/close do; otherwise only report it. done may run
 * before wb_flush returns (nothing to do) or later on the I/O thread. */
void wb_flush(struct fs_ctx *fs, struct fs_inode *in, int consume, wb_done_fn done, void *arg);

#endif
