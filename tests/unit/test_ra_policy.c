/* test_ra_policy - read-ahead's sequential-read detection and window sizing (fs/ra_policy.h),
 * against a simulated stream that carries each decision out as readahead.c does (every READ
 * completes at once): sequential runs, reversed and random reads, a sequential run after a seek,
 * the kernel's out-of-order first reads, direct I/O without a lease. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ra_policy.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

struct sim {
  struct ra_input in; /* next_off, started, window, stream, eof kept between reads */
  uint64_t file_size;
  int issued; /* READs sent ahead */
};

static void sim_init(struct sim *s, int direct, int coherent, uint64_t file_size) {
  *s = (struct sim){0};
  s->in.window = 1;
  s->in.eof = UINT64_MAX;
  s->in.direct = direct;
  s->in.coherent = coherent;
  s->in.size_hint = file_size;
  s->in.rsize = MiB;
  s->in.near = 3 * MiB;
  s->in.max_window = 16;
  s->file_size = file_size;
}

/* What the buffers say of the end of file: a completed short READ in the stream. */
static void known_eof(struct sim *s) {
  s->in.eof = s->in.end > s->file_size && s->in.start < s->in.end
                  ? (s->in.start > s->file_size ? s->in.start : s->file_size)
                  : UINT64_MAX;
}

static enum ra_action sim_read(struct sim *s, uint64_t off, size_t size, struct ra_decision *out) {
  struct ra_decision d;
  s->in.off = off;
  s->in.size = size;
  ra_decide(&s->in, &d);
  assert_true(d.window >= 1 && d.window <= s->in.max_window);
  if (d.drop_all) s->in.start = s->in.end = 0;
  s->in.next_off = d.next_off;
  while (s->in.start < s->in.end && s->in.start + MiB <= d.consume_to)
    s->in.start += MiB;
  if (s->in.start == s->in.end) s->in.start = s->in.end = 0;
  s->in.window = d.window;
  known_eof(s);
  if (d.action == RA_NEW_STREAM) {
    s->in.start = s->in.end = 0;
    s->in.started = 1;
    known_eof(s);
  }
  if (d.action != RA_DIRECT) {
    uint64_t next = d.issue_from;
    if (s->in.start == s->in.end) s->in.start = s->in.end = next;
    assert_true(next == s->in.end); /* the stream stays contiguous */
    uint64_t limit = off + size > s->in.size_hint ? off + size : s->in.size_hint;
    assert_true(d.issue_to <= off + size + (uint64_t)d.window * MiB && d.issue_to <= limit);
    while (next < d.issue_to && next < s->in.eof) {
      next += MiB;
      s->issued++;
    }
    s->in.end = next;
    known_eof(s);
    if (off < s->file_size) assert_true(s->in.start <= off && off < s->in.end); /* the stream answers it */
  }
  if (out) *out = d;
  return d.action;
}

static void test_sequential_run_grows_the_window(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 0, 1, 64 * MiB);
  struct ra_decision d;
  assert_int_equal(sim_read(&s, 0, 128 * KiB, &d), RA_NEW_STREAM);
  assert_true(d.sequential);
  assert_int_equal(s.issued, 2); /* the reader's buffer and a window of one */
  unsigned last = 1;
  int grew = 0;
  for (uint64_t off = 128 * KiB; off < 64 * MiB; off += 128 * KiB) {
    assert_int_equal(sim_read(&s, off, 128 * KiB, &d), RA_FROM_STREAM);
    assert_true(d.sequential);
    assert_true(d.window == last || d.window == 2 * last || d.window == 16);
    grew += d.window > last;
    last = d.window;
    /* never more than the window ahead of the reader */
    assert_true(s.in.end <= off + 128 * KiB + (uint64_t)d.window * MiB + MiB);
  }
  assert_int_equal(last, 16);
  assert_int_equal(grew, 4);      /* 1 -> 2 -> 4 -> 8 -> 16, then capped */
  assert_int_equal(s.issued, 64); /* each buffer read once, none past the end of the file */
  /* a limit that is no power of two: 8 -> 12, not 16 */
  sim_init(&s, 0, 1, 64 * MiB);
  s.in.max_window = 12;
  for (uint64_t off = 0; off < 64 * MiB; off += 128 * KiB)
    sim_read(&s, off, 128 * KiB, &d);
  assert_int_equal(d.window, 12);
}

