/* cache.c - what the kernel and the mount may cache of a file, decided per open.
 *
 * cache=strict: file data lives in the kernel's page cache only while the server grants a read
 * lease on the file (an open without one is direct I/O); a lease break takes it away
 * (notifier.c). cache=loose: data is cached; staleness is bounded by actimeo through
 * FUSE_CAP_AUTO_INVAL_DATA. cache=none: direct I/O, no leases. */
#include <fcntl.h>
#include <string.h>

#include "cache.h"

uint32_t cache_lease_want(const struct fs_ctx *fs, int flags) {
  if (!fs->leases) return 0;
  uint32_t want = SMB3_LEASE_READ | SMB3_LEASE_HANDLE;
  if ((flags & O_ACCMODE) != O_RDONLY) want |= SMB3_LEASE_WRITE;
  return want;
}

static int same_version(const struct fs_inode *in) {
  return in->cached_valid && fs_same_version(in->cached_size, in->cached_mtime, &in->st);
}

int cache_pages_kept(const struct fs_ctx *fs, const struct fs_inode *in) {
  if (fs->cache == SMB3_CACHE_LOOSE) return in->opened_ever; /* the kernel keeps its pages */
  return same_version(in);
}

int cache_open_mode(struct fs_ctx *fs, struct fs_inode *in, uint32_t lease, struct fuse_file_info *fi) {
  int cached = fs->cache == SMB3_CACHE_LOOSE || (fs->cache == SMB3_CACHE_STRICT && (lease & SMB3_LEASE_READ));
  int writes = (fi->flags & O_ACCMODE) != O_RDONLY;
  /* cache=strict: a write-only open that is the file's only one (one released, its CLOSE on the way, does
   * not count) writes with direct I/O. The page
   * cache would cost a copy of every byte (and its page locking) for pages that nobody reads
   * through this open (an O_WRONLY descriptor cannot be mmap'ed either): measured, dd bs=1M
   * wrote at 1.3 GB/s through the page cache and 1.7-2.1 GB/s direct on loopback. While such a
   * writer is open, every other open of the file is direct too, so that no cached page goes
   * stale under a write that bypasses it; and the pages cached before it are dropped by the next
   * cached open (cached_valid). Not under cache=loose: the kernel's write-back cache is what
   * makes its small writes fast. */
  int direct_writer =
      cached && fs->cache == SMB3_CACHE_STRICT &&
      (((fi->flags & O_ACCMODE) == O_WRONLY && in->nopen - in->nclosing == 1) || in->direct_writers);
  if (direct_writer) {
    fi->direct_io = 1;
    fi->keep_cache = 0;
    in->cached_valid = 0;
    return writes ? CACHE_DIRECT_WRITER : CACHE_PAGES;
  }
  if (!cached) {
    fi->direct_io = 1;
    fi->keep_cache = 0;
    /* its writes bypass the page cache too: a later open that gets a read lease must not cache */
    return fs->cache == SMB3_CACHE_STRICT && writes ? CACHE_DIRECT_WRITER : CACHE_PAGES;
  }
  /* cache=strict: a large file opened only for reading, of which the kernel holds no pages of this
   * version, is read with direct I/O. Its data goes from the mount's read-ahead buffers straight
   * into the reader's buffer: filling the page cache costs a copy into pages that are new to the
   * kernel, and on a VM that hands its free memory back to the host (free page reporting) the
   * first touch of each such page costs more than the network read itself: measured, 1 GiB read
   * with dd bs=1M through the page cache at 233-470 MB/s, direct at 829-904 (smb3 cat 0.9-1.1
   * GB/s); a FUSE file system serving from memory through the page cache reached 405-677. Small
   * reads lose (each is a FUSE request: dd bs=4k 280 MB/s direct), so small files and files
   * already in the page cache keep it. Only when the kernel lets such a file be mmap'ed shared
   * all the same (dio_mmap): without that, mmap(MAP_SHARED) of it would fail. And not for a file
   * that such opens read at random or in small pieces before (direct_unfit): each random read
   * goes to the server, where the page cache would keep what was read for the next time, and each
   * small one is a FUSE request, where the kernel's read-ahead would send 1 MiB ones. */
  if (fs->cache == SMB3_CACHE_STRICT && __atomic_load_n(&fs->dio_mmap, __ATOMIC_ACQUIRE) &&
      fs->directio_min && (fi->flags & O_ACCMODE) == O_RDONLY && in->st.size >= fs->directio_min &&
      !same_version(in) && atomic_load(&in->direct_unfit) < FS_DIRECT_UNFIT) {
    fi->direct_io = 1;
    fi->keep_cache = 0;
    return CACHE_DIRECT_READER;
  }
  fi->direct_io = 0;
  /* Keep what the page cache holds only if the file is the version it was read from. */
  fi->keep_cache = same_version(in);
  in->cached_valid = 1;
  in->cached_size = in->st.size;
  in->cached_mtime = in->st.mtime;
  return CACHE_PAGES;
}

void cache_forget(struct fs_inode *in) {
  in->data_gen++;       /* read-ahead buffers are stale */
  in->cached_valid = 0; /* the next open starts with an empty page cache */
  in->attr_expiry = 0;
  in->attr_lookup = 0;
}
