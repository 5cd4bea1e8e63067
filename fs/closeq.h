/* closeq.h - handles whose CLOSE changes nothing, closed together (closeq.c).
 *
 * A program that reads a tree of small files closes one file per round trip it spends opening the
 * next; the kernel's RELEASE does not wait for our CLOSE, so the CLOSEs can wait a moment and go
 * several in one compound (smb3_close_many_async): up to SMB3_CLOSE_MANY_MAX at once, at most
 * CLOSEQ_RTTS round trips (as the batches so far took; at least CLOSEQ_DELAY, at most
 * CLOSEQ_DELAY_MAX) after the first of them: a batch fills on a 10 ms link as on loopback. Handles opened for
 * reading, and handles whose last data went with an explicit mtime (tar: write, futimens, close; or cp: a
 * file the open created and wrote in one go, whose closing flush set the time the server would have given it:
 * wb_flush_closing; fs_file.mtime_forced): any other handle
 * that wrote has its CLOSE sent at once, because the server sets the file's modification time when
 * it closes a handle that wrote (a CLOSE later would move the time a program saw right after its
 * close), while one whose write time was set keeps that time. Never one of a file byte-range locks
 * were taken on (a CLOSE drops what the handle held), nor under cache=loose (its writers' CLOSE
 * brings the attributes back).
 * A namespace operation (rmdir, rename) first waits for the queue (closeq_drain): a file still open
 * on the server would stay delete-pending, and its directory would not be empty. An unlink closes
 * the file's own waiting handle in its compound instead (closeq_take), and waits for the queue
 * only when that cannot be done. */
#ifndef SMB3FS_CLOSEQ_H
#define SMB3FS_CLOSEQ_H

#include "file.h"

#define CLOSEQ_DELAY 0.02     /* seconds */
#define CLOSEQ_DELAY_MAX 0.25 /* seconds */
#define CLOSEQ_RTTS 32

int closeq_start(struct fs_ctx *fs); /* 0 or -errno */
/* Send what is queued and stop taking more (what comes after is closed at once); before the
 * session is disconnected, which completes them. */
void closeq_stop(struct fs_ctx *fs);
void closeq_free(struct fs_ctx *fs); /* after the disconnect: nothing can complete any more */
/* Close f (the handle of fh, from file_closing) with others; file_put(fh) once it is closed. 0 when
 * queued, -1 when the caller must close it itself (no queue). */
int closeq_add(struct fs_file *fh, smb3_file *f);
/* 1 when a handle of in opened by another name than path waits to be closed: a CREATE with the
 * inode's lease key by that other name (a hard link) would be refused while it is open (a lease
 * key belongs to one name, MS-SMB2 3.3.5.9.8), so the open drains the queue first. Also, for an
 * open that may write (writing), when a waiting handle of in set the file's write time: the
 * server gives the file that time again when such a handle closes, which would undo the time of
 * the new open's writes if that CLOSE came after them. */
int closeq_conflict(struct fs_ctx *fs, struct fs_inode *in, const char *path, int writing);
/* 1 when a handle of in waits in the queue: a lease break of in drains the queue before it is
 * acknowledged (notifier.c), so that the other client's open, which waits for the acknowledgment,
 * does not find a handle the application closed already (a delete would stay pending on it). */
int closeq_holds(struct fs_ctx *fs, struct fs_inode *in);
/* A removal of the file at path (in: its inode, or NULL when the mount knows none by that name;
 * an unlink through connection c) needs that file's handles closed first, not the others': 1 =
 * the one queued handle of it (of in, or opened by path) was taken out of the queue (*f, to close
 * in the removal's own compound, smb3_close_unlink_async; file_put(*fh) once that is done); 0 =
 * none of it waits or is on its way; -1 = more than one, one of another connection, one whose
 * CLOSE is on its way, a batch whose handles are being given back (any: one may be the file's, still
 * counted as open), a drain already waiting, or handles waiting while the file is unknown (another
 * name of one of theirs, a hard link): drain the queue (closeq_drain). */
int closeq_take(struct fs_ctx *fs, struct fs_inode *in, const char *path, smb3_client *c, struct fs_file **fh,
                smb3_file **f);
/* smb3_set_close_riders' take (arg: the fs_ctx): the queued handles of c (up to max) go with the
 * compound c is about to send, as a batch in flight, and cost no round trip of their own. */
int closeq_riders(void *arg, smb3_client *c, smb3_file **files, int max, smb3_done_cb *done, void **done_arg);
/* An open ahead (openahead.h) begins: a drain waits for its closeq_unhold (when a program took its
 * handle, or its CLOSE was answered). 0: none may begin (a drain waits, the queue stopped, or there
 * is no queue). */
int closeq_hold(struct fs_ctx *fs);
/* 1 while a drain waits (or the queue stopped): what is held is being dropped (closeq_hold says 0). */
int closeq_draining(struct fs_ctx *fs);
void closeq_unhold(struct fs_ctx *fs);
/* The holder's callbacks (openahead.c, a floor above): drop(fs) closes what is held, at the start of
 * every drain; expire(fs), on the queue's thread at the time asked for with closeq_wake_at (fs_now()
 * seconds) or soon after. */
void closeq_on_held(struct fs_ctx *fs, void (*drop)(struct fs_ctx *), void (*expire)(struct fs_ctx *));
void closeq_wake_at(struct fs_ctx *fs, double t);
/* then(arg) once nothing queued before this call is still open: at once when the queue is
 * empty, else on the I/O thread. */
void closeq_drain(struct fs_ctx *fs, void (*then)(void *arg), void *arg);

#endif
