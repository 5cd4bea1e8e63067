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
/* Reads of a direct read-only open away from its stream, or smaller than FS_DIRECT_SMALL, after
 * which the file's next read-only opens use the page cache (cache.c). */
#define FS_DIRECT_UNFIT 16
#define FS_DIRECT_SMALL (32u << 10)
enum {
  CACHE_PAGES = 0,         /* through the kernel's page cache, or direct because nothing may be cached */
  CACHE_DIRECT_WRITER = 1, /* a writer with direct I/O, to be counted in in->direct_writers until
                            * its release */
  CACHE_DIRECT_READER = 2, /* a large read-only open with direct I/O although it could be cached */
};
/* Decide direct_io / keep_cache for a new open (caller holds in->lock; in->nopen counts it).
 * Returns one of the above. */
int cache_open_mode(struct fs_ctx *fs, struct fs_inode *in, uint32_t lease, struct fuse_file_info *fi);

#endif
