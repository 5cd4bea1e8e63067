/* nsop.h - one namespace or attribute operation in flight (nsop.c), shared by ops_ns.c and
 * ops_attr.c. */
#ifndef SMB3FS_NSOP_H
#define SMB3FS_NSOP_H

#include "conn.h"
#include "inode.h"

/* One operation in flight. */
struct nsop {
  struct fs_ctx *fs;
  fuse_req_t req;
  struct fs_inode *in, *parent, *newparent, *victim;
  char *name, *newname, *path, *dest, *path2, *hidden; /* path2: the hidden name's path */
  struct fs_file *fh;
  struct fs_file *fh_found; /* getattr: an open of the file found here (files_find_open), put at the end */
  /* unlink: the victim's handle taken from the close queue (closeq_take), to be closed in the
   * removal's compound (NULL once handed over), and its open, put when the operation ends */
  smb3_file *closing;
  struct fs_file *closing_fh;
  struct stat attr;
  int to_set;
  int step;
  int replace;
  int silly;
  int rmdir;          /* unlink or rmdir (remove_start) */
  int64_t links_left; /* unlink: the file's links after it (the server's count at the removal, less one); -1
                         unknown */
  int made_dir;       /* mkdir: the directory was made (inode_known_empty) */
  int made;           /* 1: mkdir, mknod or symlink made the entry, its owner is still to be set; 2: done */
  int adds;           /* mkdir, mknod, symlink, link: the entry is a name it added to parent (not a lookup) */
  int listed;         /* lookup: answered from a recent listing (relist.h) asked for at `asked` */
  int posix;          /* setattr: the share speaks POSIX (chmod and chown go to the server) */
  mode_t mode;        /* mknod: type and permission bits; mkdir: permission bits */
  dev_t rdev;         /* mknod: the device */
  double asked;       /* entry operations: when the server was asked (inode_link) */
  uint64_t gen;       /* entry operations: the namespace's generation when the path was made (dircache_gen) */
  /* Asked again on a new connection if the one it was sent on is lost (see fs_park): */
  void (*start)(struct nsop *); /* (re)sends it; NULL: never asked again */
  struct fs_retry retry;        /* retry.conn: the connection start() used */
  int unsent_only;              /* start() may be repeated only if its request never left */
  int sending;                  /* start() is submitting (cleared by the request's callback) */
};

/* A new operation for req (replies ENOMEM and returns NULL when there is no memory). */
struct nsop *nsop_new(fuse_req_t req);
void nsop_free(struct nsop *o);
/* Reply and free: err a positive errno or 0; rc an SMB3_E* code. */
void nsop_finish_err(struct nsop *o, int err);
void nsop_finish_rc(struct nsop *o, int rc);
/* A lost connection: wait for the next one and ask again, once, if the operation has a start()
 * (each of those can be asked twice without harm, or, for unsent_only ones (mkdir, rmdir,
 * unlink, link), when the request was refused before it left: the connection was known to be
 * lost). Otherwise reply rc. */
void nsop_finish_smb(struct nsop *o, int rc);
/* Submission result: on failure the callback never runs, so finish here. */
void nsop_submitted(struct nsop *o, int rc);
/* Run start(o) now and again on the next connection if this one is lost. */
void nsop_run(struct nsop *o, void (*start)(struct nsop *));
/* The same for an operation that must not be done twice: again only if it never left. */
void nsop_run_unsent(struct nsop *o, void (*start)(struct nsop *));

#endif