/* A page-cache reader going back before what the stream still holds: to the server, and the
 * stream stays as it was for the reader's next sequential read. */
static void test_going_back_before_the_stream(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 0, 1, 1024ull * MiB);
  for (uint64_t off = 0; off < 20 * MiB; off += 128 * KiB)
    sim_read(&s, off, 128 * KiB, NULL);
  uint64_t start = s.in.start, end = s.in.end;
  assert_true(start > 0);
  struct ra_decision d;
  assert_int_equal(sim_read(&s, start - MiB, 128 * KiB, &d), RA_DIRECT);
  assert_false(d.sequential);
  assert_true(s.in.start == start && s.in.end == end);
  assert_int_equal(sim_read(&s, 20 * MiB, 128 * KiB, &d), RA_FROM_STREAM);
  assert_true(d.sequential);
}

static void test_reversed_reads_stay_direct(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 1, 1, 64 * MiB); /* direct I/O: the reader's own order reaches us */
  for (uint64_t off = 63 * MiB;; off -= MiB) {
    struct ra_decision d;
    assert_int_equal(sim_read(&s, off, MiB, &d), RA_DIRECT);
    assert_false(d.sequential);
    assert_true(d.next_off == 64 * MiB); /* where the highest read ended */
    if (!off) break;
  }
  assert_int_equal(s.issued, 0);
  assert_int_equal(s.in.window, 1);
  assert_int_equal(s.in.started, 0);
  /* page cache: backwards too, until the reads come near the start, where the kernel's own
   * first reads would arrive out of order: there a stream starts at 0 */
  sim_init(&s, 0, 1, 64 * MiB);
  for (uint64_t off = 63 * MiB; off >= 3 * MiB; off -= MiB)
    assert_int_equal(sim_read(&s, off, MiB, NULL), RA_DIRECT);
  assert_int_equal(s.issued, 0);
  assert_int_equal(sim_read(&s, 2 * MiB, MiB, NULL), RA_NEW_STREAM);
  assert_true(s.in.start == 0);
  assert_int_equal(sim_read(&s, MiB, MiB, NULL), RA_FROM_STREAM);
  assert_int_equal(sim_read(&s, 0, MiB, NULL), RA_FROM_STREAM);
}

static void test_random_reads_stay_direct(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 0, 1, 1024ull * MiB);
  uint64_t x = 12345;
  for (int i = 0; i < 1000; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t off = 16 * MiB + ((x >> 20) % (1000 * MiB)) / 4096 * 4096;
    struct ra_decision d;
    assert_int_equal(sim_read(&s, off, 4 * KiB, &d), RA_DIRECT);
    assert_false(d.sequential);
  }
  assert_int_equal(s.issued, 0);
  assert_int_equal(s.in.started, 0);
  assert_int_equal(s.in.window, 1);
}

static void test_sequential_run_after_a_seek(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 0, 1, 1024ull * MiB);
  for (uint64_t off = 0; off < 8 * MiB; off += 128 * KiB)
    assert_int_equal(sim_read(&s, off, 128 * KiB, NULL) == RA_DIRECT, 0);
  assert_true(s.in.window > 1);
  struct ra_decision d;
  assert_int_equal(sim_read(&s, 100 * MiB, 128 * KiB, &d), RA_DIRECT); /* the seek: one read elsewhere */
  assert_false(d.sequential);
  assert_true(s.in.end <= 8 * MiB + 16 * MiB); /* the old stream is left alone */
  assert_int_equal(sim_read(&s, 100 * MiB + 128 * KiB, 128 * KiB, &d), RA_NEW_STREAM); /* it continues */
  assert_true(d.sequential);
  assert_int_equal(d.window, 1);
  assert_true(d.issue_from == 100 * MiB + 128 * KiB);
  for (uint64_t off = 100 * MiB + 256 * KiB; off < 120 * MiB; off += 128 * KiB)
    assert_int_equal(sim_read(&s, off, 128 * KiB, &d), RA_FROM_STREAM);
  assert_int_equal(d.window, 16);
}

