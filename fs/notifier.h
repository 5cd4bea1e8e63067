/* notifier.h - the notifier thread (notifier.c): lease breaks and kernel page-cache invalidations. */
#ifndef SMB3FS_NOTIFIER_H
#define SMB3FS_NOTIFIER_H

#include "mount.h"

int notifier_start(struct fs_ctx *fs);
void notifier_stop(struct fs_ctx *fs);
/* The lease break handler (smb3_set_break_handler; runs on the I/O thread): queues the break. */
void notifier_break_cb(const uint8_t key[16], uint32_t new_state, int ack_required, void *arg);
/* Drop the kernel's pages of an inode, later, on the notifier thread (an invalidation can wait for
 * reads in progress, which must not wait for the caller). */
void notifier_invalidate_later(struct fs_ctx *fs, uint64_t nodeid);
/* The kernel's attributes of an inode only (it keeps its pages), later, on the notifier thread: what
 * changed them is something the kernel does not account for itself (another name's removal). */
void notifier_attrs_later(struct fs_ctx *fs, uint64_t nodeid);
/* notifier_invalidate_later, then then(arg) on the notifier thread (at once when it cannot be queued). */
void notifier_invalidate_then(struct fs_ctx *fs, uint64_t nodeid, void (*then)(void *), void *arg);
/* Wait until the notifier has handled everything queued so far, at most timeout seconds. */
void notifier_drain(struct fs_ctx *fs, double timeout);

#endif
