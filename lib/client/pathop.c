/* pathop.c - metadata operations: how each is built from steps, and how its completed chain
 * becomes a result. Path operations are CREATE + op + CLOSE in one related compound chain
 * (one round trip for a stat or statfs; MS-SMB2 3.2.4.1.4); handle operations are one request. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "client/pathop.h"
#include "util/status.h"

/* ---- step encoders (arg is the pathop) ---- */
static int enc_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, &((const struct pathop *)arg)->ca);
}
static int enc_query_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_query_info(c, m, fid, op->info_type, op->info_class, op->outlen);
}
static int enc_set_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_set_info(c, m, fid, SMB2_0_INFO_FILE, op->info_class, op->buf, op->buflen);
}
/* The attributes stat reports (FILE_ALL_INFORMATION, or the POSIX information on a POSIX
 * connection), for a step after another one (then_stat). */
static uint8_t stat_class(const struct pathop *op) {
  return op->c->posix ? FSCC_FILE_POSIX_INFORMATION : FSCC_FILE_ALL_INFORMATION;
}
static int enc_query_stat(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  return build_query_info(c, m, fid, SMB2_0_INFO_FILE, stat_class(arg), 4096);
}
static int enc_set_security(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_set_info_ai(c, m, fid, SMB2_0_INFO_SECURITY, 0, op->addl_info, op->buf, op->buflen);
}
#define REPARSE_MAX_OUT 16384 /* MS-FSCC 2.3.61: MAXIMUM_REPARSE_DATA_BUFFER_SIZE */
static int enc_ioctl(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_ioctl(c, m, fid, op->ctl_code, op->buf, op->buflen,
                     op->ctl_code == SMB2_FSCTL_GET_REPARSE_POINT ? REPARSE_MAX_OUT : 0);
}
/* handle operations use the op's own file id */
static int enc_h_query_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  const struct pathop *op = arg;
  return build_query_info(c, m, op->fid, op->info_type, op->info_class, op->outlen);
}
static int enc_h_set_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  const struct pathop *op = arg;
  return build_set_info(c, m, op->fid, SMB2_0_INFO_FILE, op->info_class, op->buf, op->buflen);
}
static int enc_h_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  const struct pathop *op = arg;
  return build_close(c, m, op->fid, op->close_stat);
}
static int enc_h_ioctl(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  const struct pathop *op = arg;
  return build_ioctl(c, m, op->fid, op->ctl_code, op->buf, op->buflen, 0);
}
static int enc_h_lock(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  const struct pathop *op = arg;
  return build_lock(c, m, op->fid, &op->lock);
}
static int enc_read(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_read(c, m, fid, op->rd_buf, op->rd_len, 0);
}
static int enc_write(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_write(c, m, fid, op->wr_buf, op->wr_len, op->wr_off);
}
static int enc_set_basic(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_set_info(c, m, fid, SMB2_0_INFO_FILE, FSCC_FILE_BASIC_INFORMATION, op->wr_basic,
                        sizeof op->wr_basic);
}
static int enc_h_flush(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_flush(c, m, ((const struct pathop *)arg)->fid);
}

struct pathop *pathop_new(smb3_client *c, enum pathop_kind kind, const char *path) {
  struct pathop *op = calloc(1, sizeof *op);
  if (!op) return NULL;
  op->c = c;
  op->kind = kind;
  op->path = strdup(path ? path : "");
  if (!op->path) {
    free(op);
    return NULL;
  }
  return op;
}

void pathop_free(struct pathop *op) {
  if (!op) return;
  if (op->lead) (void)smb3_close_async(op->lead, NULL, NULL); /* (never sent: closed on its own) */
  free(op->eas);
  free(op->ea_buf);
  free(op->path);
  free(op->buf);
  free(op->target);
  free(op->reparse.target);
  free(op);
}

static void meta_create(struct pathop *op, uint32_t access) {
  memset(&op->ca, 0, sizeof op->ca);
  op->ca.path = op->path;
  op->ca.access = access | SMB2_SYNCHRONIZE;
  op->ca.share = SMB2_FILE_SHARE_ALL;
  op->ca.disposition = SMB2_FILE_OPEN;
  op->ca.no_follow = 1; /* stat, unlink, rename... of a symlink are of the link */
}

static void add(struct pathop *op,
                int (*enc)(smb3_client *, struct smb3_msg *, struct smb2_file_id, const void *)) {
  if (op->n >= (int)(sizeof op->steps / sizeof op->steps[0])) abort(); /* a bug here, not a server's doing */
  op->steps[op->n].encode = enc;
  op->steps[op->n].arg = op;
  op->n++;
}

/* CREATE + X + CLOSE */
static void triple(struct pathop *op,
                   int (*mid)(smb3_client *, struct smb3_msg *, struct smb2_file_id, const void *)) {
  op->first_is_create = 1;
  add(op, enc_create);
  add(op, mid);
  add(op, step_close);
}

