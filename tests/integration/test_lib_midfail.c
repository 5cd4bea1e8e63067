/* test_lib_midfail.c - issue 3: an error in the middle of a pipelined transfer is reported, never
 * hung and never garbage.
 *
 *  (a) the file is truncated by another party (locally in the share) from the sink of a large
 *      read_stream after the first chunk: the read returns a short count (exactly the new size when
 *      the truncation happened before the later requests were sent) or an error; every byte it
 *      delivered is the file's content at that offset;
 *  (b) the share is closed server-side (smbcontrol close-share) or the smbd process serving the
 *      connection is killed, from the sink of a large read_stream / the source of a large
 *      write_stream: the call returns a negative SMB3_E* within the request timeout (timeout=10)
 *      and smb3_last_error() is one non-empty line.
 *
 * The disruptive action runs synchronously inside the sink/source callback (they run on the
 * calling thread), so the order "first chunk done, then the disruption, then the rest of the
 * transfer" is deterministic; no sleeps. A guard turns a hang into a failure.
 *
 * Runs under tests/harness/with-smbd (integration.lib_midfail).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

#define BIG (64u << 20)
#define MIB (1u << 20)
#define GUARD_S 120 /* far above timeout=10: only a hang can reach it */

static uint8_t *big_data;

static int group_setup(void **state) {
  (void)state;
  big_data = lt_random(BIG, 4242);
  lt_untrack(lt_bufs, big_data); /* shared by all tests: not released by lt_teardown */
  return 0;
}
static int group_teardown(void **state) {
  (void)state;
  lt_free(big_data);
  return 0;
}

/* ---- helpers for server-side disruption ---- */
/* pids of the smbd processes holding an established connection on the test port */
static int serving_pids(int *pids, int max) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ss -Htnp state established '( sport = :%s )'", lt_env("SMB3_TEST_PORT"));
  FILE *p = popen(cmd, "r");
  if (!p) fail_msg("popen ss: %s", strerror(errno));
  int n = 0;
  char line[1024];
  while (fgets(line, sizeof line, p))
    for (char *q = strstr(line, "pid="); q && n < max; q = strstr(q + 4, "pid=")) {
      int pid = atoi(q + 4);
      int dup = 0;
      for (int i = 0; i < n; i++)
        dup |= pids[i] == pid;
      if (pid > 0 && !dup) pids[n++] = pid;
    }
  pclose(p);
  return n;
}

static void kill_serving_smbd(void) {
  int pids[16];
  int n = serving_pids(pids, 16);
  if (n == 0) fail_msg("no smbd process serving a connection on port %s", lt_env("SMB3_TEST_PORT"));
  for (int i = 0; i < n; i++)
    kill(pids[i], SIGKILL);
  /* wait until they are gone (smbd reaps them), so the rest of the transfer meets a dead peer */
  for (int tries = 0; tries < 2000; tries++) {
    int alive = 0;
    for (int i = 0; i < n; i++) {
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/stat", pids[i]);
      FILE *f = fopen(path, "r");
      if (!f) continue;
      char buf[512] = "";
      if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
      fclose(f);
      char *rp = strrchr(buf, ')');
      if (rp && rp[1] == ' ' && rp[2] != 'Z') alive = 1; /* zombies hold no socket */
    }
    if (!alive) return;
    usleep(10000);
  }
  fail_msg("smbd serving the connection did not die after SIGKILL");
}

static int share_connected(void) {
  return lt_sh("smbstatus -s '%s' -S 2>/dev/null | grep -q '^%s '", lt_env("SMB3_TEST_CONF"),
               lt_env("SMB3_TEST_SHARE")) == 0;
}

static void close_share(void) {
  if (!share_connected()) fail_msg("smbstatus does not show the share connected before close-share");
  int rc =
      lt_sh("smbcontrol -s '%s' smbd close-share '%s'", lt_env("SMB3_TEST_CONF"), lt_env("SMB3_TEST_SHARE"));
  if (rc) fail_msg("smbcontrol close-share failed (%d)", rc);
  /* smbd acts on the message asynchronously: wait until it has */
  for (int tries = 0; tries < 300 && share_connected(); tries++)
    usleep(50000);
  if (share_connected()) fail_msg("the share still shows as connected after smbcontrol close-share");
}

