/* status_map.c - NTSTATUS -> SMB3_E* code and symbolic name: the one table.
 * Values from MS-ERREF 2.3.1; the errno side lives in errors.c. */
#include <stddef.h>
#include <stdio.h>

#include "smb3/smb3_errors.h"
#include "util/status.h"

struct status_row {
  uint32_t status;
  int err;
  const char *name;
};

#define ROW(n, e)                                                                                            \
  { NT_STATUS_##n, e, "STATUS_" #n }

static const struct status_row status_table[] = {
    ROW(SUCCESS, SMB3_OK),
    ROW(PENDING, SMB3_OK),          /* interim response; the engine waits for the final one */
    ROW(NOTIFY_ENUM_DIR, SMB3_OK),  /* CHANGE_NOTIFY overflow: success, rescan */
    ROW(BUFFER_OVERFLOW, SMB3_EIO), /* accepted by READ/QUERY_INFO/IOCTL callers that check it */
    ROW(NO_MORE_FILES, SMB3_ENOENT),
    ROW(STOPPED_ON_SYMLINK, SMB3_ELOOP),
    ROW(NOT_A_REPARSE_POINT, SMB3_EINVAL),       /* readlink of a file that is no link */
    ROW(MORE_PROCESSING_REQUIRED, SMB3_ESTATUS), /* only SESSION_SETUP expects it */
    /* logon */
    ROW(LOGON_FAILURE, SMB3_ELOGON),
    ROW(NTLM_BLOCKED, SMB3_ELOGON), /* the server allows only Kerberos */
    ROW(WRONG_PASSWORD, SMB3_ELOGON),
    ROW(NO_SUCH_USER, SMB3_ELOGON),
    ROW(ACCOUNT_DISABLED, SMB3_ELOGON),
    ROW(ACCOUNT_LOCKED_OUT, SMB3_ELOGON),
    ROW(ACCOUNT_RESTRICTION, SMB3_ELOGON),
    ROW(ACCOUNT_EXPIRED, SMB3_ELOGON),
    ROW(PASSWORD_EXPIRED, SMB3_ELOGON),
    ROW(PASSWORD_MUST_CHANGE, SMB3_ELOGON),
    ROW(INVALID_LOGON_HOURS, SMB3_ELOGON),
    ROW(INVALID_WORKSTATION, SMB3_ELOGON),
    /* shares and sessions */
    ROW(BAD_NETWORK_NAME, SMB3_ENOSHARE),
    ROW(BAD_NETWORK_PATH, SMB3_ECONNECT),
    ROW(REQUEST_NOT_ACCEPTED, SMB3_ECONNECT), /* server out of connections/sessions */
    ROW(NETWORK_NAME_DELETED, SMB3_ECLOSED),
    ROW(USER_SESSION_DELETED, SMB3_ECLOSED),
    ROW(NETWORK_SESSION_EXPIRED, SMB3_ECLOSED),
    ROW(NETWORK_ACCESS_DENIED, SMB3_EACCES),
    ROW(PATH_NOT_COVERED, SMB3_EDFS), /* a DFS link: smb3_dfs_follow() (client/dfs.c) */
    ROW(FS_DRIVER_REQUIRED,
        SMB3_ENOTSUP), /* DFS referral asked of a server without DFS (MS-SMB2 3.3.5.15.2) */
    ROW(INVALID_NETWORK_RESPONSE, SMB3_EPROTO),
    /* names and lookups */
    ROW(NO_SUCH_FILE, SMB3_ENOENT),
    ROW(OBJECT_NAME_NOT_FOUND, SMB3_ENOENT),
    ROW(OBJECT_PATH_NOT_FOUND, SMB3_ENOENT),
    ROW(NOT_FOUND, SMB3_ENOENT),
    ROW(DELETE_PENDING, SMB3_ENOENT), /* the name is going away; as cifs.ko */
    ROW(FILE_RENAMED, SMB3_ENOENT),
    ROW(OBJECT_NAME_COLLISION, SMB3_EEXIST),
    /* A name the server cannot hold (a wildcard without 'mapposix', a DOS device name on Windows) names
     * nothing there: ENOENT, as cifs.ko, so that `rm -f 'x*'` of an unmatched glob succeeds. */
    ROW(OBJECT_NAME_INVALID, SMB3_ENOENT),
    ROW(OBJECT_PATH_INVALID, SMB3_ENOTDIR), /* a component before the last is not a directory (cifs.ko) */
    ROW(OBJECT_PATH_SYNTAX_BAD, SMB3_ENOENT),
    ROW(NAME_TOO_LONG, SMB3_ENAMETOOLONG),
    ROW(FILE_IS_A_DIRECTORY, SMB3_EISDIR),
    ROW(NOT_A_DIRECTORY, SMB3_ENOTDIR),
    ROW(DIRECTORY_NOT_EMPTY, SMB3_ENOTEMPTY),
    ROW(NOT_SAME_DEVICE, SMB3_EXDEV),
    ROW(IO_REPARSE_TAG_NOT_HANDLED, SMB3_ELOOP),
    /* access */
    ROW(ACCESS_DENIED, SMB3_EACCES),
    ROW(ACCESS_VIOLATION, SMB3_EACCES),
    ROW(CANNOT_DELETE, SMB3_EACCES),
    ROW(PRIVILEGE_NOT_HELD, SMB3_EACCES),
    ROW(MEDIA_WRITE_PROTECTED, SMB3_EROFS),
    ROW(SHARING_VIOLATION, SMB3_EBUSY),
    ROW(LOCK_NOT_GRANTED, SMB3_EAGAIN), /* like F_SETLK's EAGAIN */
    ROW(FILE_LOCK_CONFLICT, SMB3_EAGAIN),
    ROW(INVALID_SIGNATURE,
        SMB3_ESIGNATURE), /* a discarded probe answer (core: never from a server we believe) */
    ROW(RANGE_NOT_LOCKED, SMB3_EINVAL),
    /* space and resources */
    ROW(DISK_FULL, SMB3_ENOSPC),
    ROW(QUOTA_EXCEEDED, SMB3_ENOSPC),
    ROW(DISK_QUOTA_EXCEEDED, SMB3_ENOSPC),
    ROW(INSUFFICIENT_RESOURCES, SMB3_EAGAIN),
    ROW(NO_MEMORY, SMB3_EAGAIN), /* the server's memory, not ours */
    ROW(TOO_MANY_OPENED_FILES, SMB3_EAGAIN),
    /* handles and requests */
    ROW(INVALID_HANDLE, SMB3_EBADF),
    ROW(FILE_CLOSED, SMB3_EBADF),
    ROW(CANCELLED, SMB3_ECANCELED),
    ROW(IO_TIMEOUT, SMB3_ETIMEDOUT),
    ROW(INVALID_PARAMETER, SMB3_EINVAL),
    ROW(INFO_LENGTH_MISMATCH, SMB3_EINVAL),
    ROW(END_OF_FILE, SMB3_EIO), /* READ callers turn it into a 0-byte read first */
    ROW(FILE_INVALID, SMB3_EIO),
    ROW(INVALID_VIEW_SIZE, SMB3_ERANGE), /* a copy range past the source's end */
    ROW(INTERNAL_ERROR, SMB3_EIO),
    ROW(OBJECT_TYPE_MISMATCH, SMB3_EINVAL), /* e.g. a handle of the wrong kind */
    /* unsupported */
    ROW(NOT_SUPPORTED, SMB3_ENOTSUP),
    ROW(NOT_IMPLEMENTED, SMB3_ENOTSUP),
    ROW(INVALID_DEVICE_REQUEST, SMB3_ENOTSUP),
    ROW(INVALID_INFO_CLASS, SMB3_ENOTSUP),
    ROW(EAS_NOT_SUPPORTED, SMB3_ENOTSUP),
    ROW(NO_EAS_ON_FILE, SMB3_ENOENT), /* callers listing attributes take it as none */
    ROW(INVALID_EA_NAME, SMB3_EINVAL),
    ROW(EA_TOO_LARGE, SMB3_ERANGE),
    ROW(NONEXISTENT_EA_ENTRY, SMB3_ENOENT),
};

static const struct status_row *status_find(uint32_t status) {
  for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
    if (status_table[i].status == status) return &status_table[i];
  return NULL;
}

/* MS-ERREF 2.3: the top two bits are the severity; 0 (success) and 1 (informational) are
 * not failures, 2 (warning) and 3 (error) are unless the table says otherwise. */
int smb3_status_to_err(uint32_t status) {
  const struct status_row *row = status_find(status);
  if (row) return row->err;
  return (status >> 30) <= 1 ? SMB3_OK : SMB3_ESTATUS;
}

const char *smb3_status_name(uint32_t status, char buf[32]) {
  const struct status_row *row = status_find(status);
  if (row) return row->name;
  snprintf(buf, 32, "STATUS_0x%08X", (unsigned)status);
  return buf;
}
