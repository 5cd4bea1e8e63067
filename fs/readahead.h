/* readahead.h - sequential read detection and the read-ahead window (readahead.c). */
#ifndef SMB3FS_READAHEAD_H
#define SMB3FS_READAHEAD_H

#include "file.h"

/* The kernel's read-ahead for the mount (raised at the first open), in bytes: one FUSE request of
 * the largest size (max_pages, 1 MiB), so that a bs=4k reader sends 1 MiB reads. Not rsize: our
 * own window keeps the wire busy, and every byte the kernel reads ahead of our stream is a buffer
 * we must take whatever the budget (16 readers and 16 writers at once: 348 MiB of buffers at
 * most with rsize (4 MiB), 248 MiB with 1 MiB; dd bs=1M and bs=4k as fast within the noise). */
#define FS_KERNEL_RA(fs) ((void)(fs), 1u << 20)

void ra_init(struct fs_file *fh);
void ra_read(struct fs_file *fh, fuse_req_t req, size_t size, uint64_t off);
/* The first len bytes of the file, read with its open at data generation gen (got: what the READ
 * gave; fewer than len: the file ends there), as the stream's first buffer. 1 when taken (data is
 * then the buffer's, with its len bytes of the mount's budget), 0 when the file was written since
 * or already has a stream (the caller keeps data). */
int ra_prefill(struct fs_file *fh, uint8_t *data, size_t len, int64_t got, uint64_t gen);
/* Drop buffers; calls done(fh) once no wire READ of fh is outstanding (maybe right away). */
void ra_shutdown(struct fs_file *fh, void (*done)(struct fs_file *));
/* After connecting (rsize known): can read-ahead data go by pipe, in pipes of what
 * size (fs->pipe_cap: rsize, or pipe-max-size and several a buffer; then fs->fuse_read_max)? */
void ra_pipes_init(struct fs_ctx *fs);
/* Close the mount's pool of empty read-ahead pipes (at unmount, after the last file). */
void ra_pipes_free(struct fs_ctx *fs);

#endif
