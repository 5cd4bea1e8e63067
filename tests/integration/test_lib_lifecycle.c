/* test_lib_lifecycle.c - the ownership and threading promises of smb3.h, under load:
 *
 *  - smb3_disconnect() with asynchronous requests still in flight: every callback runs exactly
 *    once (with its result or a negative error) by the time smb3_disconnect() returned;
 *  - "Files and directories still open are invalidated (their handles must still be
 *    closed/freed)": smb3_close()/smb3_closedir() after smb3_disconnect() are safe (no use of
 *    the freed client: run under ASan to see it);
 *  - "All functions are thread-safe on the same client": several threads doing synchronous
 *    metadata operations and reads on one client at once all get the right answers.
 *
 * Runs under tests/harness/with-smbd (integration.lib_lifecycle).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

struct rec {
  int calls;
  int64_t rc;
};
static void io_cb(int64_t result, void *arg) {
  struct rec *r = arg;
  pthread_mutex_lock(&mu);
  r->calls++;
  r->rc = result;
  pthread_mutex_unlock(&mu);
}
static void done_cb(int rc, void *arg) {
  io_cb(rc, arg);
}

#define NREAD 32
static void test_disconnect_with_requests_in_flight(void **s) {
  (void)s;
  lt_guard("disconnect with requests in flight", 120);
  size_t size = 32u << 20;
  uint8_t *data = lt_random(size, 5);
  lt_write_local("inflight_src", data, size);
  smb3_client *c = lt_connect("rsize=1M");
  smb3_file *f = NULL;
  int rc = smb3_open(c, "inflight_src", O_RDONLY, &f, NULL);
  if (rc) fail_msg("open = %d: %s", rc, smb3_last_error(c));
  static struct rec reads[NREAD], closed;
  memset(reads, 0, sizeof reads);
  memset(&closed, 0, sizeof closed);
  uint8_t *buf = lt_malloc(size);
  size_t piece = 1u << 20;
  for (int i = 0; i < NREAD; i++) {
    rc = smb3_pread_async(f, buf + (size_t)i * piece, piece, (uint64_t)i * piece, io_cb, &reads[i]);
    if (rc) fail_msg("pread_async #%d = %d", i, rc);
  }
  rc = smb3_close_async(f, done_cb, &closed); /* frees f whatever happens */
  if (rc) fail_msg("close_async = %d", rc);
  lt_disconnect(c); /* at once: most reads are still in flight */
  pthread_mutex_lock(&mu);
  int done = 0, failed = 0;
  for (int i = 0; i < NREAD; i++) {
    if (reads[i].calls != 1) {
      int k = reads[i].calls;
      pthread_mutex_unlock(&mu);
      fail_msg("read #%d: callback ran %d times by the time smb3_disconnect() returned, want exactly once", i,
               k);
    }
    if (reads[i].rc == (int64_t)piece)
      done++;
    else if (reads[i].rc < 0)
      failed++;
    else {
      int64_t r = reads[i].rc;
      pthread_mutex_unlock(&mu);
      fail_msg("read #%d: result %lld, want %zu or a negative error", i, (long long)r, piece);
    }
  }
  int close_calls = closed.calls;
  pthread_mutex_unlock(&mu);
  print_message("%d reads completed, %d failed by the disconnect; close callback ran %d time(s) (rc %lld)\n",
                done, failed, close_calls, (long long)closed.rc);
  if (close_calls != 1) fail_msg("close_async callback ran %d times, want exactly once", close_calls);
  for (int i = 0; i < NREAD; i++)
    if (reads[i].rc > 0)
      lt_assert_bytes("completed read", buf + (size_t)i * piece, data + (size_t)i * piece, piece,
                      (uint64_t)i * piece);
  lt_free(buf);
  lt_free(data);
  lt_unguard();
}

