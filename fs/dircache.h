/* dircache.h - a directory's last listing, kept on its inode (fs_inode.dl, under the inode's lock)
 * so that a program that opens the same directory again at once (rm -rf reads each directory
 * twice: once to see whether it is empty, once to remove what is in it) gets it without a round
 * trip. Below the inode table: this module knows listings, not inodes (ops_dir.c keeps them).
 *
 * The same staleness bound as the attribute cache: a listing is served again for at most actimeo
 * seconds after it was asked for, so another client's new or removed name shows up after actimeo,
 * as its attribute changes do. Names this mount adds or removes show up at once: every namespace
 * operation of the mount (create, mkdir, mknod, symlink, link, unlink, rmdir, rename) moves
 * fs->ns_gen at its start and at its end and notes the new value in each directory whose names it
 * changes (fs_inode.ns_moved: the parent; rename: both); a lease break, a reconnect and an unlink
 * that may change another directory's entry (a hard link's other name) note it for every directory
 * (fs->ns_all). A listing asked for before a move noted for its directory is never served again;
 * a change in another directory does not touch it (git status lists every directory while it
 * makes and removes .git/index.lock). A served listing gives the kernel the attributes of files it
 * already has from those inodes, not from the listing (inode_link_kept).
 *
 * A listing stays on its inode after that (until the next one replaces it or the inode goes): for
 * lookups (relist.h), which use it by name while it is recent (actimeo): to confirm what an inode
 * holds whatever moved ns_gen, and while it may be served, to answer for a name the mount has no
 * inode of with its entry; and as the list of names the directory had. */
#ifndef SMB3FS_DIRCACHE_H
#define SMB3FS_DIRCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "mount.h"

struct fs_dent {
  char *name;
  struct smb3_stat st;
};
struct fs_dlist;

/* The most entries a kept listing has (bigger directories are listed every time). */
#define DIRCACHE_MAX 4096
/* Seconds a listing under a directory lease stays recent (dirlease.h): the lease tells of every
 * change made through SMB, but Samba's breaks nothing for a change made on the server's own disk;
 * that shows after this long at the latest. */
#define DIRCACHE_LEASED_MAX 30.0

/* Something anywhere in the mount's namespace changes (or may have): no listing asked for before is
 * served again. */
void dircache_ns_changed(struct fs_ctx *fs);
/* The names of one directory change (or may have): no listing of it asked for before is served
 * again. moved: that directory's fs_inode.ns_moved. */
void dircache_dir_changed(struct fs_ctx *fs, atomic_uint_fast64_t *moved);
/* fs->ns_gen now: what a listing asked for now is checked against when it is served. */
uint64_t dircache_gen(struct fs_ctx *fs);
/* A kept copy of v (n entries, asked for at `asked` with generation gen), or NULL when it may never
 * be served (the namespace changed since gen, actimeo is 0, n > DIRCACHE_MAX, ENOMEM). */
struct fs_dlist *dircache_new(struct fs_ctx *fs, const struct fs_dent *v, size_t n, double asked,
                              uint64_t gen);
/* Whether a listing asked for with generation gen may be served to a readdir as far as changes go
 * (the directory's fs_inode.ns_moved is moved); dircache_fresh also asks that it be recent. */
int dircache_gen_fresh(struct fs_ctx *fs, uint64_t gen, const atomic_uint_fast64_t *moved);
/* A copy of n entries (NULL on ENOMEM; free with dircache_free_entries). */
struct fs_dent *dircache_copy_entries(const struct fs_dent *v, size_t n);
/* Whether d (NULL: no), a listing of the directory whose fs_inode.ns_moved is moved, may be served
 * now to a readdir. */
int dircache_fresh(struct fs_ctx *fs, const struct fs_dlist *d, const atomic_uint_fast64_t *moved);
/* Whether d (NULL: no) was asked for less than actimeo seconds ago, or is leased and less than
 * DIRCACHE_LEASED_MAX old (ns_gen aside). */
int dircache_recent(struct fs_ctx *fs, const struct fs_dlist *d);
/* d (NULL: nothing) was asked for while its directory holds a directory lease (on), or the lease
 * is gone (off): a leased listing is recent whatever its age (dirlease.h). */
void dircache_set_leased(struct fs_dlist *d, int on);
/* When what d says was last known true: now while it is leased (and less than DIRCACHE_LEASED_MAX
 * old), else when it was asked for. */
double dircache_vouched(const struct fs_dlist *d);
/* Whether a listing's entry may stand for a stat of a name the mount has no inode of, as readdirplus
 * gives it: not for an entry without a file id or for a reparse point (FILE_ATTRIBUTE_REPARSE_POINT,
 * MS-FSCC 2.6: a symlink file is read by the lookup, as after a stat). */
static inline int dircache_stands_for_stat(const struct smb3_stat *e) {
  return e->ino && !(e->attributes & 0x400u);
}
/* The entry called name (exactly: strcmp), or NULL; valid while d is. No I/O. */
const struct fs_dent *dircache_find(const struct fs_dlist *d, const char *name);
size_t dircache_count(const struct fs_dlist *d); /* entries (0 for NULL) */
/* Whether d (NULL: no), a listing of the directory whose fs_inode.ns_moved is moved, proves that
 * name is not there: leased and recent, nothing of the mount's changed since, and no entry equal
 * to it without case (the server's comparison); only for ASCII names in a listing of ASCII names
 * (other case foldings are the server's), and not for a name the server may take for another (an
 * 8.3 name with '~', a trailing dot or space). */
int dircache_absent(struct fs_ctx *fs, const struct fs_dlist *d, const atomic_uint_fast64_t *moved,
                    const char *name);
/* Up to k names of directories in d (NULL: none) that come after the entry called after (NULL: from
 * the first) in the listing's order, then in name order, without repeats; copies into out, the
 * count is returned (free each). ENOMEM: fewer. */
size_t dircache_dirs_after(const struct fs_dlist *d, const char *after, char **out, size_t k);
/* Up to k names of entries that are not directories in d (NULL: none), those right after the entry
 * called after (NULL: the first ones) in the listing's order (the order find and tar meet them), or
 * sorted: by name (strcmp: git add, rsync, a shell's glob in the C locale); copies into out, the
 * count is returned (free each). after not in d: none. With dir_at, a directory met before k files
 * ends it (a walk that goes down into each directory where it meets it: find, tar), and *dir_at is
 * its name (malloc'd; NULL: none met, or ENOMEM). */
size_t dircache_files_after(const struct fs_dlist *d, int sorted, const char *after, char **out, size_t k,
                            char **dir_at);
double dircache_asked(const struct fs_dlist *d);      /* when it was asked for (fs_now()) */
uint64_t dircache_list_gen(const struct fs_dlist *d); /* fs->ns_gen when it was asked for */
/* Never served or used again (something showed it wrong); it still names what it held. */
void dircache_spoil(struct fs_dlist *d);
/* A copy of d's entries for a directory handle (NULL on ENOMEM; free with dircache_free_entries);
 * *asked: dircache_vouched. */
struct fs_dent *dircache_copy(const struct fs_dlist *d, size_t *n, double *asked);
void dircache_free_entries(struct fs_dent *v, size_t n);
void dircache_free(struct fs_dlist *d);

#endif
