/* libtest.h - helpers for the cmocka integration tests of libsmb3 (tests/integration/test_lib_*.c).
 *
 * Every test executable runs under tests/harness/with-smbd, so SMB3_TEST_* describe a live
 * throwaway Samba server. Files are set up directly in $SMB3_TEST_SHARE_DIR (owned by the test
 * user, mode 0666/0777, since smbd runs as that user) and results are checked there too.
 *
 * Include after <cmocka.h> (and its prerequisites).
 */
#ifndef SMB3_LIBTEST_H
#define SMB3_LIBTEST_H

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "smb3/smb3.h"

/* ---- environment ---- */
static inline const char *lt_env(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) {
    fprintf(stderr, "%s is not set: run this test under tests/harness/with-smbd\n", name);
    exit(77);
  }
  return v;
}

/* ---- hang guard ----
 * Not a timing assertion: a generous upper bound that turns a hang into a clear failure message
 * (ctest's TIMEOUT would only say "Timeout"). */
static const char *volatile lt_guard_what = "";
static void lt_guard_fire(int sig) {
  (void)sig;
  const char *w = lt_guard_what;
  static const char pre[] = "\nHANG: no progress within the guard time in: ";
  if (write(2, pre, sizeof pre - 1) < 0 || write(2, w, strlen(w)) < 0 || write(2, "\n", 1) < 0) _exit(98);
  _exit(99);
}
static inline void lt_guard(const char *what, unsigned seconds) {
  lt_guard_what = what;
  signal(SIGALRM, lt_guard_fire);
  alarm(seconds);
}
static inline void lt_unguard(void) {
  alarm(0);
}

/* ---- resources released by lt_teardown ----
 * A failing assertion leaves the test function by longjmp; whatever it still held (64 MiB
 * buffers, open files, connected clients) is released by lt_teardown (use
 * cmocka_unit_test_teardown(test, lt_teardown)), so that the sanitizer build reports the
 * failure itself rather than leaks, and later tests start clean. lt_free/lt_close/lt_disconnect
 * release early and untrack; on untracked pointers they behave like free/smb3_close/
 * smb3_disconnect. */
#define LT_TRACK_MAX 512
static void *lt_bufs[LT_TRACK_MAX];
static smb3_file *lt_files[LT_TRACK_MAX];
static smb3_client *lt_clients[LT_TRACK_MAX];

static inline void lt_track(void **tab, void *p) {
  if (!p) return;
  for (int i = 0; i < LT_TRACK_MAX; i++)
    if (!tab[i]) {
      tab[i] = p;
      return;
    }
}
static inline int lt_untrack(void **tab, void *p) {
  if (!p) return 0;
  for (int i = 0; i < LT_TRACK_MAX; i++)
    if (tab[i] == p) {
      tab[i] = NULL;
      return 1;
    }
  return 0;
}
static inline void *lt_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) fail_msg("out of memory (%zu bytes)", n);
  lt_track(lt_bufs, p);
  return p;
}
static inline void *lt_calloc(size_t n, size_t m) {
  size_t total = n * m; /* (gcc -O2 misjudged calloc(n ? n : 1, ...) as a 0-byte object) */
  void *p = malloc(total + 1);
  if (!p) fail_msg("out of memory");
  memset(p, 0, total + 1);
  lt_track(lt_bufs, p);
  return p;
}
static inline void lt_free(void *p) {
  lt_untrack(lt_bufs, p);
  free(p);
}
static inline smb3_file *lt_track_file(smb3_file *f) {
  lt_track((void **)lt_files, f);
  return f;
}
static inline int lt_close(smb3_file *f) {
  lt_untrack((void **)lt_files, f);
  return smb3_close(f);
}
static inline void lt_disconnect(smb3_client *c) {
  lt_untrack((void **)lt_clients, c);
  smb3_disconnect(c);
}
static inline int lt_teardown(void **state) {
  (void)state;
  lt_unguard();
  for (int i = 0; i < LT_TRACK_MAX; i++)
    if (lt_files[i]) smb3_close(lt_files[i]), lt_files[i] = NULL;
  for (int i = 0; i < LT_TRACK_MAX; i++)
    if (lt_clients[i]) smb3_disconnect(lt_clients[i]), lt_clients[i] = NULL;
  for (int i = 0; i < LT_TRACK_MAX; i++)
    if (lt_bufs[i]) free(lt_bufs[i]), lt_bufs[i] = NULL;
  return 0;
}

/* ---- connecting ---- */
/* Options for the test server's URL plus `extra` (comma-separated smb3 options, may be NULL).
 * Keep-alive ECHOs are turned off so that they never add to the counters a test looks at. */
static inline void lt_options(struct smb3_options *o, const char *url, const char *extra) {
  char err[512] = "";
  smb3_options_init(o);
  if (smb3_url_parse(o, url, err, sizeof err)) fail_msg("smb3_url_parse(%s): %s", url, err);
  if (smb3_options_parse(o, "echo_interval=0", 0, err, sizeof err)) fail_msg("options: %s", err);
  if (extra && smb3_options_parse(o, extra, 0, err, sizeof err))
    fail_msg("smb3_options_parse(%s): %s", extra, err);
}

