/* client.h - internals of the client layer (lib/client/): the client object, synchronous
 * chain execution, compound/no-compound step runner, and request builders. */
#ifndef SMB3_CLIENT_INTERNAL_H
#define SMB3_CLIENT_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>

#include "core/core.h"
#include "fscc/fscc.h"
#include "net/transport.h"
#include "smb3/smb3.h"

struct smb3_client {
  struct smb3_options opts; /* private copy */
  struct smb3_core *core;
  struct smb3_transport *tr;
  uint32_t tree_id;
  int ipc;               /* connected without a share: the tree is IPC$ (smb3_list_shares) */
  uint32_t share_flags;  /* TREE_CONNECT's ShareFlags (SMB2_SHAREFLAG_DFS: dfs.c) */
  uint32_t rsize, wsize; /* effective */
  int multi_credit;
  int guest;     /* a named user was logged on as guest */
  int posix_neg; /* the SMB3 POSIX extensions were negotiated: every CREATE carries the POSIX context */
  int posix;     /* ... and the share answers it (POSIX information, names, chmod/chown) */
  int compound_fallback; /* the server's compounded responses did not verify: opts.nocompound set */
  pthread_mutex_t err_lock;
  char last_error[512];
  /* cached handle on the share root (statvfs in one QUERY_INFO) */
  pthread_mutex_t root_lock;
  int root_open, root_opening;
  struct smb2_file_id root_fid;
  uint64_t last_activity_s; /* keepalive.c (I/O thread only) */
  uint64_t last_requests;
  int echo_outstanding;
  smb3_break_cb break_cb; /* guarded by err_lock */
  void *break_arg;
  smb3_riders_cb riders; /* smb3_set_close_riders; guarded by err_lock */
  void *riders_arg;
  pthread_mutex_t ol_lock;    /* guards oplocked, dleased and the tracking fields of their files */
  struct smb3_file *oplocked; /* open files holding an oplock (lease.c) */
  struct smb3_file *dleased;  /* open directory handles holding a lease (lease.c: ParentLeaseKey) */
  int n_dleased;
  pthread_t io_thread; /* the connection's I/O thread (have_io_thread: started) */
  int have_io_thread;
  int closing;
  int closed;                        /* smb3_disconnect() ran: the struct lives on for open handles */
  int refs;                          /* the caller's reference + one per open smb3_file */
  uint64_t io_first_ns, io_last_ns;  /* first READ/WRITE sent, last one answered (atomics) */
  uint64_t bytes_copied;             /* server-side copies (copy.c; atomic) */
  pthread_mutex_t dfs_lock;          /* guards dfs_cache */
  struct dfs_cache_entry *dfs_cache; /* referrals asked of this server, until their TTL (dfs.c) */
};

/* How names travel (fscc.h FSCC_NAMES_*): a POSIX share's as they are, with '/' separators; any other
 * share's with the characters Windows reserves as SFM's code points, unless 'nomapposix'. */
static inline int client_names(const smb3_client *c) {
  return c->posix ? FSCC_NAMES_POSIX : c->opts.nomapposix ? 0 : FSCC_NAMES_SFM;
}

/* The DFS referral cache's memory (dfs.c), at the client's end. */
void dfs_cache_free(smb3_client *c);

struct smb3_file {
  smb3_client *c;
  struct smb2_file_id fid;
  int is_dir;
  uint32_t lease; /* granted lease state (SMB3_LEASE_*), 0 = none; for an oplock, its equivalent */
  char *path;
  /* An oplock (SMB 2.0.2, or a server without leasing) belongs to this one handle: the server
   * names the FileId when it breaks it, and the caller's key is reported (lease.c). */
  uint8_t oplock;   /* SMB2_OPLOCK_LEVEL_* held; NONE when none */
  uint8_t break_to; /* while breaking: the level the server allows now */
  int breaking;     /* a break waits for our acknowledgment */
  int tracked;      /* on c->oplocked */
  int dl_tracked;   /* on c->dleased (a directory handle holding a lease with key) */
  uint8_t key[16];
  struct smb3_file *ol_next, *dl_next;
};

/* The server grants leases (SMB 2.1+ with the leasing capability); otherwise keyed opens get oplocks. */
int client_leasing(smb3_client *c);
/* ... and leases on directories (SMB 3.x with the directory-leasing capability). */
int client_dir_leasing(smb3_client *c);
/* A handle for fid, opened by path (copied): NULL on ENOMEM (the handle then stays open on the
 * server until disconnect). */
