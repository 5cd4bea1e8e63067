/* dfs.h - DFS links below the mounted directory (dfs.c): the connection each path goes to. */
#ifndef SMB3FS_DFS_H
#define SMB3FS_DFS_H

#include "conn.h"

/* Where a path of the mount (share-relative, as inode_path gives it) is sent: c and the path there
 * (path itself, or a translated copy owned by the route: fs_route_done). */
struct fs_route {
  smb3_client *c;
  const char *path;
  char *own;
};
void fs_route(struct fs_ctx *fs, const char *path, struct fs_route *r);
void fs_route_done(struct fs_route *r);
static inline smb3_client *fs_route_c(struct fs_ctx *fs, const char *path, struct fs_route *r) {
  fs_route(fs, path, r);
  return r->c;
}
/* Two paths of one request (rename, link): SMB3_EXDEV when they go to different connections. */
static inline int fs_route2(struct fs_ctx *fs, const char *p1, const char *p2, struct fs_route *r1,
                            struct fs_route *r2) {
  fs_route(fs, p1, r1);
  fs_route(fs, p2, r2);
  return r1->c == r2->c ? 0 : SMB3_EXDEV;
}
static inline void fs_route2_done(struct fs_route *r1, struct fs_route *r2) {
  fs_route_done(r1);
  fs_route_done(r2);
}
/* Nonzero when c is the mount's connection or the current one of a DFS link. */
int fs_dfs_current(struct fs_ctx *fs, smb3_client *c);
/* rc from an operation on path, sent on r->conn. SMB3_EDFS from the mount's own connection (the
 * server says path is behind a DFS link): follow the referral on a helper thread, keep a
 * connection to the target for the link, then resume(arg, 1) (start the operation again: it is
 * routed there now), or set r->rc and resume(arg, 0). A lost connection of a link: log on to its
 * target again the same way. 1 when taken over, 0 when the caller goes on with rc itself (at most
 * twice per operation: r->dfs counts). */
int fs_dfs_retry(struct fs_ctx *fs, struct fs_retry *r, int rc, const char *path,
                 void (*resume)(void *arg, int ok), void *arg);
/* The links' connections' counters added to s (smb3 stats, --stats). */
void fs_dfs_add_stats(struct fs_ctx *fs, struct smb3_stats *s);
/* break_cb: the lease break handler each link's connection gets (notifier.c's). */
int fs_dfs_init(struct fs_ctx *fs, smb3_break_cb break_cb);
/* At the mount's end, before its connection goes: wait for the helper threads, then disconnect
 * every link's connection. */
void fs_dfs_free(struct fs_ctx *fs);

#endif
