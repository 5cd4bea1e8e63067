/* test_status.c - the NTSTATUS table (lib/util/status_map.c): every status status.h defines has
 * its name and a deliberate mapping, and the mappings callers depend on; every SMB3_E* code has
 * its text and errno (lib/util/errors.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "smb3/smb3_errors.h"
#include "util/status.h"

/* Opens lib/util/status.h, found from this file's own path (CMake compiles with absolute paths). */
static FILE *open_status_h(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__);
  char *slash = strrchr(path, '/');
  if (!slash) return fopen("lib/util/status.h", "r");
  snprintf(slash, sizeof path - (size_t)(slash - path), "/../../lib/util/status.h");
  return fopen(path, "r");
}

/* Reads status.h itself so that a status added there without a table row fails here. */
static void test_every_status_named(void **state) {
  (void)state;
  FILE *f = open_status_h();
  assert_non_null(f);
  char line[256], name[128], buf[32];
  unsigned value;
  int count = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "#define NT_%127s 0x%xu", name, &value) != 2) continue;
    const char *got = smb3_status_name(value, buf);
    if (strcmp(got, name)) fail_msg("0x%08X: name %s, want %s", value, got, name);
    int err = smb3_status_to_err(value);
    if (err == SMB3_ESTATUS && value != NT_STATUS_MORE_PROCESSING_REQUIRED) fail_msg("%s unmapped", name);
    if ((value >> 30) == 3 && err == SMB3_OK) fail_msg("%s: an error mapped to success", name);
    count++;
  }
  fclose(f);
  assert_true(count >= 54);
}

static void test_mappings(void **state) {
  (void)state;
  static const struct {
    uint32_t status;
    int err;
  } want[] = {
      {NT_STATUS_SUCCESS, SMB3_OK},
      {NT_STATUS_PENDING, SMB3_OK},
      {NT_STATUS_BUFFER_OVERFLOW, SMB3_EIO},
      {NT_STATUS_LOGON_FAILURE, SMB3_ELOGON},
      {NT_STATUS_WRONG_PASSWORD, SMB3_ELOGON},
      {NT_STATUS_NO_SUCH_USER, SMB3_ELOGON},
      {NT_STATUS_ACCOUNT_DISABLED, SMB3_ELOGON},
      {NT_STATUS_ACCOUNT_LOCKED_OUT, SMB3_ELOGON},
      {NT_STATUS_PASSWORD_EXPIRED, SMB3_ELOGON},
      {NT_STATUS_BAD_NETWORK_NAME, SMB3_ENOSHARE},
      {NT_STATUS_OBJECT_NAME_NOT_FOUND, SMB3_ENOENT},
      {NT_STATUS_OBJECT_PATH_NOT_FOUND, SMB3_ENOENT},
      {NT_STATUS_NO_SUCH_FILE, SMB3_ENOENT},
      {NT_STATUS_OBJECT_NAME_COLLISION, SMB3_EEXIST},
      {NT_STATUS_FILE_IS_A_DIRECTORY, SMB3_EISDIR},
      {NT_STATUS_NOT_A_DIRECTORY, SMB3_ENOTDIR},
      {NT_STATUS_DIRECTORY_NOT_EMPTY, SMB3_ENOTEMPTY},
      {NT_STATUS_SHARING_VIOLATION, SMB3_EBUSY},
      {NT_STATUS_DISK_FULL, SMB3_ENOSPC},
      {NT_STATUS_QUOTA_EXCEEDED, SMB3_ENOSPC},
      {NT_STATUS_ACCESS_DENIED, SMB3_EACCES},
      {NT_STATUS_MEDIA_WRITE_PROTECTED, SMB3_EROFS},
      {NT_STATUS_NOT_SUPPORTED, SMB3_ENOTSUP},
      {NT_STATUS_NOT_IMPLEMENTED, SMB3_ENOTSUP},
      {NT_STATUS_INVALID_DEVICE_REQUEST, SMB3_ENOTSUP},
      {NT_STATUS_NETWORK_NAME_DELETED, SMB3_ECLOSED},
      {NT_STATUS_USER_SESSION_DELETED, SMB3_ECLOSED},
      {NT_STATUS_NETWORK_SESSION_EXPIRED, SMB3_ECLOSED},
      {NT_STATUS_INVALID_HANDLE, SMB3_EBADF},
      {NT_STATUS_FILE_CLOSED, SMB3_EBADF},
      {NT_STATUS_CANCELLED, SMB3_ECANCELED},
      {NT_STATUS_NOT_SAME_DEVICE, SMB3_EXDEV},
      {NT_STATUS_STOPPED_ON_SYMLINK, SMB3_ELOOP},
      {NT_STATUS_PATH_NOT_COVERED, SMB3_EDFS},
      {NT_STATUS_NAME_TOO_LONG, SMB3_ENAMETOOLONG},
      {NT_STATUS_OBJECT_NAME_INVALID, SMB3_ENOENT},
      {NT_STATUS_OBJECT_PATH_INVALID, SMB3_ENOTDIR},
      {NT_STATUS_OBJECT_PATH_SYNTAX_BAD, SMB3_ENOENT},
      {NT_STATUS_IO_TIMEOUT, SMB3_ETIMEDOUT},
      {NT_STATUS_INVALID_PARAMETER, SMB3_EINVAL},
      {NT_STATUS_NO_MORE_FILES, SMB3_ENOENT},
      /* not in the table: severity decides */
      {0x00000001u, SMB3_OK},
      {0x40000000u, SMB3_OK},
      {0x80001234u, SMB3_ESTATUS},
      {0xC0001234u, SMB3_ESTATUS},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (smb3_status_to_err(want[i].status) != want[i].err)
      fail_msg("0x%08X -> %d, want %d", want[i].status, smb3_status_to_err(want[i].status), want[i].err);
}

static void test_names(void **state) {
  (void)state;
  char buf[32];
  assert_string_equal(smb3_status_name(NT_STATUS_ACCESS_DENIED, buf), "STATUS_ACCESS_DENIED");
  assert_string_equal(smb3_status_name(NT_STATUS_SUCCESS, buf), "STATUS_SUCCESS");
  assert_string_equal(smb3_status_name(0xC0001234u, buf), "STATUS_0xC0001234");
  assert_string_equal(smb3_status_name(0xFFFFFFFFu, buf), "STATUS_0xFFFFFFFF");
}

/* Every SMB3_E* code from SMB3_OK down to the last one has a text of its own and an errno (a
 * code added to smb3_errors.h without a row in lib/util/errors.c fails here). */
static void test_every_error_text(void **state) {
  (void)state;
  for (int e = SMB3_OK; e > SMB3_E_LAST; e--) {
    const char *t = smb3_strerror(e);
    if (!strcmp(t, "unknown error")) fail_msg("SMB3_E* code %d has no text", e);
    if (e && smb3_err_to_errno(e) <= 0) fail_msg("SMB3_E* code %d (%s) has no errno", e, t);
  }
  assert_string_equal(smb3_strerror(SMB3_E_LAST), "unknown error");
  assert_int_equal(smb3_err_to_errno(SMB3_EDEADLK), EDEADLK);
  assert_int_equal(smb3_err_to_errno(SMB3_EDFS), EOPNOTSUPP);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_status_named),
      cmocka_unit_test(test_mappings),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_every_error_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
