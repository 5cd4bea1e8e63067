/* test_lib_compound.c - issue 4: path operations are compounded into one round trip; with
 * `nocompound` the same operations give the same results one request per round trip; a chain
 * whose CREATE fails reports the CREATE's error for every operation, in both modes.
 *
 * Runs under tests/harness/with-smbd (integration.lib_compound). Every test runs each scenario
 * twice, on a compounding client and on a `nocompound` one, on separate names in the share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libtest.h"

struct mode {
  const char *name;
  const char *opts;
  const char *pfx; /* prefix of the names this mode uses in the share */
  int nocompound;
  smb3_client *c;
};
static struct mode modes[2] = {
    {"compound", NULL, "c", 0, NULL},
    {"nocompound", "nocompound", "n", 1, NULL},
};

struct delta {
  uint64_t rt, req;
  uint64_t cmd[19];
};

static struct delta delta_of(const struct smb3_stats *b, const struct smb3_stats *a) {
  struct delta d;
  d.rt = a->round_trips - b->round_trips;
  d.req = a->requests - b->requests;
  for (int i = 0; i < 19; i++)
    d.cmd[i] = a->per_command[i] - b->per_command[i];
  return d;
}

#define MEASURE(m, d, stmt)                                                                                  \
  do {                                                                                                       \
    struct smb3_stats b_ = lt_stats((m)->c);                                                                 \
    stmt;                                                                                                    \
    struct smb3_stats a_ = lt_stats((m)->c);                                                                 \
    (d) = delta_of(&b_, &a_);                                                                                \
  } while (0)

/* Round trips of one operation: 1 when compounding; one request per round trip, more than one
 * round trip (and exactly nc_expected when given) with nocompound. */
static void check_rt(const struct mode *m, const char *op, const struct delta *d, uint64_t nc_expected) {
  if (!m->nocompound) {
    if (d->rt != 1)
      fail_msg("%s (compound): %llu round trips (%llu requests), want 1", op, (unsigned long long)d->rt,
               (unsigned long long)d->req);
    if (d->req < 2) fail_msg("%s (compound): only %llu request(s) sent", op, (unsigned long long)d->req);
  } else {
    if (d->rt != d->req || d->rt < 2)
      fail_msg("%s (nocompound): %llu round trips for %llu requests, want one request per round trip (> 1)",
               op, (unsigned long long)d->rt, (unsigned long long)d->req);
    if (nc_expected && d->rt != nc_expected)
      fail_msg("%s (nocompound): %llu round trips, want %llu", op, (unsigned long long)d->rt,
               (unsigned long long)nc_expected);
  }
}

static char *name(const struct mode *m, const char *fmt, ...) {
  static char buf[32][512];
  static int k;
  char *b = buf[k++ & 31];
  int n = snprintf(b, 512, "%s_", m->pfx);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b + n, 512 - (size_t)n, fmt, ap);
  va_end(ap);
  return b;
}

static int group_setup(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) { /* shared by all tests: not released by lt_teardown */
    modes[i].c = lt_connect(modes[i].opts);
    lt_untrack((void **)lt_clients, modes[i].c);
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++)
    lt_disconnect(modes[i].c);
  return 0;
}

/* ---- round trips and results ---- */
static void test_rt_stat(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    uint8_t *data = lt_random(1000, 1);
    const char *f = name(m, "stat_file");
    lt_write_local(f, data, 1000);
    lt_free(data);
    struct stat ls = lt_stat_local(f);
    struct smb3_stat st;
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_stat(m->c, f, &st));
    if (rc) fail_msg("stat %s (%s) = %d: %s", f, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "stat", &d, 3);
    assert_int_equal(d.cmd[LT_CMD_CREATE], 1);
    assert_int_equal(d.cmd[LT_CMD_QUERY_INFO], 1);
    assert_int_equal(d.cmd[LT_CMD_CLOSE], 1);
    assert_int_equal(st.size, 1000);
    assert_false(st.is_dir);
    assert_int_equal(st.mtime.sec, (int64_t)ls.st_mtim.tv_sec);
    /* a directory */
    const char *dn = name(m, "stat_dir");
    lt_mkdir_local(dn);
    MEASURE(m, d, rc = smb3_stat(m->c, dn, &st));
    if (rc) fail_msg("stat %s (%s) = %d: %s", dn, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "stat dir", &d, 3);
    assert_true(st.is_dir);
  }
}