/* statvfs through a handle on the share root kept open for the client's life: the first call
 * is CREATE + QUERY_INFO (no CLOSE), later ones a single QUERY_INFO. File-system sizes are
 * answered live by every QUERY_INFO, so the cached handle needs no lease to stay correct. */
static int prepare_statvfs(struct pathop *op) {
  smb3_client *c = op->c;
  op->what = "statvfs";
  op->info_type = SMB2_0_INFO_FILESYSTEM, op->info_class = FSCC_FS_FULL_SIZE_INFORMATION, op->outlen = 64;
  pthread_mutex_lock(&c->root_lock);
  if (c->opts.nocompound) {
    /* the baseline mode: every operation as CREATE, QUERY_INFO, CLOSE sent one by one */
  } else if (c->root_open) {
    op->fid = c->root_fid;
    op->root_use = ROOT_CACHED;
  } else if (!c->root_opening && !c->closing) {
    c->root_opening = 1;
    op->root_use = ROOT_OPENING;
  }
  pthread_mutex_unlock(&c->root_lock);
  if (op->root_use == ROOT_CACHED) {
    add(op, enc_h_query_info);
    return 0;
  }
  meta_create(op, SMB2_FILE_READ_ATTRIBUTES);
  op->first_is_create = 1;
  add(op, enc_create);
  add(op, enc_query_info);
  if (op->root_use != ROOT_OPENING) add(op, step_close); /* another thread is opening it */
  return 0;
}

/* Record (or drop) the cached root handle after a statvfs. */
static void root_update(struct pathop *op, struct smb3_chain *ch, int rc) {
  smb3_client *c = op->c;
  if (op->root_use == ROOT_NONE) return;
  pthread_mutex_lock(&c->root_lock);
  if (op->root_use == ROOT_OPENING) {
    struct smb2_create_rsp r;
    c->root_opening = 0;
    if (ch && !ch->error && ch->msgs[0].status == NT_STATUS_SUCCESS &&
        !smb2_create_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &r)) {
      c->root_fid = r.file_id;
      c->root_open = 1;
    }
  } else if (rc && ch &&
             (ch->msgs[0].status == NT_STATUS_FILE_CLOSED ||
              ch->msgs[0].status == NT_STATUS_INVALID_HANDLE)) {
    c->root_open = 0; /* stale: the next statvfs opens a new one */
  }
  pthread_mutex_unlock(&c->root_lock);
}

/* Path operations of one CREATE + QUERY_INFO or SET_INFO + CLOSE compound. */
static const struct {
  enum pathop_kind kind;
  const char *what;
  uint32_t access;  /* besides SYNCHRONIZE */
  uint32_t options; /* CREATE options */
  uint8_t info_class;
  uint32_t outlen; /* QUERY_INFO: room for the answer; 0: a SET_INFO (of op->buf) */
} triple_ops[] = {
    {OP_STAT, "stat", SMB2_FILE_READ_ATTRIBUTES, 0, FSCC_FILE_ALL_INFORMATION, 4096},
    /* Samba accepts DELETE_ON_CLOSE on a non-empty directory and then silently keeps it; the
     * disposition SET_INFO is where DIRECTORY_NOT_EMPTY is reported. */
    {OP_RMDIR, "rmdir", SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES, SMB2_FILE_DIRECTORY_FILE,
     FSCC_FILE_DISPOSITION_INFORMATION, 0},
    {OP_RENAME, "rename", SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES, 0, FSCC_FILE_RENAME_INFORMATION, 0},
    /* a second name for the file: SET_INFO FileLinkInformation on a handle of it */
    {OP_LINK, "link", SMB2_FILE_READ_ATTRIBUTES | SMB2_FILE_WRITE_ATTRIBUTES, SMB2_FILE_NON_DIRECTORY_FILE,
     FSCC_FILE_LINK_INFORMATION, 0},
    /* all of them in one QUERY_INFO: 64 KiB is the most a file can have */
    {OP_GET_EAS, "list extended attributes of", SMB2_FILE_READ_EA | SMB2_FILE_READ_ATTRIBUTES, 0,
     FSCC_FILE_FULL_EA_INFORMATION, 65536},
    {OP_SET_EA, "set an extended attribute of", SMB2_FILE_WRITE_EA | SMB2_FILE_READ_ATTRIBUTES, 0,
     FSCC_FILE_FULL_EA_INFORMATION, 0},
    {OP_TRUNCATE, "truncate", SMB2_FILE_WRITE_DATA | SMB2_FILE_READ_ATTRIBUTES, 0,
     FSCC_FILE_END_OF_FILE_INFORMATION, 0},
    {OP_SETATTR, "setattr", SMB2_FILE_WRITE_ATTRIBUTES | SMB2_FILE_READ_ATTRIBUTES, 0,
     FSCC_FILE_BASIC_INFORMATION, 0},
};