/* ---- callbacks ---- */
enum action { ACT_NONE, ACT_TRUNCATE, ACT_CLOSE_SHARE, ACT_KILL };

struct ctx {
  enum action act;
  uint64_t truncate_to;
  const char *rel;
  int fired;
  uint64_t next;      /* read: next offset the sink expects */
  uint64_t delivered; /* read: bytes given to the sink */
  uint8_t *got;       /* read: copy of what was delivered */
  int source_calls;
};

static void fire(struct ctx *x) {
  if (x->fired) return;
  x->fired = 1;
  switch (x->act) {
  case ACT_TRUNCATE: {
    char *p = lt_local(x->rel);
    if (truncate(p, (off_t)x->truncate_to) != 0) fail_msg("truncate %s: %s", p, strerror(errno));
    lt_free(p);
    break;
  }
  case ACT_CLOSE_SHARE:
    close_share();
    break;
  case ACT_KILL:
    kill_serving_smbd();
    break;
  default:
    break;
  }
}

static int sink(const void *buf, size_t n, uint64_t off, void *arg) {
  struct ctx *x = arg;
  if (off != x->next)
    fail_msg("sink called at offset %llu, want %llu", (unsigned long long)off, (unsigned long long)x->next);
  if (off + n > BIG)
    fail_msg("sink got bytes beyond the file's original end (%llu + %zu)", (unsigned long long)off, n);
  memcpy(x->got + off, buf, n);
  x->next += n;
  x->delivered += n;
  fire(x); /* after the first chunk */
  return 0;
}

static ssize_t source(void *buf, size_t n, uint64_t off, void *arg) {
  struct ctx *x = arg;
  if (++x->source_calls == 3) fire(x); /* two chunks are on their way */
  size_t k = off >= BIG ? 0 : (BIG - off < n ? (size_t)(BIG - off) : n);
  memcpy(buf, big_data + off, k);
  return (ssize_t)k;
}

static smb3_file *open_or_fail(smb3_client *c, const char *path, int flags) {
  smb3_file *f = NULL;
  int rc = smb3_open(c, path, flags, &f, NULL);
  if (rc) fail_msg("open %s = %d: %s", path, rc, smb3_last_error(c));
  return lt_track_file(f);
}

/* ---- (a) truncation by another party ---- */
static int64_t read_with_truncate(const char *rel, uint64_t to, const char *opts, uint8_t **got) {
  lt_write_local(rel, big_data, BIG);
  smb3_client *c = lt_connect(opts);
  smb3_file *f = open_or_fail(c, rel, O_RDONLY);
  struct ctx x = {.act = ACT_TRUNCATE, .truncate_to = to, .rel = rel};
  x.got = lt_calloc(1, BIG);
  assert_non_null(x.got);
  int64_t r = smb3_read_stream(f, 0, BIG, sink, &x, NULL, NULL);
  print_message("read_stream with truncation to %llu: returned %lld (%s), sink got %llu bytes\n",
                (unsigned long long)to, (long long)r, r < 0 ? smb3_last_error(c) : "ok",
                (unsigned long long)x.delivered);
  if (!x.fired) fail_msg("the sink never ran");
  if (r >= 0 && (uint64_t)r != x.delivered)
    fail_msg("read_stream returned %lld but delivered %llu bytes to the sink", (long long)r,
             (unsigned long long)x.delivered);
  if (r < 0) lt_assert_one_line("read_stream error", smb3_last_error(c));
  /* never garbage: everything delivered before the new end is the file's content at that offset;
   * past it, a READ the server ran while the truncation was under way may carry zeros where its
   * pages were already gone (Linux reads a truncated tmpfs page as a hole), never other bytes */
  uint64_t keep = x.delivered < to ? x.delivered : to;
  lt_assert_bytes("bytes delivered before the truncation point", x.got, big_data, (size_t)keep, 0);
  for (uint64_t i = keep; i < x.delivered; i++)
    if (x.got[i] != big_data[i] && x.got[i] != 0)
      fail_msg(
          "byte at offset %llu past the truncation point is 0x%02x: neither the old content (0x%02x) nor 0",
          (unsigned long long)i, x.got[i], big_data[i]);
  lt_close(f);
  lt_disconnect(c);
  *got = x.got;
  return r;
}