static void test_rt_statvfs(void **state) {
  (void)state;
  struct smb3_statvfs sv[2];
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_statvfs(m->c, &sv[i]));
    if (rc) fail_msg("statvfs (%s) = %d: %s", m->name, rc, smb3_last_error(m->c));
    check_rt(m, "statvfs", &d, 3);
    assert_true(sv[i].bsize > 0);
    assert_true(sv[i].blocks > 0);
    assert_true(sv[i].bfree <= sv[i].blocks);
    assert_true(sv[i].bavail <= sv[i].blocks);
  }
  /* the same answer both ways */
  assert_int_equal(sv[0].bsize * sv[0].blocks, sv[1].bsize * sv[1].blocks);
}

static void test_rt_mkdir(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *dn = name(m, "mkdir_new");
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_mkdir(m->c, dn));
    if (rc) fail_msg("mkdir %s (%s) = %d: %s", dn, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "mkdir", &d, 0);
    assert_true(lt_is_dir(dn));
  }
}

static void test_rt_rmdir(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *dn = name(m, "rmdir_empty");
    lt_mkdir_local(dn);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_rmdir(m->c, dn));
    if (rc) fail_msg("rmdir %s (%s) = %d: %s", dn, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "rmdir", &d, 0);
    assert_false(lt_exists(dn));
  }
}

static void test_rt_unlink(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *f = name(m, "unlink_file");
    lt_write_local(f, "x", 1);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_unlink(m->c, f));
    if (rc) fail_msg("unlink %s (%s) = %d: %s", f, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "unlink", &d, 0);
    assert_false(lt_exists(f));
  }
}

static void test_rt_rename(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *src = name(m, "ren_src"), *dst = name(m, "ren_dst");
    uint8_t *data = lt_random(777, 2);
    lt_write_local(src, data, 777);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_rename(m->c, src, dst, 0));
    if (rc) fail_msg("rename %s -> %s (%s) = %d: %s", src, dst, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "rename", &d, 3);
    assert_false(lt_exists(src));
    size_t n;
    uint8_t *got = lt_read_local(dst, &n);
    assert_non_null(got);
    assert_int_equal(n, 777);
    lt_assert_bytes("renamed file", got, data, n, 0);
    lt_free(got);
    /* replacing an existing file */
    const char *src2 = name(m, "ren_src2");
    lt_write_local(src2, "new", 3);
    MEASURE(m, d, rc = smb3_rename(m->c, src2, dst, 1));
    if (rc) fail_msg("rename %s -> %s replace (%s) = %d: %s", src2, dst, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "rename (replace)", &d, 3);
    got = lt_read_local(dst, &n);
    assert_non_null(got);
    assert_int_equal(n, 3);
    assert_memory_equal(got, "new", 3);
    assert_false(lt_exists(src2));
    lt_free(got);
    /* a directory, into a subdirectory */
    const char *dsrc = name(m, "ren_dir"), *ddst = name(m, "ren_dir_parent");
    lt_mkdir_local(dsrc);
    lt_mkdir_local(ddst);
    char to[600];
    snprintf(to, sizeof to, "%s/moved", ddst);
    MEASURE(m, d, rc = smb3_rename(m->c, dsrc, to, 0));
    if (rc) fail_msg("rename dir %s -> %s (%s) = %d: %s", dsrc, to, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "rename dir", &d, 3);
    assert_true(lt_is_dir(to));
    assert_false(lt_exists(dsrc));
    lt_free(data);
  }
}

