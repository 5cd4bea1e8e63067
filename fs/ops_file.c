/* ops_file.c - FUSE operations on open files: create, open, read, write, flush, fsync, release.
 * Data goes through readahead.c and writeback.c; opens ask for a lease (cache.c); the open file
 * itself is file.c's. lseek, fallocate and copy_file_range are in ops_range.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "cache.h"
#include "closeq.h"
#include "conn.h"
#include "dfs.h"
#include "dircache.h"
#include "file.h"
#include "inode.h"
#include "locks.h"
#include "memtrim.h"
#include "openahead.h"
#include "ops.h"
#include "owner.h"
#include "pending.h"
#include "readahead.h"
#include "relist.h"
#include "reply.h"
#include "writeback.h"

struct fop {
  struct fs_ctx *fs;
  fuse_req_t req;
  struct fs_inode *in, *parent;
  char *name, *path;
  struct fuse_file_info fi;
  smb3_file *f;
  uint64_t gen;
  uint8_t key[16];
  int flags;
  int asked;    /* the flags the application opened with (O_ACCMODE) */
  mode_t mode;  /* create: the new file's permission bits */
  int opening;  /* counted in in->opening */
  uint8_t *pre; /* open: the file's first bytes, read in the CREATE's compound (pre_len asked) */
  size_t pre_len;
  int64_t pre_got;       /* what that READ gave (< 0: nothing) */
  struct fs_retry retry; /* open: sent once more after a lost connection */
  int ahead_asked;       /* open: openahead.h was asked for its file */
};

/* With the kernel's write-back cache the kernel reads pages of a file opened write-only to fill
 * partly written ones: open such files for reading too when the server allows it (o->asked keeps
 * the original for the retry). */
static int server_flags(const struct fs_ctx *fs, int flags) {
  if (fs->wb_cache && (flags & O_ACCMODE) == O_WRONLY) return (flags & ~O_ACCMODE) | O_RDWR;
  return flags;
}

/* An open widened by server_flags() that the server refused: try again as asked. */
static int retry_narrower(struct fop *o, int rc) {
  if (rc != SMB3_EACCES || (o->flags & O_ACCMODE) == (o->asked & O_ACCMODE)) return 0;
  o->flags = (o->flags & ~O_ACCMODE) | (o->asked & O_ACCMODE);
  return 1;
}

static struct fop *fop_new(fuse_req_t req, struct fuse_file_info *fi) {
  struct fop *o = calloc(1, sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return NULL;
  }
  o->fs = fuse_req_userdata(req);
  o->req = req;
  o->fi = *fi;
  return o;
}

static void fop_free(struct fop *o) {
  if (o->pre) {
    free(o->pre);
    fs_mem_release(o->fs, o->pre_len);
  }
  if (o->opening) {
    pthread_mutex_lock(&o->in->lock);
    o->in->opening--;
    pthread_mutex_unlock(&o->in->lock);
  }
  inode_put(o->fs, o->in);
  inode_put(o->fs, o->parent);
  free(o->name);
  free(o->path);
  free(o);
}

static void fop_fail(struct fop *o, int smb_rc) {
  if (fs_conn_error(smb_rc)) reconnect_kick(o->fs);
  if (o->parent && (smb_rc == SMB3_EEXIST || smb_rc == SMB3_ENOENT)) inode_known_forget(o->fs, o->parent);
  fs_reply_smb_err(o->req, smb_rc);
  fop_free(o);
}

/* A new handle becomes an fs_file and the reply's file info (in->lock not held). */
static struct fs_file *adopt_as(struct fop *o, struct fs_inode *in, smb3_file *f, int truncated,
                                uint32_t lease);
static struct fs_file *adopt(struct fop *o, struct fs_inode *in, smb3_file *f, int truncated) {
  return adopt_as(o, in, f, truncated, smb3_file_lease(f));
}
/* (lease: what the handle has, or for a put-off create what it asks for: nobody else can open a file
 * that is not yet on the server) */