static inline smb3_client *lt_connect(const char *extra) {
  struct smb3_options o;
  lt_options(&o, lt_env("SMB3_TEST_URL"), extra);
  char err[512] = "";
  smb3_client *c = NULL;
  int rc = smb3_connect(&o, &c, err, sizeof err);
  smb3_options_free(&o);
  if (rc || !c) fail_msg("smb3_connect(%s) = %d (%s): %s", extra ? extra : "", rc, smb3_strerror(rc), err);
  lt_track((void **)lt_clients, c);
  return c;
}

/* ---- counters ---- */
static inline struct smb3_stats lt_stats(smb3_client *c) {
  struct smb3_stats s;
  smb3_get_stats(c, &s);
  return s;
}
#define LT_CMD_CREATE 0x05
#define LT_CMD_CLOSE 0x06
#define LT_CMD_READ 0x08
#define LT_CMD_WRITE 0x09
#define LT_CMD_QUERY_DIRECTORY 0x0E
#define LT_CMD_QUERY_INFO 0x10
#define LT_CMD_SET_INFO 0x11

/* ---- one-line error texts ---- */
static inline void lt_assert_one_line(const char *what, const char *s) {
  if (!s || !*s) fail_msg("%s: empty error text", what);
  if (strchr(s, '\n')) fail_msg("%s: error text is more than one line: '%s'", what, s);
}

/* ---- local files in the share ---- */
static inline char *lt_local(const char *rel) {
  const char *dir = lt_env("SMB3_TEST_SHARE_DIR");
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  assert_non_null(p);
  snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

static inline void lt_chown(const char *path) {
  struct passwd *pw = getpwnam(lt_env("SMB3_TEST_USER"));
  if (pw && chown(path, pw->pw_uid, pw->pw_gid) != 0) fail_msg("chown %s: %s", path, strerror(errno));
}

static inline void lt_mkdir_local(const char *rel) {
  char *p = lt_local(rel);
  if (mkdir(p, 0777) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", p, strerror(errno));
  chmod(p, 0777);
  lt_chown(p);
  free(p);
}

static inline void lt_write_local(const char *rel, const void *buf, size_t len) {
  char *p = lt_local(rel);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) fail_msg("create %s: %s", p, strerror(errno));
  const uint8_t *b = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, b + done, len - done);
    if (n <= 0) fail_msg("write %s: %s", p, strerror(errno));
    done += (size_t)n;
  }
  close(fd);
  chmod(p, 0666);
  lt_chown(p);
  free(p);
}

/* Whole local file (malloc'd, NUL-terminated for convenience); NULL if it does not exist. */
static inline uint8_t *lt_read_local(const char *rel, size_t *len) {
  *len = 0; /* also when the file is missing, so a caller's size check never reads garbage */
  char *p = lt_local(rel);
  int fd = open(p, O_RDONLY);
  free(p);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) != 0) fail_msg("fstat: %s", strerror(errno));
  uint8_t *b = lt_malloc((size_t)st.st_size + 1);
  size_t done = 0;
  while (done < (size_t)st.st_size) {
    ssize_t n = read(fd, b + done, (size_t)st.st_size - done);
    if (n <= 0) break;
    done += (size_t)n;
  }
  close(fd);
  b[done] = 0;
  *len = done;
  return b;
}

static inline int lt_exists(const char *rel) {
  char *p = lt_local(rel);
  struct stat st;
  int r = lstat(p, &st) == 0;
  free(p);
  return r;
}

static inline int lt_is_dir(const char *rel) {
  char *p = lt_local(rel);
  struct stat st;
  int r = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
  free(p);
  return r;
}

static inline struct stat lt_stat_local(const char *rel) {
  char *p = lt_local(rel);
  struct stat st;
  if (lstat(p, &st) != 0) fail_msg("lstat %s: %s", p, strerror(errno));
  free(p);
  return st;
}

/* Deterministic pseudo-random bytes (xorshift64*), different for every seed. */
static inline void lt_fill(uint8_t *buf, size_t len, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x1234567ull;
  if (!x) x = 1;
  size_t i = 0;
  while (i < len) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    uint64_t v = x * 0x2545F4914F6CDD1Dull;
    for (int k = 0; k < 8 && i < len; k++, i++)
      buf[i] = (uint8_t)(v >> (8 * k));
  }
}

static inline uint8_t *lt_random(size_t len, uint64_t seed) {
  uint8_t *b = lt_malloc(len);
  lt_fill(b, len, seed);
  return b;
}

/* Compare got[0..n) with want[0..n); on a mismatch fail with the first differing offset. */
static inline void lt_assert_bytes(const char *what, const uint8_t *got, const uint8_t *want, size_t n,
                                   uint64_t base) {
  if (!memcmp(got, want, n)) return;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("%s: byte at offset %llu differs (got 0x%02x, want 0x%02x)", what,
               (unsigned long long)(base + i), got[i], want[i]);
}
/* The share's file rel holds exactly want[0..len) (what: the test's tag for the message). */
static inline void lt_check_local(const char *what, const char *rel, const uint8_t *want, size_t len) {
  size_t n = 0;
  uint8_t *got = lt_read_local(rel, &n);
  if (!got) fail_msg("%s: %s does not exist in the share", what, rel);
  if (n != len) fail_msg("%s: %s has %zu bytes in the share, want %zu", what, rel, n, len);
  lt_assert_bytes(rel, got, want, len, 0);
  lt_free(got);
}

/* Run a shell command (with SMB3_TEST_* in its environment); returns its exit status. */
static inline int lt_sh(const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int st = system(cmd);
  return st == -1 ? -1 : WEXITSTATUS(st);
}

#endif