static void test_rt_truncate(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *f = name(m, "trunc");
    uint8_t *data = lt_random(5000, 3);
    lt_write_local(f, data, 5000);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_truncate(m->c, f, 123));
    if (rc) fail_msg("truncate %s (%s) = %d: %s", f, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "truncate (shrink)", &d, 3);
    size_t n;
    uint8_t *got = lt_read_local(f, &n);
    assert_int_equal(n, 123);
    lt_assert_bytes("truncated file", got, data, 123, 0);
    lt_free(got);
    MEASURE(m, d, rc = smb3_truncate(m->c, f, 70000));
    if (rc) fail_msg("truncate %s up (%s) = %d: %s", f, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "truncate (extend)", &d, 3);
    got = lt_read_local(f, &n);
    assert_int_equal(n, 70000);
    lt_assert_bytes("extended file head", got, data, 123, 0);
    for (size_t k = 123; k < n; k++)
      if (got[k]) fail_msg("extended file: byte %zu is 0x%02x, want 0", k, got[k]);
    lt_free(got);
    lt_free(data);
  }
}

static void test_rt_utimens(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *f = name(m, "utimens");
    lt_write_local(f, "t", 1);
    struct timespec_smb3 at = {981173106, 0}, mt = {981173106 + 3600, 500000000};
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_utimens(m->c, f, &at, &mt));
    if (rc) fail_msg("utimens %s (%s) = %d: %s", f, m->name, rc, smb3_last_error(m->c));
    check_rt(m, "utimens", &d, 3);
    struct stat ls = lt_stat_local(f);
    assert_int_equal(ls.st_mtim.tv_sec, mt.sec);
    assert_int_equal(ls.st_mtim.tv_nsec, mt.nsec);
    assert_int_equal(ls.st_atim.tv_sec, at.sec);
    /* and the library reads back what it set */
    struct smb3_stat st;
    rc = smb3_stat(m->c, f, &st);
    assert_int_equal(rc, 0);
    assert_int_equal(st.mtime.sec, mt.sec);
    assert_int_equal(st.mtime.nsec, mt.nsec);
  }
}

static void test_rt_read_file(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    for (size_t size = 0; size <= 60000; size = size ? size * 10 : 6) { /* 0, 6, 60, ..., 60000 */
      const char *f = name(m, "read_file_%zu", size);
      uint8_t *data = lt_random(size, 4 + size);
      lt_write_local(f, data, size);
      size_t cap = size + 4096;
      uint8_t *buf = lt_malloc(cap);
      assert_non_null(buf);
      struct delta d;
      ssize_t n;
      MEASURE(m, d, n = smb3_read_file(m->c, f, buf, cap));
      if (n < 0) fail_msg("read_file %s (%s) = %zd: %s", f, m->name, n, smb3_last_error(m->c));
      check_rt(m, "read_file", &d, 3);
      assert_int_equal(n, size);
      lt_assert_bytes("read_file", buf, data, size, 0);
      lt_free(buf);
      lt_free(data);
    }
  }
}

static void test_rt_write_file(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    for (size_t size = 1; size <= 60000; size *= 10) {
      const char *f = name(m, "write_file_%zu", size);
      uint8_t *data = lt_random(size, 5 + size);
      struct delta d;
      ssize_t n;
      MEASURE(m, d, n = smb3_write_file(m->c, f, data, size));
      if (n < 0) fail_msg("write_file %s (%s) = %zd: %s", f, m->name, n, smb3_last_error(m->c));
      check_rt(m, "write_file", &d, 3);
      assert_int_equal(n, size);
      size_t got_n;
      uint8_t *got = lt_read_local(f, &got_n);
      assert_non_null(got);
      assert_int_equal(got_n, size);
      lt_assert_bytes("write_file", got, data, size, 0);
      lt_free(got);
      /* overwriting a longer file leaves exactly the new content */
      uint8_t *longer = lt_random(size + 5000, 6);
      lt_write_local(f, longer, size + 5000);
      MEASURE(m, d, n = smb3_write_file(m->c, f, data, size));
      if (n < 0) fail_msg("write_file over %s (%s) = %zd: %s", f, m->name, n, smb3_last_error(m->c));
      check_rt(m, "write_file (overwrite)", &d, 3);
      got = lt_read_local(f, &got_n);
      assert_int_equal(got_n, size);
      lt_assert_bytes("write_file (overwrite)", got, data, size, 0);
      lt_free(got);
      lt_free(longer);
      lt_free(data);
    }
  }
}

