/* symlink.h - symlinks as Minshall+French symlink files (symlink.c, mount option mfsymlinks). */
#ifndef SMB3FS_SYMLINK_H
#define SMB3FS_SYMLINK_H

#include "inode.h"

#define MFSL_SIZE SMB3_MFSYMLINK_SIZE
/* Must the server's file st be read to know whether it is a link, and its target: a symlink file
 * (mfsymlinks, regular, MFSL_SIZE bytes) or a symlink of the server's own (POSIX share)? */
int mfsl_candidate(const struct fs_ctx *fs, const struct smb3_stat *st);
/* in->lock held: make a (stat of a) link of it if this version is one. */
void mfsl_fill(const struct fs_inode *in, struct stat *a);
/* The link's target (malloc'd), or NULL if in is not a link. */
char *mfsl_target(struct fs_inode *in);
/* then(arg, 0) once it is known whether in (its current attributes) is a link: at once when it
 * cannot be one or is known, else after reading the file (on the I/O thread); then(arg, rc < 0)
 * if the file could not be read for a reason that says nothing about it (a lost connection). */
void mfsl_check(struct fs_ctx *fs, struct fs_inode *in, void (*then)(void *arg, int rc), void *arg);
/* in->lock held: in is the link to target that ln -s just wrote, in this version (0 or -ENOMEM). */
int mfsl_set(struct fs_inode *in, const char *target);
/* in->lock of both held: to (a new inode of the same file) learns what from knows. */
int mfsl_copy(struct fs_inode *to, const struct fs_inode *from);
/* Listings: is the entry name of dir with attributes st a link, known for that version? */
int mfsl_entry_known(struct fs_ctx *fs, struct fs_inode *dir, const char *name, const struct smb3_stat *st);

#endif
