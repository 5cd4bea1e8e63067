/* test_extents - where write-back puts a write's bytes (fs/extents.h): out-of-order 1 MiB writes
 * still make whole wsize extents, an extent holds one open's writes only, an overlapping rewrite
 * sends the older bytes first, at most EXTENTS_OPEN_MAX extents are being filled. The sealed
 * extents are checked byte for byte against what was written. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "extents.h"

struct fs_file {
  int id;
};
static struct fs_file F1 = {1}, F2 = {2};

#define MiB (1024u * 1024u)

/* extents.c's realloc (linked with --wrap=realloc): fails while fail_realloc is set. */
static int fail_realloc;
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n) {
  return fail_realloc ? NULL : __real_realloc(p, n);
}

struct sealed {
  struct fs_file *fh;
  uint64_t off;
  size_t len;
  uint8_t *data;
};

struct sim {
  struct extent_set set;
  struct sealed out[64];
  int nout, made, buried;
  int fail_make; /* make() answers NULL */
  int tight;     /* tight() answers this: memory is short */
};

static struct extent *make(void *ctx, struct fs_file *fh, uint64_t off) {
  struct sim *s = ctx;
  if (s->fail_make) return NULL;
  struct extent *e = calloc(1, sizeof *e);
  assert_non_null(e);
  e->fh = fh;
  e->off = off;
  s->made++;
  return e;
}

static void seal(void *ctx, struct extent *e) {
  struct sim *s = ctx;
  assert_true(s->nout < 64);
  assert_true(e->len > 0);
  s->out[s->nout++] = (struct sealed){e->fh, e->off, e->len, e->buf};
  free(e);
}

static void bury(void *ctx, struct extent *e) {
  struct sim *s = ctx;
  assert_int_equal(e->len, 0);
  s->buried++;
  free(e->buf);
  free(e);
}

static int tight(void *ctx) {
  return ((struct sim *)ctx)->tight;
}

static const struct extent_ops ops = {make, seal, bury, NULL, tight};

/* The byte a writer puts at off (version v: a rewrite puts other bytes). */
static uint8_t byte_at(uint64_t off, int v) {
  return (uint8_t)(off * 7 + off / 251 + (uint64_t)v * 13);
}

static void write_at(struct sim *s, struct fs_file *fh, uint64_t off, size_t len, int v, size_t wsize) {
  uint8_t *b = malloc(len);
  assert_non_null(b);
  for (size_t i = 0; i < len; i++)
    b[i] = byte_at(off + i, v);
  uint64_t reached;
  assert_int_equal(extents_add(&s->set, fh, b, len, off, wsize, &ops, s, &reached), 0);
  assert_true(reached == off + len);
  free(b);
  /* the set stays sorted, non-empty extents, bytes counted */
  size_t bytes = 0;
  int n = 0;
  for (struct extent *e = s->set.head; e; e = e->next, n++) {
    assert_true(e->len > 0);
    if (e->next) assert_true(e->off < e->next->off);
    bytes += e->len;
  }
  assert_int_equal(n, s->set.n);
  assert_int_equal(bytes, s->set.bytes);
  assert_true(n <= EXTENTS_OPEN_MAX);
}

static void expect_sealed(struct sim *s, int i, struct fs_file *fh, uint64_t off, size_t len, int v) {
  assert_true(i < s->nout);
  assert_ptr_equal(s->out[i].fh, fh);
  assert_true(s->out[i].off == off);
  assert_int_equal(s->out[i].len, len);
  for (size_t k = 0; k < len; k++)
    if (s->out[i].data[k] != byte_at(off + k, v)) fail_msg("extent %d: byte %zu differs", i, k);
}

static void sim_free(struct sim *s) {
  extents_seal_all(&s->set, &ops, s);
  for (int i = 0; i < s->nout; i++)
    free(s->out[i].data);
}

static void test_window_end(void **state) {
  (void)state;
  assert_true(extent_window_end(0, MiB) == MiB);
  assert_true(extent_window_end(MiB - 1, MiB) == MiB);
  assert_true(extent_window_end(MiB, MiB) == 2 * MiB);
}

static void test_in_order_fills_windows(void **state) {
  (void)state;
  struct sim s = {0};
  for (uint64_t off = 0; off < 8 * MiB; off += 128 * 1024)
    write_at(&s, &F1, off, 128 * 1024, 0, 4 * MiB);
  assert_int_equal(s.nout, 2); /* each sent as soon as its window is full */
  expect_sealed(&s, 0, &F1, 0, 4 * MiB, 0);
  expect_sealed(&s, 1, &F1, 4 * MiB, 4 * MiB, 0);
  assert_null(s.set.head);
  assert_int_equal(s.made, 2);
  sim_free(&s);
}