static struct fs_file *adopt_as(struct fop *o, struct fs_inode *in, smb3_file *f, int truncated,
                                uint32_t lease) {
  struct fs_file *fh = file_new(o->fs, in, f, o->fi.flags);
  if (!fh) return NULL;
  ra_init(fh);
  pthread_mutex_lock(&in->lock);
  if (lease || in->nopen == 1) in->lease = lease;
  if (truncated) {
    in->data_gen++;
    in->kern_size = 0; /* the kernel truncated its inode too (FUSE_CAP_ATOMIC_O_TRUNC) */
  }
  in->opened_ever = 1;
  int mode = cache_open_mode(o->fs, in, in->lease, &o->fi);
  fh->direct_wr = mode == CACHE_DIRECT_WRITER;
  fh->direct_rd = mode == CACHE_DIRECT_READER;
  in->direct_writers += fh->direct_wr;
  if (mode == CACHE_DIRECT_WRITER) atomic_fetch_add(&o->fs->ctr.direct_wr_opens, 1);
  if (mode == CACHE_DIRECT_READER) atomic_fetch_add(&o->fs->ctr.direct_rd_opens, 1);
  fh->direct = o->fi.direct_io;
  pthread_mutex_unlock(&in->lock);
  o->fi.fh = (uint64_t)(uintptr_t)fh;
  return fh;
}

/* Kernel read-ahead for the mount: the bdi default (128 KiB) makes a reader with small blocks
 * send 128 KiB FUSE READs, eight times as many requests as a 1 MiB reader. Like the kernel's
 * cifs client (rasize), raise it to the largest FUSE request (1 MiB, FS_KERNEL_RA) so that bs=4k reads reach
 * us as max-size requests. The bdi is found through /proc/self/mountinfo (a stat() of the mount point would
 * wait for our own request loop). It must run after FUSE INIT, whose reply lowers the bdi's read-ahead to
 * what the kernel offered (the old default), so the first open does it. Best effort: needs
 * root, else the default stays. */
static void tune_kernel_readahead(struct fs_ctx *fs) {
  if (__atomic_exchange_n(&fs->ra_tuned, 1, __ATOMIC_ACQ_REL)) return;
  unsigned kb = FS_KERNEL_RA(fs) / 1024;
  char real[PATH_MAX], want[4 * PATH_MAX], line[8192], mp[8192];
  if (!fs->mountpoint || !realpath(fs->mountpoint, real)) return;
  size_t w = 0;
  for (const char *p = real; *p && w + 5 < sizeof want; p++) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\\')
      w += (size_t)snprintf(want + w, 5, "\\%03o", (unsigned char)*p);
    else
      want[w++] = *p;
  }
  want[w] = 0;
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return;
  char dev[32] = "";
  while (fgets(line, sizeof line, f)) {
    char mm[32];
    const char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%*s %*s %31s %*s %8191s", mm, mp) != 2) continue;
    if (!strcmp(mp, want) && !strncmp(sep + 3, "fuse", 4))
      snprintf(dev, sizeof dev, "%s", mm); /* the last one is ours */
  }
  fclose(f);
  if (!dev[0]) return;
  char path[96];
  snprintf(path, sizeof path, "/sys/class/bdi/%s/read_ahead_kb", dev);
  FILE *ra = fopen(path, "we");
  if (!ra) return;
  fprintf(ra, "%u\n", kb);
  fclose(ra);
}

/* ---- open ---- */
static void open_go(int err, void *arg);

static void open_resume(void *arg, int ok) {
  struct fop *o = arg;
  if (!ok) {
    fop_fail(o, o->retry.rc);
    return;
  }
  free(o->path); /* the file may have been renamed while this waited */
  if (!(o->path = inode_path(o->fs, o->in))) {
    fs_reply_smb_err(o->req, SMB3_ENOENT);
    fop_free(o);
    return;
  }
  open_go(0, o);
}

