/* file.c - open handles: open/close, pread/pwrite (sync and async), fstat, ftruncate, fsync. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/client.h"
#include "util/clock.h"
#include "util/status.h"

struct timespec_smb3 filetime_to_ts(uint64_t ft) {
  /* FILETIME: 100 ns units since 1601-01-01; 11644473600 s to 1970. */
  struct timespec_smb3 ts = {0, 0};
  if (!ft) return ts;
  int64_t t = (int64_t)(ft / 10000000u) - 11644473600LL;
  ts.sec = t;
  ts.nsec = (long)(ft % 10000000u) * 100;
  return ts;
}

uint64_t ts_to_filetime(const struct timespec_smb3 *ts) {
  int64_t s = ts->sec + 11644473600LL;
  if (s < 0) return 0;
  return (uint64_t)s * 10000000u + (uint64_t)ts->nsec / 100u;
}

void stat_from_fscc(const struct fscc_stat *f, struct smb3_stat *st) {
  memset(st, 0, sizeof *st);
  st->size = f->end_of_file;
  st->alloc_size = f->allocation_size;
  st->ino = f->file_id;
  st->attributes = f->attributes;
  st->is_dir = (f->attributes & SMB2_FILE_ATTRIBUTE_DIRECTORY) != 0;
  st->nlink = f->nlink ? f->nlink : 1;
  st->btime = filetime_to_ts(f->creation_time);
  st->atime = filetime_to_ts(f->last_access_time);
  st->mtime = filetime_to_ts(f->last_write_time);
  st->ctime = filetime_to_ts(f->change_time);
  if (f->posix) {
    st->posix = 1;
    st->mode = f->mode;
    st->uid = f->uid;
    st->gid = f->gid;
    st->dev = f->device;
    st->reparse_tag = f->reparse_tag;
    st->is_dir = (f->mode & S_IFMT) == S_IFDIR;
  } else {
    st->mode = st->is_dir ? S_IFDIR | 0755 : S_IFREG | 0644;
    if (f->attributes & SMB2_FILE_ATTRIBUTE_READONLY) st->mode &= ~0222u;
    st->uid = st->gid = SMB3_NO_ID;
  }
}

static struct fscc_stat fscc_of_attrs(const struct smb2_file_attrs *a, uint64_t ino) {
  return (struct fscc_stat){.creation_time = a->creation_time,
                            .last_access_time = a->last_access_time,
                            .last_write_time = a->last_write_time,
                            .change_time = a->change_time,
                            .allocation_size = a->allocation_size,
                            .end_of_file = a->end_of_file,
                            .attributes = a->file_attributes,
                            .file_id = ino};
}

void stat_from_attrs(const struct smb2_file_attrs *a, uint64_t ino, struct smb3_stat *st) {
  struct fscc_stat f = fscc_of_attrs(a, ino);
  stat_from_fscc(&f, st);
}

void stat_from_create(const struct smb2_create_rsp *r, struct smb3_stat *st) {
  if (!r->have_posix) {
    stat_from_attrs(&r->attrs, r->have_disk_id ? r->disk_file_id : 0, st);
  } else {
    struct fscc_stat f = fscc_of_attrs(&r->attrs, r->have_disk_id ? r->disk_file_id : 0);
    fscc_stat_from_posix_cc(&r->posix, &f); /* mode, owner, group, nlink: no device here */
    stat_from_fscc(&f, st);
  }
  st->created = r->create_action == SMB2_FILE_CREATED;
}

/* ---- async single READ/WRITE ---- */
#define PIPES_MAX 64
struct io_ctx {
  smb3_cb cb;
  void *arg;
  smb3_client *c;
  int *piped; /* smb3_pread_pipe_async: where the data went */
  int npipes;
  struct smb3_pipe pipes[]; /* its copy of the pipes (the READ's rd_pipes) */
};

static int64_t read_result(const struct smb3_chain *ch) {
  if (ch->error) return ch->error;
  uint32_t st = ch->msgs[0].status;
  if (st == NT_STATUS_END_OF_FILE) return 0;
  if (st != NT_STATUS_SUCCESS) return client_status_result(st);
  return (int64_t)ch->msgs[0].rd_len;
}

int64_t client_write_result(const struct smb3_msg *m) {
  if (m->status != NT_STATUS_SUCCESS) return client_status_result(m->status);
  struct smb2_write_rsp w;
  if (smb2_write_rsp_decode(m->rsp, m->rsp_len, &w)) return SMB3_EPROTO;
  if (w.count > m->payload_len) return SMB3_EPROTO;
  return (int64_t)w.count;
}

static int64_t write_result(const struct smb3_chain *ch) {
  return ch->error ? ch->error : client_write_result(&ch->msgs[0]);
}

