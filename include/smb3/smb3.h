/* smb3.h - libsmb3, an SMB2/SMB3 client library.
 *
 * One smb3_client is one TCP connection with one authenticated session and one tree (share),
 * served by an I/O thread of its own: it sends, receives, and runs every completion callback.
 * All functions are thread-safe on the same client. Operations come in a synchronous form
 * (blocks the calling thread until the server answered) and/or an asynchronous one (*_async).
 *
 * Return values: 0 or a non-negative count on success, a negative SMB3_E* code on failure (see
 * smb3_errors.h). smb3_last_error() gives a one-line description of the client's last failure,
 * including the server's NTSTATUS name.
 *
 * Ownership, everywhere: strings passed in are copied before the call returns; buffers passed to
 * asynchronous calls must stay valid until their callback ran; objects returned through `**out`
 * belong to the caller and are released with their matching free/close function; what a callback
 * is handed (stat, entries, ranges, attributes) is valid during the callback only, except a new
 * smb3_file. Pointers not called optional must be valid: a NULL client or handle gives the
 * SMB3_EINVAL or SMB3_EBADF listed where one is listed, and is undefined elsewhere.
 *
 * Each function's contract is written beside it in one fixed form:
 *   Errors:  the SMB3_E* codes it returns (or hands its callback), with these groups:
 *     CONN    any call that sends requests: SMB3_ENOMEM; SMB3_ECLOSED (the connection was lost, or
 *             smb3_disconnect() ran); SMB3_ETIMEDOUT (no answer within timeout_ms); SMB3_EPROTO (a
 *             malformed answer); SMB3_ESIGNATURE, SMB3_ENCRYPT (an answer failed its signature or
 *             decryption). When one of them ended the connection (smb3_connection_lost() says so),
 *             every later request on it fails too; an SMB3_EPROTO about one answer's contents does
 *             not end it. And SMB3_ERANGE for a request that needs more credits than the server's
 *             whole window (the connection lives on).
 *     STATUS  the server's NTSTATUS, mapped by one table (lib/util/status_map.c): any code of the
 *             table can come out; the likely ones are named per function. SMB3_ESTATUS for a
 *             status the table does not know (smb3_last_error() names it).
 *     SYNC    SMB3_EDEADLK: a synchronous call made on c's own I/O thread (from a completion
 *             callback or the break handler) would wait for the thread it runs on; it returns this
 *             at once instead, with nothing sent and nothing changed.
 *   Callback (asynchronous functions), ASYNC for short: the call returns 0 and the callback then
 *             runs exactly once, on c's I/O thread; or the call returns an error and the callback
 *             never runs. It can run before the call has returned to its caller (the I/O thread
 *             does not wait for the caller), so whatever it uses must be ready before the call; it
 *             never runs inside the call on the calling thread unless that is said. Called from a
 *             callback, the new request's callback runs after the current one has returned.
 *             The call itself returns SMB3_EINVAL (a NULL argument or callback), SMB3_ENOMEM, or
 *             the CONN code that ended the connection; the callback gets the codes of the
 *             synchronous form, less SYNC. Callbacks must not block: while one runs, nothing else
 *             on the connection moves.
 *   From a callback: whether the function may be called inside a callback (on the I/O thread).
 *             "no (SYNC)": it fails with SMB3_EDEADLK there; use the *_async form, or hand the
 *             work to another thread. (A synchronous call on a different client is not refused,
 *             but blocks this connection until it returns.)
 */
#ifndef SMB3_H
#define SMB3_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "smb3/smb3_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smb3_client smb3_client;
typedef struct smb3_file smb3_file;
typedef struct smb3_dir smb3_dir;

/* The library's version, "MAJOR.MINOR.PATCH": a static string, CMake's project() version.
 * Errors: none. From a callback: yes. */
const char *smb3_version(void);

/* ---- options (one parser for the CLI, the library and the mount) ---- */
enum smb3_cache_mode { SMB3_CACHE_STRICT = 0, SMB3_CACHE_NONE = 1, SMB3_CACHE_LOOSE = 2 };

struct smb3_options {
  char *host; /* owned strings (smb3_options_free) */
  char *share;
  char *path;     /* path inside the share from a URL ("" for the root) */
  char *username; /* NULL or "" = anonymous/guest */
  char *password;
  char *domain;
  int port;                    /* default 445 */
  uint16_t vers_min, vers_max; /* dialect range, default 0x0202..0x0311; vers=3.1.1 pins, min_vers=3.0
                                * raises the lowest */
  int sign;                    /* require signing */
  int seal;                    /* require encryption (SMB 3.x) */
  uint32_t rsize, wsize;       /* wire READ/WRITE size, default 4 MiB, capped by the server */
  uint32_t max_inflight; /* bulk transfers: cap on requests in flight; 0 (default) = auto: READs paced to the
                          * link (usually 2 in flight), WRITEs 24 MiB in flight */
  uint32_t credits;      /* credit window to ask for, default 1024 */
  int nocompound;        /* send compoundable operations one by one */
  uint32_t timeout_ms;   /* per request, default 60000; connect timeout: connect_timeout_ms */
  uint32_t connect_timeout_ms; /* default 10000 */
  uint32_t echo_interval;      /* seconds between keep-alive ECHOs when idle, default 60, 0 = off */
  /* file-system (smb3fs) options; parsed here so that every front end accepts the same set */
  int cache;               /* enum smb3_cache_mode */
  double actimeo;          /* attribute cache seconds, default 1 */
  int uid, gid;            /* -1 = the mounting user's */
  int file_mode, dir_mode; /* -1 = default (0755 dirs, 0644 files) */
  int ro;
  int mfsymlinks; /* smb3fs: symlinks as Minshall+French symlink files (the format of macOS and of
                   * mount.cifs's option): -1 (default) where the share has no POSIX extensions (which
                   * store the server's own), 1 'mfsymlinks' everywhere, 0 'nomfsymlinks' never (symlink(2)
                   * then fails with EPERM on such a share) */
  int nobrl;      /* fcntl/flock locks stay on this machine, not sent to the server (as mount.cifs's) */
  int lazyexcl;   /* smb3fs: O_EXCL creates may be put off too (see smb3fs(8)) */
  int dirleases;  /* smb3fs: listings kept under directory leases past actimeo (see smb3fs(8)) */
  int noposix;    /* 'noposix': do not offer the SMB3 POSIX extensions; 'posix' (default): use them
                   * when the server (SMB 3.1.1, e.g. Samba with 'smb3 unix extensions') offers them */
  int nomapposix; /* 'nomapposix': names go to a share without POSIX extensions as they are, so a
                   * name with a character Windows reserves (control characters, " * : < > ? |) is
                   * refused and "file:stream" names a stream; 'mapposix' (default): those
                   * characters travel as the private-use code points of Services for Macintosh
                   * (U+F001..U+F027), as the kernel cifs client's default and macOS store them */
  /* authentication (sec=, as mount.cifs): SMB3_SEC_AUTO (0, default: Kerberos when the server
   * offers it and the credential cache holds a ticket, else NTLMSSP), NTLMSSP (1), KRB5 (2) */
  int sec;
  char *ip;                /* ip=ADDR: connect there; host still names the server (the SPN cifs/host) */
  char *krb5_keytab;       /* krb5_keytab=FILE: tickets from this keytab for username= (unattended) */
  char *krb5_ccache;       /* credential cache to use (NULL: KRB5CCNAME or the default) */
  int cruid;               /* cruid=UID: that user's credential cache; -1 (default) none */
  int credentials_exposed; /* set when a credentials file that group or others may read was read: the
                            * front end warns (smb3_options_credentials_file) */
  int forceuid, forcegid;  /* smb3fs: uid= / gid= even where the server reports owners (POSIX); as
                            * mount.cifs's; noforceuid / noforcegid (default) turn them off */
  uint64_t directio_min;   /* smb3fs, cache=strict: a file at least this large opened only for reading,
                            * whose pages the kernel does not hold, is read with direct I/O from the
                            * mount's read-ahead (no page cache fill); default 0 = never (small
                            * reads through direct I/O cost a FUSE request each: smb3fs(8)) */
};

/* None of these do network I/O: all may be called from a callback. */
/* Fill defaults. Errors: none. From a callback: yes. */
void smb3_options_init(struct smb3_options *o);
/* Release owned strings (not o itself). Errors: none. From a callback: yes. */
void smb3_options_free(struct smb3_options *o);
/* Parse a comma-separated option string ("vers=3.1.1,sign,rsize=1M,..."). Unknown options are an
 * error unless allow_unknown (then they are skipped and left for the caller). s NULL: 0, nothing
 * parsed. err (errlen bytes, may be NULL) receives a one-line message on error.
 * Errors: SMB3_EURL (unknown option, bad value, a credentials= file that cannot be read),
 * SMB3_ENOMEM. From a callback: yes. */