/* OP_UNLINK with then_stat: the attributes in the same compound, where it is one; sent one by one
 * (nocompound) that would be a round trip more, so none is asked for (cb.stat gets NULL). */
static void unlink_query(struct pathop *op) {
  op->no_attrs = !op->then_stat || op->c->opts.nocompound;
  if (!op->no_attrs) add(op, enc_query_stat);
}

static int prepare_path(struct pathop *op) {
  for (size_t i = 0; i < sizeof triple_ops / sizeof triple_ops[0]; i++)
    if (triple_ops[i].kind == op->kind) {
      op->what = triple_ops[i].what;
      meta_create(op, triple_ops[i].access);
      op->ca.options = triple_ops[i].options;
      op->info_class = triple_ops[i].info_class;
      if (triple_ops[i].outlen) op->info_type = SMB2_0_INFO_FILE, op->outlen = triple_ops[i].outlen;
      if (op->kind == OP_STAT && op->c->posix) op->info_class = FSCC_FILE_POSIX_INFORMATION;
      if (op->then_stat) { /* CREATE + SET_INFO + QUERY_INFO + CLOSE */
        op->first_is_create = 1;
        add(op, enc_create);
        add(op, enc_set_info);
        add(op, enc_query_stat);
        add(op, step_close);
        return 0;
      }
      triple(op, triple_ops[i].outlen ? enc_query_info : enc_set_info);
      return 0;
    }
  switch (op->kind) {
  case OP_SET_SECURITY: /* WRITE_DAC for a DACL (chmod), WRITE_OWNER for owner and group */
    op->what = op->addl_info & FSCC_SECINFO_DACL ? "chmod" : "chown";
    meta_create(op, SMB2_FILE_READ_ATTRIBUTES |
                        (op->addl_info & FSCC_SECINFO_DACL ? SMB2_WRITE_DAC : SMB2_WRITE_OWNER));
    triple(op, enc_set_security);
    return 0;
  case OP_MKREPARSE: /* the access and options Samba's own client uses (source3/libsmb/clisymlink.c) */
    op->what = op->symlink ? "symlink" : "mknod";
    meta_create(op, SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES | SMB2_FILE_WRITE_ATTRIBUTES);
    op->ca.mode = op->mode;
    op->ca.mode_set = !op->existing;
    op->ca.disposition = op->existing ? SMB2_FILE_OPEN : SMB2_FILE_CREATE;
    op->ca.options = SMB2_FILE_NON_DIRECTORY_FILE | SMB2_FILE_OPEN_REPARSE_POINT;
    op->ctl_code = SMB2_FSCTL_SET_REPARSE_POINT;
    triple(op, enc_ioctl);
    return 0;
  case OP_READLINK:
    op->what = "readlink";
    meta_create(op, SMB2_FILE_READ_ATTRIBUTES);
    op->ca.options = SMB2_FILE_OPEN_REPARSE_POINT;
    op->ctl_code = SMB2_FSCTL_GET_REPARSE_POINT;
    triple(op, enc_ioctl);
    return 0;
  case OP_STATVFS:
    return prepare_statvfs(op);
  case OP_MKDIR:
    op->what = "mkdir";
    meta_create(op, SMB2_FILE_READ_ATTRIBUTES);
    op->ca.disposition = SMB2_FILE_CREATE;
    op->ca.options = SMB2_FILE_DIRECTORY_FILE;
    op->ca.attributes = SMB2_FILE_ATTRIBUTE_DIRECTORY;
    op->ca.mode = op->mode;
    op->ca.mode_set = op->mode_set;
    op->first_is_create = 1;
    add(op, enc_create);
    add(op, step_close);
    return 0;
  case OP_UNLINK: /* open with DELETE_ON_CLOSE and close: one round trip */
    op->what = "unlink";
    meta_create(op, SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES);
    op->ca.options = SMB2_FILE_DELETE_ON_CLOSE | SMB2_FILE_NON_DIRECTORY_FILE;
    op->first_is_create = 1;
    add(op, enc_create);
    unlink_query(op);
    add(op, step_close);
    return 0;
  case OP_OPEN: {
    op->what = "open";
    struct smb2_lease lease = op->ca.lease; /* set by the caller before prepare */
    uint8_t oplock = op->ca.oplock;
    create_args_from_flags(&op->ca, op->path, op->open_flags);
    op->ca.lease = lease;
    op->ca.oplock = oplock;
    op->ca.mode = op->mode;
    op->ca.mode_set = op->mode_set;
    op->first_is_create = 1;
    add(op, enc_create);
    if (op->rd_len) add(op, enc_read);
    if (op->wr && op->wr_len) add(op, enc_write);
    if (op->wr && op->wr_times) add(op, enc_set_basic);
    return 0;
  }
  default:
    return SMB3_EINVAL;
  }
}

