/* memtrim.h - give the mount's data memory back to the system once it is idle (memtrim.c).
 *
 * main.c keeps freed heap memory mapped (M_TRIM_THRESHOLD), so that a stream's 4 MiB buffers are
 * not faulted in again for every wire request. When the last buffer of the mount's budget is
 * released (budget.h: nothing read ahead, nothing dirty), a thread waits a second and, if nothing
 * was taken meanwhile, calls malloc_trim(): the daemon falls back to its idle size instead of
 * keeping its peak for its lifetime. */
#ifndef SMB3FS_MEMTRIM_H
#define SMB3FS_MEMTRIM_H

#include "mount.h"

int memtrim_start(struct fs_ctx *fs); /* 0 or -errno */
void memtrim_stop(struct fs_ctx *fs);
/* Give back n bytes of the budget (budget_release), and wake the trimmer when nothing is left. */
void fs_mem_release(struct fs_ctx *fs, size_t n);

#endif