int smb3_options_parse(struct smb3_options *o, const char *s, int allow_unknown, char *err, size_t errlen);
/* Passwords out of a program's command line, which ps shows to every local user for as long as the
 * program runs. Returns a private copy of argv[0..argc) (NULL-terminated; free with
 * smb3_argv_free) and removes, in place in the originals, every password= / pass= element of an
 * option list (-o X, -oX, --options X, --options=X) and the :PASSWORD of any smb://USER:PASSWORD@...
 * or //USER:PASSWORD@HOST/SHARE argument; the bytes freed at the end of a shortened string are
 * zeroed. Call it first in main() and parse the copy.
 * Errors: NULL when out of memory (argv untouched then). From a callback: yes. */
char **smb3_argv_hide_secrets(int argc, char **argv);
/* Frees a copy from smb3_argv_hide_secrets (its strings zeroed first). NULL: nothing.
 * Errors: none. From a callback: yes. */
void smb3_argv_free(char **argv);
/* Parse smb://[DOMAIN;]USER[:PASSWORD]@HOST[:PORT]/SHARE[/PATH] into o (host, share, path,
 * username, password, domain, port; %XX escapes decoded).
 * Errors: SMB3_EURL with a message in err (out of memory included). From a callback: yes. */
int smb3_url_parse(struct smb3_options *o, const char *url, char *err, size_t errlen);
/* The same, but the share may be left out: smb://[USER@]HOST[:PORT] and smb://[USER@]HOST[:PORT]/
 * name the server (o->share NULL, o->path ""), for smb3_connect without a share and
 * smb3_list_shares. A URL with a share is parsed as smb3_url_parse does.
 * Errors: SMB3_EURL with a message in err. From a callback: yes. */
int smb3_url_parse_server(struct smb3_options *o, const char *url, char *err, size_t errlen);
/* Read a credentials file (username=, password=, domain= lines, as mount.cifs/smbclient). A file
 * that its group or others may read is still read, and sets o->credentials_exposed, so that the
 * program can warn (the library prints nothing).
 * Errors: SMB3_EURL with a message in err (unreadable file, a line without '=', an unknown key),
 * SMB3_ENOMEM. From a callback: yes (it reads a local file). */
int smb3_options_credentials_file(struct smb3_options *o, const char *path, char *err, size_t errlen);

/* ---- connection ---- */
/* Connect, negotiate, authenticate and connect the tree named in o (host required; o is copied).
 * Starts c's I/O thread and blocks for the whole handshake. On failure *out is NULL and, if err is
 * given, a one-line reason is written to it. Without a share (o->share NULL or "") the tree is
 * the server's IPC$: such a client is for smb3_list_shares() and the counters; file and path
 * calls on it fail with the server's answer for IPC$.
 * Errors: SMB3_EINVAL (no host), SMB3_ENOMEM, SMB3_ECONNECT (name not resolved, refused,
 * unreachable), SMB3_ETIMEDOUT (connect_timeout_ms, or a handshake request's timeout_ms),
 * SMB3_EDIALECT (no common dialect), SMB3_ELOGON, SMB3_ENOSHARE, SMB3_EACCES, SMB3_ESIGNATURE
 * (signing required on a guest session, a bad signature, a VALIDATE_NEGOTIATE_INFO mismatch),
 * SMB3_ENCRYPT (seal asked for, or the share requires encryption, and the session cannot),
 * SMB3_ENOTSUP (not a disk share), SMB3_ENAMETOOLONG (host and share too long), SMB3_EPROTO (not
 * an SMB2/SMB3 server), SMB3_ECLOSED, other STATUS codes.
 * From a callback: no (not refused: it blocks the calling connection for the whole handshake). */
int smb3_connect(const struct smb3_options *o, smb3_client **out, char *err, size_t errlen);
/* Log off, disconnect, fail anything still in flight with SMB3_ECLOSED, free the client. Waits
 * for the goodbye requests and for the I/O thread to stop; the callbacks of requests still in
 * flight run (on the I/O thread, with SMB3_ECLOSED) before it returns. c NULL: nothing.
 * Files and directories still open are invalidated (their handles must still be closed/freed).
 * Errors: none (void).
 * From a callback: no (SYNC): on c's own I/O thread it does nothing at all (c stays connected and
 * must still be disconnected from another thread) and smb3_last_error(c) says so. */
void smb3_disconnect(smb3_client *c);
/* ---- DFS (MS-DFSC) ---- */
/* How many referrals smb3 follows for one path before it gives up (a chain of links). */
#define SMB3_DFS_MAX_HOPS 8
/* Nonzero when c's share is in a DFS namespace (TREE_CONNECT said SMB2_SHAREFLAG_DFS or DFS_ROOT):
 * a path on it may cross a DFS link, which the server answers with STATUS_PATH_NOT_COVERED
 * (SMB3_EDFS). Errors: none. From a callback: yes. */
int smb3_dfs_share(smb3_client *c);
/* One DFS hop for path (relative to c's share, '/' separated): asks c's server for the referral
 * that covers \\host\share\path (FSCTL_DFS_GET_REFERRALS, one round trip on c; answers are kept
 * in c for their TimeToLive, so a second call within it sends nothing), then connects to its
 * targets in the server's order with c's options (the same port and credentials; ip= only for
 * the URL's own host) until one answers. On success either *out == c and *out_path NULL (not
 * redirected: no referral, or a root referral naming this very share), or *out is a new client
 * for the target share (the caller disconnects it) and *out_path the path there (malloc'd,
 * caller frees; "" for the target's root). A caller follows again on *out while it is redirected,
 * at most SMB3_DFS_MAX_HOPS times, and must itself refuse a place it already visited.
 * Errors (recorded on c): SMB3_ELOOP (a link whose target is the link itself), SMB3_ECONNECT (no
 * target answers; the last target's reason is in the message), SMB3_EPROTO (a malformed referral),
 * SMB3_ENOMEM, transport errors. From a callback: no (SYNC). */
int smb3_dfs_follow(smb3_client *c, const char *path, smb3_client **out, char **out_path);
/* The same, and when redirected *link is the part of path (relative to c's share, '/' separated,
 * malloc'd, caller frees) that the referral covers: the DFS link itself, so that a caller can send
 * every later path under it to *out without asking again (smb3fs does). NULL when not redirected. */
int smb3_dfs_follow_link(smb3_client *c, const char *path, smb3_client **out, char **out_path, char **link);
/* The host and share c is connected to (as given to smb3_connect; share "" for IPC$). The strings
 * live as long as c. Errors: none. From a callback: yes. */
const char *smb3_client_host(smb3_client *c);
const char *smb3_client_share(smb3_client *c);

/* Nonzero once the connection is gone (reset, timed out, keep-alive unanswered, or disconnected):
 * every request on c and its files fails from then on. A caller that wants to go on connects
 * again (smb3fs does, in the background). Not to be called after smb3_disconnect(c) returned.
 * c NULL: 1. Errors: none. From a callback: yes. */
int smb3_connection_lost(smb3_client *c);
/* The last failure on this client as one line; never NULL (c NULL: "no client"). The text lives
 * in c and the next failure on c, from any thread, overwrites it: copy it at once when other
 * threads use c. Errors: none. From a callback: yes. */
const char *smb3_last_error(smb3_client *c);
/* The negotiated dialect (0x0202 ... 0x0311) and whether signing/encryption are active.
 * c connected (not after smb3_disconnect(c)). Errors: none. From a callback: yes. */
uint16_t smb3_dialect(smb3_client *c);
int smb3_signing_active(smb3_client *c);
int smb3_encryption_active(smb3_client *c);
/* Effective wire I/O sizes after capping by the server (and by its credit window, which may
 * shrink or grow them while c lives). Errors: none. From a callback: yes. */
uint32_t smb3_rsize(smb3_client *c);
uint32_t smb3_wsize(smb3_client *c);

