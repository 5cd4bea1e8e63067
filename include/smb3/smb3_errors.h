/* smb3_errors.h - the one error convention of libsmb3.
 *
 * Every function that can fail returns 0 (or a non-negative count) on success and one of the
 * negative SMB3_E* codes below on failure. smb3_strerror() gives a fixed English text for a code;
 * smb3_last_error() (smb3.h) gives the connection's last message with the server's NTSTATUS.
 * smb3_err_to_errno() maps a code to the closest errno for the FUSE layer.
 */
#ifndef SMB3_ERRORS_H
#define SMB3_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

enum smb3_error {
  SMB3_OK = 0,
  SMB3_EINVAL = -1,        /* bad argument from the caller */
  SMB3_ENOMEM = -2,        /* out of memory */
  SMB3_EPROTO = -3,        /* malformed or unexpected data from the server */
  SMB3_EIO = -4,           /* generic I/O failure reported by the server */
  SMB3_ECONNECT = -5,      /* cannot connect to the host (refused, unreachable, bad name) */
  SMB3_ETIMEDOUT = -6,     /* connect or request timed out */
  SMB3_ECLOSED = -7,       /* the connection was lost or closed */
  SMB3_ELOGON = -8,        /* logon failure: wrong user name or password */
  SMB3_EACCES = -9,        /* access denied */
  SMB3_ENOENT = -10,       /* no such file or directory */
  SMB3_EEXIST = -11,       /* file exists */
  SMB3_ENOTDIR = -12,      /* not a directory */
  SMB3_EISDIR = -13,       /* is a directory */
  SMB3_ENOTEMPTY = -14,    /* directory not empty */
  SMB3_ENOSPC = -15,       /* no space left on the share */
  SMB3_ENOSHARE = -16,     /* the share does not exist (bad network name) */
  SMB3_EDIALECT = -17,     /* no common dialect with the server */
  SMB3_ESIGNATURE = -18,   /* a signed message failed verification */
  SMB3_EBUSY = -19,        /* sharing violation or file in use */
  SMB3_EROFS = -20,        /* read-only share or file */
  SMB3_ENOTSUP = -21,      /* operation not supported by the server */
  SMB3_ECANCELED = -22,    /* request canceled */
  SMB3_EURL = -23,         /* malformed smb:// URL or option string */
  SMB3_ENAMETOOLONG = -24, /* name too long or invalid name */
  SMB3_ESTATUS = -25,      /* another NTSTATUS error; see smb3_last_error() */
  SMB3_EBADF = -26,        /* handle closed or invalid */
  SMB3_EAGAIN = -27,       /* retry later (no credits, pending) */
  SMB3_ERANGE = -28,       /* value out of range (e.g. offset overflow) */
  SMB3_EXDEV = -29,        /* operation across shares */
  SMB3_ELOOP = -30,        /* symbolic link / reparse point not followed */
  SMB3_ENCRYPT = -31,      /* encryption required but not available, or decryption failed */
  SMB3_EDEADLK = -32,      /* a synchronous call on the connection's own I/O thread (from a callback) */
  SMB3_EDFS = -33,         /* the path is behind a DFS link (STATUS_PATH_NOT_COVERED): smb3_dfs_follow() */
  SMB3_E_LAST = -34
};

/* Fixed text for an SMB3_E* code (never NULL; unknown codes give "unknown error"). */
const char *smb3_strerror(int err);

/* The closest POSIX errno (positive) for an SMB3_E* code; 0 for SMB3_OK. */
int smb3_err_to_errno(int err);

#ifdef __cplusplus
}
#endif
#endif