/* The kernel's write-back sends 1 MiB writes at once; the FUSE workers deliver them in any order. */
static void test_out_of_order_1mib_writes(void **state) {
  (void)state;
  struct sim s = {0};
  static const int order[] = {1, 3, 0, 2, 6, 5, 7, 4};
  for (int i = 0; i < 8; i++)
    write_at(&s, &F1, (uint64_t)order[i] * MiB, MiB, 0, 4 * MiB);
  assert_int_equal(s.nout, 2); /* two whole 4 MiB WRITEs, not eight */
  expect_sealed(&s, 0, &F1, 0, 4 * MiB, 0);
  expect_sealed(&s, 1, &F1, 4 * MiB, 4 * MiB, 0);
  assert_int_equal(s.buried, 4); /* the late-started extents' bytes moved into the earlier ones */
  assert_int_equal(s.set.n, 0);
  sim_free(&s);
}

static void test_two_opens_not_merged(void **state) {
  (void)state;
  struct sim s = {0};
  write_at(&s, &F1, 0, 64 * 1024, 0, MiB);
  write_at(&s, &F1, 128 * 1024, 64 * 1024, 0, MiB);
  /* adjacent to both, through another open: it neither continues F1's first extent nor takes the
   * bytes of the one it reaches */
  write_at(&s, &F2, 64 * 1024, 64 * 1024, 0, MiB);
  assert_int_equal(s.set.n, 3);
  write_at(&s, &F2, 256 * 1024, 64 * 1024, 0, MiB);
  write_at(&s, &F1, 192 * 1024, 64 * 1024, 0, MiB); /* F1 reaches F2's [256K, 320K): not merged */
  assert_int_equal(s.set.n, 4);
  assert_int_equal(s.nout, 0);
  extents_seal_all(&s.set, &ops, &s);
  assert_int_equal(s.nout, 4);
  expect_sealed(&s, 0, &F1, 0, 64 * 1024, 0);
  expect_sealed(&s, 1, &F2, 64 * 1024, 64 * 1024, 0);
  expect_sealed(&s, 2, &F1, 128 * 1024, 128 * 1024, 0);
  expect_sealed(&s, 3, &F2, 256 * 1024, 64 * 1024, 0);
  sim_free(&s);
}

static void test_overlapping_rewrite_sends_older_first(void **state) {
  (void)state;
  struct sim s = {0};
  write_at(&s, &F1, 0, 100, 0, MiB);
  write_at(&s, &F1, 50, 100, 1, MiB); /* overwrites [50, 100) */
  assert_int_equal(s.nout, 1);
  expect_sealed(&s, 0, &F1, 0, 100, 0); /* the older bytes, whole, first */
  write_at(&s, &F1, 150, 50, 1, MiB);   /* continues the rewrite */
  write_at(&s, &F2, 120, 10, 2, MiB);   /* another open inside it */
  assert_int_equal(s.nout, 2);
  expect_sealed(&s, 1, &F1, 50, 150, 1);
  extents_seal_all(&s.set, &ops, &s);
  expect_sealed(&s, 2, &F2, 120, 10, 2);
  sim_free(&s);
}

static void test_write_across_a_window_edge(void **state) {
  (void)state;
  struct sim s = {0};
  write_at(&s, &F1, MiB - 10, 20, 0, MiB); /* split at the window edge: aligned WRITEs follow */
  assert_int_equal(s.set.n, 2);
  assert_true(s.set.head->off == MiB - 10 && s.set.head->len == 10);
  write_at(&s, &F1, MiB + 10, MiB - 10, 0, MiB); /* completes [1M, 2M) */
  assert_int_equal(s.nout, 1);
  expect_sealed(&s, 0, &F1, MiB, MiB, 0);
  extents_seal_all(&s.set, &ops, &s);
  expect_sealed(&s, 1, &F1, MiB - 10, 10, 0); /* at its window's end, but not a whole window */
  sim_free(&s);
}

static void test_at_most_open_max(void **state) {
  (void)state;
  struct sim s = {0};
  for (int i = 0; i < EXTENTS_OPEN_MAX; i++)
    write_at(&s, &F1, (uint64_t)(EXTENTS_OPEN_MAX - i) * MiB, 10, 0, MiB);
  assert_int_equal(s.nout, 0);
  write_at(&s, &F1, 10 * MiB, 10, 0, MiB);
  assert_int_equal(s.nout, 1);
  expect_sealed(&s, 0, &F1, MiB, 10, 0); /* the lowest offset made room */
  assert_int_equal(s.set.n, EXTENTS_OPEN_MAX);
  sim_free(&s);
}

