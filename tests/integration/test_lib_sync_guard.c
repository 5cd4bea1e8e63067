/* test_lib_sync_guard.c - issue 13: a synchronous call made on the connection's own I/O thread
 * (from inside a completion callback) returns SMB3_EDEADLK at once instead of waiting forever
 * for the thread it runs on.
 *
 *  - every synchronous entry point of smb3.h that talks to the server, called from an
 *    smb3_stat_async callback, returns SMB3_EDEADLK, sends nothing (the directory it would make
 *    does not appear, the file it would remove stays, the handle it would close stays open) and
 *    leaves a one-line smb3_last_error();
 *  - the calls that are allowed from a callback still work there (an *_async request submitted
 *    from it completes; the state queries answer);
 *  - a synchronous call on another client from this client's callback is not refused (the
 *    check is per connection);
 *  - smb3_disconnect from the callback does nothing (no hang, nothing freed) and says so in
 *    smb3_last_error(); the client then still works and is disconnected normally;
 *  - the connection works afterwards, from the main thread, handle included.
 *
 * Without the check the first synchronous call in the callback never returns: the hang guard
 * (lt_guard) then fails the test, and ctest's TIMEOUT would as well.
 * Runs under tests/harness/with-smbd (integration.lib_sync_guard).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

#define MAX_CALLS 40

/* What the callback saw; written on the I/O thread, read by the test after `done`. */
struct probe {
  smb3_client *c, *other; /* other: a second connection (its own I/O thread) */
  smb3_file *f;           /* an open handle of c */
  int local_fd;           /* a local file for smb3_write_from_fd */
  pthread_t main_thread;
  int on_main_thread; /* the callback ran on the test's thread (it must not) */
  struct {
    const char *name;
    int64_t rc;
    int one_line; /* smb3_last_error(c) afterwards was one non-empty line naming the I/O thread */
  } calls[MAX_CALLS];
  int ncalls;
  int64_t other_stat_rc; /* smb3_stat on the other client */
  int lost;              /* smb3_connection_lost(c) inside the callback */
  uint32_t rsize;
  int sink_calls, source_calls;
  int nested_rc; /* smb3_stat_async submitted from the callback */
  int nested_done, nested_cb_rc;
  int done;
};

static int sink(const void *buf, size_t n, uint64_t off, void *arg) {
  (void)buf, (void)n, (void)off;
  ((struct probe *)arg)->sink_calls++;
  return 0;
}
static ssize_t source(void *buf, size_t n, uint64_t off, void *arg) {
  (void)buf, (void)off;
  ((struct probe *)arg)->source_calls++;
  return (ssize_t)n;
}

static void record(struct probe *p, const char *name, int64_t rc) {
  if (p->ncalls == MAX_CALLS) return;
  const char *e = smb3_last_error(p->c);
  p->calls[p->ncalls].name = name;
  p->calls[p->ncalls].rc = rc;
  p->calls[p->ncalls].one_line = e && *e && !strchr(e, '\n') && strstr(e, "I/O thread");
  p->ncalls++;
}

