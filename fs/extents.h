/* extents.h - where write-back puts a write's bytes: the open extents of an inode, being filled
 * before they go on the wire (the pure part of writeback.c: no threads, no FUSE, no I/O).
 *
 * Extents live in aligned windows of wsize bytes, [k * wsize, (k + 1) * wsize), and hold the
 * writes of one open only: an extent is sent through that open's handle, and the server refuses a
 * WRITE through another handle into a range the writer locked exclusively. A write continues the
 * extent of its open that ends where it begins, else it starts a new one; an extent that grows up
 * to the next extent of the same open takes that one's bytes, so writes that arrive out of order
 * (the kernel's write-back sends several 1 MiB writes at once, the FUSE workers deliver them in
 * any order) still make whole extents. An extent leaves the set ("sealed": the caller sends it)
 * when it fills its window, when a write overlaps its bytes (older bytes reach the server first),
 * or when it is the lowest and a new extent needs its place.
 *
 * The caller guards the set (in->lock) and makes, sends and frees the extents (ops); extents.c
 * only reallocates their buffers. Depends on libc only, so that the unit tests link it alone. */
#ifndef SMB3FS_EXTENTS_H
#define SMB3FS_EXTENTS_H

#include <stddef.h>
#include <stdint.h>

#define EXTENTS_OPEN_MAX 4 /* extents being filled per inode */

struct fs_file; /* the open the bytes came through: only compared here */

struct extent {
  struct extent *next; /* in the set, by offset */
  struct fs_file *fh;
  uint64_t off;
  size_t len, cap;
  uint8_t *buf; /* cap bytes, len of them data (malloc'd; extents.c grows it) */
};

struct extent_set {
  struct extent *head; /* ascending offsets */
  int n;
  size_t bytes; /* data held */
};

struct extent_ops {
  /* A new, empty extent of fh at off (NULL: no memory). */
  struct extent *(*make)(void *ctx, struct fs_file *fh, uint64_t off);
  /* e has left the set with its data: to the wire. */
  void (*seal)(void *ctx, struct extent *e);
  /* e has left the set empty (its bytes moved to another extent, or none came): to be freed. */
  void (*bury)(void *ctx, struct extent *e);
  /* e's buffer grew by more bytes (e->cap is the new size); may be NULL. */
  void (*grew)(void *ctx, struct extent *e, size_t more);
  /* Memory is tight (may be NULL: never): a buffer grows only by what comes, not to its window. */
  int (*tight)(void *ctx);
};

/* Where the window holding off ends. A window, not a length, so that an extent that began late
 * (its first bytes arrived after later ones) is joined by them, and a write that begins mid-file
 * is followed by aligned WRITEs. */
uint64_t extent_window_end(uint64_t off, size_t wsize);

/* Copy fh's write of size bytes at off into the set. 0 or -ENOMEM (what was copied stays).
 * *reached: where the copied bytes end (off + size when all went in). */
int extents_add(struct extent_set *set, struct fs_file *fh, const void *buf, size_t size, uint64_t off,
                size_t wsize, const struct extent_ops *ops, void *ctx, uint64_t *reached);

/* Seal every extent, lowest first (a flush). */
void extents_seal_all(struct extent_set *set, const struct extent_ops *ops, void *ctx);

#endif