static void test_near_the_stream_end(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 1, 1, 1024ull * MiB);
  assert_int_equal(sim_read(&s, 0, 128 * KiB, NULL), RA_NEW_STREAM);
  assert_true(s.in.end == 2 * MiB);
  struct ra_decision d;
  /* a little past the stream's end (the kernel's read-ahead ahead of ours): extended up to it */
  assert_int_equal(sim_read(&s, 4 * MiB, 128 * KiB, &d), RA_FROM_STREAM);
  assert_true(d.sequential && d.issue_from == 2 * MiB);
  /* `near` or more past it: elsewhere */
  uint64_t end = s.in.end;
  assert_int_equal(sim_read(&s, end + 3 * MiB, 128 * KiB, &d), RA_DIRECT);
  assert_false(d.sequential);
}

static void test_kernel_first_reads_out_of_order(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 0, 1, 64 * MiB);
  struct ra_decision d;
  assert_int_equal(sim_read(&s, 256 * KiB, 128 * KiB, &d), RA_NEW_STREAM);
  assert_true(d.sequential && d.issue_from == 0); /* from the start of the file */
  assert_int_equal(sim_read(&s, 0, 128 * KiB, NULL), RA_FROM_STREAM);
  assert_int_equal(sim_read(&s, 128 * KiB, 128 * KiB, NULL), RA_FROM_STREAM);
  /* not with direct I/O: there the reader's order is the order */
  sim_init(&s, 1, 1, 64 * MiB);
  assert_int_equal(sim_read(&s, 256 * KiB, 128 * KiB, NULL), RA_DIRECT);
}

static void test_direct_io_without_lease(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 1, 0, 64 * MiB);
  struct ra_decision d;
  assert_int_equal(sim_read(&s, 0, MiB, &d), RA_NEW_STREAM);
  assert_int_equal(sim_read(&s, MiB, MiB, &d), RA_FROM_STREAM);
  assert_false(d.drop_all);
  /* going back: another client may have changed the bytes; the server is asked again */
  assert_int_equal(sim_read(&s, 0, MiB, &d), RA_DIRECT);
  assert_true(d.drop_all);
  assert_int_equal(s.in.end, 0);
  /* with a read lease the buffers stay */
  sim_init(&s, 1, 1, 64 * MiB);
  sim_read(&s, 0, MiB, NULL);
  sim_read(&s, MiB, MiB, NULL);
  assert_int_equal(sim_read(&s, 0, MiB, &d), RA_FROM_STREAM);
  assert_false(d.drop_all);
  /* at the known end of file, without a lease: does the file grow? ask again */
  sim_init(&s, 1, 0, MiB - 100);
  sim_read(&s, 0, MiB, NULL);
  assert_true(s.in.eof == MiB - 100); /* the READ came back short */
  assert_int_equal(sim_read(&s, MiB, MiB, &d), RA_NEW_STREAM);
  assert_true(d.drop_all);
  assert_true(d.sequential);
}

static void test_size_hint_bounds_read_ahead(void **state) {
  (void)state;
  struct sim s;
  sim_init(&s, 0, 1, 2 * MiB + 10); /* the file as the mount knows it */
  s.file_size = 100 * MiB;          /* ... though the server's is larger (the buffers say so) */
  for (uint64_t off = 0; off < 6 * MiB; off += 128 * KiB)
    sim_read(&s, off, 128 * KiB, NULL);
  /* past the size it knows, only what the reader asks for */
  assert_true(s.in.end == 6 * MiB);
  assert_int_equal(s.issued, 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sequential_run_grows_the_window),
      cmocka_unit_test(test_going_back_before_the_stream),
      cmocka_unit_test(test_reversed_reads_stay_direct),
      cmocka_unit_test(test_random_reads_stay_direct),
      cmocka_unit_test(test_sequential_run_after_a_seek),
      cmocka_unit_test(test_near_the_stream_end),
      cmocka_unit_test(test_kernel_first_reads_out_of_order),
      cmocka_unit_test(test_direct_io_without_lease),
      cmocka_unit_test(test_size_hint_bounds_read_ahead),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
