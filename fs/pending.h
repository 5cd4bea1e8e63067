/* pending.h - creates put off until the new file's data goes (pending.c).
 *
 * A program that makes a file in a directory whose every name the mount knows (inode_known says
 * the name is absent: no lookup went to the server) is answered at once; the CREATE goes with
 * the file's first data as one compound (CREATE + WRITE + SET_INFO of the times,
 * smb3_create_write_async), or alone when something else needs the file on the server first.
 * Until that CREATE is answered the file is "pending": fh->f is NULL and in->pending is set. Only
 * what its own opener sends (write, getattr, setattr, flush, release) is handled without it; before any
 * other FUSE request is served, every pending CREATE is sent and answered (pending_barrier, from
 * the session's read of /dev/fuse), so that nothing else can see the namespace as the server
 * does not yet have it. A failed CREATE is reported where a failed write is: at close (flush),
 * fsync or the next write. */
#ifndef SMB3FS_PENDING_H
#define SMB3FS_PENDING_H

#include "file.h"

/* ll_create: may the CREATE of name in parent, opened with flags, be put off? */
int pending_may_defer(struct fs_ctx *fs, struct fs_inode *parent, const char *name, int flags);
/* The attributes a put-off new file shows until its CREATE is answered (a regular file, empty,
 * made now). */
void pending_stat(struct smb3_stat *st);
/* fh (a new open, before its create is answered to the kernel) has its CREATE put off: path
 * (the share path, taken over), the server flags and mode as the CREATE is to carry them.
 * 0, or -1 (ENOMEM: nothing changed). */
int pending_start(struct fs_file *fh, char *path, int flags, int64_t mode);
/* Is fh's CREATE still to be answered? (any thread, no lock) */
int pending_is(const struct fs_file *fh);
/* fn(arg, rc) once fh's CREATE was answered (at once when it was): rc 0 = the file exists and
 * fh_handle(fh) is its handle, else SMB3_E*. A CREATE not yet sent goes now, alone. */
void pending_when_created(struct fs_file *fh, void (*fn)(void *arg, int rc), void *arg);
/* The same for the pending file in (any open of it): 1 = fn will run; 0 = in is not pending (fn
 * does not run). */
int pending_when_inode_created(struct fs_ctx *fs, struct fs_inode *in, void (*fn)(void *arg, int rc),
                               void *arg);
/* fh's data (len bytes at off, len may be 0) and times (NULL: none) sent with its CREATE, as one
 * compound: 1 = taken, done(bytes written or SMB3_E*, arg) runs later (I/O thread); 0 = fh is
 * not pending (send it as usual); -1 = its CREATE is on the way (wait with pending_when_created). */
int pending_send_data(struct fs_file *fh, const void *buf, size_t len, uint64_t off,
                      const struct timespec_smb3 *at, const struct timespec_smb3 *mt, smb3_cb done,
                      void *arg);
/* The session's read of /dev/fuse got the FUSE request r (fusereq.h): unless it is one that
 * pending files' own openers send, send every pending CREATE and wait for their answers. */
struct fs_req;
void pending_barrier(struct fs_ctx *fs, const struct fs_req *r);
void pending_init(struct fs_ctx *fs);
/* The server's clock: seen in the answer to a CREATE that made something (srv: the new entry's
 * times), and estimated from the last one seen (0 when none was: *now unset). A put-off create
 * has none of its own when its data goes (writeback.c: the write time set with it). */
void fs_clock_note(struct fs_ctx *fs, const struct timespec_smb3 *srv);
int fs_clock_now(struct fs_ctx *fs, struct timespec_smb3 *now, double *at);

#endif
