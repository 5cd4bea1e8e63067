/* openahead.h - small files opened ahead of a program that reads a directory's files one after
 * another in the order the listing gave them, or by name (openahead.c).
 *
 * find -exec cat, tar cf, grep -r, cp -r from the mount: each file costs an open whose compound
 * (CREATE + READ, ops_file.c) is one round trip, and the program waits for it before it asks for
 * the next file, so the link, smbd, the daemon and the kernel take turns and a file costs their
 * sum. When two read-only opens in a row are of a file and the next file after it in its
 * directory's last listing, in the listing's order (find, tar) or by name (git add, rsync, a glob),
 * or while such a walk goes on, of the first file of another directory, or of the next file in
 * find's order (the listing's, going down into each directory where it meets it, and on in the parent
 * after it), the next small files in that order (4, then up to 64 while the program's opens take
 * them; in the listing's order they go on into subdirectories that were listed too, and up as far as
 * the walk has been) are opened the same way
 * at once (CREATE + READ, each asking for a read and handle lease with the inode's key), and the
 * program's own opens of them take the handle and the bytes instead of sending anything; an open
 * that comes while its file's CREATE is still on its way waits for that answer.
 *
 * What such an open is given is what its own CREATE would have given: the read lease that came
 * with the handle is still held (another client's open that would change the file breaks it
 * first, and the break closes the handle here: notifier.c), the mount changed neither the data
 * (fs_inode.data_gen) nor the attributes (the inode's size, times and mode are those the handle
 * was opened at) since, and the name still leads to it. Otherwise the handle is closed and the
 * open is sent as usual.
 *
 * Handles nobody took are closed actimeo seconds after their answer (the close queue's thread:
 * closeq_wake_at), when a drain of the close queue (rename, rmdir, a removal of the file, a lease
 * break: closeq_drain) needs every handle the application closed or never opened closed first, and
 * at unmount. actimeo=0 and cache=none turn it off. The close
 * queue counts each open ahead from its sending until its CLOSE is answered (closeq_hold), so that
 * a drain waits for it, and no open ahead starts while a drain waits. */
#ifndef SMB3FS_OPENAHEAD_H
#define SMB3FS_OPENAHEAD_H

#include "inode.h"

/* Files opened ahead of a reader's walk: OA_WINDOW_MIN when it begins, twice as many after each
 * open that took one, up to OA_WINDOW (the opens in flight bound a walk's rate: 64 a round trip, 6
 * files a millisecond on a 10 ms link); OA_SLOTS at once in all (find keeps some of each level it went
 * down into). */
#define OA_WINDOW_MIN 4
#define OA_WINDOW 64
#define OA_SLOTS 128

int oa_start(struct fs_ctx *fs); /* 0 or -errno */
/* No more opens ahead; the handles held are closed (before the session ends). */
void oa_stop(struct fs_ctx *fs);
void oa_free(struct fs_ctx *fs); /* after the disconnect */

/* How many bytes an open of in for reading reads with its CREATE: the size and one byte more (to
 * see the end) for a regular file smaller than min(OA_READ_MAX, rsize) that has no data of ours
 * waiting and whose pages the kernel does not keep; 0: none (in->lock held). */
#define OA_READ_MAX (64u << 10)
size_t oa_read_len(const struct fs_ctx *fs, const struct fs_inode *in);
/* 1 when a handle of in was opened ahead by another name than path (a hard link): a lease key
 * belongs to one name, so an open of in by path drains the close queue first (as closeq_conflict). */
int oa_conflict(struct fs_ctx *fs, struct fs_inode *in, const char *path);

/* What a handle opened ahead gives the open that takes it (the caller owns f). */
struct oa_got {
  smb3_file *f;
  struct smb3_stat st;
  int64_t got; /* the READ's bytes, or SMB3_E* */
};
/* The open's continuation when its file's CREATE was on its way: rc, f, st, nread as
 * smb3_open_read_cb; rc = 0 with f NULL: the answer is no good any more (see above), open it as
 * usual. */
typedef void (*oa_wait_cb)(void *arg, int rc, smb3_file *f, const struct smb3_stat *st, int64_t nread);
/* A read-only open of in by path, through connection c, that reads with its CREATE: 0 = nothing
 * opened ahead for it; 1 = *g is the handle and what was read; 2 = its CREATE is on its way:
 * cb(arg, ...) runs when it is answered (I/O thread). With 1 and 2, *buf (*len bytes, charged to the
 * mount's budget, the caller's to free) is where the READ put the bytes, read at in->data_gen *gen;
 * set before cb can run. */
int oa_claim(struct fs_ctx *fs, struct fs_inode *in, const char *path, smb3_client *c, uint8_t **buf,
             size_t *len, uint64_t *gen, struct oa_got *g, oa_wait_cb cb, void *arg);
/* A read-only open of in that reads with its CREATE, taken from an open ahead (taken: oa_claim gave
 * it) or about to be sent: noted, before it is answered (the program's next open may come as soon as
 * it is), as the last one of a walk if the opens follow the listing, and then the files to open
 * ahead of it (NULL: none). oa_go(plan, send) opens them (send: 0 when the open could not be sent),
 * after the open's own compound is on the wire, and frees the plan. */
struct oa_plan;
/* The program opens in (ll_open, before oa_claim): an open ahead of in that a plan made before this
 * sends no more (the program went past it: its handle would wait for nothing). */
void oa_opening(struct fs_ctx *fs, struct fs_inode *in);
struct oa_plan *oa_note(struct fs_ctx *fs, struct fs_inode *in, int taken);
void oa_go(struct fs_ctx *fs, struct oa_plan *plan, int send);
/* in's handle opened ahead (if any) is closed, or closed when its CREATE is answered: 1 when there
 * was one (a closeq_drain then waits for its CLOSE). */
int oa_drop(struct fs_ctx *fs, struct fs_inode *in);
/* Every handle opened ahead is closed (closeq_drain). */
void oa_drop_all(struct fs_ctx *fs);
/* Those nobody took within actimeo seconds of their answer are closed (the close queue's thread,
 * closeq_wake_at). */
void oa_expire(struct fs_ctx *fs);
/* Handles opened ahead, answered, not taken yet (smb3 stats). */
int oa_held(struct fs_ctx *fs);

#endif
