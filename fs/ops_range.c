/* ops_range.c - FUSE operations on byte ranges of open files: lseek (SEEK_DATA/SEEK_HOLE),
 * fallocate, copy_file_range. Each first sends what write-back holds of the file, then asks the
 * server; the completions (on the I/O thread) reply. */
#include <errno.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "file.h"
#include "inode.h"
#include "ops.h"
#include "writeback.h"

/* ---- lseek(2) SEEK_DATA / SEEK_HOLE: from the server's allocated ranges ---- */
struct seekop {
  fuse_req_t req;
  struct fs_file *fh;
  int whence, step;
  uint64_t pos, size; /* pos: where the search goes on; size: the server's, after the flush */
};

static void seek_reply(struct seekop *o, int err, uint64_t at) { /* err: positive errno or 0 */
  if (err)
    fuse_reply_err(o->req, err);
  else
    fuse_reply_lseek(o->req, (off_t)at);
  free(o);
}

static void seek_ranges(int rc, const struct smb3_range *r, size_t n, int more, void *arg);

static void seek_query(struct seekop *o) {
  if (o->pos >= o->size) { /* past the last data: SEEK_HOLE finds the end, SEEK_DATA nothing */
    seek_reply(o, o->whence == SEEK_DATA ? ENXIO : 0, o->size);
    return;
  }
  int rc = smb3_allocated_ranges_async(fh_handle(o->fh), o->pos, o->size - o->pos, seek_ranges, o);
  if (rc) seek_reply(o, fs_errno(rc), 0);
}

static void seek_ranges(int rc, const struct smb3_range *r, size_t n, int more, void *arg) {
  struct seekop *o = arg;
  if (rc) {
    seek_reply(o, fs_errno(rc), 0);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t end = r[i].off + r[i].len;
    if (end <= o->pos) continue;
    if (o->whence == SEEK_DATA) { /* the first data at or after pos */
      uint64_t at = r[i].off > o->pos ? r[i].off : o->pos;
      seek_reply(o, at < o->size ? 0 : ENXIO, at);
      return;
    }
    if (r[i].off > o->pos) { /* a gap before this range: the hole */
      seek_reply(o, 0, o->pos);
      return;
    }
    o->pos = end; /* data up to here */
  }
  if (more && n) { /* the answer was cut: ask again after what it covered */
    uint64_t end = r[n - 1].off + r[n - 1].len;
    if (end > o->pos) o->pos = end;
    seek_query(o);
    return;
  }
  if (o->whence == SEEK_DATA)
    seek_reply(o, ENXIO, 0); /* only holes up to the end */
  else
    seek_reply(o, 0, o->pos < o->size ? o->pos : o->size); /* the end is a hole */
}

static void seek_next(struct seekop *o, int err);
static void seek_flushed(int err, void *arg) {
  seek_next(arg, err);
}
static void seek_stat(int rc, const struct smb3_stat *st, void *arg) {
  struct seekop *o = arg;
  if (!rc) o->size = st->size;
  seek_next(o, -fs_errno(rc));
}

static void seek_next(struct seekop *o, int err) { /* err: 0 or a negative errno */
  if (err) {
    seek_reply(o, -err, 0);
    return;
  }
  switch (o->step++) {
  case 0: /* data this mount still holds is data too: on the server first */
    wb_flush(o->fh->fs, o->fh->in, 0, seek_flushed, o);
    return;
  case 1: {
    int rc = smb3_fstat_async(fh_handle(o->fh), seek_stat, o);
    if (rc) seek_reply(o, fs_errno(rc), 0);
    return;
  }
  default:
    if (o->pos >= o->size)
      seek_reply(o, ENXIO, 0); /* lseek(2): an offset at or past the end */
    else
      seek_query(o);
  }
}

/* Reply: I/O thread (the allocated-ranges query); this worker for a bad whence or offset; what fails
 * at once after the write-back flush: the thread that ended it (this worker, I/O or reconnect thread: ops.h).
 */