/* ---- counters ---- */
struct smb3_stats {
  uint64_t requests, round_trips;
  uint64_t bytes_read, bytes_written, reads, writes;
  uint32_t max_read_size, max_write_size, credits_max_in_flight;
  uint64_t per_command[19]; /* indexed by SMB2 command code */
  uint64_t io_ns;           /* from the first READ/WRITE sent to the last one answered (the data
                             * phase of a transfer, without connect, logon, open and close) */
  uint64_t bytes_copied;    /* by the server for smb3_copy_range (not in bytes_read/bytes_written) */
  int compound_fallback;    /* 1: the server's compounded responses did not verify at connect, so this
                             * connection sends every operation one request at a time (as nocompound) */
};
/* A snapshot of c's counters (all 0 once c's connection was closed). Errors: none.
 * From a callback: yes. */
void smb3_get_stats(smb3_client *c, struct smb3_stats *s);
/* One JSON object with the counters (malloc'd; caller frees; NULL when out of memory).
 * Errors: none (NULL is the only failure). From a callback: yes. */
char *smb3_stats_json(const struct smb3_stats *s);

/* ---- files ---- */
struct smb3_stat {
  uint64_t size; /* EndOfFile */
  uint64_t alloc_size;
  uint64_t ino;        /* server file id (IndexNumber; on a POSIX connection the server's inode) */
  uint32_t attributes; /* FILE_ATTRIBUTE_* */
  int is_dir;
  uint32_t nlink;
  /* The Unix view. posix = 1: mode, uid, gid, nlink, dev and the type are the server's own (an SMB3
   * POSIX extensions connection, smb3_posix()); posix = 0: synthesised from the attributes (mode
   * S_IFDIR|0755 or S_IFREG|0644, without the write bits for a read-only file; uid, gid
   * SMB3_NO_ID; type regular or directory). */
  int posix;
  uint32_t mode;        /* st_mode: S_IFMT (S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR,
                         * S_IFBLK) | the 07777 permission bits */
  uint32_t uid, gid;    /* SMB3_NO_ID when unknown (not a Unix SID: S-1-22-1-UID / S-1-22-2-GID) */
  uint32_t dev;         /* the server's st_dev (POSIX only, else 0) */
  uint32_t reparse_tag; /* IO_REPARSE_TAG_* of a reparse point (POSIX only), else 0 */
  uint64_t rdev;        /* a device's makedev(major, minor) once known (smb3_readdev; no stat call
                         * fills it: the POSIX information has none), else 0 */
  int created;          /* the attributes of an open whose CREATE made the file (FILE_CREATED), else 0 */
  struct timespec_smb3 {
    int64_t sec;
    long nsec;
  } atime, mtime, ctime, btime;
};

#define SMB3_NO_ID 0xFFFFFFFFu

/* flags: O_RDONLY / O_WRONLY / O_RDWR, with O_CREAT, O_EXCL, O_TRUNC, O_DIRECTORY; O_APPEND is
 * not emulated. *out owned by the caller: smb3_close() it; NULL on failure. st (optional)
 * receives attributes. With O_CREAT, a name that is delete-pending (deleted while another open
 * holds the file) is asked for again for up to 1 s (2, 4 ... 128 ms apart), then SMB3_ENOENT; so
 * are mkdir, symlink and mknod, and the asynchronous forms (the waits on the I/O thread's timer).
 * Errors: SMB3_EINVAL (c or path NULL), CONN, STATUS (SMB3_ENOENT, SMB3_EEXIST with O_CREAT|O_EXCL,
 * SMB3_EISDIR, SMB3_ENOTDIR, SMB3_EACCES, SMB3_EBUSY: a sharing violation, SMB3_ENAMETOOLONG),
 * SYNC. From a callback: no (SYNC). */
int smb3_open(smb3_client *c, const char *path, int flags, smb3_file **out, struct smb3_stat *st);
/* Close the handle and free f: freed whatever the outcome (a server error, a lost connection),
 * except SYNC: then nothing was sent and f stays open.
 * Errors: SMB3_EBADF (f NULL), CONN, STATUS (SMB3_EBADF: the server no longer knows the handle),
 * SYNC. From a callback: no (SYNC; smb3_close_async() closes from there). */
int smb3_close(smb3_file *f);
/* Any length, through the bulk engine (as smb3_read_range/smb3_write_range). pread returns the
 * bytes read, fewer than len only at the end of the file; pwrite returns len.
 * Errors: SMB3_EBADF (f NULL), SMB3_EINVAL (buf NULL, off + len past 2^63), SMB3_EIO (a short
 * write), CONN, STATUS (SMB3_EACCES: not opened for it, SMB3_EAGAIN: a range another handle
 * locked, SMB3_ENOSPC), SYNC. From a callback: no (SYNC). */
ssize_t smb3_pread(smb3_file *f, void *buf, size_t len, uint64_t off);
ssize_t smb3_pwrite(smb3_file *f, const void *buf, size_t len, uint64_t off);
/* Errors (all three): SMB3_EBADF (f NULL), CONN, STATUS (SMB3_EBADF, SMB3_EACCES; ftruncate:
 * SMB3_ENOSPC), SYNC. From a callback: no (SYNC). */
int smb3_fstat(smb3_file *f, struct smb3_stat *st);
int smb3_ftruncate(smb3_file *f, uint64_t size);
int smb3_fsync(smb3_file *f);

/* Asynchronous I/O of at most smb3_rsize/smb3_wsize bytes, one wire request (larger ranges: the
 * bulk calls below). cb(result, arg): result = bytes transferred (a READ at or past the end of the
 * file: 0) or SMB3_E*. buf must stay valid until cb ran.
 * Errors: the call: SMB3_EBADF (f NULL), SMB3_EINVAL (cb NULL, buf NULL with len > 0, len too
 * large, off + len past 2^63), SMB3_ENOMEM, CONN; cb: CONN, STATUS (SMB3_EACCES, SMB3_EAGAIN,
 * SMB3_ENOSPC). Callback: ASYNC. From a callback: yes. */
typedef void (*smb3_cb)(int64_t result, void *arg);
int smb3_pread_async(smb3_file *f, void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg);
int smb3_pwrite_async(smb3_file *f, const void *buf, size_t len, uint64_t off, smb3_cb cb, void *arg);
/* As smb3_pread_async, but the data may be moved from the socket into pipes with splice(2)
 * instead of being copied into buf, so that it never enters the process's memory (a FUSE server
 * splices it on to /dev/fuse; see smb3fs). pipes: npipes (1 to 64) pipes, both ends non-blocking
 * (pipe2(O_NONBLOCK)), empty; the data fills them in order, cap bytes each (at most what
 * F_SETPIPE_SZ gave it), together at least len. Before cb runs, *piped says where the result
 * bytes are: 1 = all of them in the pipes, 0 = in buf (answers on a session that signs or seals,
 * answers that came in one piece with others, and a pipe that filled up before all the data was
 * in: what the pipes held is read back into buf). buf is needed in every case; pipes is copied.
 * A failed READ can leave bytes in the pipes.
 * Errors: as smb3_pread_async; SMB3_EINVAL also for pipes or piped NULL, npipes out of range, a
 * negative fd, caps under len. */
struct smb3_pipe {
  int rd, wr; /* the read and write ends */
  size_t cap; /* bytes of the READ's data it takes */
};
int smb3_pread_pipe_async(smb3_file *f, void *buf, size_t len, uint64_t off, const struct smb3_pipe *pipes,
                          int npipes, int *piped, smb3_cb cb, void *arg);
/* A WRITE (as smb3_pwrite_async, len > 0) followed by setting the file's times through the same
 * handle (NULL = unchanged), one round trip (a related compound; two requests with nocompound).
 * result: the WRITE's bytes when both succeeded, else the first failure; a failed WRITE leaves the
 * times unset. The handle needs write-attributes access (a file opened for writing has it).
 * Errors: as smb3_pwrite_async (len 0 is SMB3_EINVAL); cb also STATUS of the SET_INFO. Callback:
 * ASYNC. From a callback: yes. */
int smb3_pwrite_setattr_async(smb3_file *f, const void *buf, size_t len, uint64_t off,
                              const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                              smb3_cb cb, void *arg);

/* Server-side copy (FSCTL_SRV_COPYCHUNK_WRITE): len bytes of src from src_off to dst at dst_off,
 * inside the server (the data never crosses the network). src must be open for reading and dst
 * for writing, both on the same client (SMB3_EXDEV otherwise). Copies up to the source's end of
 * file; returns the bytes copied (fewer than len at the source's end, or when the server stopped
 * part way: call again for the rest), or SMB3_E* when nothing was copied (SMB3_ENOTSUP: the
 * server cannot copy; the caller copies through the client instead).
 * Errors: SMB3_EINVAL (src, dst or cb NULL), SMB3_EISDIR (a directory), SMB3_EXDEV, SMB3_ERANGE
 * (an offset past 2^63), SMB3_ENOTSUP, SMB3_EIO (the server copied nothing), CONN, STATUS
 * (SMB3_EACCES, SMB3_EAGAIN: locked ranges, SMB3_ENOSPC), SYNC (smb3_copy_range).
 * Callback (_async): ASYNC, with the result smb3_copy_range would return.
 * From a callback: smb3_copy_range no (SYNC); smb3_copy_range_async yes. */