/* unlink and rmdir of a read-only file or directory on a share without the POSIX extensions. A
 * server that keeps Windows' rule refuses to delete what has FILE_ATTRIBUTE_READONLY
 * (STATUS_CANNOT_DELETE), which is what a chmod a-w becomes there (git's objects are 0444); POSIX
 * asks only for write permission on the parent. So, once, as the kernel's cifs client does: CREATE
 * with DELETE and FILE_WRITE_ATTRIBUTES, a SET_INFO that clears the attribute, the disposition,
 * CLOSE: one more round trip. The CREATE asks for DELETE, so a file the user may not delete is
 * left as it was (a related compound stops at a failed CREATE). (On a POSIX share the attribute
 * follows the owner's write bit; Samba 4.22 refuses such a directory's deletion whatever the
 * client does, and asks FILE_WRITE_ATTRIBUTES, which that mode denies, to change it.) */
static const uint8_t basic_normal[40] = {[32] = 0x80}; /* times unchanged, FILE_ATTRIBUTE_NORMAL */
static const uint8_t basic_dir[40] = {[32] = 0x10};    /* FILE_ATTRIBUTE_DIRECTORY alone */
static const uint8_t disposition_delete[1] = {1};
static int enc_set_normal(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  const struct pathop *op = arg;
  return build_set_info(c, m, fid, SMB2_0_INFO_FILE, FSCC_FILE_BASIC_INFORMATION,
                        op->kind == OP_RMDIR ? basic_dir : basic_normal, sizeof basic_normal);
}
static int enc_set_delete(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_set_info(c, m, fid, SMB2_0_INFO_FILE, FSCC_FILE_DISPOSITION_INFORMATION, disposition_delete,
                        sizeof disposition_delete);
}

static int readonly_refused(const struct pathop *op, const struct smb3_chain *ch) {
  if ((op->kind != OP_UNLINK && op->kind != OP_RMDIR) || op->ro_retried || !ch || op->c->posix) return 0;
  for (int i = 0; i < ch->n; i++)
    if (ch->msgs[i].status == NT_STATUS_CANNOT_DELETE) return 1;
  return 0;
}

/* An open that asked for a lease, refused with STATUS_INVALID_PARAMETER: a server that ties a lease
 * key to one file refuses it for a name that leads elsewhere, or nowhere (Samba, while an open with
 * that key holds a file another client renamed away, or removed under POSIX rules: lease_match). The
 * key is the file's as this client knew it, so the name no longer leads there; the same CREATE
 * without a lease says where it leads (another file, or none: OBJECT_NAME_NOT_FOUND), once. */
static int lease_refused(const struct pathop *op, const struct smb3_chain *ch) {
  return op->kind == OP_OPEN && op->ca.oplock == SMB2_OPLOCK_LEVEL_LEASE && op->first_is_create && ch &&
         ch->n && ch->msgs[0].status == NT_STATUS_INVALID_PARAMETER;
}

static void lease_retry(struct pathop *op) {
  op->lk_again = 0;
  op->ca.oplock = SMB2_OPLOCK_LEVEL_NONE;
  op->ca.lease.version = 0;
  op->ca.lease.state = 0;
}

static void readonly_retry(struct pathop *op) {
  op->ro_again = 0;
  op->ro_retried = 1;
  op->n = 0;
  meta_create(op, SMB2_DELETE | SMB2_FILE_READ_ATTRIBUTES | SMB2_FILE_WRITE_ATTRIBUTES);
  op->ca.options = op->kind == OP_RMDIR ? SMB2_FILE_DIRECTORY_FILE : SMB2_FILE_NON_DIRECTORY_FILE;
  op->first_is_create = 1;
  add(op, enc_create);
  if (op->kind == OP_UNLINK) unlink_query(op); /* (at the same place as the first time) */
  add(op, enc_set_normal);
  add(op, enc_set_delete);
  add(op, step_close);
}

/* Handle operations of one request on op->fid (FSTAT, which also sets what it asks, is below). */
static const struct {
  enum pathop_kind kind;
  const char *what;
  uint8_t info_class; /* SET_INFO */
  uint32_t ctl_code;  /* IOCTL */
  int (*enc)(smb3_client *, struct smb3_msg *, struct smb2_file_id, const void *);
} handle_ops[] = {
    {OP_FTRUNCATE, "truncate", FSCC_FILE_END_OF_FILE_INFORMATION, 0, enc_h_set_info},
    {OP_FSETATTR, "setattr", FSCC_FILE_BASIC_INFORMATION, 0, enc_h_set_info},
    {OP_FALLOCATE, "fallocate", FSCC_FILE_ALLOCATION_INFORMATION, 0, enc_h_set_info},
    {OP_ZERO_DATA, "punch hole", 0, SMB2_FSCTL_SET_ZERO_DATA, enc_h_ioctl},
    {OP_SET_SPARSE, "set sparse", 0, SMB2_FSCTL_SET_SPARSE, enc_h_ioctl},
    {OP_CLOSE, "close", 0, 0, enc_h_close},
    {OP_FSYNC, "fsync", 0, 0, enc_h_flush},
    {OP_LOCK, "lock a range of", 0, 0, enc_h_lock},
    {OP_UNLOCK, "unlock a range of", 0, 0, enc_h_lock},
};