/* The truncation point lies beyond the first window (4 requests of 1 MiB), so every request that
 * reaches it is sent after the truncation: the read must end exactly there. */
static void test_truncate_beyond_window(void **s) {
  (void)s;
  lt_guard("truncate beyond window", GUARD_S);
  uint64_t to = 20 * MIB + 123;
  uint8_t *got;
  int64_t r = read_with_truncate("trunc_far", to, "rsize=1M,max_inflight=4,timeout=10", &got);
  if (r != (int64_t)to)
    fail_msg("read_stream over a file truncated to %llu (from 64 MiB) returned %lld, want exactly %llu",
             (unsigned long long)to, (long long)r, (unsigned long long)to);
  lt_free(got);
  lt_unguard();
}

/* The truncation point lies inside the first window: requests already answered carry the old
 * (valid) content, later ones stop at the new end. Short count (<= the window) or an error. */
static void test_truncate_within_window(void **s) {
  (void)s;
  lt_guard("truncate within window", GUARD_S);
  uint64_t to = 1 * MIB + 5;
  uint8_t *got;
  int64_t r = read_with_truncate("trunc_near", to, "rsize=1M,max_inflight=4,timeout=10", &got);
  if (r >= 0 && !(r == (int64_t)to || (r % MIB == 0 && r >= 2 * MIB && r <= 4 * MIB)))
    fail_msg("read_stream over a file truncated to %llu returned %lld: want %llu, or a whole number of the "
             "requests sent before the truncation (2..4 MiB)",
             (unsigned long long)to, (long long)r, (unsigned long long)to);
  lt_free(got);
  lt_unguard();
}

/* ---- (b) share closed / server process killed ---- */
static void check_failed(smb3_client *c, const char *what, int64_t r) {
  print_message("%s: returned %lld (%s): %s\n", what, (long long)r, r < 0 ? smb3_strerror((int)r) : "-",
                smb3_last_error(c));
  if (r >= 0) fail_msg("%s: returned %lld, want a negative SMB3_E* error", what, (long long)r);
  if (r <= SMB3_E_LAST) fail_msg("%s: returned %lld, not an SMB3_E* code", what, (long long)r);
  lt_assert_one_line(what, smb3_last_error(c));
}

static void read_disrupted(enum action act, const char *rel, const char *what) {
  lt_guard(what, GUARD_S);
  lt_write_local(rel, big_data, BIG);
  smb3_client *c = lt_connect("rsize=1M,max_inflight=4,timeout=10");
  smb3_file *f = open_or_fail(c, rel, O_RDONLY);
  struct ctx x = {.act = act, .rel = rel};
  x.got = lt_calloc(1, BIG);
  assert_non_null(x.got);
  int64_t r = smb3_read_stream(f, 0, BIG, sink, &x, NULL, NULL);
  if (!x.fired) fail_msg("%s: the sink never ran", what);
  check_failed(c, what, r);
  lt_assert_bytes(what, x.got, big_data, (size_t)x.delivered, 0);
  lt_close(f); /* fails (connection or tree gone); must still free f */
  lt_disconnect(c);
  lt_free(x.got);
  lt_unguard();
}

static void write_disrupted(enum action act, const char *rel, const char *what) {
  lt_guard(what, GUARD_S);
  smb3_client *c = lt_connect("wsize=1M,max_inflight=4,timeout=10");
  smb3_file *f = open_or_fail(c, rel, O_RDWR | O_CREAT | O_TRUNC);
  struct ctx x = {.act = act, .rel = rel};
  int64_t r = smb3_write_stream(f, 0, source, &x, NULL, NULL);
  if (!x.fired) fail_msg("%s: the source never reached its third call", what);
  check_failed(c, what, r);
  lt_close(f);
  lt_disconnect(c);
  lt_unguard();
}

static void test_close_share_read(void **s) {
  (void)s;
  read_disrupted(ACT_CLOSE_SHARE, "cs_read", "read_stream, share closed server-side");
}
static void test_close_share_write(void **s) {
  (void)s;
  write_disrupted(ACT_CLOSE_SHARE, "cs_write", "write_stream, share closed server-side");
}
static void test_kill_read(void **s) {
  (void)s;
  read_disrupted(ACT_KILL, "kill_read", "read_stream, smbd killed");
}
static void test_kill_write(void **s) {
  (void)s;
  write_disrupted(ACT_KILL, "kill_write", "write_stream, smbd killed");
}