int64_t smb3_copy_range(smb3_file *src, uint64_t src_off, smb3_file *dst, uint64_t dst_off, uint64_t len);
int smb3_copy_range_async(smb3_file *src, uint64_t src_off, smb3_file *dst, uint64_t dst_off, uint64_t len,
                          smb3_cb cb, void *arg);

/* Bulk pipelined transfers: [off, off+len) in rsize/wsize pieces, several in flight (see max_inflight),
 * completing out of order into the right place. Stops at the first error and returns it; the
 * read returns fewer bytes only at end of file. progress (optional) is called on the calling
 * thread with the bytes done so far. All of them block the calling thread until the last piece
 * was answered.
 * Errors (range): SMB3_EBADF (f NULL), SMB3_EINVAL (buf NULL, off + len past 2^63), SMB3_ENOMEM,
 * SMB3_EIO (a short write), CONN, STATUS (SMB3_EACCES, SMB3_EAGAIN, SMB3_ENOSPC), SYNC.
 * From a callback: no (SYNC), for all of them. */
typedef void (*smb3_progress_cb)(uint64_t done, void *arg);
ssize_t smb3_read_range(smb3_file *f, void *buf, size_t len, uint64_t off);
ssize_t smb3_write_range(smb3_file *f, const void *buf, size_t len, uint64_t off);
/* Stream a whole file range through a callback-sized window: sink(buf, n, off) is called in
 * order on the calling thread (for get/cat; buf valid during the call only) and returns 0 or a
 * non-zero code that stops the stream and is returned; source fills buf for put and returns the
 * bytes it put there (0, or fewer than n: the end) or a negative SMB3_E* that stops the stream
 * and is returned. Return the bytes delivered/written.
 * Errors (streams): SMB3_EINVAL (f, sink or source NULL), SMB3_ENOMEM, SMB3_EIO (a short write),
 * the sink's or source's code, CONN, STATUS (SMB3_EACCES, SMB3_EAGAIN, SMB3_ENOSPC), SYNC.
 * From a callback: no (SYNC), for both. */
typedef int (*smb3_sink_cb)(const void *buf, size_t n, uint64_t off, void *arg);
typedef ssize_t (*smb3_source_cb)(void *buf, size_t n, uint64_t off, void *arg);
int64_t smb3_read_stream(smb3_file *f, uint64_t off, uint64_t len, smb3_sink_cb sink, void *arg,
                         smb3_progress_cb progress, void *parg);
int64_t smb3_write_stream(smb3_file *f, uint64_t off, smb3_source_cb source, void *arg,
                          smb3_progress_cb progress, void *parg);
/* Write len bytes of the local file fd (open for reading; a regular file), from its offset fd_off,
 * to f at off, pipelined like smb3_write_stream. The data goes from the page cache to the socket
 * with sendfile(2), never through a user-space buffer; on a session that signs or seals it is
 * read into buffers instead (both need the bytes). fd is only read (its file offset is not
 * moved) and must stay open until the call returns. The range must lie within the file: it is
 * checked first (SMB3_EINVAL), and a file cut shorter during the transfer kills the connection
 * (the lengths are on the wire already). Returns the bytes written or a negative SMB3_E*.
 * Errors: SMB3_EBADF (f NULL), SMB3_EINVAL (fd or its range), SMB3_ENOMEM, CONN, STATUS (SMB3_EACCES,
 * SMB3_ENOSPC), SYNC. From a callback: no (SYNC). */
int64_t smb3_write_from_fd(smb3_file *f, uint64_t off, int fd, uint64_t fd_off, uint64_t len,
                           smb3_progress_cb progress, void *parg);

/* ---- paths (each one compounded into one round trip unless nocompound) ----
 * Paths are relative to the share ("" is its root), '/' or '\\' separated.
 * Errors, each: SMB3_EINVAL (c or a path NULL), CONN, STATUS (the likely codes are named below),
 * SYNC. From a callback: no (SYNC), each; the *_async forms below may be called there. */
/* STATUS: SMB3_ENOENT, SMB3_ENOTDIR, SMB3_EACCES, SMB3_ENAMETOOLONG. */
int smb3_stat(smb3_client *c, const char *path, struct smb3_stat *st);
struct smb3_statvfs {
  uint64_t bsize, blocks, bfree, bavail;
};
/* STATUS: SMB3_EACCES. */
int smb3_statvfs(smb3_client *c, struct smb3_statvfs *st);
/* STATUS: SMB3_EEXIST, SMB3_ENOENT (no parent), SMB3_EACCES, SMB3_ENOSPC, SMB3_ENAMETOOLONG. */
int smb3_mkdir(smb3_client *c, const char *path);
/* STATUS: SMB3_ENOENT, SMB3_ENOTDIR, SMB3_ENOTEMPTY, SMB3_EACCES, SMB3_EBUSY. */
int smb3_rmdir(smb3_client *c, const char *path);
/* STATUS: SMB3_ENOENT, SMB3_EISDIR, SMB3_EACCES (read-only file), SMB3_EBUSY (open elsewhere). */
int smb3_unlink(smb3_client *c, const char *path);
/* Rename within the share; replaces an existing file at `to` when replace is non-zero.
 * Also SMB3_ENAMETOOLONG (a target name that cannot be encoded). STATUS: SMB3_ENOENT, SMB3_EEXIST
 * (to exists, replace 0), SMB3_EACCES, SMB3_EBUSY. */
int smb3_rename(smb3_client *c, const char *from, const char *to, int replace);
/* A hard link: newpath becomes a second name of the file existing (SMB3_EEXIST if it exists).
 * Also SMB3_ENAMETOOLONG as rename. STATUS: SMB3_ENOENT, SMB3_EEXIST, SMB3_EISDIR (existing is a
 * directory), SMB3_EACCES, SMB3_ENOTSUP. */
int smb3_link(smb3_client *c, const char *existing, const char *newpath);
/* STATUS: SMB3_ENOENT, SMB3_EISDIR, SMB3_EACCES, SMB3_ENOSPC. */
int smb3_truncate(smb3_client *c, const char *path, uint64_t size);
/* Set times (NULL = unchanged) and/or the read-only attribute (readonly < 0 = unchanged).
 * STATUS: SMB3_ENOENT, SMB3_EACCES. smb3_set_readonly is two round trips (stat, then set). */
int smb3_utimens(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                 const struct timespec_smb3 *mtime);
int smb3_set_readonly(smb3_client *c, const char *path, int readonly);

/* ---- POSIX (Samba's SMB3 POSIX extensions: SMB 3.1.1, 'smb3 unix extensions = yes' in [global] and
 * on the share, Samba 4.22 and later; option 'noposix' turns them off) ----
 * On such a share names are case-sensitive and may hold any byte but '/' and NUL ('\\' is still a
 * separator on the wire, so a name cannot hold it either), and smb3_stat / smb3_readdir report the
 * server's mode, owner, group, link count, inode and type (st.posix = 1). Metadata calls (stat,
 * unlink, rename, chmod, ...) act on a symlink or special file itself, not on what it points to. */
/* 1 when c's share speaks POSIX (negotiated, and the share answered the POSIX create context).
 * No I/O. Errors: none (0 for c NULL). From a callback: yes. */
int smb3_posix(const smb3_client *c);
/* The permission bits (0777) of path (SET_INFO of a security descriptor whose one ACE names
 * S-1-5-88-3-MODE; Samba 4.22 takes only the 0777 bits this way: setuid, setgid and sticky bits are
 * refused here with SMB3_EINVAL rather than dropped silently).
 * Errors: SMB3_EINVAL (c or path NULL, mode beyond 0777), SMB3_ENOTSUP (not a POSIX share), CONN,
 * STATUS (SMB3_ENOENT, SMB3_EACCES, SMB3_EACCES: not the owner), SYNC. From a callback: no (SYNC). */
