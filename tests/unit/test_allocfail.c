/* Fails the Nth allocation: every allocation made by the option/URL parsers, the
 * authentication start, and a whole request/response cycle through the core is made to fail in
 * turn; each run must end with an error or success, never a crash, and (under ASan) never a leak.
 * Allocation functions are wrapped at link time (-Wl,--wrap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/auth.h"
#include "core/core.h"
#include "smb3/smb3.h"

static long alloc_count, fail_at = -1;
static int failed_once;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);

static int should_fail(void) {
  if (fail_at >= 0 && ++alloc_count == fail_at) {
    failed_once = 1;
    return 1;
  }
  return 0;
}
void *__wrap_malloc(size_t n) {
  return should_fail() ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m) {
  return should_fail() ? NULL : __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n) {
  return should_fail() ? NULL : __real_realloc(p, n);
}
char *__wrap_strdup(const char *s) {
  return should_fail() ? NULL : __real_strdup(s);
}

/* Run fn with the 1st, 2nd, ... allocation failing until a run makes no failing allocation. */
static void each_failure(int (*fn)(void)) {
  int runs = 0;
  for (long n = 1;; n++) {
    alloc_count = 0;
    fail_at = n;
    failed_once = 0;
    int rc = fn();
    fail_at = -1;
    runs++;
    if (!failed_once) {
      assert_int_equal(rc, 0); /* with no failure injected it must succeed */
      break;
    }
    assert_true(rc <= 0 || rc == 1);
    assert_true(runs < 10000);
  }
  assert_true(runs > 1); /* the scenario did allocate */
}

static int parse_scenario(void) {
  struct smb3_options o;
  smb3_options_init(&o);
  char err[128];
  int rc = smb3_url_parse(&o, "smb://D;u:p@h:1/s/a/b", err, sizeof err);
  if (!rc)
    rc = smb3_options_parse(&o, "vers=3.0,username=x,password=y,domain=z,rsize=1M", 0, err, sizeof err);
  smb3_options_free(&o);
  return rc;
}

/* Out of memory in smb3_options_parse is SMB3_ENOMEM, never taken for a bad value (SMB3_EURL). */
static void options_oom_is_enomem(void **s) {
  (void)s;
  for (long n = 1;; n++) {
    struct smb3_options o;
    smb3_options_init(&o);
    char err[128] = "";
    alloc_count = 0;
    fail_at = n;
    failed_once = 0;
    int rc = smb3_options_parse(&o, "username=x,password=y,domain=z,guest", 0, err, sizeof err);
    fail_at = -1;
    smb3_options_free(&o);
    if (!failed_once) {
      assert_int_equal(rc, 0);
      assert_true(n > 4); /* the copy and the four strings were each made to fail */
      break;
    }
    assert_int_equal(rc, SMB3_ENOMEM);
  }
}

static int auth_scenario(void) {
  struct smb3_auth *a = smb3_auth_new("user", "password", "DOMAIN", "ws");
  if (!a) return SMB3_ENOMEM;
  uint8_t *tok = NULL;
  size_t len = 0;
  int rc = smb3_auth_step(a, NULL, 0, &tok, &len);
  free(tok);
  smb3_auth_free(a);
  return rc;
}

/* One ECHO through the core: submit, take the output, feed a hand-built response frame. */
static void echo_cb(struct smb3_chain *ch, void *arg) {
  *(int *)arg = ch->error ? ch->error : 1;
}

static void echo_response(uint8_t *f) {
  struct smb2_hdr h = {
      .command = SMB2_ECHO, .credits = 8, .flags = SMB2_FLAGS_SERVER_TO_REDIR, .message_id = 0};
  smb2_hdr_encode(&h, f);
  f[64] = 4; /* StructureSize 4 */
  f[65] = f[66] = f[67] = 0;
}

static int core_scenario(void) {
  struct core_config cfg = {.dialect_min = 0x0202, .dialect_max = 0x0311, .credits_target = 64};
  struct smb3_core *c = core_new(&cfg);
  if (!c) return SMB3_ENOMEM;
  struct smb3_chain *ch = chain_new(1);
  int rc = ch ? 0 : SMB3_ENOMEM, done = 0;
  struct le_wr w;
  if (!rc) rc = msg_body_begin(&ch->msgs[0], SMB2_ECHO, 0, 16, &w);
  if (!rc) rc = smb2_simple_req_encode(&w);
  if (!rc) rc = msg_body_done(&ch->msgs[0], &w);
  if (!rc) {
    ch->cb = echo_cb;
    ch->arg = &done;
    rc = core_submit(c, ch, 0);
  }
  int queued = !rc;
  if (!rc) {
    struct iovec iov[8];
    int n = core_output(c, iov, 8);
    size_t total = 0;
    for (int i = 0; i < n; i++)
      total += iov[i].iov_len;
    core_output_done(c, total);
    uint8_t frame[68];
    echo_response(frame);
    rc = core_recv_frame(c, frame, sizeof frame);
  }
  core_fail_all(c, SMB3_ECLOSED); /* whatever is left fails; callbacks below run once */
  for (struct core_event *e = core_take_events(c), *next; e; e = next) {
    next = e->next;
    if (e->chain) e->chain->cb(e->chain, e->chain->arg);
    core_event_free(e);
  }
  if (queued) assert_int_not_equal(done, 0); /* a queued chain always completes */
  if (!rc && done != 1) rc = done;
  chain_free(ch);
  core_free(c);
  return rc;
}

static void parse_under_failures(void **s) {
  (void)s;
  each_failure(parse_scenario);
}
static void auth_under_failures(void **s) {
  (void)s;
  each_failure(auth_scenario);
}
static void core_under_failures(void **s) {
  (void)s;
  each_failure(core_scenario);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_under_failures), cmocka_unit_test(options_oom_is_enomem),
      cmocka_unit_test(auth_under_failures), cmocka_unit_test(core_under_failures)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