static void open_done(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  struct fop *o = arg;
  if (rc && retry_narrower(o, rc)) {
    open_go(0, o);
    return;
  }
  /* the open of an existing file can be sent again: on a lost connection, wait for the next one */
  if (rc && (fs_dfs_retry(o->fs, &o->retry, rc, o->path, open_resume, o) ||
             fs_park_once(o->fs, &o->retry, rc, open_resume, o)))
    return;
  if (rc && rc != SMB3_ENOENT) {
    fop_fail(o, rc);
    return;
  }
  /* No file by the name any more, or another file's now (another client replaced it: a rename over
   * it, a delete and a new file): the kernel's entry and what it holds of the old file (its size)
   * are stale. ESTALE makes it look the name up again and open what it finds (relist.h:
   * relist_gone). */
  uint64_t id = __atomic_load_n(&o->in->srv_id, __ATOMIC_RELAXED);
  if (rc || (st->ino && id && st->ino != id)) {
    if (!rc) file_close_quietly(f);
    relist_gone(o->fs, o->in);
    fuse_reply_err(o->req, ESTALE);
    fop_free(o);
    return;
  }
  inode_set_open_attr(o->fs, o->in, st); /* the CREATE response carries size and times */
  struct fs_file *fh = adopt(o, o->in, f, o->flags & O_TRUNC);
  if (!fh) {
    file_close_quietly(f);
    fop_fail(o, SMB3_ENOMEM);
    return;
  }
  /* The first bytes read with the open become the stream's first read-ahead buffer, while the read
   * lease that came with the same CREATE keeps them true (and nothing changed them here since). */
  if (o->pre && o->pre_got >= 0 && (smb3_file_lease(f) & SMB3_LEASE_READ) &&
      ra_prefill(fh, o->pre, o->pre_len, o->pre_got, o->gen)) {
    o->pre = NULL; /* the buffer's now */
    atomic_fetch_add(&o->fs->ctr.open_reads, 1);
  }
  if (fuse_reply_open(o->req, &o->fi)) { /* interrupted: nobody will release it */
    file_close_quietly(f);
    file_put(fh);
  }
  fop_free(o);
}

static void open_read_done(int rc, smb3_file *f, const struct smb3_stat *st, int64_t nread, void *arg) {
  struct fop *o = arg;
  o->pre_got = rc ? -1 : nread;
  open_done(rc, f, st, arg);
}

/* A small file opened for reading is read with its open (CREATE + READ, one round trip): a program
 * that reads a tree of small files then costs one round trip per file for its data. Up to the
 * size the attributes said, plus one byte to see the end (oa_read_len); only with a read lease
 * (cache.c). */
static size_t open_read_len(struct fop *o, uint32_t want) {
  if ((o->flags & O_ACCMODE) == O_WRONLY || (o->flags & O_TRUNC) || !(want & SMB3_LEASE_READ)) return 0;
  pthread_mutex_lock(&o->in->lock);
  size_t len = oa_read_len(o->fs, o->in);
  o->gen = o->in->data_gen;
  pthread_mutex_unlock(&o->in->lock);
  return len;
}

/* The open waited for its file's CREATE sent ahead (openahead.h). */
static void open_waited(void *arg, int rc, smb3_file *f, const struct smb3_stat *st, int64_t nread) {
  struct fop *o = arg;
  if (!rc && !f) { /* no good any more: its own open */
    free(o->pre);
    fs_mem_release(o->fs, o->pre_len);
    o->pre = NULL;
    open_go(0, o);
    return;
  }
  open_read_done(rc, f, st, nread, o);
}

/* A read-only open that reads with its CREATE, the first time it is sent: taken from an open ahead
 * when there is one (1: done, or waiting for it), else -1 (noted with oa_note, its files ahead sent after
 * it); 0: not such an open. */
static int open_ahead(struct fop *o, smb3_client *c) {
  if ((o->flags & O_ACCMODE) != O_RDONLY || (o->flags & O_TRUNC) || o->ahead_asked) return 0;
  o->ahead_asked = 1;
  struct oa_got g = {0};
  struct fs_ctx *fs = o->fs;
  struct fs_inode *in = o->in;
  inode_ref(fs, in); /* (o may be gone once the open it waits for is answered) */
  int got = oa_claim(fs, in, o->path, c, &o->pre, &o->pre_len, &o->gen, &g, open_waited, o);
  if (got) { /* (noted before the reply: the program's next open may come at once) */
    struct oa_plan *plan = oa_note(fs, in, 1);
    if (got == 1) open_read_done(0, g.f, &g.st, g.got, o);
    oa_go(fs, plan, 1);
  }
  inode_put(fs, in);
  return got ? 1 : -1;
}

