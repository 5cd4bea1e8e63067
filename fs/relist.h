/* relist.h - lookups answered from one listing of the directory instead of one stat per name
 * (relist.c).
 *
 * Two patterns cost a round trip per name otherwise. A program that walks a tree (find -exec, tar
 * c, cp -r and rm -rf of a tree on the mount) lists a directory and then opens or removes its names
 * one by one; on a link with any latency that takes longer than actimeo, the kernel's dentries from
 * the listing expire, and it sends a LOOKUP for every name again. And a program that looks names up
 * without listing first (git status lstat's every file of its index, a compiler searches each
 * include directory, a fresh mount's stat of every file) sends a LOOKUP for every name the mount
 * has never seen.
 *
 * relist_lookup lists the directory instead, and every lookup in it that arrives meanwhile waits for
 * the same listing: when the directory's last listing (fs_inode.dl, dircache.h) had the name but is
 * no longer recent, or when a stat found another name in the directory less than actimeo ago and
 * it has no recent listing (names looked up one by one). The first such lookup is a stat: a path
 * walk through a directory costs no listing of it (unless its parent was listed for lookups less
 * than actimeo ago: then the walk of names goes on in its subdirectories, and the first lookup
 * lists), and lookups of names that do not exist (a
 * compiler's include search) none either, since a listing answers only names it has. A directory
 * that proved too big (RELIST_MAX) or could not be listed is not listed so for RELIST_QUIET seconds.
 *
 * What a listing answers, while recent (actimeo seconds after it was asked for, as any cached
 * attribute; the kernel's timeouts are shortened by its age):
 * - a name whose inode here agrees with its entry (the same file id, type, size, mtime and ctime;
 *   POSIX: mode and owner), is not open, has nothing in write-back and is not a reparse point: what
 *   the inode holds. Any difference (another client's change, one of this mount's own) is asked of
 *   the server.
 * - only while the listing may also be served to a readdir (dircache_fresh: nothing in the mount's
 *   namespace changed since it was asked for): a name the mount has no inode of is the entry, as
 *   readdirplus would have given it (not for an entry without a file id or a reparse point; a
 *   possible symlink file is read, as after a stat).
 * A name the listing lacks is always asked of the server: another client's new name shows at once
 * to a lookup, as it did without listings.
 * A server answer newer than the listing that contradicts it (a stat, an open that found no file)
 * spoils it (relist_saw, relist_gone). */
#ifndef SMB3FS_RELIST_H
#define SMB3FS_RELIST_H

#include "dircache.h"
#include "inode.h"

/* Runs once: st NULL when the server must be asked; else the attributes to answer with, as known
 * at `asked` (fs_now() then). From the calling worker or the I/O thread. */
typedef void (*relist_cb)(void *arg, const struct smb3_stat *st, double asked);
/* 1 when cb will run (perhaps before this returns), 0 when the listing has nothing to say about
 * name (cb never runs: ask the server), RELIST_ABSENT when a listing under a directory lease proves
 * there is no such name (dircache_absent; cb never runs: the caller answers ENOENT). known_expired:
 * dir's known names expired (inode_known), so that a name no listing has is listed for too. */
#define RELIST_ABSENT 2
int relist_lookup(struct fs_ctx *fs, struct fs_inode *dir, const char *name, int known_expired, relist_cb cb,
                  void *arg);
/* A stat of dir/name asked for at `asked` answered st (NULL: no such name): a kept listing of dir
 * asked for before that disagrees (another client's new, removed or replaced name) is not served
 * or used again. */
void relist_saw(struct fs_inode *dir, const char *name, const struct smb3_stat *st, double asked);
/* The server just said in's name is gone (an open or a stat by its path found no file: another
 * client deleted or renamed it): in's attributes expire, and relist_saw of that. The caller
 * answers ESTALE: the kernel, whose entry for the name is stale, looks the name up again
 * (LOOKUP_REVAL) and retries the call once, so that open(O_CREAT) makes the file anew and a stat or
 * a plain open fails with ENOENT from that lookup, and the stale entry is gone. */
