/* relist.h - lookups of names a directory's last listing showed, answered from one fresh listing
 * of the directory instead of one stat per name (relist.c).
 *
 * A program that walks a tree (find -exec, tar c, cp -r and rm -rf of a tree on the mount) lists a
 * directory and then opens or removes its names one by one; on a link with any latency that takes
 * longer than actimeo, the kernel's dentries from the listing expire, and the kernel sends a LOOKUP
 * for every name again: one round trip per name. When the directory's last listing (fs_inode.dl,
 * dircache.h) had the name, relist_lookup lists the directory again instead (every lookup in it
 * that arrives meanwhile waits for the same listing) and answers from that listing while it is
 * recent (actimeo seconds after it was asked for, as any cached attribute).
 *
 * A listing only confirms: a name is answered from it only when the mount's inode for that name
 * agrees with its entry (the same file id, type, size, mtime and ctime; POSIX: mode and owner), is
 * not open, has nothing in write-back and is not a reparse point; the answer is then what the inode
 * holds, as old as the listing (the kernel's timeouts are shortened by its age). A name this mount
 * created, removed, renamed or changed since (its inode then differs or is gone), a file another
 * client changed, an entry without a file id: the caller asks the server, as it did before. */
#ifndef SMB3FS_RELIST_H
#define SMB3FS_RELIST_H

#include "dircache.h"
#include "inode.h"

/* Runs once: st NULL when the server must be asked; else the attributes to answer with, as known
 * at `asked` (fs_now() then). From the calling worker or the I/O thread. */
typedef void (*relist_cb)(void *arg, const struct smb3_stat *st, double asked);
/* 1 when cb will run (perhaps before this returns), 0 when the listing has nothing to say about
 * name (cb never runs: ask the server). */
int relist_lookup(struct fs_ctx *fs, struct fs_inode *dir, const char *name, relist_cb cb, void *arg);
/* A stat of dir/name asked for at `asked` answered st (NULL: no such name): a kept listing of dir
 * asked for before that disagrees (another client's new, removed or replaced name) is not served
 * or used again. */
void relist_saw(struct fs_inode *dir, const char *name, const struct smb3_stat *st, double asked);
/* The entries of a listing the kernel may see (fs_name_listable), copied: *out (NULL when n is 0)
 * and *nout; SMB3_ENOMEM or 0. */
int relist_dents(struct fs_ctx *fs, const struct smb3_dirent *e, size_t n, struct fs_dent **out,
                 size_t *nout);
/* Keep a listing of dir asked for at `asked` with generation gen on the inode, unless the one
 * there was asked for later. */
void relist_keep(struct fs_ctx *fs, struct fs_inode *dir, const struct fs_dent *v, size_t n, double asked,
                 uint64_t gen);

#endif