static void nested_cb(int rc, const struct smb3_stat *st, void *arg) {
  (void)st;
  struct probe *p = arg;
  pthread_mutex_lock(&mu);
  p->nested_cb_rc = rc;
  p->nested_done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

/* Runs on c's I/O thread: every synchronous call must come back at once with SMB3_EDEADLK. */
static void probe_cb(int rc, const struct smb3_stat *st, void *arg) {
  (void)rc, (void)st;
  struct probe *p = arg;
  smb3_client *c = p->c;
  smb3_file *f = p->f;
  p->on_main_thread = pthread_equal(pthread_self(), p->main_thread);
  uint8_t buf[64] = {0};
  struct smb3_stat s;
  struct smb3_statvfs sv;
  smb3_file *g = NULL;
  smb3_dir *d = NULL;
  struct timespec_smb3 t = {1000000000, 0};
  record(p, "smb3_stat", smb3_stat(c, "guard.txt", &s));
  record(p, "smb3_statvfs", smb3_statvfs(c, &sv));
  record(p, "smb3_mkdir", smb3_mkdir(c, "guard_dir"));
  record(p, "smb3_rmdir", smb3_rmdir(c, "keep_dir"));
  record(p, "smb3_unlink", smb3_unlink(c, "keep.txt"));
  record(p, "smb3_rename", smb3_rename(c, "keep.txt", "renamed.txt", 0));
  record(p, "smb3_link", smb3_link(c, "keep.txt", "linked.txt"));
  record(p, "smb3_truncate", smb3_truncate(c, "keep.txt", 0));
  record(p, "smb3_utimens", smb3_utimens(c, "keep.txt", &t, &t));
  record(p, "smb3_set_readonly", smb3_set_readonly(c, "keep.txt", 1));
  record(p, "smb3_open", smb3_open(c, "guard.txt", O_RDONLY, &g, NULL));
  record(p, "smb3_opendir", smb3_opendir(c, "", &d));
  record(p, "smb3_read_file", smb3_read_file(c, "guard.txt", buf, sizeof buf));
  record(p, "smb3_write_file", smb3_write_file(c, "keep.txt", buf, sizeof buf));
  record(p, "smb3_pread", smb3_pread(f, buf, sizeof buf, 0));
  record(p, "smb3_pwrite", smb3_pwrite(f, buf, sizeof buf, 0));
  record(p, "smb3_fstat", smb3_fstat(f, &s));
  record(p, "smb3_ftruncate", smb3_ftruncate(f, 0));
  record(p, "smb3_fsync", smb3_fsync(f));
  record(p, "smb3_lock", smb3_lock(f, 0, 1, SMB3_LOCK_EXCLUSIVE));
  record(p, "smb3_copy_range", smb3_copy_range(f, 0, f, 4096, 16));
  record(p, "smb3_read_range", smb3_read_range(f, buf, sizeof buf, 0));
  record(p, "smb3_write_range", smb3_write_range(f, buf, sizeof buf, 0));
  record(p, "smb3_read_stream", smb3_read_stream(f, 0, 64, sink, p, NULL, NULL));
  record(p, "smb3_write_stream", smb3_write_stream(f, 0, source, p, NULL, NULL));
  record(p, "smb3_write_from_fd", smb3_write_from_fd(f, 0, p->local_fd, 0, 64, NULL, NULL));
  record(p, "smb3_close", smb3_close(f)); /* refused: f stays open */
  /* void: refused means nothing done and the reason in smb3_last_error (c still connected below) */
  smb3_disconnect(c);
  record(p, "smb3_disconnect", strstr(smb3_last_error(c), "smb3_disconnect") ? SMB3_EDEADLK : 0);
  if (g) record(p, "smb3_open returned a handle", 0);
  if (d) record(p, "smb3_opendir returned a directory", 0);
  /* allowed here: state queries, and asynchronous requests */
  p->lost = smb3_connection_lost(c);
  p->rsize = smb3_rsize(c);
  struct smb3_stats stats;
  smb3_get_stats(c, &stats);
  p->nested_rc = smb3_stat_async(c, "guard.txt", nested_cb, p);
  /* another connection's I/O thread is not this one: its synchronous calls are not refused */
  p->other_stat_rc = smb3_stat(p->other, "guard.txt", &s);
  pthread_mutex_lock(&mu);
  p->done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static int local_file(size_t len) {
  char path[] = "/tmp/smb3-sync-guard.XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) fail_msg("mkstemp: %s", strerror(errno));
  unlink(path);
  uint8_t b[4096];
  memset(b, 'x', sizeof b);
  for (size_t done = 0; done < len;) {
    size_t n = len - done < sizeof b ? len - done : sizeof b;
    if (write(fd, b, n) != (ssize_t)n) fail_msg("write: %s", strerror(errno));
    done += n;
  }
  return fd;
}

static void test_sync_from_callback(void **state) {
  (void)state;
  const uint8_t content[] = "sync guard: the I/O thread never waits for itself\n";
  lt_write_local("guard.txt", content, sizeof content - 1);
  lt_write_local("keep.txt", content, sizeof content - 1);
  lt_mkdir_local("keep_dir");
  smb3_client *c = lt_connect(NULL), *other = lt_connect(NULL);
  smb3_file *f = NULL;
  assert_int_equal(smb3_open(c, "guard.txt", O_RDWR, &f, NULL), 0);
  lt_track_file(f);

  static struct probe p; /* static: cmocka's longjmp must not leave the I/O thread a dangling pointer */
  memset(&p, 0, sizeof p);
  p.c = c;
  p.other = other;
  p.f = f;
  p.local_fd = local_file(4096);
  p.main_thread = pthread_self();

  lt_guard("synchronous calls from an smb3_stat_async callback", 60);
  assert_int_equal(smb3_stat_async(c, "guard.txt", probe_cb, &p), 0);
  pthread_mutex_lock(&mu);
  while (!p.done || !p.nested_done)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  lt_unguard();
  close(p.local_fd);

  assert_false(p.on_main_thread);
  assert_true(p.ncalls >= 28);
  for (int i = 0; i < p.ncalls; i++) {
    if (p.calls[i].rc != SMB3_EDEADLK)
      fail_msg("%s from a callback returned %lld (%s), want SMB3_EDEADLK", p.calls[i].name,
               (long long)p.calls[i].rc, p.calls[i].rc < 0 ? smb3_strerror((int)p.calls[i].rc) : "");
    if (!p.calls[i].one_line) fail_msg("%s: smb3_last_error does not name the I/O thread", p.calls[i].name);
  }
  assert_int_equal(p.sink_calls, 0);
  assert_int_equal(p.source_calls, 0);
  /* what is allowed from a callback worked there */
  assert_int_equal(p.lost, 0);
  assert_true(p.rsize >= 4096);
  assert_int_equal(p.nested_rc, 0);
  assert_int_equal(p.nested_cb_rc, 0);
  assert_int_equal(p.other_stat_rc, 0);

  /* nothing was sent: the share is as it was */
  assert_false(lt_exists("guard_dir"));
  assert_true(lt_is_dir("keep_dir"));
  assert_false(lt_exists("renamed.txt"));
  assert_false(lt_exists("linked.txt"));
  lt_check_local("refused calls", "keep.txt", content, sizeof content - 1);
  lt_check_local("refused calls", "guard.txt", content, sizeof content - 1);

  /* the connection and the handle work from the main thread */
  assert_int_equal(smb3_connection_lost(c), 0);
  uint8_t buf[128];
  ssize_t n = smb3_pread(f, buf, sizeof buf, 0);
  assert_int_equal(n, (ssize_t)(sizeof content - 1));
  lt_assert_bytes("pread after the refused calls", buf, content, (size_t)n, 0);
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, "keep.txt", &st), 0);
  assert_int_equal(st.size, sizeof content - 1);
  assert_int_equal(lt_close(f), 0);
  lt_disconnect(other);
  lt_disconnect(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_sync_from_callback, lt_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