int smb3_chmod(smb3_client *c, const char *path, uint32_t mode);
/* Owner and/or group (SMB3_NO_ID: unchanged; not both) as the SIDs S-1-22-1-UID / S-1-22-2-GID of
 * a security descriptor; the server applies its own rules (root, or the owner giving the file to
 * one of its groups). Errors: as smb3_chmod (SMB3_EINVAL: both SMB3_NO_ID). */
int smb3_chown(smb3_client *c, const char *path, uint32_t uid, uint32_t gid);
/* A symbolic link at path to target (any string of 1..4096 bytes, stored as given): a new file with an
 * IO_REPARSE_TAG_SYMLINK reparse point (MS-FSCC 2.1.2.4), one compound. Samba 4.22 keeps the
 * reparse point in an extended attribute (user.SmbReparse) of a regular file and reports it as a
 * symlink to SMB clients (st.mode S_IFLNK on a POSIX share, readlink); it is not a symlink on the
 * server's disk. A link whose reparse point the server refused is unlinked again (best effort).
 * Errors: SMB3_EINVAL (NULL, empty target), SMB3_ENAMETOOLONG (target too long), CONN, STATUS
 * (SMB3_EEXIST, SMB3_ENOENT: no parent, SMB3_EACCES, SMB3_ENOTSUP: no reparse points), SYNC.
 * From a callback: no (SYNC). */
int smb3_symlink(smb3_client *c, const char *target, const char *path);
/* A FIFO, socket or device (mode: S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK | permission bits; dev:
 * major/minor for devices, as makedev) as an IO_REPARSE_TAG_NFS reparse point (MS-FSCC 2.1.2.6),
 * what Samba 4.22 reports as that type (st.mode) and stores, like symlinks, in an extended
 * attribute of a regular file. Errors: as smb3_symlink (SMB3_EINVAL: another type). */
int smb3_mknod(smb3_client *c, const char *path, uint32_t mode, uint64_t dev);
/* smb3_mknod on the file that exists at path: its reparse point set again. Samba 4.22 loses a
 * special file's FILE_ATTRIBUTE_REPARSE_POINT when it is renamed (rename_internals_fsp sets the
 * archive bit through file_set_dosmode, which keeps only SAMBA_ATTRIBUTES_MASK), and then reports it
 * as a regular file although the reparse data is still there. Errors: as smb3_mknod (SMB3_ENOENT). */
int smb3_mknod_restore(smb3_client *c, const char *path, uint32_t mode, uint64_t dev);
/* The device numbers (makedev(major, minor)) of the character or block device at path: an NFS CHR
 * or BLK reparse point (what smb3_mknod makes; the POSIX information has no rdev). Errors:
 * SMB3_EINVAL (NULL, not a device), CONN, STATUS (SMB3_ENOENT, SMB3_EACCES), SMB3_EPROTO (a
 * malformed one), SYNC. From a callback: no (SYNC). */
int smb3_readdev(smb3_client *c, const char *path, uint64_t *dev);
/* The target of the symlink at path (an IO_REPARSE_TAG_SYMLINK or NFS LNK reparse point; '\\'
 * turned into '/'), NUL-terminated in buf (size bytes; a longer one is cut to size - 1); returns its
 * full length. Errors: SMB3_EINVAL (NULL, size 0, not a symlink: no reparse point or another kind),
 * CONN, STATUS (SMB3_ENOENT, SMB3_EACCES), SMB3_EPROTO (a malformed one), SYNC.
 * From a callback: no (SYNC). */
ssize_t smb3_readlink(smb3_client *c, const char *path, char *buf, size_t size);
/* Asynchronous forms (Callback: ASYNC; From a callback: yes; errors as above less SYNC). The
 * readlink callback's target (NULL when rc != 0) is valid during the call only. open_mode and
 * mkdir_mode are smb3_open_async / smb3_mkdir_stat_async with the permission bits a new file or
 * directory gets on a POSIX share (mode is ignored elsewhere, and for a file that exists). */
typedef void (*smb3_readlink_cb)(int rc, const char *target, void *arg);
typedef void (*smb3_readdev_cb)(int rc, uint64_t dev, void *arg);
int smb3_readdev_async(smb3_client *c, const char *path, smb3_readdev_cb cb, void *arg);
int smb3_mknod_restore_async(smb3_client *c, const char *path, uint32_t mode, uint64_t dev,
                             void (*cb)(int rc, void *arg), void *arg);
int smb3_chmod_async(smb3_client *c, const char *path, uint32_t mode, void (*cb)(int rc, void *arg),
                     void *arg);
int smb3_chown_async(smb3_client *c, const char *path, uint32_t uid, uint32_t gid,
                     void (*cb)(int rc, void *arg), void *arg);
int smb3_symlink_async(smb3_client *c, const char *target, const char *path, void (*cb)(int rc, void *arg),
                       void *arg);
int smb3_mknod_async(smb3_client *c, const char *path, uint32_t mode, uint64_t dev,
                     void (*cb)(int rc, void *arg), void *arg);
int smb3_readlink_async(smb3_client *c, const char *path, smb3_readlink_cb cb, void *arg);
int smb3_open_mode_async(smb3_client *c, const char *path, int flags, uint32_t mode,
                         void (*cb)(int rc, smb3_file *f, const struct smb3_stat *st, void *arg), void *arg);
int smb3_mkdir_mode_async(smb3_client *c, const char *path, uint32_t mode,
                          void (*cb)(int rc, const struct smb3_stat *st, void *arg), void *arg);

/* ---- directories ---- */
struct smb3_dirent {
  const char *name; /* valid until the next smb3_readdir/smb3_closedir */
  struct smb3_stat st;
};
/* Lists the whole directory before it returns (smb3_listdir_async and a copy); *out owned by the
 * caller: smb3_closedir() it; NULL on failure. The listing does not depend on c afterwards.
 * Errors: SMB3_EINVAL (c or path NULL), CONN, STATUS (SMB3_ENOENT, SMB3_ENOTDIR, SMB3_EACCES),
 * SYNC. From a callback: no (SYNC). */
int smb3_opendir(smb3_client *c, const char *path, smb3_dir **out);
/* Returns 1 with *e filled, 0 at the end. "." and ".." are skipped. No I/O.
 * Errors: SMB3_EBADF (d NULL). From a callback: yes. */
int smb3_readdir(smb3_dir *d, struct smb3_dirent *e);
/* Frees d. No I/O. Errors: SMB3_EBADF (d NULL). From a callback: yes. */
int smb3_closedir(smb3_dir *d);

/* ---- the server's shares (srvsvc NetrShareEnum level 1, MS-SRVS 3.1.4.8) ----
 * DCE/RPC over the srvsvc named pipe of IPC$: a client on a share connects IPC$ for the call (and
 * disconnects it after); a client made without a share (smb3_connect) is on IPC$ already. Round
 * trips: [TREE_CONNECT +] CREATE + bind (one compound), the request (plus a READ per further
 * piece of a long answer), CLOSE [+ TREE_DISCONNECT] (one compound); every request is in
 * smb3_get_stats. Hidden shares (names ending in '$', IPC$ among them) are listed like the others:
 * filtering is the caller's choice. */
#define SMB3_SHARE_DISK 0u   /* STYPE_DISKTREE (MS-SRVS 2.2.2.4), in type & SMB3_SHARE_TYPE_MASK */
#define SMB3_SHARE_PRINTQ 1u /* STYPE_PRINTQ */
#define SMB3_SHARE_DEVICE 2u /* STYPE_DEVICE */
#define SMB3_SHARE_IPC 3u    /* STYPE_IPC */
#define SMB3_SHARE_TYPE_MASK 0x0FFFFFFFu
#define SMB3_SHARE_TEMPORARY 0x40000000u /* STYPE_TEMPORARY */
#define SMB3_SHARE_SPECIAL 0x80000000u   /* STYPE_SPECIAL: an administrative share (C$, IPC$...) */
struct smb3_share {
  const char *name;    /* UTF-8 */
  const char *comment; /* UTF-8, "" when the server has none */
  uint32_t type;       /* as the server sent it: SMB3_SHARE_* in the low bits, TEMPORARY, SPECIAL */
};
/* The shares in the server's order: *out (caller's; smb3_shares_free) holds the array and its
 * strings in one block, NULL on failure or when there are none. Returns their count.
 * Errors: SMB3_EINVAL (c or out NULL), CONN, STATUS (of the TREE_CONNECT to IPC$, the pipe's
 * CREATE, the IOCTLs and READs: SMB3_EACCES, SMB3_ENOENT: no srvsvc pipe), SMB3_ENOTSUP (the
 * server refused the srvsvc interface in its bind_ack), SMB3_EACCES (the call's WERROR
 * ERROR_ACCESS_DENIED), SMB3_EIO (another WERROR, named in smb3_last_error), SMB3_EPROTO (a
 * malformed DCE/RPC or NDR answer, or a fault PDU), SYNC. From a callback: no (SYNC). */