static void open_go(int err, void *arg) {
  (void)err; /* an earlier write error stays for that file's own fsync/close */
  struct fop *o = arg;
  uint32_t want = cache_lease_want(o->fs, o->flags);
  struct fs_route r;
  o->retry.conn = fs_route_c(o->fs, o->path, &r);
  size_t len = o->pre ? o->pre_len : open_read_len(o, want);
  int ahead = len && !o->pre ? open_ahead(o, r.c) : 0;
  if (ahead > 0) {
    fs_route_done(&r);
    return;
  }
  if (len && !o->pre) {
    budget_charge(&o->fs->mem, len); /* the reader waits for it: counted, never refused */
    if ((o->pre = malloc(len)))
      o->pre_len = len;
    else
      fs_mem_release(o->fs, len);
  }
  /* noted before it is sent (its answer may come, and the program's next open, before this thread
   * goes on), its files ahead sent after it */
  struct fs_ctx *fs = o->fs;
  struct oa_plan *plan = ahead < 0 ? oa_note(fs, o->in, 0) : NULL;
  int rc = o->pre ? smb3_open_read_async(r.c, r.path, o->flags, o->in->key, want, o->pre, o->pre_len,
                                         open_read_done, o)
                  : smb3_open_lease_async(r.c, r.path, o->flags, o->in->key, want, open_done, o);
  fs_route_done(&r);
  oa_go(fs, plan, !rc);
  if (rc && !fs_park_once(o->fs, &o->retry, rc, open_resume, o)) fop_fail(o, rc);
}

static void open_drained(void *arg) {
  struct fop *o = arg;
  if (o->flags & O_TRUNC) /* our unsent data must not land after the truncation */
    wb_flush(o->fs, o->in, 0, open_go, o);
  else
    open_go(0, o);
}

/* Reply: I/O thread (the CREATE, or the closes it waited for: closeq_conflict); reconnect thread if
 * it waited (for a new connection, or for the write-back flush of an O_TRUNC open that ended there:
 * ops.h). */
static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct fop *o = fop_new(req, fi);
  if (!o) return;
  tune_kernel_readahead(o->fs);
  o->in = inode_get(o->fs, ino);
  o->path = inode_path(o->fs, o->in);
  if (!o->path) {
    fuse_reply_err(req, ESTALE);
    fop_free(o);
    return;
  }
  pthread_mutex_lock(&o->in->lock);
  o->in->opening++; /* as good as open for kernel_view_stale() */
  o->opening = 1;
  pthread_mutex_unlock(&o->in->lock);
  oa_opening(o->fs, o->in);
  /* O_TRUNC reaches us with FUSE_CAP_ATOMIC_O_TRUNC and is done by the CREATE (OVERWRITE). */
  o->asked = fi->flags & O_ACCMODE;
  o->flags = server_flags(o->fs, fi->flags & (O_ACCMODE | O_TRUNC));
  if (closeq_conflict(o->fs, o->in, o->path, (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) ||
      oa_conflict(o->fs, o->in, o->path))
    closeq_drain(o->fs, open_drained, o);
  else
    open_drained(o);
}

/* ---- create ---- */
static void create_linked(struct fop *o, const struct smb3_stat *st);
static void create_owned(const struct smb3_stat *st, void *arg) {
  create_linked(arg, st);
}

static void create_statted(int rc, const struct smb3_stat *st, void *arg) {
  struct fop *o = arg;
  if (rc) {
    file_close_quietly(o->f);
    fop_fail(o, rc);
    return;
  }
  /* a file this CREATE made belongs to the caller */
  if (st->created && fs_own_new(o->fs, o->req, o->parent, o->path, st, create_owned, o)) return;
  create_linked(o, st);
}

