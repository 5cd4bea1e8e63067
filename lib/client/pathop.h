/* pathop.h - one description of every metadata operation, run either synchronously or
 * asynchronously (so the sync API is the async one plus a wait, with no second copy of the
 * logic). An operation is a short list of steps (usually CREATE, the operation, CLOSE) run as one
 * related compound, or one by one under `nocompound`, and a finish function that turns the
 * completed chain into a result. */
#ifndef SMB3_PATHOP_H
#define SMB3_PATHOP_H

#include "client/client.h"

enum pathop_kind {
  OP_STAT,
  OP_STATVFS,
  OP_MKDIR,
  OP_RMDIR,
  OP_UNLINK,
  OP_RENAME,
  OP_TRUNCATE,
  OP_SETATTR,
  OP_OPEN,
  OP_FSTAT,
  OP_CLOSE,
  OP_FSYNC,
  OP_FTRUNCATE,
  OP_FSETATTR,
  OP_LINK,
  OP_FALLOCATE,
  OP_ZERO_DATA,
  OP_SET_SPARSE,
  OP_GET_EAS,
  OP_SET_EA,
  OP_LOCK,
  OP_UNLOCK,
  OP_SET_SECURITY, /* chmod / chown: SET_INFO SMB2_0_INFO_SECURITY of buf with addl_info */
  OP_MKREPARSE,    /* symlink / mknod: CREATE (new file) + FSCTL_SET_REPARSE_POINT of buf + CLOSE */
  OP_READLINK      /* CREATE + FSCTL_GET_REPARSE_POINT + CLOSE; the target in op->target */
};

struct pathop {
  smb3_client *c;
  enum pathop_kind kind;
  const char *what;     /* for error messages */
  char *path;           /* owned copy */
  struct step steps[5]; /* the longest: a read-only file's unlink with its attributes (readonly_retry) */
  int n;
  int first_is_create;
  enum { ROOT_NONE, ROOT_OPENING, ROOT_CACHED } root_use; /* statvfs and the cached root handle */
  struct smb2_file_id fid;                                /* handle operations */
  struct create_args ca;
  uint8_t info_type, info_class;
  uint32_t ctl_code;             /* OP_ZERO_DATA: the FSCTL; its input is buf */
  struct smb2_lock_element lock; /* OP_LOCK, OP_UNLOCK */
  uint32_t outlen;
  uint32_t addl_info; /* OP_SET_SECURITY: AdditionalInformation (FSCC_SECINFO_*) */
  int symlink;        /* OP_MKREPARSE: a symlink (else a special file) */
  int existing;       /* OP_MKREPARSE: on the file that is there (a rename in Samba 4.22 loses it) */
  int want_dev;       /* OP_READLINK: a device's numbers (rdev), not a symlink's target */
  uint64_t rdev;      /* OP_READLINK with want_dev: makedev(major, minor) */
  uint32_t mode;      /* OP_MKREPARSE, and OP_OPEN / OP_MKDIR with mode_set: the POSIX context's mode */
  int mode_set;
  uint8_t *buf; /* SET_INFO payload (owned) */
  uint32_t buflen;
  int open_flags;
  void *rd_buf; /* OP_OPEN: READ the first rd_len bytes into rd_buf in the same compound */
  uint32_t rd_len;
  int64_t rd_got;     /* bytes read, or SMB3_E* (the open stands either way) */
  const void *wr_buf; /* OP_OPEN with wr: WRITE wr_len bytes of wr_buf at wr_off (wr_len 0: none) */
  uint32_t wr_len;
  uint64_t wr_off;
  int wr; /* ... and, with wr_times, SET_INFO wr_basic, in the CREATE's compound */
  int wr_times;
  uint8_t wr_basic[40];
  int64_t wr_got; /* bytes written, or SMB3_E* of the WRITE or SET_INFO (the open stands either way) */
  int mkdir_stat; /* OP_MKDIR: report the new directory's attributes (cb.stat) */
  int then_stat;  /* OP_SETATTR, OP_LINK: a QUERY_INFO of the attributes after the SET_INFO, before the CLOSE
                   * (cb.stat); OP_UNLINK: right after the CREATE (the file as it was: its link count)
                   */
  int close_stat; /* OP_CLOSE: ask for the attributes at close (cb.stat) */
  int no_attrs;   /* OP_CLOSE: the server sent none; OP_UNLINK: none asked (cb.stat gets NULL) */
  int ro_again;   /* OP_UNLINK / OP_RMDIR: refused as read-only; run once more (readonly_retry) */
  int ro_retried;
  int lk_again; /* OP_OPEN: the server refused the lease key (lease_refused); run once more without a lease */
  int dp_again; /* a CREATE that makes the name found it delete-pending: run again later */
  int dp_tries; /* ... so many times so far */
  uint64_t dp_waited; /* ns waited for it */
  int dp_rc;          /* the result to report if it cannot run again */
  int dp_checked;     /* an open after such waits found a file: asked once more (dp_orphan) */
  /* results */
  struct smb3_stat st;
  struct smb3_statvfs sv;
  smb3_file *file;     /* OP_OPEN */
  smb3_file *closing;  /* OP_CLOSE: freed when finished */
  smb3_file *lead;     /* closed in the same compound, before the steps (client_steps_lead_async) */
  struct smb3_ea *eas; /* OP_GET_EAS: the attributes (owned, pointing into ea_buf) */
  size_t neas;
  uint8_t *ea_buf;
  char *target;                /* OP_READLINK (owned) */
  struct fscc_reparse reparse; /* OP_READLINK: what the reparse point is */
  /* async completion */
  union {
    smb3_done_cb done;
    smb3_stat_cb stat;
    smb3_open_cb open;
    smb3_open_read_cb open_read;
    smb3_open_write_cb open_write;
    smb3_statvfs_cb statvfs;
    smb3_eas_cb eas;
    smb3_readlink_cb readlink;
    smb3_readdev_cb readdev;
  } cb;
  void *arg;
  /* one-by-one runner state */
  struct smb3_chain *result;
  int next;
  uint32_t create_status;
};

/* Allocate an operation (NULL on ENOMEM). path may be NULL for handle operations. */
struct pathop *pathop_new(smb3_client *c, enum pathop_kind kind, const char *path);
void pathop_free(struct pathop *op);

/* Fill the steps for op->kind from the fields set by the caller. */
int pathop_prepare(struct pathop *op);
/* Run and wait; returns 0 or SMB3_E* (results in op). */
int pathop_run_sync(struct pathop *op);
/* Run; op->cb / op->arg are called once on completion and op is freed afterwards. */
int pathop_run_async(struct pathop *op);

#endif
