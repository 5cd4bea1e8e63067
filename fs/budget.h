/* budget.h - the mount's memory budget for data it holds: read-ahead buffers (readahead.c) and
 * write-back extents (writeback.c), all files together (budget.c).
 *
 * Each stream and each writer may always hold what it needs to make progress (the buffer the
 * reader is waiting for, the extent a write goes into: budget_charge), so nobody waits on another
 * file's memory; what is only for speed (read-ahead beyond the read being answered, write-back
 * beyond one piece of the writer's: writeback.c, WB_TIGHT) is taken only while the total stays under the cap
 * (budget_try). So many readers and writers at once share the cap instead of each holding its
 * own window. Lock-free (C11 atomics); depends on libc only, so that the unit tests link it alone. */
#ifndef SMB3FS_BUDGET_H
#define SMB3FS_BUDGET_H

#include <stdatomic.h>
#include <stddef.h>

#define BUDGET_DEFAULT_CAP ((size_t)128 << 20)

struct budget {
  size_t cap;
  atomic_size_t used;
  atomic_size_t peak;
  atomic_uint_fast64_t refused; /* budget_try calls that were refused */
};

void budget_init(struct budget *b, size_t cap);
/* Take n bytes if the total stays at or under the cap: 1 if taken, 0 if not. */
int budget_try(struct budget *b, size_t n);
/* Take n bytes whatever the total (what a reader or writer needs to go on). */
void budget_charge(struct budget *b, size_t n);
/* Give back n bytes taken before; returns what is still taken. */
size_t budget_release(struct budget *b, size_t n);
/* Would budget_try(b, n) take it now? (a hint: another thread may take the room first) */
int budget_room(const struct budget *b, size_t n);

#endif