static void create_linked(struct fop *o, const struct smb3_stat *st) {
  /* asked = -1: the entry of our own create is not evidence of another client's change (and a
   * new inode here would not have the lease key the CREATE was sent with) */
  if (st->created) { /* a new name in it: its mtime and ctime changed; a place we may create in */
    inode_dir_changed(o->fs, o->parent, 0);
    __atomic_store_n(&o->parent->made_in, 1, __ATOMIC_RELEASE);
  }
  struct fs_inode *in = inode_link_gen(o->fs, o->parent, o->name, st, o->gen, -1.0);
  struct fs_file *fh = in ? adopt(o, in, o->f, 1) : NULL;
  if (!fh) {
    if (in) inode_forget(o->fs, in->nodeid, 1);
    inode_put(o->fs, in);
    file_close_quietly(o->f);
    fop_fail(o, SMB3_ENOMEM);
    return;
  }
  if (st->created) {
    fh->born_known = 1;
    fh->born_srv = st->mtime;
    fh->born_loc = fs_now();
    fs_clock_note(o->fs, &st->mtime);
  }
  struct fuse_entry_param e;
  (void)fs_fill_entry(o->fs, in, &e); /* a new file: a new inode, whose type is this one */
  if (fuse_reply_create(o->req, &e, &o->fi)) {
    inode_forget(o->fs, in->nodeid, 1);
    file_close_quietly(o->f);
    file_put(fh);
  }
  inode_put(o->fs, in);
  fop_free(o);
}

static void create_opened(int rc, smb3_file *f, const struct smb3_stat *st, void *arg);

/* The CREATE of ll_create, with o->flags, the inode's lease key and the new file's mode (which only
 * a POSIX share takes: elsewhere file_mode decides what the mount shows). */
static int create_go(struct fop *o) {
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = smb3_open_lease_mode_async(r.c, r.path, o->flags, o->key, cache_lease_want(o->fs, o->flags),
                                      o->mode, create_opened, o);
  fs_route_done(&r);
  return rc;
}

static void create_opened(int rc, smb3_file *f, const struct smb3_stat *st, void *arg) {
  struct fop *o = arg;
  if (rc && retry_narrower(o, rc) && !(rc = create_go(o))) return;
  if (rc) {
    fop_fail(o, rc);
    return;
  }
  o->f = f;
  if (st->ino) { /* the CREATE answered QFid: its attributes are the new file's, no QUERY_INFO */
    create_statted(0, st, o);
    return;
  }
  rc = smb3_fstat_async(f, create_statted, o); /* a server without QFid: ask for the file id */
  if (rc) {
    file_close_quietly(f);
    fop_fail(o, rc);
  }
}

static void create_abandoned(void *arg, int rc) {
  (void)rc;
  struct fs_file *fh = arg;
  file_close_quietly(file_closing(fh));
  file_put(fh);
}

/* A new name in a directory whose every name we know (pending.h): the file is answered now, as
 * made; its CREATE goes with its data. */
static void create_deferred(struct fop *o) {
  struct fs_ctx *fs = o->fs;
  struct smb3_stat st;
  pending_stat(&st);
  inode_dir_changed(fs, o->parent, 0);
  struct fs_inode *in = inode_link_gen(fs, o->parent, o->name, &st, o->gen, -1.0);
  struct fs_file *fh = in ? adopt_as(o, in, NULL, 1, cache_lease_want(fs, o->flags)) : NULL;
  if (!fh || pending_start(fh, o->path, o->flags, o->mode)) {
    if (in) inode_forget(fs, in->nodeid, 1);
    if (fh) file_put(fh);
    inode_put(fs, in);
    fop_fail(o, SMB3_ENOMEM);
    return;
  }
  o->path = NULL; /* the pending's now */
  fh->deferred = 1;
  /* the server's clock as last seen: the write time its data will carry (writeback.c pin_time) */
  fh->born_known = fs_clock_now(fs, &fh->born_srv, &fh->born_loc);
  struct fuse_entry_param e;
  (void)fs_fill_entry(fs, in, &e);
  if (fuse_reply_create(o->req, &e, &o->fi)) { /* the program is gone: the file is made all the same */
    inode_forget(fs, in->nodeid, 1);
    pending_when_created(fh, create_abandoned, fh);
  }
  inode_put(fs, in);
  fop_free(o);
}

/* Reply: I/O thread (the CREATE, or the stat after it); this worker when the CREATE is put off
 * (pending.h). */