int smb3_list_shares(smb3_client *c, struct smb3_share **out);
/* Frees what smb3_list_shares returned (NULL: nothing). Errors: none. From a callback: yes. */
void smb3_shares_free(struct smb3_share *s);
/* The same in the background: cb(rc, shares, n, arg) with rc 0 and the n shares (valid during the
 * call only; NULL when n is 0), or rc < 0 with shares NULL and n 0.
 * Errors: the call: SMB3_EINVAL (c or cb NULL), SMB3_ENOMEM, CONN; cb: those of smb3_list_shares
 * less SYNC. Callback: ASYNC. From a callback: yes. */
typedef void (*smb3_shares_cb)(int rc, const struct smb3_share *shares, size_t n, void *arg);
int smb3_list_shares_async(smb3_client *c, smb3_shares_cb cb, void *arg);

/* ---- small whole-file helpers (CREATE+READ+CLOSE / CREATE+WRITE+CLOSE in one round trip when
 * the data fits one request) ---- */
/* read_file returns the bytes read: at most len (of a longer file, its first len bytes), 0 for an
 * empty file. write_file creates or truncates path to exactly buf and returns len.
 * Errors: SMB3_EINVAL (c or path NULL, buf NULL with len > 0), SMB3_EIO (a short write), CONN,
 * STATUS (SMB3_ENOENT, SMB3_EISDIR, SMB3_EACCES, SMB3_EBUSY, SMB3_ENOSPC), SYNC.
 * From a callback: no (SYNC). */
ssize_t smb3_read_file(smb3_client *c, const char *path, void *buf, size_t len);
ssize_t smb3_write_file(smb3_client *c, const char *path, const void *buf, size_t len);
/* Minshall+French symlink files (the kernel cifs client's mfsymlinks format; lib/fscc/mfsymlink.c).
 * format: the file content for a link to target (1..SMB3_MFSYMLINK_MAX bytes); returns 0.
 * parse: the target of a well-formed file, checked field by field (digest included); returns its
 * length, and target gets a NUL-terminated copy. No I/O.
 * Errors: format: SMB3_EINVAL (target empty), SMB3_ENAMETOOLONG (longer than SMB3_MFSYMLINK_MAX),
 * SMB3_EIO (the MD5 digest cannot be computed); parse: SMB3_EPROTO (not a well-formed file),
 * SMB3_EIO (the digest cannot be computed). From a callback: yes. */
#define SMB3_MFSYMLINK_SIZE 1067
#define SMB3_MFSYMLINK_MAX 1024
int smb3_mfsymlink_format(const char *target, uint8_t buf[SMB3_MFSYMLINK_SIZE]);
int smb3_mfsymlink_parse(const uint8_t *buf, size_t len, char target[SMB3_MFSYMLINK_MAX + 1]);
/* Asynchronous forms of smb3_read_file/smb3_write_file for data that fits one request (len <=
 * smb3_rsize/smb3_wsize, else SMB3_EINVAL): one compounded CREATE + READ/WRITE + CLOSE. cb(result,
 * arg) runs once on the I/O thread with the bytes read (0 for an empty file) / written, or a
 * negative SMB3_E*; never if the call returns non-zero. buf must stay valid until then; path is
 * copied. smb3_create_file_async creates a new file (SMB3_EEXIST if the name exists) holding
 * exactly buf (one whose WRITE failed is unlinked again, best effort).
 * Errors: the call: SMB3_EINVAL (c, path or cb NULL, buf NULL, len 0 or too large), SMB3_ENOMEM,
 * CONN; cb: as smb3_read_file/smb3_write_file, less SYNC (create: SMB3_EEXIST).
 * Callback: ASYNC. From a callback: yes. */
int smb3_read_file_async(smb3_client *c, const char *path, void *buf, size_t len, smb3_cb cb, void *arg);
int smb3_create_file_async(smb3_client *c, const char *path, const void *buf, size_t len, smb3_cb cb,
                           void *arg);
/* A whole small file put in place atomically: it is written under tmp (a new name in target's
 * directory; SMB3_EEXIST if it exists) and renamed to target once the server took the data.
 * One round trip for a new target: CREATE tmp + WRITE + SET_INFO rename (not replacing) + CLOSE in
 * one related compound; a second, a rename that replaces, when target exists (it is replaced only
 * after the WRITE succeeded). len may be 0 (an empty file: no WRITE) and at most smb3_wsize. On
 * failure neither name is left holding the new data (best effort: an unlink is sent) and an
 * existing target is as it was. cb(result, arg): len, or SMB3_E*; buf must stay valid until then.
 * Errors: the call: SMB3_EINVAL (c, tmp, target or cb NULL, buf NULL with len > 0, len too large),
 * SMB3_ENAMETOOLONG (target), SMB3_ENOMEM, CONN; cb: CONN, STATUS (SMB3_ENOENT: no such directory,
 * SMB3_EEXIST: tmp exists, SMB3_EACCES, SMB3_ENOSPC), SMB3_EIO
 * (a short write). Callback: ASYNC. From a callback: yes. */
int smb3_put_file_async(smb3_client *c, const char *tmp, const char *target, const void *buf, size_t len,
                        smb3_cb cb, void *arg);

/* ---- asynchronous metadata operations ----
 * Same semantics (and the same compounding) as the synchronous calls above; the callback runs
 * exactly once on the I/O thread when the call returned 0, never when it returned an error.
 * Strings are copied before the call returns. Callbacks must not block; a synchronous call in one
 * fails with SMB3_EDEADLK (SYNC); other *_async functions may be called there.
 * Errors, each: the call: SMB3_EINVAL (c, a path or cb NULL), SMB3_EBADF (f NULL), SMB3_ENOMEM,
 * CONN; the callback: those of the synchronous form, less SYNC (beside the others, their own).
 * Callback: ASYNC, each. From a callback: yes, each. */
typedef void (*smb3_done_cb)(int rc, void *arg);
typedef void (*smb3_stat_cb)(int rc, const struct smb3_stat *st, void *arg);
typedef void (*smb3_open_cb)(int rc, smb3_file *f, const struct smb3_stat *st, void *arg);
typedef void (*smb3_statvfs_cb)(int rc, const struct smb3_statvfs *sv, void *arg);
/* st / sv: NULL when rc != 0. */
int smb3_stat_async(smb3_client *c, const char *path, smb3_stat_cb cb, void *arg);
int smb3_fstat_async(smb3_file *f, smb3_stat_cb cb, void *arg);
int smb3_statvfs_async(smb3_client *c, smb3_statvfs_cb cb, void *arg);
/* On success the callback receives a new handle that the caller owns (close it); f and st are
 * NULL when rc != 0. */
int smb3_open_async(smb3_client *c, const char *path, int flags, smb3_open_cb cb, void *arg);
/* Closes and frees f: f is invalid once the call returns, whatever it returns (on an error the
 * callback does not run and the server handle, if any, goes with the connection). cb may be NULL:
 * the CLOSE goes all the same, and nobody is told its answer. */
int smb3_close_async(smb3_file *f, smb3_done_cb cb, void *arg);
/* The same, and cb receives the file's attributes as the server saw them at the close (CLOSE with
 * POSTQUERY_ATTRIB: sizes, times and attributes; st->ino is 0), or st = NULL with rc = 0 when the
 * server closed the file but sent no attributes. */
int smb3_close_stat_async(smb3_file *f, smb3_stat_cb cb, void *arg);
/* Close n handles (1..SMB3_CLOSE_MANY_MAX) of the same client in one round trip: one compound
 * of unrelated CLOSEs (one request each with nocompound). Every handle is freed, whatever the
 * outcome. cb(rc): 0, or the first failure.
 * Errors: the call: SMB3_EINVAL (files NULL, n out of range, a NULL handle, handles of different
 * clients, cb NULL: nothing is freed), SMB3_ENOMEM, CONN (the handles are freed); cb: CONN,
 * STATUS. Callback: ASYNC. From a callback: yes. */