smb3_file *file_make(smb3_client *c, const char *path, struct smb2_file_id fid, int is_dir, uint32_t lease);

/* Oplocks (lease.c): the lease state an oplock level stands for, and keeping the files that hold
 * one findable by FileId (track when the CREATE response grants one; untrack before freeing). */
uint32_t oplock_state(uint8_t level);
void oplock_track(smb3_file *f, const uint8_t key[16], uint8_t level);
/* Off c->oplocked and c->dleased (file_free). */
void lease_untrack(smb3_file *f);
struct create_args;
/* Directory leases this client holds (lease.c), so that a change this client makes in such a
 * directory carries the lease's key as its ParentLeaseKey (MS-SMB2 2.2.13.2.10) and the server
 * does not break the lease for it (Samba 4.22: contend_dirleases). dirlease_track: dh (a
 * directory's handle) holds a lease with key, until file_free. */
void dirlease_track(smb3_file *dh, const uint8_t key[16]);
/* For a CREATE of a: when it may change something in its parent directory (makes, removes,
 * renames, writes or sets attributes) and this client holds a lease on that directory, put the
 * parent's key in a's lease context (one with no caching asked for and a fresh key when a asks
 * for no lease). build_create calls it for every CREATE. */
void dirlease_parent(smb3_client *c, struct create_args *a);

/* Submit a chain on the client's connection; SMB3_ECLOSED after smb3_disconnect(). */
int client_submit(smb3_client *c, struct smb3_chain *ch);
/* fn(arg) on the I/O thread after delay_ns (or at the disconnect, sooner): transport_defer. */
int client_defer(smb3_client *c, uint64_t delay_ns, void (*fn)(void *), void *arg);
/* References that keep the client's memory alive (open files hold one). */
void client_ref(smb3_client *c);
void client_unref(smb3_client *c);
/* Free a file handle's memory (not its server handle) and drop its client reference. */
void file_free(smb3_file *f);

/* Record the failure (one line, with the NTSTATUS name when status != 0) and return rc. */
int client_fail(smb3_client *c, int rc, uint32_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Map a completed message to 0 or SMB3_E*, recording the failure as "<what>: <reason>". */
int client_msg_result(smb3_client *c, const struct smb3_chain *ch, int i, const char *what);
/* An answer's status as a result: 0 for success, else SMB3_E* (SMB3_ESTATUS when unmapped). */
int client_status_result(uint32_t status);
/* A WRITE's answer m: the bytes written, or SMB3_E* (its status; SMB3_EPROTO when malformed or
 * counting more than was sent). */
int64_t client_write_result(const struct smb3_msg *m);

/* Every synchronous entry point asks this before it submits anything it would wait for: on c's
 * own I/O thread (inside a completion callback or the break handler) the wait could never end,
 * since that thread is the one that would run the completion. Returns 0, or SMB3_EDEADLK with
 * the failure recorded as "<what>: ...". After smb3_disconnect() (c->closed) it returns 0: the
 * thread is gone, its id may belong to another thread now, and the call fails with ECLOSED. */
int client_sync_check(smb3_client *c, const char *what);

/* Submit a chain and wait for it (client_sync_check first). Returns ch->error or the submit
 * error; message statuses are left for the caller to check. */
int client_run(smb3_client *c, struct smb3_chain *ch);

/* Request builders: encode message i of chain ch. */
struct create_args {
  const char *path;
  uint32_t access, share, disposition, options, attributes;
  uint8_t oplock;
  struct smb2_lease lease;
  uint32_t mode; /* POSIX context: the permission bits for a file this CREATE makes ... */
  int mode_set;  /* ... when set; else 0644 (files) or 0755 (directories) */
  int no_follow; /* a metadata open: on a POSIX share, of a symlink or special file itself
                  * (FILE_OPEN_REPARSE_POINT; Samba refuses a reparse point opened without it) */
};
int build_create(smb3_client *c, struct smb3_msg *m, const struct create_args *a);
int build_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, int postquery);
int build_query_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t type, uint8_t cls,
                     uint32_t outlen);
/* An FSCTL on fid with input (may be NULL/0), asking for at most max_out bytes of output. */
int build_ioctl(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint32_t ctl_code,
                const uint8_t *input, uint32_t input_len, uint32_t max_out);
int build_set_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t type, uint8_t cls,
                   const uint8_t *buf, uint32_t len);
