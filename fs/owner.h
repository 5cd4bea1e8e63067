/* owner.h - a new entry's owner on a POSIX share: the caller's (owner.c). */
#ifndef SMB3FS_OWNER_H
#define SMB3FS_OWNER_H

#include "inode.h"

/* cb's st: the new entry's attributes, with the caller's ids when the server took them. */
typedef void (*fs_owned_cb)(const struct smb3_stat *st, void *arg);

/* After a create, mkdir, mknod or symlink for req in parent that made st at path: on a POSIX share
 * the server names the session's user (or root, for 'admin users') as the owner, while POSIX has
 * the caller own it, in the caller's group, or the directory's if that is setgid. When st does not
 * show those ids (uid=/gid= overrides stay as they are), one SET_INFO gives them to it; a refusal
 * (a session that may not chown) keeps the server's, and is not tried again on this mount.
 * Returns 1 when that SET_INFO was sent (cb follows, on an I/O thread), 0 when nothing was needed
 * or could be sent (the caller goes on with st). */
int fs_own_new(struct fs_ctx *fs, fuse_req_t req, struct fs_inode *parent, const char *path,
               const struct smb3_stat *st, fs_owned_cb cb, void *arg);

#endif
