/* reply.h - what the FUSE handlers answer with (reply.c): errnos, names, attributes, entries. */
#ifndef SMB3FS_REPLY_H
#define SMB3FS_REPLY_H

#include "inode.h"

/* Reply to a FUSE request with an SMB3_E* code. */
void fs_reply_smb_err(fuse_req_t req, int rc);
/* Reject names the server can't represent or we never pass on ('/', NUL, ".", "..", and '\\' unless
 * the share speaks the POSIX extensions). */
int fs_name_ok(struct fs_ctx *fs, const char *name);
/* Names of unlinked-but-open files (hidden from listings). */
#define FS_HIDDEN_PREFIX ".smb3fs-unlinked-"
/* Whether a listed name is passed on to the kernel: fs_name_ok (the library already refuses '/'
 * and NUL and skips "." and ".."; '\\' is hidden unless the share speaks POSIX) and not one of our
 * hidden unlinked files. */
int fs_name_listable(struct fs_ctx *fs, const char *name);

/* The attributes of st as the kernel sees them (mount uid/gid/modes). */
void fs_fill_stat(const struct fs_ctx *fs, const struct smb3_stat *st, struct stat *out);
/* The same for inode in (its lock held): a server that gives no file id (0: impacket's directory
 * listings, MS-FSCC allows it) gets the nodeid as st_ino, since readdir(3) hides d_ino 0. */
void fs_fill_stat_in(const struct fs_ctx *fs, const struct fs_inode *in, struct stat *out);
/* st_ino for a listed entry that has no inode here and no server file id: a hash of its name,
 * never 0. */
ino_t fs_ino_of_name(const char *name);
/* A FUSE entry for in (attributes from its cache). Returns 0, or -1 if the file now has another
 * type than the kernel's inode was made with (a symlink file written or replaced: a FUSE inode
 * must never change type; the caller gives the name a new inode). */
int fs_fill_entry(struct fs_ctx *fs, struct fs_inode *in, struct fuse_entry_param *e);

#endif