int pathop_prepare(struct pathop *op) {
  op->n = 0;
  if (op->kind == OP_FSTAT) {
    op->what = "fstat";
    op->info_type = SMB2_0_INFO_FILE, op->info_class = FSCC_FILE_ALL_INFORMATION, op->outlen = 4096;
    if (op->c->posix) op->info_class = FSCC_FILE_POSIX_INFORMATION; /* every handle is a POSIX open */
    add(op, enc_h_query_info);
    return 0;
  }
  for (size_t i = 0; i < sizeof handle_ops / sizeof handle_ops[0]; i++)
    if (handle_ops[i].kind == op->kind) {
      op->what = handle_ops[i].what;
      op->info_class = handle_ops[i].info_class;
      op->ctl_code = handle_ops[i].ctl_code;
      add(op, handle_ops[i].enc);
      return 0;
    }
  return prepare_path(op);
}

/* ---- results ---- */
static int first_failure(struct pathop *op, struct smb3_chain *ch) {
  char what[700];
  snprintf(what, sizeof what, "%s '%s'", op->what, op->path[0] ? op->path : "/");
  for (int i = 0; i < ch->n; i++)
    if (ch->msgs[i].status != NT_STATUS_SUCCESS) return client_msg_result(op->c, ch, i, what);
  return 0;
}

static int finish_query_class(struct pathop *op, struct smb3_msg *m, uint8_t info_class);
static int finish_query(struct pathop *op, struct smb3_msg *m) {
  return finish_query_class(op, m, op->info_class);
}
static int finish_query_class(struct pathop *op, struct smb3_msg *m, uint8_t info_class) {
  struct smb2_query_info_rsp r;
  if (smb2_query_info_rsp_decode(m->rsp, m->rsp_len, &r)) goto bad;
  if (op->kind == OP_STATVFS) {
    struct fscc_fs_full_size fs;
    if (fscc_fs_full_size_decode(r.buf, r.len, &fs)) goto bad;
    op->sv.bsize = (uint64_t)fs.sectors_per_unit * fs.bytes_per_sector;
    op->sv.blocks = fs.total_units;
    op->sv.bfree = fs.actual_available_units;
    op->sv.bavail = fs.caller_available_units;
    return 0;
  }
  struct fscc_stat fs;
  if (info_class == FSCC_FILE_POSIX_INFORMATION ? fscc_posix_info_decode(r.buf, r.len, &fs)
                                                : fscc_all_info_decode(r.buf, r.len, &fs))
    goto bad;
  stat_from_fscc(&fs, &op->st);
  return 0;
bad:
  return client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed QUERY_INFO response", op->what);
}

/* Decode a CREATE response into r and op->st: the attributes (file id included: QFid) of what
 * the CREATE opened or made. */
static int finish_created(struct pathop *op, struct smb3_msg *m, struct smb2_create_rsp *r) {
  if (smb2_create_rsp_decode(m->rsp, m->rsp_len, r))
    return client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed CREATE response", op->what);
  stat_from_create(r, &op->st);
  return 0;
}

/* The attributes a CLOSE with POSTQUERY_ATTRIB returned (no file id: st.ino is 0). A server may
 * ignore the flag: the close still succeeded, there are just no attributes. */
static int finish_closed(struct pathop *op, struct smb3_msg *m) {
  struct smb2_close_rsp r;
  if (smb2_close_rsp_decode(m->rsp, m->rsp_len, &r))
    return client_fail(op->c, SMB3_EPROTO, 0, "close: malformed CLOSE response");
  if (!(r.flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB)) {
    op->no_attrs = 1;
    return 0;
  }
  stat_from_attrs(&r.attrs, 0, &op->st);
  return 0;
}

static int finish_open(struct pathop *op, struct smb3_msg *m) {
  struct smb2_create_rsp r;
  int rc = finish_created(op, m, &r);
  if (rc) return rc;
  smb3_file *f =
      file_make(op->c, op->path, r.file_id, (r.attrs.file_attributes & SMB2_FILE_ATTRIBUTE_DIRECTORY) != 0,
                r.lease.version ? r.lease.state : 0);
  if (!f) return SMB3_ENOMEM; /* the handle stays open on the server until disconnect */
  uint8_t asked = op->ca.oplock, got = r.oplock_level;
  if (asked != SMB2_OPLOCK_LEVEL_NONE && asked != SMB2_OPLOCK_LEVEL_LEASE && oplock_state(got))
    oplock_track(f, op->ca.lease.key, got); /* an oplock was granted */
  op->file = f;
  return 0;
}

/* The attribute list of a QUERY_INFO FileFullEaInformation answer, kept in op (STATUS_NO_EAS_ON_FILE,
 * some servers' answer for a file without any, is taken as an empty list in pathop_finish). */