static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi) {
  struct fs_ctx *fs = fuse_req_userdata(req);
  inode_names_changing(fs, parent);
  if (!fs_name_ok(fs, name)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  struct fop *o = fop_new(req, fi);
  if (!o) return;
  o->parent = inode_get(fs, parent);
  o->name = strdup(name);
  o->path = o->name ? inode_child_path(fs, o->parent, name) : NULL;
  if (!o->path) {
    fuse_reply_err(req, o->name ? ENOENT : ENOMEM);
    fop_free(o);
    return;
  }
  o->asked = fi->flags & O_ACCMODE;
  o->mode = mode & 07777; /* the kernel applied the umask */
  o->flags = server_flags(fs, (fi->flags & (O_ACCMODE | O_TRUNC | O_EXCL)) | O_CREAT);
  /* Every open of a file uses the inode's lease key: an existing inode's, or the one the new
   * inode will get. */
  struct fs_inode *known = inode_find_child(fs, o->parent, name);
  if (known)
    memcpy(o->key, known->key, 16);
  else {
    o->gen = itab_new_gen(fs);
    itab_make_key(fs, o->gen, o->key);
  }
  inode_put(fs, known);
  if (!known && pending_may_defer(fs, o->parent, name, o->flags)) {
    create_deferred(o);
    return;
  }
  int rc = create_go(o);
  if (rc) fop_fail(o, rc);
}

/* ---- data ---- */
/* Reply: this worker if read-ahead has the data, else I/O thread (the READ); reconnect thread if it waited
 * (for a new connection, or for a write-back flush that ended there: ops.h). */
static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)ino;
  ra_read((struct fs_file *)(uintptr_t)fi->fh, req, size, (uint64_t)off);
}

/* Reply: this worker (write-back takes the data); past the dirty bound, the thread of the WRITE completion
 * that brings it under: I/O thread, or reconnect thread (a parked WRITE that timed out: ops.h). */
static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi) {
  (void)ino;
  wb_write((struct fs_file *)(uintptr_t)fi->fh, req, buf, size, (uint64_t)off);
}

/* ---- flush / fsync / release ---- */
struct reqctx {
  fuse_req_t req;
  struct fs_file *fh;
};

static struct reqctx *reqctx_new(fuse_req_t req, struct fuse_file_info *fi) {
  struct reqctx *r = malloc(sizeof *r);
  if (!r) {
    fuse_reply_err(req, ENOMEM);
    return NULL;
  }
  r->req = req;
  r->fh = (struct fs_file *)(uintptr_t)fi->fh;
  return r;
}

static void flush_done(int err, void *arg) {
  struct reqctx *r = arg;
  fuse_reply_err(r->req, -err);
  free(r);
}

static void flush_created(void *arg, int rc) {
  flush_done(rc ? -fs_errno(rc) : 0, arg);
}

/* A file whose CREATE is still put off once its data went (none was written): it is made now. */
static void flush_flushed(int err, void *arg) {
  struct reqctx *r = arg;
  if (err)
    flush_done(err, r);
  else /* (at once when it is made, or its CREATE failed: that error) */
    pending_when_created(r->fh, flush_created, r);
}

/* close(2): the data must be on the server, and a failed write is reported here. */
/* Reply: the thread that ends the write-back flush: this worker when nothing is in flight, else I/O
 * thread, or reconnect thread (a parked WRITE that timed out: ops.h). */
static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  locks_flush((struct fs_file *)(uintptr_t)fi->fh, fi->lock_owner);
  struct reqctx *r = reqctx_new(req, fi);
  if (r) wb_flush_closing(r->fh, flush_flushed, r);
}

static void fsync_done(int rc, void *arg) {
  struct reqctx *r = arg;
  fuse_reply_err(r->req, fs_errno(rc));
  free(r);
}

static void fsync_flushed(int err, void *arg) {
  struct reqctx *r = arg;
  if (err) {
    flush_done(err, r);
    return;
  }
  smb3_file *f = fh_handle(r->fh);
  int rc = f                ? smb3_fsync_async(f, fsync_done, r) /* SMB2 FLUSH: to stable storage */
           : r->fh->pend_rc ? r->fh->pend_rc                     /* a put-off CREATE that failed */
                            : SMB3_EBADF;
  if (rc) fsync_done(rc, r);
}

/* Reply: I/O thread (the FLUSH, after the write-back flush); a failed flush, or a FLUSH that cannot be
 * sent: the thread that ended the write-back flush (this worker, I/O or reconnect thread: ops.h). */