/* ---- listing: 1000 entries with long names ---- */
#define NLIST 1000
static void list_name(char *out, size_t cap, int i) {
  int n = snprintf(out, cap, "%04d_", i);
  for (; n < 200 && (size_t)n + 1 < cap; n++)
    out[n] = (char)('a' + (i + n) % 26);
  out[n] = 0;
}

static void test_rt_listing(void **state) {
  (void)state;
  uint64_t rt_mode[2];
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *dn = name(m, "list");
    lt_mkdir_local(dn);
    char rel[800], nm[256];
    for (int k = 0; k < NLIST; k++) {
      list_name(nm, sizeof nm, k);
      snprintf(rel, sizeof rel, "%s/%s", dn, nm);
      lt_write_local(rel, "0123456", (size_t)(k % 7));
    }
    unsigned char *seen = lt_calloc(NLIST, 1);
    assert_non_null(seen);
    struct smb3_stats b = lt_stats(m->c);
    smb3_dir *dir = NULL;
    int rc = smb3_opendir(m->c, dn, &dir);
    if (rc) fail_msg("opendir %s (%s) = %d: %s", dn, m->name, rc, smb3_last_error(m->c));
    struct smb3_dirent e;
    int count = 0;
    while ((rc = smb3_readdir(dir, &e)) == 1) {
      int k = atoi(e.name);
      list_name(nm, sizeof nm, k);
      if (k < 0 || k >= NLIST || strcmp(nm, e.name))
        fail_msg("readdir (%s): unexpected name '%s'", m->name, e.name);
      if (seen[k]++) fail_msg("readdir (%s): '%s' listed twice", m->name, e.name);
      if (e.st.size != (uint64_t)(k % 7) || e.st.is_dir)
        fail_msg("readdir (%s): '%s' size %llu is_dir %d, want %d 0", m->name, e.name,
                 (unsigned long long)e.st.size, e.st.is_dir, k % 7);
      count++;
    }
    if (rc < 0) fail_msg("readdir (%s) = %d: %s", m->name, rc, smb3_last_error(m->c));
    rc = smb3_closedir(dir);
    assert_int_equal(rc, 0);
    struct smb3_stats a = lt_stats(m->c);
    struct delta d = delta_of(&b, &a);
    lt_free(seen);
    assert_int_equal(count, NLIST);
    uint64_t q = d.cmd[LT_CMD_QUERY_DIRECTORY];
    double per = q > 1 ? (double)NLIST / (double)(q - 1) : NLIST;
    print_message(
        "listing %d entries (%s): %llu QUERY_DIRECTORY (~%.0f entries per response), %llu round trips\n",
        NLIST, m->name, (unsigned long long)q, per, (unsigned long long)d.rt);
    if (q <= 1)
      fail_msg("listing (%s): only %llu QUERY_DIRECTORY for %d long names", m->name, (unsigned long long)q,
               NLIST);
    if (!m->nocompound && d.rt > q + 1)
      fail_msg("listing (compound): %llu round trips for %llu QUERY_DIRECTORY requests, want <= %llu",
               (unsigned long long)d.rt, (unsigned long long)q, (unsigned long long)(q + 1));
    if (m->nocompound && d.rt != d.req)
      fail_msg("listing (nocompound): %llu round trips for %llu requests", (unsigned long long)d.rt,
               (unsigned long long)d.req);
    rt_mode[i] = d.rt;
  }
  if (rt_mode[1] <= rt_mode[0])
    fail_msg("listing: nocompound took %llu round trips, compound %llu: want more without compounding",
             (unsigned long long)rt_mode[1], (unsigned long long)rt_mode[0]);
}