static void test_buffer_growth(void **state) {
  (void)state;
  struct sim s = {0};
  write_at(&s, &F1, 0, 100, 0, 4 * MiB);
  assert_int_equal(s.set.head->cap, 64 * 1024); /* a small writer starts small */
  write_at(&s, &F1, 100, 150 * 1024, 0, 4 * MiB);
  assert_int_equal(s.set.head->cap, 256 * 1024);
  write_at(&s, &F1, 100 + 150 * 1024, 200 * 1024, 0, 4 * MiB);
  assert_int_equal(s.set.head->cap, 4 * MiB);
  write_at(&s, &F2, 5 * MiB, 64 * 1024, 0, 4 * MiB); /* a streaming writer gets its window at once */
  assert_int_equal(s.set.head->next->cap, 3 * MiB);
  sim_free(&s);
}

/* While memory is tight, a buffer holds what came, not its window: what many writers at once hold
 * beyond the mount's budget is what they wrote (writeback.c then sends it in small pieces). */
static void test_buffer_growth_tight(void **state) {
  (void)state;
  struct sim s = {.tight = 1};
  write_at(&s, &F1, 0, MiB, 0, 4 * MiB); /* a streaming writer's first MiB: no 4 MiB window */
  assert_int_equal(s.set.head->cap, MiB);
  write_at(&s, &F1, MiB, MiB, 0, 4 * MiB);
  assert_int_equal(s.set.head->cap, 2 * MiB);
  write_at(&s, &F2, 8 * MiB, 100, 0, 4 * MiB); /* a small writer still starts at 64 KiB */
  assert_int_equal(s.set.head->next->cap, 64 * 1024);
  s.tight = 0; /* room again: the rest of the window at once */
  write_at(&s, &F1, 2 * MiB, 64 * 1024, 0, 4 * MiB);
  assert_int_equal(s.set.head->cap, 4 * MiB);
  assert_int_equal(s.nout, 0);
  write_at(&s, &F1, 2 * MiB + 64 * 1024, 2 * MiB - 64 * 1024, 0, 4 * MiB);
  assert_int_equal(s.nout, 1); /* the whole window, byte for byte */
  expect_sealed(&s, 0, &F1, 0, 4 * MiB, 0);
  sim_free(&s);
}

static void test_no_memory(void **state) {
  (void)state;
  struct sim s = {0};
  write_at(&s, &F1, 0, 10, 0, MiB);
  s.fail_make = 1;
  char b[10] = {0};
  uint64_t reached;
  assert_int_equal(extents_add(&s.set, &F1, b, 10, 10, MiB, &ops, &s, &reached),
                   0); /* continues: no new one */
  assert_int_equal(extents_add(&s.set, &F2, b, 10, 100, MiB, &ops, &s, &reached), -ENOMEM);
  assert_true(reached == 100);
  assert_int_equal(s.set.n, 1);
  assert_int_equal(s.set.bytes, 20);
  /* a new extent whose buffer cannot be had: it leaves no empty extent behind */
  s.fail_make = 0;
  fail_realloc = 1;
  assert_int_equal(extents_add(&s.set, &F2, b, 10, 100, MiB, &ops, &s, &reached), -ENOMEM);
  assert_int_equal(s.set.n, 1);
  assert_int_equal(s.buried, 1);
  /* a full buffer that cannot grow: what it had stays, nothing is lost or doubled */
  static char big[100 * 1024];
  assert_int_equal(extents_add(&s.set, &F1, big, sizeof big, 20, MiB, &ops, &s, &reached), -ENOMEM);
  assert_true(reached == 20);
  fail_realloc = 0;
  assert_int_equal(s.set.n, 1);
  assert_int_equal(s.set.bytes, 20);
  sim_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_window_end),
      cmocka_unit_test(test_in_order_fills_windows),
      cmocka_unit_test(test_out_of_order_1mib_writes),
      cmocka_unit_test(test_two_opens_not_merged),
      cmocka_unit_test(test_overlapping_rewrite_sends_older_first),
      cmocka_unit_test(test_write_across_a_window_edge),
      cmocka_unit_test(test_at_most_open_max),
      cmocka_unit_test(test_buffer_growth),
      cmocka_unit_test(test_buffer_growth_tight),
      cmocka_unit_test(test_no_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