static void io_done(struct smb3_chain *ch, void *arg) {
  struct io_ctx *x = arg;
  __atomic_store_n(&x->c->io_last_ns, mono_ns(), __ATOMIC_RELEASE);
  int64_t r = ch->msgs[0].command == SMB2_READ ? read_result(ch) : write_result(ch);
  if (x->piped) *x->piped = r > 0 && ch->msgs[0].rd_piped;
  smb3_cb cb = x->cb;
  void *cbarg = x->arg;
  free(x);
  chain_free(ch);
  cb(r, cbarg);
}

/* Submit an I/O chain built with build_rc (its context x freed with it on failure); the first
 * I/O of the client starts its io_seconds clock. */
static int io_submit(smb3_client *c, struct smb3_chain *ch, void *x, int build_rc) {
  uint64_t zero = 0;
  int rc = build_rc;
  if (!rc)
    __atomic_compare_exchange_n(&c->io_first_ns, &zero, mono_ns(), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  if (!rc) rc = client_submit(c, ch);
  if (rc) {
    chain_free(ch);
    free(x);
  }
  return rc;
}

/* ---- WRITE, then the times, in one related compound (MS-SMB2 3.2.4.1.4: the server runs
 * them in order, so the times set are the file's last word and a write after them on the
 * handle does not move them: the write-back's last extent of a file whose times were set
 * through it, e.g. by tar's futimens before close). With `nocompound`, two requests. ---- */
struct wset_ctx {
  smb3_client *c;
  smb3_file *f;
  uint8_t basic[40];
  int64_t written; /* nocompound: the WRITE's result, while the SET_INFO is out */
  smb3_cb cb;
  void *arg;
};

static int64_t set_result(const struct smb3_msg *m) {
  return client_status_result(m->status);
}

static void wset_finish(struct wset_ctx *x, int64_t r) {
  smb3_cb cb = x->cb;
  void *arg = x->arg;
  free(x);
  cb(r, arg);
}

static void wset_done(struct smb3_chain *ch, void *arg) {
  struct wset_ctx *x = arg;
  __atomic_store_n(&x->c->io_last_ns, mono_ns(), __ATOMIC_RELEASE);
  int64_t r = write_result(ch);
  if (r >= 0 && ch->n > 1) {
    int64_t s = ch->msgs[1].done ? set_result(&ch->msgs[1]) : SMB3_EPROTO;
    if (s < 0) r = s;
  }
  chain_free(ch);
  wset_finish(x, r);
}

static void wset_set_done(struct smb3_chain *ch, void *arg) {
  struct wset_ctx *x = arg;
  int64_t r = ch->error ? ch->error : set_result(&ch->msgs[0]);
  chain_free(ch);
  wset_finish(x, r < 0 ? r : x->written);
}

static void wset_written(struct smb3_chain *ch, void *arg) {
  struct wset_ctx *x = arg;
  __atomic_store_n(&x->c->io_last_ns, mono_ns(), __ATOMIC_RELEASE);
  x->written = write_result(ch);
  chain_free(ch);
  struct smb3_chain *s = x->written < 0 ? NULL : chain_new(1);
  int rc = x->written < 0 ? (int)x->written : !s ? SMB3_ENOMEM : 0;
  if (!rc)
    rc = build_set_info(x->c, &s->msgs[0], x->f->fid, SMB2_0_INFO_FILE, FSCC_FILE_BASIC_INFORMATION, x->basic,
                        sizeof x->basic);
  if (!rc) {
    s->cb = wset_set_done;
    s->arg = x;
    rc = client_submit(x->c, s);
  }
  if (rc) {
    chain_free(s);
    wset_finish(x, rc);
  }
}

int smb3_pwrite_setattr_async(smb3_file *f, const void *buf, size_t len, uint64_t off,
                              const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                              smb3_cb cb, void *arg) {
  if (!f) return SMB3_EBADF;
  smb3_client *c = f->c;
  if (!cb || !buf || !len || len > c->wsize || off > INT64_MAX - len) return SMB3_EINVAL;
  int two = !c->opts.nocompound;
  struct smb3_chain *ch = chain_new(two ? 2 : 1);
  struct wset_ctx *x = calloc(1, sizeof *x);
  if (!ch || !x) {
    chain_free(ch);
    free(x);
    return SMB3_ENOMEM;
  }
  *x = (struct wset_ctx){.c = c, .f = f, .cb = cb, .arg = arg};
  fscc_basic_info_encode(x->basic, sizeof x->basic, 0, atime ? ts_to_filetime(atime) : 0,
                         mtime ? ts_to_filetime(mtime) : 0, 0, 0);
  int rc = build_write(c, &ch->msgs[0], f->fid, buf, (uint32_t)len, off);
  if (!rc && two) {
    ch->related = 1;
    rc = build_set_info(c, &ch->msgs[1], f->fid, SMB2_0_INFO_FILE, FSCC_FILE_BASIC_INFORMATION, x->basic,
                        sizeof x->basic);
  }
  ch->cb = two ? wset_done : wset_written;
  ch->arg = x;
  return io_submit(c, ch, x, rc);
}

/* A WRITE's data from a local file instead of memory (sent with sendfile by the transport). */
struct file_data {
  int fd;
  uint64_t off;
};

/* A READ's data into pipes when it can (smb3_pread_pipe_async). */
struct read_pipe {
  const struct smb3_pipe *pipes;
  int npipes;
  int *piped;
};

static int submit_io(smb3_file *f, int is_read, void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg,
                     const struct read_pacing *pace, const struct file_data *src,
                     const struct read_pipe *rp) {
  if (!f) return SMB3_EBADF;
  smb3_client *c = f->c;
  uint32_t max = is_read ? c->rsize : c->wsize;
  if (!cb || (!buf && !src && len) || len > max || off > INT64_MAX - len) return SMB3_EINVAL;
  struct smb3_chain *ch = chain_new(1);
  int npipes = is_read && rp ? rp->npipes : 0;
  struct io_ctx *x = malloc(sizeof *x + sizeof x->pipes[0] * (size_t)npipes);
  if (!ch || !x) {
    chain_free(ch);
    free(x);
    return SMB3_ENOMEM;
  }
  *x = (struct io_ctx){cb, arg, c, rp ? rp->piped : NULL, npipes};
  if (npipes) memcpy(x->pipes, rp->pipes, sizeof x->pipes[0] * (size_t)npipes);
  int rc = is_read ? build_read(c, &ch->msgs[0], f->fid, buf, (uint32_t)len, off)
                   : build_write(c, &ch->msgs[0], f->fid, buf, (uint32_t)len, off);
  if (src) {
    ch->msgs[0].payload_in_fd = 1;
    ch->msgs[0].payload_fd = src->fd;
    ch->msgs[0].payload_fd_off = src->off;
  }
  if (is_read && pace) {
    ch->msgs[0].rd_progress = pace->progress;
    ch->msgs[0].rd_progress_arg = pace->arg;
    ch->msgs[0].rd_lowat = pace->lowat;
  }
  if (npipes) {
    ch->msgs[0].rd_use_pipe = 1;
    ch->msgs[0].rd_pipes = x->pipes;
    ch->msgs[0].rd_npipes = npipes;
  }
  ch->cb = io_done;
  ch->arg = x;
  return io_submit(c, ch, x, rc);
}

int smb3_pread_async(smb3_file *f, void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg) {
  return submit_io(f, 1, buf, len, off, cb, arg, NULL, NULL, NULL);
}

int smb3_pread_pipe_async(smb3_file *f, void *buf, size_t len, uint64_t off, const struct smb3_pipe *pipes,
                          int npipes, int *piped, smb3_cb cb, void *arg) {
  if (!pipes || !piped || npipes < 1 || npipes > PIPES_MAX) return SMB3_EINVAL;
  size_t room = 0;
  for (int i = 0; i < npipes; i++) {
    if (pipes[i].rd < 0 || pipes[i].wr < 0 || pipes[i].cap > SIZE_MAX - room) return SMB3_EINVAL;
    room += pipes[i].cap;
  }
  if (room < len) return SMB3_EINVAL;
  struct read_pipe rp = {pipes, npipes, piped};
  *piped = 0;
  return submit_io(f, 1, buf, len, off, cb, arg, NULL, NULL, &rp);
}

int file_pread_paced(smb3_file *f, void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg,
                     const struct read_pacing *pace) {
  return submit_io(f, 1, buf, len, off, cb, arg, pace, NULL, NULL);
}

int smb3_pwrite_async(smb3_file *f, const void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg) {
  return submit_io(f, 0, (void *)buf, len, off, cb, arg, NULL, NULL, NULL);
}

int file_pwrite_fd_async(smb3_file *f, int fd, uint64_t fd_off, size_t len, uint64_t off, smb3_cb cb,
                         void *arg) {
  if (fd < 0 || !len || fd_off > INT64_MAX - len) return SMB3_EINVAL;
  struct file_data src = {fd, fd_off};
  return submit_io(f, 0, NULL, len, off, cb, arg, NULL, &src, NULL);
}

ssize_t smb3_pread(smb3_file *f, void *buf, size_t len, uint64_t off) {
  if (!f) return SMB3_EBADF;
  return smb3_read_range(f, buf, len, off);
}

ssize_t smb3_pwrite(smb3_file *f, const void *buf, size_t len, uint64_t off) {
  if (!f) return SMB3_EBADF;
  return smb3_write_range(f, buf, len, off);
}