static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
  (void)ino, (void)datasync;
  struct reqctx *r = reqctx_new(req, fi);
  if (r) wb_flush(r->fh->fs, r->fh->in, 1, fsync_flushed, r);
}

static void release_closed(int rc, void *arg) {
  (void)rc; /* close(2) already returned; nothing to report to */
  struct fs_file *fh = arg;
  fuse_req_t req = fh->release_req;
  file_put(fh);
  fuse_reply_err(req, 0);
}

/* cache=loose: the last close of a file this mount changed tells the mtime the server gave our
 * writes; the size is the kernel's own (kern_size: every write and truncate went through us). That
 * is the reference kernel_view_stale() compares later lookups with. The close is the kernel's
 * RELEASE, sent after close(2) returned: another client may have appended by the time the server
 * answers, and its size must not become the kernel's (the next lookup then sees the change). */
static void release_closed_stat(int rc, const struct smb3_stat *st, void *arg) {
  struct fs_file *fh = arg;
  struct fs_inode *in = fh->in;
  pthread_mutex_lock(&in->lock);
  if (!rc && st && in->nopen == 1 && !wb_dirty(in)) {
    struct smb3_stat seen = *st;
    seen.size = in->kern_size;
    inode_kernel_view_set(in, &seen, fh->close_asked);
    in->local_mod = 0;
  }
  pthread_mutex_unlock(&in->lock);
  release_closed(rc, fh);
}

static void release_drained(struct fs_file *fh) {
  smb3_file *f = file_closing(fh);
  fh->close_asked = fs_now();
  pthread_mutex_lock(&fh->in->lock);
  /* (a put-off create's time was set before its lease was known: quiet only if it got W) */
  int quiet =
      (fh->flags & O_ACCMODE) == O_RDONLY || (fh->mtime_forced && !fh->fs->wb_cache && !fh->in->wb.err &&
                                              (!fh->deferred || (fh->in->lease & SMB3_LEASE_WRITE)));
  /* It reads and writes no more: an open that comes before its CLOSE is answered decides its
   * caching as if it were gone (cache.c). */
  fh->in->direct_writers -= fh->direct_wr;
  fh->direct_wr = 0;
  fh->closing = 1;
  fh->in->nclosing++;
  fh->refs++; /* until files_release_done, after the CLOSE is queued or sent */
  pthread_mutex_unlock(&fh->in->lock);
  fuse_req_t req = fh->release_req; /* once queued, fh is the queue's: a full batch may free it at once */
  if (quiet && !__atomic_load_n(&fh->in->lock_used, __ATOMIC_ACQUIRE) &&
      !closeq_add(fh, f)) { /* closed with others, soon */
    fuse_reply_err(req, 0);
  } else {
    int rc = fh->fs->wb_cache && (fh->flags & O_ACCMODE) != O_RDONLY
                 ? smb3_close_stat_async(f, release_closed_stat, fh)
                 : smb3_close_async(f, release_closed, fh);
    if (rc) release_closed(rc, fh);
  }
  files_release_done(fh);
  file_put(fh);
}

static void release_created(void *arg, int rc) {
  (void)rc; /* reported by flush() already, if the application closed it normally */
  struct fs_file *fh = arg;
  /* Read-ahead READs in flight write into our buffers: wait for them before closing. */
  ra_shutdown(fh, release_drained);
}

static void release_flushed(int err, void *arg) {
  (void)err; /* reported by flush() already, if the application closed it normally */
  pending_when_created(arg, release_created, arg); /* a file still put off is made, even empty */
}

/* Reply: I/O thread (the CLOSE, after the write-back flush and the read-ahead READs in flight); a CLOSE
 * that cannot be sent: the thread that got there (this worker, I/O or reconnect thread: ops.h). */
static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  struct fs_file *fh = (struct fs_file *)(uintptr_t)fi->fh;
  fh->release_req = req;
  locks_release(fh);
  wb_flush_closing(fh, release_flushed, fh);
}

void ops_file_fill(struct fuse_lowlevel_ops *op) {
  op->open = ll_open;
  op->create = ll_create;
  op->read = ll_read;
  op->write = ll_write;
  op->flush = ll_flush;
  op->fsync = ll_fsync;
  op->release = ll_release;
}