struct ea_collect {
  struct smb3_ea *v;
  size_t n;
};
static int ea_take(const struct fscc_ea *ea, void *arg) {
  struct ea_collect *c = arg;
  c->v[c->n++] = (struct smb3_ea){ea->name, ea->value, ea->value_len};
  return 0;
}
static int ea_count(const struct fscc_ea *ea, void *arg) {
  (void)ea;
  (*(size_t *)arg)++;
  return 0;
}
static int finish_eas(struct pathop *op, struct smb3_chain *ch) {
  struct smb3_msg *m = &ch->msgs[1];
  struct smb2_query_info_rsp r;
  size_t n = 0;
  if (smb2_query_info_rsp_decode(m->rsp, m->rsp_len, &r) || fscc_ea_list_decode(r.buf, r.len, ea_count, &n))
    return client_fail(op->c, SMB3_EPROTO, 0, "%s '%s': malformed extended attributes", op->what, op->path);
  if (!n) return 0;
  op->ea_buf = malloc(r.len); /* the list outlives the response: names and values point into this copy */
  op->eas = calloc(n, sizeof *op->eas);
  if (!op->ea_buf || !op->eas) return SMB3_ENOMEM;
  memcpy(op->ea_buf, r.buf, r.len);
  struct ea_collect c = {op->eas, 0};
  fscc_ea_list_decode(op->ea_buf, r.len, ea_take, &c);
  op->neas = c.n;
  return 0;
}

/* The target of the reparse point FSCTL_GET_REPARSE_POINT returned (a symlink, or an NFS LNK). */
static int finish_readlink(struct pathop *op, struct smb3_msg *m) {
  struct smb2_ioctl_rsp r;
  if (smb2_ioctl_rsp_decode(m->rsp, m->rsp_len, &r) ||
      fscc_reparse_decode(r.output, r.output_len, &op->reparse))
    return client_fail(op->c, SMB3_EPROTO, 0, "readlink '%s': malformed reparse point", op->path);
  if (op->want_dev) {
    if (op->reparse.tag != FSCC_IO_REPARSE_TAG_NFS ||
        (op->reparse.nfs_type != FSCC_NFS_SPECFILE_CHR && op->reparse.nfs_type != FSCC_NFS_SPECFILE_BLK))
      return client_fail(op->c, SMB3_EINVAL, 0, "readdev '%s': not a device (reparse tag 0x%08x)", op->path,
                         op->reparse.tag);
    op->rdev = makedev(op->reparse.major, op->reparse.minor);
    return 0;
  }
  if (!op->reparse.target)
    return client_fail(op->c, SMB3_EINVAL, 0, "readlink '%s': not a symbolic link (reparse tag 0x%08x)",
                       op->path, op->reparse.tag);
  op->target = op->reparse.target;
  op->reparse.target = NULL;
  return 0;
}

static void ignore_done(int rc, void *arg) {
  (void)rc;
  (void)arg;
}

/* A CREATE that would make the name (a new file, directory, symlink) found it delete-pending:
 * another open still holds the file someone deleted, and the name is free once it closes. A
 * client that caches handles closes them within moments of the application's close (this one's
 * close queue: CLOSEQ_DELAY), and a server that breaks the handle lease of an open for delete
 * lets the delete wait for that; a server that does not (Samba 4.17) answers the next CREATE by
 * that name STATUS_DELETE_PENDING. So such a CREATE runs again after 2, 4, 8 ... 128 ms, for up to
 * DP_WAIT_MAX in all; then the answer stands (ENOENT, as the kernel's cifs client says). */
#define DP_WAIT_MAX (1000u * 1000000u) /* ns */

static int name_pending(const struct pathop *op, const struct smb3_chain *ch) {
  uint32_t d = op->ca.disposition;
  if (!op->first_is_create || !ch || !ch->n || ch->msgs[0].status != NT_STATUS_DELETE_PENDING ||
      (d != SMB2_FILE_CREATE && d != SMB2_FILE_OPEN_IF && d != SMB2_FILE_OVERWRITE_IF &&
       d != SMB2_FILE_SUPERSEDE))
    return 0;
  return op->dp_waited < DP_WAIT_MAX;
}

/* An open with O_CREAT that succeeded after waiting for a delete-pending name, and found a file
 * there instead of making one, may hold the very file that was being deleted: a server can open
 * the old file by its name just before the last close of it removes the name (Samba: the open
 * takes the file before it takes the share-mode lock that close holds while it unlinks), and what
 * is written then goes to a file without a name. So that open is closed and the CREATE sent once
 * more: a name another client made meanwhile opens again, a removed one is made anew. */
static int dp_orphan(struct pathop *op, int rc) {
  if (rc || op->kind != OP_OPEN || !op->dp_tries || op->dp_checked || op->st.created || !op->file) return 0;
  op->dp_checked = 1;
  return 1;
}