static void ll_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi) {
  (void)ino;
  if ((whence != SEEK_DATA && whence != SEEK_HOLE) || off < 0) {
    fuse_reply_err(req, EINVAL); /* the kernel answers SEEK_SET/CUR/END itself */
    return;
  }
  struct seekop *o = malloc(sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  *o = (struct seekop){req, (struct fs_file *)(uintptr_t)fi->fh, whence, 0, (uint64_t)off, 0};
  seek_next(o, 0);
}

/* The server's data of in changed by this mount other than through write-back (fallocate, a
 * server-side copy): read-ahead buffers are stale, size and mtime come from the server next
 * time, the kernel's view under cache=loose comes from this change, and the size is at least
 * grow_to (0: unchanged). */
static void data_changed(struct fs_inode *in, uint64_t grow_to) {
  pthread_mutex_lock(&in->lock);
  in->data_gen++;
  in->local_mod = 1;
  in->attr_expiry = 0;
  inode_touch_locked(in, INODE_TOUCH_DATA);
  if (in->st.size < grow_to) in->st.size = grow_to;
  if (in->kern_size < grow_to) in->kern_size = grow_to;
  pthread_mutex_unlock(&in->lock);
}

/* ---- fallocate(2): reserve (mode 0, KEEP_SIZE), punch a hole, zero a range ---- */
struct fallocop {
  fuse_req_t req;
  struct fs_file *fh;
  int mode;
  uint64_t off, end, size; /* size: the server's, asked after the flush */
  int step;
};

static void falloc_next(struct fallocop *o, int rc);
static void falloc_flushed(int err, void *arg) {
  falloc_next(arg, err);
}
static void falloc_done(int rc, void *arg) {
  falloc_next(arg, -fs_errno(rc));
}
static void falloc_keep_going(int rc, void *arg) { /* mode 0's reservation is a wish, not a must */
  (void)rc;
  falloc_next(arg, 0);
}
static void falloc_stat(int rc, const struct smb3_stat *st, void *arg) {
  struct fallocop *o = arg;
  if (!rc) o->size = st->size;
  falloc_done(rc, o);
}

/* err: 0 or a negative errno. Each step either submits (and returns) or falls through. */
static void falloc_next(struct fallocop *o, int err) {
  struct fs_inode *in = o->fh->in;
  int keep = o->mode & FALLOC_FL_KEEP_SIZE, zero = o->mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE);
  int rc = 0;
  if (err) goto out;
  switch (o->step++) {
  case 0: /* what this mount holds goes first: the server then has every byte the range may cover */
    wb_flush(o->fh->fs, in, 0, falloc_flushed, o);
    return;
  case 1:
    rc = smb3_fstat_async(fh_handle(o->fh), falloc_stat, o);
    break;
  case 2: /* a hole: the file is sparse first, so that the server frees it and reports it as a hole */
    if ((o->mode & FALLOC_FL_PUNCH_HOLE) && o->off < o->size) {
      rc = smb3_set_sparse_async(fh_handle(o->fh), falloc_keep_going, o); /* a server without: zeros anyway */
      break;
    }
    o->step++;
    /* fall through */
  case 3: /* zeros: within the file (a hole past its end is no change) */
    if (zero && o->off < o->size) {
      rc = smb3_punch_hole_async(fh_handle(o->fh), o->off, (o->end < o->size ? o->end : o->size) - o->off,
                                 falloc_done, o);
      break;
    }
    o->step++;
    /* fall through */
  case 4: /* space past the end (best effort for mode 0: most servers grant it lazily anyway) */
    if (!(o->mode & FALLOC_FL_ZERO_RANGE) && !(o->mode & FALLOC_FL_PUNCH_HOLE) && o->end > o->size) {
      rc = smb3_fallocate_async(fh_handle(o->fh), o->end, keep ? falloc_done : falloc_keep_going, o);
      break;
    }
    o->step++;
    /* fall through */
  case 5: /* the new size */
    if (!keep && o->end > o->size) {
      rc = smb3_ftruncate_async(fh_handle(o->fh), o->end, falloc_done, o);
      break;
    }
    /* fall through */
  default:
    goto out;
  }
  if (!rc) return;
  err = -fs_errno(rc);
out:
  if (!err) data_changed(in, keep ? 0 : o->end);
  fuse_reply_err(o->req, -err); /* the kernel drops its pages of a zeroed range and sets the size */
  free(o);
}