static void test_close_after_disconnect(void **s) {
  (void)s;
  lt_write_local("close_after", "abc", 3);
  smb3_client *c = lt_connect(NULL);
  smb3_file *f = NULL;
  int rc = smb3_open(c, "close_after", O_RDONLY, &f, NULL);
  if (rc) fail_msg("open = %d: %s", rc, smb3_last_error(c));
  smb3_dir *d = NULL;
  rc = smb3_opendir(c, "", &d);
  if (rc) fail_msg("opendir = %d: %s", rc, smb3_last_error(c));
  lt_disconnect(c);
  /* smb3.h: the handles are invalidated but must still be closed/freed */
  rc = smb3_close(f);
  print_message("smb3_close after disconnect = %d\n", rc);
  rc = smb3_closedir(d);
  print_message("smb3_closedir after disconnect = %d\n", rc);
}

/* ---- one client, several threads ---- */
#define NTHREADS 8
#define NITER 40
struct worker {
  smb3_client *c;
  int id;
  const uint8_t *data;
  size_t size;
  char err[512];
};

static void *work(void *arg) {
  struct worker *w = arg;
  uint8_t *buf = malloc(w->size);
  if (!buf) {
    snprintf(w->err, sizeof w->err, "out of memory");
    return NULL;
  }
  for (int i = 0; i < NITER && !w->err[0]; i++) {
    char dn[64];
    snprintf(dn, sizeof dn, "mt_%d_%d", w->id, i);
    int rc = smb3_mkdir(w->c, dn);
    if (rc) {
      snprintf(w->err, sizeof w->err, "mkdir %s = %d", dn, rc);
      break;
    }
    struct smb3_stat st;
    rc = smb3_stat(w->c, dn, &st);
    if (rc || !st.is_dir) {
      snprintf(w->err, sizeof w->err, "stat %s = %d is_dir %d", dn, rc, st.is_dir);
      break;
    }
    rc = smb3_stat(w->c, "mt_src", &st);
    if (rc || st.size != w->size) {
      snprintf(w->err, sizeof w->err, "stat mt_src = %d size %llu", rc, (unsigned long long)st.size);
      break;
    }
    rc = smb3_rmdir(w->c, dn);
    if (rc) {
      snprintf(w->err, sizeof w->err, "rmdir %s = %d", dn, rc);
      break;
    }
    rc = smb3_stat(w->c, dn, &st);
    if (rc != SMB3_ENOENT) {
      snprintf(w->err, sizeof w->err, "stat removed %s = %d, want ENOENT", dn, rc);
      break;
    }
    smb3_file *f = NULL;
    rc = smb3_open(w->c, "mt_src", O_RDONLY, &f, NULL);
    if (rc) {
      snprintf(w->err, sizeof w->err, "open = %d", rc);
      break;
    }
    uint64_t off = ((uint64_t)(w->id * 7919 + i * 104729)) % (w->size / 2);
    size_t len = w->size / 2;
    ssize_t n = smb3_read_range(f, buf, len, off);
    smb3_close(f);
    if (n != (ssize_t)len) {
      snprintf(w->err, sizeof w->err, "read_range = %zd", n);
      break;
    }
    if (memcmp(buf, w->data + off, len)) {
      snprintf(w->err, sizeof w->err, "read_range at %llu: wrong bytes", (unsigned long long)off);
      break;
    }
  }
  free(buf);
  return NULL;
}

static void test_threads_share_a_client(void **s) {
  (void)s;
  lt_guard("threads sharing a client", 300);
  size_t size = 3u << 20;
  uint8_t *data = lt_random(size, 6);
  lt_write_local("mt_src", data, size);
  smb3_client *c = lt_connect("rsize=256K");
  struct worker w[NTHREADS];
  pthread_t t[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (struct worker){.c = c, .id = i, .data = data, .size = size};
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < NTHREADS; i++)
    if (w[i].err[0]) fail_msg("thread %d: %s", i, w[i].err);
  lt_disconnect(c);
  lt_free(data);
  lt_unguard();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_disconnect_with_requests_in_flight, lt_teardown),
      cmocka_unit_test_teardown(test_threads_share_a_client, lt_teardown),
      cmocka_unit_test_teardown(test_close_after_disconnect, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_lifecycle", tests, NULL, NULL);
}
