/* nsop.c - one namespace or attribute operation in flight (ops_ns.c, ops_attr.c): what it holds,
 * how it ends (each way replies exactly once), and how it is asked again on a new connection
 * after the one it was sent on is lost (fs_park). */
#include <stdlib.h>

#include "conn.h"
#include "dfs.h"
#include "file.h"
#include "nsop.h"

struct nsop *nsop_new(fuse_req_t req) {
  struct nsop *o = calloc(1, sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return NULL;
  }
  o->fs = fuse_req_userdata(req);
  o->req = req;
  return o;
}

static void closing_closed(int rc, void *arg) {
  (void)rc; /* (its data was on the server before it was queued, closeq.h) */
  file_put(arg);
}

void nsop_free(struct nsop *o) {
  if (o->closing) { /* never handed over: closed on its own, as the queue would have */
    if (smb3_close_async(o->closing, closing_closed, o->closing_fh)) file_put(o->closing_fh);
  } else if (o->closing_fh) {
    file_put(o->closing_fh);
  }
  if (o->fh_found) file_put(o->fh_found);
  inode_put(o->fs, o->in);
  inode_put(o->fs, o->parent);
  inode_put(o->fs, o->newparent);
  inode_put(o->fs, o->victim);
  free(o->name);
  free(o->newname);
  free(o->path);
  free(o->dest);
  free(o->path2);
  free(o->hidden);
  free(o);
}

void nsop_finish_err(struct nsop *o, int err) { /* err: positive errno or 0 */
  fuse_reply_err(o->req, err);
  nsop_free(o);
}

void nsop_finish_rc(struct nsop *o, int rc) {
  nsop_finish_err(o, fs_errno(rc));
}

static void resume(void *arg, int ok) {
  struct nsop *o = arg;
  if (ok)
    o->start(o);
  else
    nsop_finish_rc(o, o->retry.rc);
}

/* A lost connection: wait for the next one and ask again, once, if the operation has a start()
 * (each of those can be asked twice without harm, or, for unsent_only ones (mkdir, rmdir,
 * unlink), when the request was refused before it left: the connection was known to be lost). */
void nsop_finish_smb(struct nsop *o, int rc) {
  /* the server says a name in the directory is there, or is not, against what we hold: whatever we
   * knew of it is stale (inode_known) */
  if (o->parent && (rc == SMB3_EEXIST || rc == SMB3_ENOENT)) inode_known_forget(o->fs, o->parent);
  /* behind a DFS link (refused before anything was done), or a link's lost connection: dfs.c */
  if (o->start && (rc == SMB3_EDFS || !o->unsent_only || o->sending) &&
      fs_dfs_retry(o->fs, &o->retry, rc, o->path, resume, o))
    return;
  if (o->start && (!o->unsent_only || o->sending)) {
    if (fs_park_once(o->fs, &o->retry, rc, resume, o)) return;
  } else if (fs_conn_error(rc)) {
    reconnect_kick(o->fs);
  }
  nsop_finish_rc(o, rc);
}

/* Submission result: on failure the callback never runs, so finish here. */
void nsop_submitted(struct nsop *o, int rc) {
  if (rc) nsop_finish_smb(o, rc);
}

/* Run start(o) now and again on the next connection if this one is lost. */
void nsop_run(struct nsop *o, void (*start)(struct nsop *)) {
  o->start = start;
  start(o);
}

/* The same for an operation that must not be done twice: again only if it never left. */
void nsop_run_unsent(struct nsop *o, void (*start)(struct nsop *)) {
  o->unsent_only = 1;
  nsop_run(o, start);
}