/* ---- a failing CREATE fails the whole chain with its own error ---- */
static void expect_err(const struct mode *m, const char *what, int rc, int want, const struct delta *d) {
  if (rc != want)
    fail_msg("%s (%s) = %d (%s), want %d (%s); last error: %s", what, m->name, rc, smb3_strerror(rc), want,
             smb3_strerror(want), smb3_last_error(m->c));
  lt_assert_one_line(what, smb3_last_error(m->c));
  if (!m->nocompound && d->rt != 1)
    fail_msg("%s (compound): failed in %llu round trips, want 1", what, (unsigned long long)d->rt);
  /* the connection is still fine afterwards */
  struct smb3_statvfs sv;
  int rc2 = smb3_statvfs(m->c, &sv);
  if (rc2) fail_msg("after %s (%s): statvfs = %d: %s", what, m->name, rc2, smb3_last_error(m->c));
}

static void test_err_missing(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *miss = name(m, "no_such_file");
    const char *miss_sub = name(m, "no_such_dir/file");
    struct timespec_smb3 t = {1000000000, 0};
    struct smb3_stat st;
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_stat(m->c, miss, &st));
    expect_err(m, "stat missing", rc, SMB3_ENOENT, &d);
    MEASURE(m, d, rc = smb3_stat(m->c, miss_sub, &st));
    expect_err(m, "stat missing/sub", rc, SMB3_ENOENT, &d);
    MEASURE(m, d, rc = smb3_unlink(m->c, miss));
    expect_err(m, "unlink missing", rc, SMB3_ENOENT, &d);
    MEASURE(m, d, rc = smb3_rmdir(m->c, miss));
    expect_err(m, "rmdir missing", rc, SMB3_ENOENT, &d);
    MEASURE(m, d, rc = smb3_rename(m->c, miss, name(m, "ren_target_of_missing"), 0));
    expect_err(m, "rename missing", rc, SMB3_ENOENT, &d);
    assert_false(lt_exists(name(m, "ren_target_of_missing")));
    MEASURE(m, d, rc = smb3_truncate(m->c, miss, 10));
    expect_err(m, "truncate missing", rc, SMB3_ENOENT, &d);
    MEASURE(m, d, rc = smb3_utimens(m->c, miss, &t, &t));
    expect_err(m, "utimens missing", rc, SMB3_ENOENT, &d);
    assert_false(lt_exists(miss));
  }
}

static void test_err_missing_read_file(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    uint8_t buf[64];
    struct delta d;
    ssize_t n;
    MEASURE(m, d, n = smb3_read_file(m->c, name(m, "no_such_file"), buf, sizeof buf));
    expect_err(m, "read_file missing", (int)n, SMB3_ENOENT, &d);
  }
}

static void test_err_mkdir_exists(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *dn = name(m, "mkdir_exists"), *fn = name(m, "mkdir_exists_file");
    lt_mkdir_local(dn);
    char inner[600];
    snprintf(inner, sizeof inner, "%s/keep", dn);
    lt_write_local(inner, "keep", 4);
    lt_write_local(fn, "file", 4);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_mkdir(m->c, dn));
    expect_err(m, "mkdir existing dir", rc, SMB3_EEXIST, &d);
    assert_true(lt_is_dir(dn));
    assert_true(lt_exists(inner));
    MEASURE(m, d, rc = smb3_mkdir(m->c, fn));
    expect_err(m, "mkdir existing file", rc, SMB3_EEXIST, &d);
    assert_false(lt_is_dir(fn));
  }
}