/* The same with AdditionalInformation (security descriptors: the parts that buf sets). */
int build_set_info_ai(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t type, uint8_t cls,
                      uint32_t addl_info, const uint8_t *buf, uint32_t len);
int build_read(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, void *buf, uint32_t len,
               uint64_t off);
int build_write(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *buf, uint32_t len,
                uint64_t off);
int build_flush(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid);
int build_lock(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid,
               const struct smb2_lock_element *el);
int build_query_dir(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t flags,
                    uint32_t outlen);
int build_simple(smb3_client *c, struct smb3_msg *m, uint16_t command);

/* A step of a CREATE ... CLOSE sequence: encode message into m for the given file id. */
struct step {
  int (*encode)(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg);
  const void *arg;
};
/* The CLOSE step most chains end with (no arg, no post-query attributes). */
int step_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg);
/* Run steps[0..n) (steps[0] a CREATE, steps[n-1] usually a CLOSE) as one related compound chain,
 * or one by one with the real file id under `nocompound`. Returns the completed chain in *out
 * (caller frees) with every message's status/response, or SMB3_E* on a transport failure. In
 * one-by-one mode a failed CREATE fails the rest with its status, as a server does for a chain. */
int client_steps(smb3_client *c, const struct step *steps, int n, struct smb3_chain **out);
/* The same with an explicit "steps[0] is a CREATE" (handle operations pass 0). */
int client_steps_first(smb3_client *c, const struct step *steps, int n, int first_is_create,
                       struct smb3_chain **out);
/* Asynchronous form: done(result_chain, rc, arg) runs exactly once on the I/O thread, never
 * before the call returned 0 (a failure to submit the first request is returned instead); the
 * caller frees result_chain. steps must stay valid until then. Returns 0 or SMB3_E* (then done
 * never runs). */
typedef void (*steps_done_fn)(struct smb3_chain *result, int rc, void *arg);
int client_steps_async(smb3_client *c, const struct step *steps, int n, int first_is_create,
                       steps_done_fn done, void *arg);
/* The same, with a CLOSE of lead (an open handle of c's, freed by this call whatever it returns)
 * sent first in the same compound, unrelated to the steps (whose chain, given to done, holds
 * only their messages): a handle that must be gone before the steps run costs no round trip of
 * its own. Under nocompound the CLOSE is sent on its own just before. */
int client_steps_lead_async(smb3_client *c, smb3_file *lead, const struct step *steps, int n,
                            int first_is_create, steps_done_fn done, void *arg);

/* The attributes of a CREATE or CLOSE response as smb3_stat, with st->ino = ino (0: unknown). */
void stat_from_attrs(const struct smb2_file_attrs *a, uint64_t ino, struct smb3_stat *st);
/* Result of a CREATE response as smb3_stat (ino from the QFid context when there was one). */
void stat_from_create(const struct smb2_create_rsp *r, struct smb3_stat *st);
void stat_from_fscc(const struct fscc_stat *f, struct smb3_stat *st);
/* FILETIME <-> timespec */
struct timespec_smb3 filetime_to_ts(uint64_t ft);
uint64_t ts_to_filetime(const struct timespec_smb3 *ts);

/* rsize/wsize as the current credit window allows (requests are cut to this). */
uint32_t client_io_size(smb3_client *c, int is_read);

/* sem_wait() that retries on EINTR (sync.c). */
void client_sem_wait(sem_t *s);

/* A READ that reports its progress (see smb3_msg.rd_progress): the bulk engine uses it to send
 * the next request just before the current response runs out (bulk.c). */
struct read_pacing {
  void (*progress)(void *arg, size_t remaining);
  void *arg;
  size_t lowat;
};
/* A WRITE of len bytes of the local file fd from fd_off (core.h: payload_in_fd). */
int file_pwrite_fd_async(smb3_file *f, int fd, uint64_t fd_off, size_t len, uint64_t off, smb3_cb cb,
                         void *arg);
int file_pread_paced(smb3_file *f, void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg,
                     const struct read_pacing *pace);

/* Transport callbacks: lease breaks (lease.c) and the idle keep-alive tick (keepalive.c). */
void client_install_handlers(smb3_client *c);
void client_tick(void *arg);

/* After TREE_CONNECT on a POSIX-negotiated connection: set c->posix if the share answers the POSIX
 * create context (posix.c). Returns 0 or a transport failure. */
int client_posix_probe(smb3_client *c);

/* Map open(2)-style flags to CREATE arguments. */
void create_args_from_flags(struct create_args *a, const char *path, int flags);

#endif
