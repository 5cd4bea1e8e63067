/* errors.c - text and errno for the SMB3_E* codes (one table). */
#include <errno.h>
#include <stddef.h>

#include "smb3/smb3_errors.h"

struct err_row {
  int code;
  int posix;
  const char *text;
};

static const struct err_row err_table[] = {
    {SMB3_OK, 0, "success"},
    {SMB3_EINVAL, EINVAL, "invalid argument"},
    {SMB3_ENOMEM, ENOMEM, "out of memory"},
    {SMB3_EPROTO, EPROTO, "malformed or unexpected response from the server"},
    {SMB3_EIO, EIO, "I/O error reported by the server"},
    {SMB3_ECONNECT, EHOSTUNREACH, "cannot connect to the server"},
    {SMB3_ETIMEDOUT, ETIMEDOUT, "timed out"},
    {SMB3_ECLOSED, ECONNRESET, "connection to the server lost"},
    {SMB3_ELOGON, EACCES, "logon failure: wrong user name or password"},
    {SMB3_EACCES, EACCES, "access denied"},
    {SMB3_ENOENT, ENOENT, "no such file or directory"},
    {SMB3_EEXIST, EEXIST, "file exists"},
    {SMB3_ENOTDIR, ENOTDIR, "not a directory"},
    {SMB3_EISDIR, EISDIR, "is a directory"},
    {SMB3_ENOTEMPTY, ENOTEMPTY, "directory not empty"},
    {SMB3_ENOSPC, ENOSPC, "no space left on the share"},
    {SMB3_ENOSHARE, ENOENT, "share not found on the server (bad network name)"},
    {SMB3_EDIALECT, EPROTONOSUPPORT, "no common SMB dialect with the server"},
    {SMB3_ESIGNATURE, EBADMSG, "message signature or encryption check failed"},
    {SMB3_EBUSY, EBUSY, "file in use (sharing violation)"},
    {SMB3_EROFS, EROFS, "read-only file or share"},
    {SMB3_ENOTSUP, EOPNOTSUPP, "operation not supported by the server"},
    {SMB3_ECANCELED, ECANCELED, "request canceled"},
    {SMB3_EURL, EINVAL, "malformed URL or option"},
    {SMB3_ENAMETOOLONG, ENAMETOOLONG, "name too long or invalid"},
    {SMB3_ESTATUS, EIO, "server returned an error status"},
    {SMB3_EBADF, EBADF, "invalid or closed handle"},
    {SMB3_EAGAIN, EAGAIN, "resource temporarily unavailable"},
    {SMB3_ERANGE, ERANGE, "value out of range"},
    {SMB3_EXDEV, EXDEV, "operation across shares"},
    {SMB3_ELOOP, ELOOP, "symbolic link or reparse point"},
    {SMB3_ENCRYPT, EACCES, "encryption required or failed"},
    {SMB3_EDEADLK, EDEADLK, "synchronous call from a callback on the connection's I/O thread"},
    {SMB3_EDFS, EOPNOTSUPP, "the path is behind a DFS link (path not covered)"},
};

static const struct err_row *err_find(int code) {
  for (size_t i = 0; i < sizeof err_table / sizeof err_table[0]; i++)
    if (err_table[i].code == code) return &err_table[i];
  return NULL;
}

const char *smb3_strerror(int err) {
  const struct err_row *r = err_find(err);
  return r ? r->text : "unknown error";
}

int smb3_err_to_errno(int err) {
  const struct err_row *r = err_find(err);
  return r ? r->posix : EIO;
}