/* How long to wait before running op again (and count it). */
static uint64_t dp_delay(struct pathop *op) {
  uint64_t ns = (2u * 1000000u) << (op->dp_tries < 6 ? op->dp_tries : 6);
  op->dp_tries++;
  op->dp_waited += ns;
  return ns;
}

/* The WRITE and SET_INFO that followed a successful CREATE (OP_OPEN with wr): the bytes written,
 * or the first failure; their statuses are then cleared so that the open stands. */
static int64_t finish_written(struct smb3_chain *ch) {
  int64_t got = 0;
  for (int i = 1; i < ch->n; i++) {
    struct smb3_msg *m = &ch->msgs[i];
    int64_t r = !m->done                   ? SMB3_EPROTO
                : m->command == SMB2_WRITE ? client_write_result(m)
                                           : client_status_result(m->status);
    if (got >= 0 && r) got = r; /* the WRITE's count, unless something failed */
    m->status = NT_STATUS_SUCCESS;
  }
  return got;
}

/* Turn a completed chain into op's result; frees the chain. */
static int pathop_finish(struct pathop *op, struct smb3_chain *ch, int rc) {
  if (!rc && op->kind == OP_GET_EAS && ch->msgs[0].status == NT_STATUS_SUCCESS &&
      ch->msgs[1].status == NT_STATUS_NO_EAS_ON_FILE && ch->msgs[2].status == NT_STATUS_SUCCESS) {
    chain_free(ch); /* none: an empty list */
    return 0;
  }
  if (!rc && op->kind == OP_OPEN && op->rd_len) { /* the READ does not decide the open */
    struct smb3_msg *r = &ch->msgs[1];
    op->rd_got = !r->done                             ? SMB3_EPROTO
                 : r->status == NT_STATUS_END_OF_FILE ? 0
                 : r->status != NT_STATUS_SUCCESS     ? SMB3_ESTATUS
                 : r->rd_len > op->rd_len             ? SMB3_EPROTO
                                                      : (int64_t)r->rd_len;
    ch->msgs[1].status = NT_STATUS_SUCCESS;
  }
  if (!rc && op->kind == OP_OPEN && op->wr && ch->msgs[0].status == NT_STATUS_SUCCESS)
    op->wr_got = finish_written(ch); /* nor do the WRITE and SET_INFO after it */
  if (!rc) rc = first_failure(op, ch);
  op->ro_again = rc && readonly_refused(op, ch);
  op->lk_again = rc && lease_refused(op, ch);
  op->dp_again = rc == SMB3_ENOENT && name_pending(op, ch);
  if (rc && ch && op->kind == OP_MKREPARSE && ch->msgs[0].status == NT_STATUS_SUCCESS)
    (void)smb3_unlink_async(op->c, op->path, ignore_done, NULL); /* the plain file it left, best effort */
  if (!rc && op->kind == OP_READLINK) rc = finish_readlink(op, &ch->msgs[1]);
  if (!rc && op->kind == OP_GET_EAS) rc = finish_eas(op, ch);
  if (!rc && (op->kind == OP_LOCK || op->kind == OP_UNLOCK) &&
      smb2_simple_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len))
    rc = client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed LOCK response", op->what);
  if (op->kind == OP_STATVFS) root_update(op, ch, rc);
  if (!rc && op->kind == OP_STATVFS) rc = finish_query(op, &ch->msgs[op->root_use == ROOT_CACHED ? 0 : 1]);
  if (!rc && op->kind == OP_STAT) rc = finish_query(op, &ch->msgs[1]);
  if (!rc && op->kind == OP_FSTAT) rc = finish_query(op, &ch->msgs[0]);
  if (!rc && op->then_stat && !(op->kind == OP_UNLINK && op->no_attrs))
    rc = finish_query_class(op, &ch->msgs[op->kind == OP_UNLINK ? 1 : 2], stat_class(op));
  if (!rc && op->kind == OP_OPEN) rc = finish_open(op, &ch->msgs[0]);
  if (!rc && op->kind == OP_MKDIR && op->mkdir_stat) {
    struct smb2_create_rsp r;
    rc = finish_created(op, &ch->msgs[0], &r);
  }
  if (!rc && op->kind == OP_CLOSE && op->close_stat) rc = finish_closed(op, &ch->msgs[0]);
  if (op->kind == OP_CLOSE && op->closing) { /* the handle is gone whatever the server said */
    file_free(op->closing);
    op->closing = NULL;
  }
  chain_free(ch);
  return rc;
}