#define SMB3_CLOSE_MANY_MAX 32
int smb3_close_many_async(smb3_file *const *files, int n, smb3_done_cb cb, void *arg);
int smb3_fsync_async(smb3_file *f, smb3_done_cb cb, void *arg);
/* Byte-range locks (SMB2 LOCK). The server enforces them: while f holds [off, off+len), other
 * handles' conflicting READs and WRITEs of it fail (SMB3_EAGAIN), and so do their conflicting
 * locks. SMB3_LOCK_SHARED ranges may overlap each other; an exclusive one overlaps nothing, not
 * even the same handle's locks. A lock never waits: a conflict is SMB3_EAGAIN at once (wait by
 * asking again). SMB3_LOCK_UNLOCK releases one lock of exactly that range (SMB3_EINVAL if there
 * is none); a CLOSE releases all of the handle's. len 0 locks nothing (and conflicts with nothing);
 * off + len must stay below 2^64.
 * Errors: SMB3_EBADF (f NULL), SMB3_ERANGE (off + len past 2^64), SMB3_EINVAL (type, or an unlock
 * of no lock), SMB3_EAGAIN (a conflict), CONN, STATUS, SYNC (smb3_lock).
 * From a callback: smb3_lock no (SYNC); smb3_lock_async yes. */
enum { SMB3_LOCK_SHARED = 1, SMB3_LOCK_EXCLUSIVE = 2, SMB3_LOCK_UNLOCK = 3 };
int smb3_lock(smb3_file *f, uint64_t off, uint64_t len, int type);
int smb3_lock_async(smb3_file *f, uint64_t off, uint64_t len, int type, smb3_done_cb cb, void *arg);
int smb3_ftruncate_async(smb3_file *f, uint64_t size, smb3_done_cb cb, void *arg);
int smb3_mkdir_async(smb3_client *c, const char *path, smb3_done_cb cb, void *arg);
/* mkdir that also reports the new directory's attributes, from the same CREATE response (its
 * file id too when the server answers the QFid context; st->ino is 0 otherwise). */
int smb3_mkdir_stat_async(smb3_client *c, const char *path, smb3_stat_cb cb, void *arg);
int smb3_rmdir_async(smb3_client *c, const char *path, smb3_done_cb cb, void *arg);
/* smb3_rmdir_async with f (an open handle of c's, or NULL) closed in the same compound before the
 * removal: the handle a directory lease keeps (smb3_listdir_lease_async) on the directory, which
 * would otherwise cost a round trip of its own first. f is freed by this call whatever it
 * returns; its CLOSE failing does not fail the removal. f of another client is closed on its
 * own. */
int smb3_close_rmdir_async(smb3_client *c, smb3_file *f, const char *path, smb3_done_cb cb, void *arg);
int smb3_unlink_async(smb3_client *c, const char *path, smb3_done_cb cb, void *arg);
/* smb3_unlink_async with f (an open handle of c's, or NULL) closed in the same compound before the
 * removal: a handle of the file itself, which would otherwise leave it delete-pending (or cost a
 * round trip of its own first). f is freed by this call whatever it returns; its CLOSE failing
 * does not fail the removal. f of another client is closed on its own. */
int smb3_close_unlink_async(smb3_client *c, smb3_file *f, const char *path, smb3_done_cb cb, void *arg);
/* smb3_close_unlink_async that also reports the file's attributes as the server gave them with the
 * file open for its removal, in the same round trip (one QUERY_INFO more in the compound): its link
 * count tells whether other names keep it (st.nlink - 1 of them). cb gets NULL on error, and on
 * success when compounding is off (nocompound: the attributes would cost a round trip). */
int smb3_close_unlink_stat_async(smb3_client *c, smb3_file *f, const char *path, smb3_stat_cb cb, void *arg);
/* The call also returns SMB3_ENAMETOOLONG for a target name that cannot be encoded. */
int smb3_rename_async(smb3_client *c, const char *from, const char *to, int replace, smb3_done_cb cb,
                      void *arg);
int smb3_link_async(smb3_client *c, const char *existing, const char *newpath, smb3_done_cb cb, void *arg);
/* smb3_link_async, and the file's attributes afterwards (its link count included, as
 * smb3_stat_async gives them) from the same compound: CREATE + SET_INFO + QUERY_INFO + CLOSE, one
 * round trip. A failure of the QUERY_INFO alone (the link made) is reported as the call's. */
int smb3_link_stat_async(smb3_client *c, const char *existing, const char *newpath, smb3_stat_cb cb,
                         void *arg);
int smb3_truncate_async(smb3_client *c, const char *path, uint64_t size, smb3_done_cb cb, void *arg);
/* Set times (NULL = unchanged) and attributes (0 = unchanged) in one compound. */
int smb3_setattr_async(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                       const struct timespec_smb3 *mtime, uint32_t attributes, smb3_done_cb cb, void *arg);
/* smb3_setattr_async, and the file's attributes afterwards (as smb3_stat_async gives them) from
 * the same compound: CREATE + SET_INFO + QUERY_INFO + CLOSE, one round trip. */
int smb3_setattr_stat_async(smb3_client *c, const char *path, const struct timespec_smb3 *atime,
                            const struct timespec_smb3 *mtime, uint32_t attributes, smb3_stat_cb cb,
                            void *arg);
/* The same through an open handle (one SET_INFO; works after the file lost its name). The handle
 * needs write-attributes access: a file opened for writing has it (SMB3_EACCES otherwise). */
int smb3_fsetattr_async(smb3_file *f, const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                        uint32_t attributes, smb3_done_cb cb, void *arg);
/* Space: smb3_fallocate_async asks the server to reserve alloc_size bytes for the file
 * (FileAllocationInformation; pass at least the file's size: a smaller value cuts the file);
 * smb3_punch_hole_async makes [off, off+len) read as zeros and, where the server can, free
 * (FSCTL_SET_ZERO_DATA; the size does not change). cb: STATUS SMB3_ENOSPC, SMB3_ENOTSUP,
 * SMB3_EACCES; punch_hole's call also SMB3_ERANGE (off or off + len past 2^63). */
int smb3_fallocate_async(smb3_file *f, uint64_t alloc_size, smb3_done_cb cb, void *arg);
/* Where f has data in [off, off+len) (FSCTL_QUERY_ALLOCATED_RANGES): cb gets the ranges in order
 * (valid during the call only) and more = 1 when the server had more than one answer holds (ask
 * again from the end of the last one). What lies between them reads as zeros. A server may answer
 * a file that is not sparse with the whole range.
 * Errors: the call: SMB3_EINVAL (f or cb NULL), SMB3_ERANGE (off past 2^63), SMB3_ENOMEM, CONN;
 * cb: CONN, STATUS (SMB3_ENOTSUP, SMB3_EACCES). */
struct smb3_range {
  uint64_t off, len;
};
typedef void (*smb3_ranges_cb)(int rc, const struct smb3_range *r, size_t n, int more, void *arg);
int smb3_allocated_ranges_async(smb3_file *f, uint64_t off, uint64_t len, smb3_ranges_cb cb, void *arg);
int smb3_punch_hole_async(smb3_file *f, uint64_t off, uint64_t len, smb3_done_cb cb, void *arg);
/* Mark f sparse (FSCTL_SET_SPARSE): the server may then free zeroed ranges and report them as holes.
 * cb: STATUS SMB3_ENOTSUP, SMB3_EACCES. */
int smb3_set_sparse_async(smb3_file *f, smb3_done_cb cb, void *arg);

/* Extended attributes (FILE_FULL_EA_INFORMATION): all of a file's in one compound, or one set
 * (value of length 0: removed). Names are ASCII, 1-255 bytes, compared without regard to case;
 * values at most 65535 bytes. The list given to cb is valid during the call only (n = 0: none).
 * set's call: also SMB3_EINVAL for a name or value outside those limits. cb: STATUS SMB3_ENOENT,
 * SMB3_EACCES, SMB3_ENOTSUP (no EAs on this share), SMB3_ERANGE (too large for the server). */
struct smb3_ea {
  const char *name;
  const void *value;
  size_t len;
};
typedef void (*smb3_eas_cb)(int rc, const struct smb3_ea *eas, size_t n, void *arg);
int smb3_get_eas_async(smb3_client *c, const char *path, smb3_eas_cb cb, void *arg);
int smb3_set_ea_async(smb3_client *c, const char *path, const char *name, const void *value, size_t len,
                      smb3_done_cb cb, void *arg);
/* Whole-directory listing in the background: CREATE + QUERY_DIRECTORY (one compound), more
 * QUERY_DIRECTORY rounds until the end, CLOSE. The callback gets every entry except "." and
 * ".." (names valid only during the callback; copy what you keep).
 * cb: as smb3_opendir less SYNC. */
