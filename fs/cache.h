/* cache.h - what the kernel and the mount may cache of a file (cache.c). */
#ifndef SMB3FS_CACHE_H
#define SMB3FS_CACHE_H

#include "inode.h"

/* in->lock held: what the mount cached of in is not to be trusted any more: read-ahead buffers
 * (data_gen), the next open's page cache (cached_valid), the attributes. The kernel's pages of
 * open files are the caller's to drop (notifier_invalidate_later). */
void cache_forget(struct fs_inode *in);
uint32_t cache_lease_want(const struct fs_ctx *fs, int flags);
/* Whether the kernel may still hold the file's pages for the next open (caller holds in->lock):
 * under cache=strict, the version its pages were read at is the current one (keep_cache); under
 * loose, the file was opened before. */
int cache_pages_kept(const struct fs_ctx *fs, const struct fs_inode *in);
/* Decide direct_io / keep_cache for a new open (caller holds in->lock; in->nopen counts it).
 * Returns 1 if the open is a direct writer the caller must count in in->direct_writers until
 * its release. */
int cache_open_mode(struct fs_ctx *fs, struct fs_inode *in, uint32_t lease, struct fuse_file_info *fi);

#endif