/* ---- running ---- */
int pathop_run_sync(struct pathop *op) {
  struct smb3_chain *ch = NULL;
  int rc = client_sync_check(op->c, op->what); /* (client_steps_first checks too; this names the operation) */
  if (!rc) rc = client_steps_first(op->c, op->steps, op->n, op->first_is_create, &ch);
  rc = pathop_finish(op, rc ? NULL : ch, rc);
  if (op->lk_again) {
    lease_retry(op);
    ch = NULL;
    rc = client_steps_first(op->c, op->steps, op->n, op->first_is_create, &ch);
    rc = pathop_finish(op, rc ? NULL : ch, rc);
  }
  while (op->dp_again || dp_orphan(op, rc)) { /* (the caller's thread: it may sleep) */
    if (op->dp_again) {
      uint64_t ns = dp_delay(op);
      nanosleep(&(struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)}, NULL);
    } else {
      (void)smb3_close(op->file); /* (freed whatever the server says) */
      op->file = NULL;
    }
    ch = NULL;
    rc = client_steps_first(op->c, op->steps, op->n, op->first_is_create, &ch);
    rc = pathop_finish(op, rc ? NULL : ch, rc);
  }
  if (!op->ro_again) return rc;
  readonly_retry(op);
  ch = NULL;
  rc = client_steps_first(op->c, op->steps, op->n, op->first_is_create, &ch);
  return pathop_finish(op, rc ? NULL : ch, rc);
}

static void async_done(struct smb3_chain *ch, int rc, void *arg);
static void complete(struct pathop *op, int rc);

static void dp_run_again(void *arg) { /* I/O thread: the delay is over */
  struct pathop *op = arg;
  if (client_steps_async(op->c, op->steps, op->n, op->first_is_create, async_done, op))
    complete(op, op->dp_rc);
}

static void dp_orphan_closed(int rc, void *arg) { /* I/O thread: the open that may be stale is closed */
  (void)rc;
  dp_run_again(arg);
}

static void async_done(struct smb3_chain *ch, int rc, void *arg) {
  struct pathop *op = arg;
  rc = pathop_finish(op, ch, rc);
  if (dp_orphan(op, rc)) {
    smb3_file *f = op->file;
    op->file = NULL;
    op->dp_rc = SMB3_ENOENT; /* if it cannot be sent again */
    if (!smb3_close_async(f, dp_orphan_closed, op)) return;
    dp_run_again(op);
    return;
  }
  if (op->lk_again) {
    lease_retry(op);
    if (!client_steps_async(op->c, op->steps, op->n, op->first_is_create, async_done, op)) return;
  }
  if (op->ro_again) {
    readonly_retry(op);
    if (!client_steps_async(op->c, op->steps, op->n, op->first_is_create, async_done, op)) return;
  }
  if (op->dp_again) {
    op->dp_rc = rc;
    if (!client_defer(op->c, dp_delay(op), dp_run_again, op)) return;
  }
  complete(op, rc);
}

/* The caller's callback, then op is freed. */
static void complete(struct pathop *op, int rc) {
  switch (op->kind) {
  case OP_STAT:
  case OP_FSTAT:
    op->cb.stat(rc, rc ? NULL : &op->st, op->arg);
    break;
  case OP_STATVFS:
    op->cb.statvfs(rc, rc ? NULL : &op->sv, op->arg);
    break;
  case OP_OPEN:
    if (op->wr)
      op->cb.open_write(rc, op->file, rc ? NULL : &op->st, rc ? 0 : op->wr_got, op->arg);
    else if (op->rd_len)
      op->cb.open_read(rc, op->file, rc ? NULL : &op->st, rc ? 0 : op->rd_got, op->arg);
    else
      op->cb.open(rc, op->file, rc ? NULL : &op->st, op->arg);
    break;
  case OP_GET_EAS:
    op->cb.eas(rc, rc ? NULL : op->eas, rc ? 0 : op->neas, op->arg);
    break;
  case OP_READLINK:
    if (op->want_dev)
      op->cb.readdev(rc, rc ? 0 : op->rdev, op->arg);
    else
      op->cb.readlink(rc, rc ? NULL : op->target, op->arg);
    break;
  case OP_CLOSE:
    if (op->close_stat)
      op->cb.stat(rc, rc || op->no_attrs ? NULL : &op->st, op->arg);
    else
      op->cb.done(rc, op->arg);
    break;
  case OP_SETATTR:
  case OP_LINK:
  case OP_UNLINK:
    if (op->then_stat)
      op->cb.stat(rc, rc || (op->kind == OP_UNLINK && op->no_attrs) ? NULL : &op->st, op->arg);
    else
      op->cb.done(rc, op->arg);
    break;
  case OP_MKDIR:
    if (op->mkdir_stat)
      op->cb.stat(rc, rc ? NULL : &op->st, op->arg);
    else
      op->cb.done(rc, op->arg);
    break;
  default:
    op->cb.done(rc, op->arg);
    break;
  }
  pathop_free(op);
}

int pathop_run_async(struct pathop *op) {
  smb3_file *lead = op->lead;
  op->lead = NULL; /* (a second run, after a wait, has it no more) */
  if (lead)
    return client_steps_lead_async(op->c, lead, op->steps, op->n, op->first_is_create, async_done, op);
  return client_steps_async(op->c, op->steps, op->n, op->first_is_create, async_done, op);
}