void relist_gone(struct fs_ctx *fs, struct fs_inode *in);
/* The entries of a listing the kernel may see (fs_name_listable), copied: *out (NULL when n is 0)
 * and *nout; SMB3_ENOMEM or 0. */
int relist_dents(struct fs_ctx *fs, const struct smb3_dirent *e, size_t n, struct fs_dent **out,
                 size_t *nout);
/* Listing read-ahead for programs that walk a tree (find, ls -lR, du, rm -rf, cp -r, git's scan of
 * untracked files): each directory costs a round trip, one after the other, and a walker opens the
 * next one only once it has read this one.
 * relist_ahead: a readdir of dir starts (a listing, or one served again). When a readdir of its
 * parent started less than actimeo ago, this is a walk: the next RELIST_AHEAD directories after dir
 * in the parent's recent listing (half in its order: find, du; half by name: ls -R) are listed now,
 * as for lookups (fs_inode.relist; kept on their inodes).
 * relist_ahead_below: dir's listing is at hand (its entries given to the kernel): after a walk's
 * readdir, its first RELIST_AHEAD subdirectories are listed too (find descends there next). A
 * directory listed ahead lists its own first RELIST_AHEAD subdirectories ahead in turn once its
 * listing is in (one level: those have no inode yet, and go no deeper until the walk reaches them).
 * A walk of lookups goes the same way (git status, git add: every name of the index in order,
 * with no readdir): when the first lookup in a directory lists it because its parent was listed
 * for lookups (a walk), the parent's next RELIST_AHEAD directories after it are listed ahead, and
 * once its own listing is in, its first RELIST_AHEAD subdirectories.
 * Not directories listed or being listed, read less than actimeo ago, and at most RELIST_AHEAD_MAX
 * in flight for the mount. A directory the mount has no inode of yet (the kernel has not looked it
 * up) is listed by path as an orphan (only while the parent's listing may be served,
 * dircache_fresh: a name this mount removed has no inode either), kept by parent and name (at most
 * RELIST_ORPHANS_MAX, each holding its parent's inode and at most RELIST_MAX entries; dropped once
 * no longer recent) until its inode's first lookup or readdir adopts it:
 * in flight, it becomes the inode's listing; done, it is kept there as any listing (and given to that
 * readdir). A readdir of such a directory waits for that listing (relist_join) and is served it if it may be
 * (dircache_fresh); a lookup in it waits for it as for any listing for lookups. Whatever is listed
 * ahead is served under the rules of any kept listing: a name this mount changed there since, or
 * actimeo, and it is not. */
void relist_ahead(struct fs_ctx *fs, struct fs_inode *dir);
void relist_ahead_below(struct fs_ctx *fs, struct fs_inode *dir);
/* A listing of dir (for lookups or ahead) is in flight: done runs once it is kept or failed, on the
 * thread that completed it (1); or one listed ahead as an orphan is done: done runs now, on the
 * calling thread (1); 0: none in flight. done gets the listing's result: rc, and when 0
 * its entries (v, n: valid during the call), when it was asked for and its generation
 * (dircache_gen_fresh says whether it may be served). */
typedef void (*relist_done_cb)(void *arg, int rc, const struct fs_dent *v, size_t n, double asked,
                               uint64_t gen);
int relist_join(struct fs_ctx *fs, struct fs_inode *dir, relist_done_cb done, void *arg);
/* Keep a listing of dir asked for at `asked` with generation gen on the inode, unless the one
 * there was asked for later. */
void relist_keep(struct fs_ctx *fs, struct fs_inode *dir, const struct fs_dent *v, size_t n, double asked,
                 uint64_t gen);

/* The mount's listings ahead of directories it has no inode of yet (orphans): set up at start;
 * freed at unmount after the connection's last callback. */
void relist_init(struct fs_ctx *fs);
void relist_free(struct fs_ctx *fs);

#endif