/* After the connection is gone, every further call fails promptly (no hang, no crash). */
static void test_calls_after_kill(void **s) {
  (void)s;
  lt_guard("calls after kill", GUARD_S);
  lt_write_local("after_kill", big_data, 4096);
  smb3_client *c = lt_connect("timeout=10");
  smb3_file *f = open_or_fail(c, "after_kill", O_RDONLY);
  kill_serving_smbd();
  uint8_t buf[4096];
  ssize_t n = smb3_read_range(f, buf, sizeof buf, 0);
  check_failed(c, "read_range after kill", n);
  struct smb3_stat st;
  check_failed(c, "stat after kill", smb3_stat(c, "after_kill", &st));
  check_failed(c, "mkdir after kill", smb3_mkdir(c, "after_kill_dir"));
  lt_close(f);
  lt_disconnect(c);
  lt_unguard();
}

/* ---- the caller's own callback fails mid-transfer ---- */
static int sink_cancel(const void *buf, size_t n, uint64_t off, void *arg) {
  (void)buf;
  (void)n;
  (void)off;
  int *calls = arg;
  return ++*calls == 2 ? SMB3_ECANCELED : 0;
}
static ssize_t source_cancel(void *buf, size_t n, uint64_t off, void *arg) {
  int *calls = arg;
  if (++*calls == 3) return SMB3_ECANCELED;
  memcpy(buf, big_data + off, n);
  return (ssize_t)n;
}

/* A sink error stops the stream with that error while requests are still in flight (they must
 * finish before the call returns: ASan sees a late write into freed window buffers). */
static void test_sink_error_stops_read(void **s) {
  (void)s;
  lt_guard("sink error", GUARD_S);
  lt_write_local("sink_err", big_data, BIG);
  smb3_client *c = lt_connect("rsize=1M,max_inflight=8,timeout=10");
  smb3_file *f = open_or_fail(c, "sink_err", O_RDONLY);
  int calls = 0;
  int64_t r = smb3_read_stream(f, 0, BIG, sink_cancel, &calls, NULL, NULL);
  if (r != SMB3_ECANCELED)
    fail_msg("read_stream whose sink fails = %lld, want the sink's SMB3_ECANCELED", (long long)r);
  assert_int_equal(calls, 2);
  /* the connection is still usable */
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, "sink_err", &st), 0);
  assert_int_equal(lt_close(f), 0);
  lt_disconnect(c);
  lt_unguard();
}

static void test_source_error_stops_write(void **s) {
  (void)s;
  lt_guard("source error", GUARD_S);
  smb3_client *c = lt_connect("wsize=1M,max_inflight=8,timeout=10");
  smb3_file *f = open_or_fail(c, "source_err", O_RDWR | O_CREAT | O_TRUNC);
  int calls = 0;
  int64_t r = smb3_write_stream(f, 0, source_cancel, &calls, NULL, NULL);
  if (r != SMB3_ECANCELED)
    fail_msg("write_stream whose source fails = %lld, want the source's SMB3_ECANCELED", (long long)r);
  assert_int_equal(calls, 3);
  struct smb3_stat st;
  assert_int_equal(smb3_stat(c, "source_err", &st), 0);
  assert_int_equal(lt_close(f), 0);
  lt_disconnect(c);
  lt_unguard();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_truncate_beyond_window, lt_teardown),
      cmocka_unit_test_teardown(test_truncate_within_window, lt_teardown),
      cmocka_unit_test_teardown(test_close_share_read, lt_teardown),
      cmocka_unit_test_teardown(test_close_share_write, lt_teardown),
      cmocka_unit_test_teardown(test_kill_read, lt_teardown),
      cmocka_unit_test_teardown(test_kill_write, lt_teardown),
      cmocka_unit_test_teardown(test_calls_after_kill, lt_teardown),
      cmocka_unit_test_teardown(test_sink_error_stops_read, lt_teardown),
      cmocka_unit_test_teardown(test_source_error_stops_write, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_midfail", tests, group_setup, group_teardown);
}
