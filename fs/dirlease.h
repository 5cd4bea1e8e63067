/* dirlease.h - directory leases (dirlease.c): a directory's listing that stays good past actimeo
 * until the server says otherwise. Only with -o dirleases (fs->dirleases).
 *
 * Where the server grants leases on directories (SMB 3.x with the directory-leasing capability:
 * Samba 4.22, Windows), a listing for lookups or for a readdir asks for one (READ|HANDLE, with the
 * directory inode's own lease key: smb3_listdir_lease_async). A granted lease keeps the listing's
 * handle open on the inode (fs_inode.dlh), and while it is held the kept listing (dircache.h) is
 * recent whatever its age: lookups are answered from it, and what it answers is vouched for as of
 * now (the kernel gets its full timeouts), so a program that reads a tree slower than actimeo
 * (find -exec cat over a VPN) does not list every directory again each second. The server breaks
 * the lease, and holds the other client's change until we acknowledged, before anything makes,
 * removes or renames a name in the directory, or sets a file's times or size there (Samba: at the
 * CLOSE of a handle that wrote, not at each WRITE; a file another client is writing shows its
 * size and times of before until that client closes it, as on Windows). A break spoils the listing
 * (relist.h then asks the server again), closes the handle (no acknowledgment: the CLOSE ends the
 * break) and counts dir_lease_breaks. Samba
 * breaks nothing for a change made on the server's own disk (not through SMB): such a change shows
 * once the listing is DIRCACHE_LEASED_MAX old (dircache.h), not after actimeo: why it is an option.
 *
 * Not asked for: in a directory this mount made something in (fs_inode.made_in: our own changes
 * would break it at once), with actimeo=0, or when DIRLEASE_MAX directories hold one already. A
 * held lease ends with its inode, a lost connection (reconnect.c), a break, and before this mount
 * removes or renames the directory or one above it (Samba refuses to rename a directory below
 * which its own client holds handles open). */
#ifndef SMB3FS_DIRLEASE_H
#define SMB3FS_DIRLEASE_H

#include "inode.h"

#define DIRLEASE_MAX 256

/* Whether a listing of dir should ask for a directory lease now (key: dir's lease key, filled). */
int dirlease_want(struct fs_ctx *fs, struct fs_inode *dir, uint8_t key[16]);
/* A listing of dir asked for at `asked` completed with the lease handle dh (NULL: none): dir holds
 * it from now on (or closes it: one is held already). Before relist_keep of that listing. */
void dirlease_got(struct fs_ctx *fs, struct fs_inode *dir, smb3_file *dh, double asked);
/* A lease break with key (notifier thread): 1 when it was a directory's (handled: its listing
 * spoiled unless READ stays, its handle closed; the server waits for that CLOSE or an
 * acknowledgment, and the CLOSE is enough: no acknowledgment is sent), 0 otherwise. A handle that
 * was taken away before (dropped, released, or refused by dirlease_got) is being closed already. */
int dirlease_break(struct fs_ctx *fs, const uint8_t key[16], uint32_t new_state);
/* Close dir's lease handle, if any (its listing reverts to actimeo). No I/O wait. */
void dirlease_drop(struct fs_inode *dir);
/* The same for an inode being freed (its lock is gone; nobody else can reach it). */
void dirlease_free(struct fs_inode *dir);
/* then(arg) once no directory at or below dir holds a lease handle any more (their CLOSEs
 * answered): before this mount renames or removes dir. At once when none does. A lease that comes
 * with a listing asked for before this call is not kept (dirlease_got closes it): it could be in or
 * below dir. */
void dirlease_release_below(struct fs_ctx *fs, struct fs_inode *dir, void (*then)(void *), void *arg);
/* dir's lease handle taken away (NULL: none), for the caller to close: with the rmdir of dir
 * (smb3_close_rmdir_async), one round trip for both. Its listing reverts to actimeo. */
smb3_file *dirlease_take(struct fs_inode *dir);
/* dirlease_release_below without dir's own handle (take that with dirlease_take). */
void dirlease_release_inside(struct fs_ctx *fs, struct fs_inode *dir, void (*then)(void *), void *arg);
/* Directories holding a lease now. */
int dirlease_held(void);

#endif