typedef void (*smb3_list_cb)(int rc, const struct smb3_dirent *entries, size_t n, void *arg);
int smb3_listdir_async(smb3_client *c, const char *path, smb3_list_cb cb, void *arg);
/* smb3_listdir_async that also asks for a directory lease (READ|HANDLE) with the caller's key, where
 * the server grants them (SMB 3.x with the directory-leasing capability; elsewhere, or with key
 * NULL, it lists as smb3_listdir_async, dh NULL). A granted lease lasts while its handle is open: the handle
 * is then not closed but given to the callback (dh, owned by the caller; smb3_file_lease(dh) tells the
 * state), and the server breaks the lease (smb3_set_break_handler, with key) before it lets anything
 * change a name in the directory, or a file's times or size there (Samba: at the CLOSE of a handle
 * that wrote, not at each WRITE). Changes this client makes there itself do not break it: while dh
 * is open, every CREATE of the client that may change something in the directory names the lease
 * as its parent's (ParentLeaseKey, MS-SMB2 2.2.13.2.10), so the caller must account for its own
 * changes (the directory's path compared as given, case included). Close dh (smb3_close_async, or
 * smb3_close_rmdir_async to remove the directory) when the listing is no longer relied on or the
 * lease was broken (closing it ends the break too). dh is NULL when rc != 0 or no lease was
 * granted. Errors, callback: as smb3_listdir_async. From a callback: yes. */
typedef void (*smb3_list_lease_cb)(int rc, const struct smb3_dirent *entries, size_t n, smb3_file *dh,
                                   void *arg);
int smb3_listdir_lease_async(smb3_client *c, const char *path, const uint8_t key[16], smb3_list_lease_cb cb,
                             void *arg);

/* ---- leases (SMB 2.1+; MS-SMB2 3.2.5.19.2) and oplocks (2.0.2; 3.2.5.19.1) ----
 * smb3_open_lease_async() opens like smb3_open_async() and asks for a lease with the given key
 * (the caller picks one key per file, shared by all opens of it) and state (SMB3_LEASE_* bits).
 * Where the server has no leases (SMB 2.0.2, or no leasing capability) it asks for an oplock on
 * the handle instead (BATCH, or LEVEL_II for a READ-only want) and reports it as the lease state
 * it stands for (LEVEL_II = READ, EXCLUSIVE = READ|WRITE, BATCH = READ|WRITE|HANDLE), breaks and
 * acknowledgments included, so callers handle both alike.
 * smb3_file_lease() tells what was granted (0 = none).
 * When the server breaks a lease or oplock, the break handler runs on the I/O thread with the key,
 * the state the server allows now, and whether it waits for an acknowledgment; the handler (or a
 * thread it wakes) flushes dirty data and then calls smb3_lease_ack_async() when ack_required.
 * Its callback may run before it returns (nothing left to acknowledge: the file was closed). */
#define SMB3_LEASE_READ 0x1u
#define SMB3_LEASE_HANDLE 0x2u
#define SMB3_LEASE_WRITE 0x4u
/* Errors, callback: as smb3_open_async. From a callback: yes. */
int smb3_open_lease_async(smb3_client *c, const char *path, int flags, const uint8_t key[16], uint32_t want,
                          smb3_open_cb cb, void *arg);
/* smb3_open_lease_async with the permission bits (07777) a file it creates gets on a POSIX share,
 * as smb3_open_mode_async (ignored elsewhere, and for a file that exists). Errors, callback: as
 * smb3_open_async. From a callback: yes. */
int smb3_open_lease_mode_async(smb3_client *c, const char *path, int flags, const uint8_t key[16],
                               uint32_t want, uint32_t mode, smb3_open_cb cb, void *arg);
/* Open as smb3_open_lease_async (key NULL or want 0: no lease) and READ the first len bytes
 * (at most smb3_rsize, flags not O_WRONLY) into buf in the same round trip (CREATE + READ, a
 * related compound; two requests with nocompound): what a small file's reader needs at once.
 * nread: bytes read (fewer than len: the file ends there), or SMB3_E* when the READ failed,
 * which leaves the open as it is (the caller reads again). buf must stay valid until cb ran.
 * Errors: as smb3_open_async; the call also SMB3_EINVAL (buf NULL, len 0 or too large, O_WRONLY).
 * Callback: ASYNC. From a callback: yes. */
typedef void (*smb3_open_read_cb)(int rc, smb3_file *f, const struct smb3_stat *st, int64_t nread, void *arg);
int smb3_open_read_async(smb3_client *c, const char *path, int flags, const uint8_t key[16], uint32_t want,
                         void *buf, size_t len, smb3_open_read_cb cb, void *arg);
/* Open (or create, as flags say: O_CREAT, O_EXCL, O_TRUNC) as smb3_open_lease_async with the
 * permission bits mode (< 0: none; a POSIX share only) and, in the same round trip, WRITE len
 * bytes of buf at off (len 0: no WRITE; at most smb3_wsize) and, when atime or mtime is not NULL,
 * set those times through the new handle (CREATE + WRITE + SET_INFO, a related compound; one
 * request at a time with nocompound): what a program that writes a whole small file and closes
 * it needs. rc and f are the open's: on rc = 0 the caller owns f. written: the WRITE's bytes (0
 * with len 0), or SMB3_E* of the WRITE or the SET_INFO, which leaves the open as it is (the
 * caller writes again or reports it). buf must stay valid until cb ran.
 * Errors: as smb3_open_async; the call also SMB3_EINVAL (buf NULL with len > 0, len too large,
 * off + len past 2^63, O_RDONLY). Callback: ASYNC. From a callback: yes. */
typedef void (*smb3_open_write_cb)(int rc, smb3_file *f, const struct smb3_stat *st, int64_t written,
                                   void *arg);
int smb3_create_write_async(smb3_client *c, const char *path, int flags, const uint8_t key[16], uint32_t want,
                            int64_t mode, const void *buf, size_t len, uint64_t off,
                            const struct timespec_smb3 *atime, const struct timespec_smb3 *mtime,
                            smb3_open_write_cb cb, void *arg);
/* f's lease state (SMB3_LEASE_* bits); 0 for f NULL. No I/O. Errors: none.
 * From a callback: yes. */
uint32_t smb3_file_lease(const smb3_file *f);
/* The client (connection) a handle belongs to (NULL for f NULL). Errors: none. From a callback: yes. */
smb3_client *smb3_file_client(const smb3_file *f);
/* The break handler (cb NULL: none; then an oplock break is acknowledged at once and a lease break
 * goes unanswered until the server's break timeout). It runs on c's I/O thread like a callback:
 * it must not block, and synchronous calls in it fail with SMB3_EDEADLK (SYNC). key is valid during
 * the call only. smb3_set_break_handler: no I/O. Errors: none. From a callback: yes. */
typedef void (*smb3_break_cb)(const uint8_t key[16], uint32_t new_state, int ack_required, void *arg);
void smb3_set_break_handler(smb3_client *c, smb3_break_cb cb, void *arg);
/* CLOSEs that may wait (nothing the application waits for depends on their answer) ride with the
 * next compound the client sends for a path operation (a stat, an open, an unlink, ...): before
 * building one, the library calls take(arg, c, files, max, &done, &done_arg) (on the thread
 * submitting the operation, with no lock of the library held), which moves up to max open handles
 * of c's into files and returns how many (0: none). Their CLOSEs go first in the compound, unrelated,
 * and cost no round trip of their own; once they were answered (or failed: SMB3_E*, the handles are
 * gone all the same), the library frees the handles and calls done(rc, done_arg) on the I/O thread.
 * Not with the nocompound option. take NULL: none (the default). No I/O. Errors: none. */
typedef int (*smb3_riders_cb)(void *arg, smb3_client *c, smb3_file **files, int max, smb3_done_cb *done,
                              void **done_arg);
void smb3_set_close_riders(smb3_client *c, smb3_riders_cb take, void *arg);
/* Errors: the call: SMB3_ENOMEM, CONN; cb (optional, NULL: none): CONN, STATUS (answers that only
 * say the lease or handle is already gone count as success). Callback: on the I/O thread, or on the
 * calling thread before the call returns when nothing was left to acknowledge or every answer came
 * before the call finished; never if the call returned an error. From a callback: yes. */
int smb3_lease_ack_async(smb3_client *c, const uint8_t key[16], uint32_t state, smb3_done_cb cb, void *arg);
#ifdef __cplusplus
}
#endif
#endif