/* Reply: I/O thread (the last of its requests); this worker for an unsupported mode; what fails
 * at once after the write-back flush: the thread that ended it (this worker, I/O or reconnect thread: ops.h).
 */
static void ll_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi) {
  (void)ino;
  int punch = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
  if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE && mode != punch &&
      (mode & ~FALLOC_FL_KEEP_SIZE) != FALLOC_FL_ZERO_RANGE) {
    fuse_reply_err(req, EOPNOTSUPP); /* collapse, insert, unshare: SMB has no such operation */
    return;
  }
  if (off < 0 || len <= 0 || off > INT64_MAX - len) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  struct fallocop *o = malloc(sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  *o = (struct fallocop){
      req, (struct fs_file *)(uintptr_t)fi->fh, mode, (uint64_t)off, (uint64_t)off + (uint64_t)len, 0, 0};
  falloc_next(o, 0);
}

/* ---- copy_file_range(2): a server-side copy (cp uses it) ---- */
#define FS_COPY_MAX (1u << 30) /* per call: the reply's count has 32 bits; callers ask again */
struct copyop {
  fuse_req_t req;
  struct fs_file *src, *dst;
  uint64_t src_off, dst_off, len;
  int step;
};

static void copy_next(struct copyop *o, int err);
static void copy_flushed(int err, void *arg) {
  copy_next(arg, err);
}

static void copy_done(int64_t r, void *arg) {
  struct copyop *o = arg;
  if (r >= 0) {
    if (r > 0) data_changed(o->dst->in, o->dst_off + (uint64_t)r);
    fuse_reply_write(o->req, (size_t)r); /* the kernel drops its pages of the range itself */
  } else {
    /* SMB3_ENOTSUP and SMB3_EXDEV give EOPNOTSUPP and EXDEV: the kernel then copies through the page cache */
    fuse_reply_err(o->req, fs_errno((int)r));
  }
  free(o);
}

/* Data this mount still holds for either file goes to the server first, then the copy. */
static void copy_next(struct copyop *o, int err) {
  struct fs_ctx *fs = o->src->fs;
  if (err) {
    fuse_reply_err(o->req, -err);
    free(o);
    return;
  }
  switch (o->step++) {
  case 0:
    wb_flush(fs, o->src->in, 0, copy_flushed, o);
    return;
  case 1:
    if (o->dst->in != o->src->in) {
      wb_flush(fs, o->dst->in, 0, copy_flushed, o);
      return;
    }
    /* fall through */
  default: {
    int rc = smb3_copy_range_async(fh_handle(o->src), o->src_off, fh_handle(o->dst), o->dst_off, o->len,
                                   copy_done, o);
    if (rc) copy_done(rc, o);
  }
  }
}

/* Reply: I/O thread (the server-side copy); what fails at once after the write-back flush: the
 * thread that ended it (this worker, I/O or reconnect thread: ops.h). */
static void ll_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, struct fuse_file_info *fi_in,
                               fuse_ino_t ino_out, off_t off_out, struct fuse_file_info *fi_out, size_t len,
                               int flags) {
  (void)ino_in, (void)ino_out;
  if (flags || off_in < 0 || off_out < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  struct copyop *o = malloc(sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  *o = (struct copyop){req,
                       (struct fs_file *)(uintptr_t)fi_in->fh,
                       (struct fs_file *)(uintptr_t)fi_out->fh,
                       (uint64_t)off_in,
                       (uint64_t)off_out,
                       len < FS_COPY_MAX ? len : FS_COPY_MAX,
                       0};
  copy_next(o, 0);
}

void ops_range_fill(struct fuse_lowlevel_ops *op) {
  op->copy_file_range = ll_copy_file_range;
  op->fallocate = ll_fallocate;
  op->lseek = ll_lseek;
}
