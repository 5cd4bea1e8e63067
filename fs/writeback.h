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
/* wb_flush(consume = 1) for close(2) and release of fh: a file fh created and wrote in one go gets
 * its write time set with its last WRITE, the one the server would have given it, so that its
 * CLOSE can wait for others (closeq.h). */
void wb_flush_closing(struct fs_file *fh, wb_done_fn done, void *arg);
/* Times to set (NULL = unchanged) on a file that has written data not yet sent: they go with it,
 * the last extent's WRITE and a SET_INFO through the same handle in one round trip when the flush
 * sends one extent (else a SET_INFO after the last WRITE); a failure is reported like a failed
 * WRITE (next write, fsync or close). Returns 0 when taken, -1 when there is no such data (the
 * caller sets them itself). in->st's times are set to them. */
int wb_set_times(struct fs_inode *in, const struct timespec_smb3 *at, const struct timespec_smb3 *mt);

#endif
