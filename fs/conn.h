/* conn.h - the current connection and operations parked across a reconnect (conn.c). */
#ifndef SMB3FS_CONN_H
#define SMB3FS_CONN_H

#include "mount.h"

smb3_client *fs_conn(struct fs_ctx *fs);
/* A library error that means the connection is gone (SMB3_ECLOSED, SMB3_ETIMEDOUT...). */
int fs_conn_error(int rc);
/* An operation saw the connection fail: look now rather than at the next tick. */
void reconnect_kick(struct fs_ctx *fs);
/* An operation that failed because the connection `seen` was lost waits for the next one:
 * resume(arg, 1) runs once the mount has another connection (at once if it already has, else on
 * the reconnect thread), or resume(arg, 0) when none came within FS_PARK_SECONDS of the outage's
 * start or the mount is ending. Returns -1 when it cannot wait (the outage is older than that, the
 * reconnect cannot log on (conn_logon_failed), or the mount is ending: the caller then fails the
 * operation itself). */
#define FS_PARK_SECONDS 15.0
int fs_park(struct fs_ctx *fs, smb3_client *seen, void (*resume)(void *arg, int ok), void *arg);
/* What an operation that may be sent once more after a lost connection keeps. */
struct fs_retry {
  smb3_client *conn; /* the connection it was (last) sent on; NULL: never sent, never again */
  int again;         /* parked once already */
  int rc;            /* the lost connection's error, to answer if no new connection comes */
  int dfs;           /* handed to dfs.c (a DFS link followed, or its connection logged on again) */
};
/* rc from an operation: if it means the connection is lost, kick the reconnect thread and, the
 * first time for r, park the operation (fs_park on r->conn). 1 when parked (resume runs later;
 * at once with ok = 0 and r->rc the logon error while the reconnect cannot log on), 0 when the
 * caller finishes the operation with rc itself. */
int fs_park_once(struct fs_ctx *fs, struct fs_retry *r, int rc, void (*resume)(void *arg, int ok), void *arg);
/* The state lives from conn_start to conn_free; after conn_stop nothing parks any more. */
int conn_start(struct fs_ctx *fs);
void conn_stop(struct fs_ctx *fs);
void conn_free(struct fs_ctx *fs);
/* For the reconnect thread. conn_wait: wait until t (or a parked operation's earlier deadline), a
 * kick or the stop (unkick: earlier kicks do not count), then resume the parked operations whose
 * connection is back (ok) or whose time is up (not ok). -1: the mount is stopping. */
int conn_wait(struct fs_ctx *fs, double t, int unkick);
/* Resume the parked operations whose time is up and forget kicks; *next: the earlier of t and the
 * next deadline. -1 if the mount is stopping. */
int conn_expire(struct fs_ctx *fs, double t, double *next);
/* The connection is lost (the outage starts now unless an operation saw it first) or alive. */
void conn_outage(struct fs_ctx *fs, int lost);
int conn_stopping(struct fs_ctx *fs);
/* Make nc the current connection (before conn_resume_parked: see fs_park). */
void conn_publish(struct fs_ctx *fs, smb3_client *nc);
/* The last reconnect attempt reached the server but could not log on (rc: SMB3_ELOGON), or failed
 * otherwise (rc 0). While a logon fails, parked operations and those that would park fail at once
 * with rc (EACCES): only the user can help (kinit). Cleared by conn_publish. */
void conn_logon_failed(struct fs_ctx *fs, int rc);
/* The outage is over: resume every operation parked on an older connection. */
void conn_resume_parked(struct fs_ctx *fs);
/* The mount is ending: every parked operation is resumed with ok = 0. */
void conn_resume_all_failed(struct fs_ctx *fs);

#endif