static void test_err_rename_exists(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *a = name(m, "renx_a"), *b = name(m, "renx_b");
    lt_write_local(a, "AAAA", 4);
    lt_write_local(b, "BB", 2);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_rename(m->c, a, b, 0));
    expect_err(m, "rename onto existing without replace", rc, SMB3_EEXIST, &d);
    size_t n;
    uint8_t *got = lt_read_local(a, &n);
    assert_non_null(got);
    assert_int_equal(n, 4);
    lt_free(got);
    got = lt_read_local(b, &n);
    assert_non_null(got);
    assert_int_equal(n, 2);
    assert_memory_equal(got, "BB", 2);
    lt_free(got);
  }
}

static void test_err_rmdir_notempty(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *dn = name(m, "rmdir_full");
    lt_mkdir_local(dn);
    char inner[600];
    snprintf(inner, sizeof inner, "%s/child", dn);
    lt_write_local(inner, "c", 1);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_rmdir(m->c, dn));
    expect_err(m, "rmdir non-empty", rc, SMB3_ENOTEMPTY, &d);
    assert_true(lt_is_dir(dn));
    assert_true(lt_exists(inner));
    /* and once emptied, it goes: nothing was left marked for deletion */
    rc = smb3_unlink(m->c, inner);
    if (rc) fail_msg("unlink %s (%s) = %d: %s", inner, m->name, rc, smb3_last_error(m->c));
    assert_true(lt_is_dir(dn));
    rc = smb3_rmdir(m->c, dn);
    if (rc) fail_msg("rmdir emptied %s (%s) = %d: %s", dn, m->name, rc, smb3_last_error(m->c));
    assert_false(lt_exists(dn));
  }
}

static void test_err_unlink_dir(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *dn = name(m, "unlink_dir");
    lt_mkdir_local(dn);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_unlink(m->c, dn));
    expect_err(m, "unlink of a directory", rc, SMB3_EISDIR, &d);
    assert_true(lt_is_dir(dn));
  }
}

static void test_err_rmdir_file(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    struct mode *m = &modes[i];
    const char *fn = name(m, "rmdir_file");
    lt_write_local(fn, "f", 1);
    struct delta d;
    int rc;
    MEASURE(m, d, rc = smb3_rmdir(m->c, fn));
    expect_err(m, "rmdir of a file", rc, SMB3_ENOTDIR, &d);
    assert_true(lt_exists(fn));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_rt_stat, lt_teardown),
      cmocka_unit_test_teardown(test_rt_statvfs, lt_teardown),
      cmocka_unit_test_teardown(test_rt_mkdir, lt_teardown),
      cmocka_unit_test_teardown(test_rt_rmdir, lt_teardown),
      cmocka_unit_test_teardown(test_rt_unlink, lt_teardown),
      cmocka_unit_test_teardown(test_rt_rename, lt_teardown),
      cmocka_unit_test_teardown(test_rt_truncate, lt_teardown),
      cmocka_unit_test_teardown(test_rt_utimens, lt_teardown),
      cmocka_unit_test_teardown(test_rt_read_file, lt_teardown),
      cmocka_unit_test_teardown(test_rt_write_file, lt_teardown),
      cmocka_unit_test_teardown(test_rt_listing, lt_teardown),
      cmocka_unit_test_teardown(test_err_missing, lt_teardown),
      cmocka_unit_test_teardown(test_err_missing_read_file, lt_teardown),
      cmocka_unit_test_teardown(test_err_mkdir_exists, lt_teardown),
      cmocka_unit_test_teardown(test_err_rename_exists, lt_teardown),
      cmocka_unit_test_teardown(test_err_rmdir_notempty, lt_teardown),
      cmocka_unit_test_teardown(test_err_unlink_dir, lt_teardown),
      cmocka_unit_test_teardown(test_err_rmdir_file, lt_teardown),
  };
  return cmocka_run_group_tests_name("lib_compound", tests, group_setup, group_teardown);
}
