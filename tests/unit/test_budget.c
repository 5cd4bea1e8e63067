/* test_budget.c - the mount's memory budget (fs/budget.c): what is only for speed is taken while
 * the total stays under the cap, what is needed always, and the total comes back down. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "budget.h"

#define MiB ((size_t)1 << 20)

static void test_try_within_and_over_cap(void **state) {
  (void)state;
  struct budget b;
  budget_init(&b, 16 * MiB);
  assert_true(budget_room(&b, 16 * MiB));
  assert_int_equal(budget_try(&b, 4 * MiB), 1);
  assert_int_equal(budget_try(&b, 12 * MiB), 1); /* exactly the cap */
  assert_false(budget_room(&b, 1));
  assert_int_equal(budget_try(&b, 1), 0);
  assert_int_equal(atomic_load(&b.refused), 1);
  assert_int_equal(budget_release(&b, 4 * MiB), 12 * MiB);
  assert_int_equal(budget_try(&b, 5 * MiB), 0); /* 12 + 5 > 16 */
  assert_int_equal(budget_try(&b, 4 * MiB), 1);
  assert_int_equal(atomic_load(&b.peak), 16 * MiB);
  assert_int_equal(budget_release(&b, 16 * MiB), 0);
}

/* A request larger than the cap is refused (no wrap-around), and a forced charge may pass the cap:
 * then nothing optional is taken until enough comes back. */
static void test_charge_passes_cap(void **state) {
  (void)state;
  struct budget b;
  budget_init(&b, 8 * MiB);
  assert_int_equal(budget_try(&b, SIZE_MAX), 0);
  assert_int_equal(budget_try(&b, 9 * MiB), 0);
  budget_charge(&b, 6 * MiB);
  budget_charge(&b, 6 * MiB);
  assert_int_equal(atomic_load(&b.used), 12 * MiB);
  assert_int_equal(atomic_load(&b.peak), 12 * MiB);
  assert_int_equal(budget_try(&b, 1), 0);
  assert_false(budget_room(&b, 0)); /* over the cap: not even nothing fits */
  assert_int_equal(budget_release(&b, 6 * MiB), 6 * MiB);
  assert_int_equal(budget_try(&b, 2 * MiB), 1);
  assert_int_equal(budget_try(&b, 1), 0);
  assert_int_equal(budget_release(&b, 8 * MiB), 0);
  assert_int_equal(atomic_load(&b.peak), 12 * MiB);
}

/* Many threads taking and giving back at once never hold more than the cap through budget_try. */
struct worker {
  struct budget *b;
  size_t over; /* times the total seen after a take exceeded the cap */
};

static void *hammer(void *arg) {
  struct worker *w = arg;
  for (int i = 0; i < 200000; i++) {
    size_t n = (size_t)(i % 7 + 1) * MiB;
    if (budget_try(w->b, n)) {
      if (atomic_load(&w->b->used) > w->b->cap) w->over++;
      budget_release(w->b, n);
    }
  }
  return NULL;
}

static void test_concurrent_never_over_cap(void **state) {
  (void)state;
  struct budget b;
  budget_init(&b, 10 * MiB);
  pthread_t t[4];
  struct worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){&b, 0};
    assert_int_equal(pthread_create(&t[i], NULL, hammer, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(w[i].over, 0);
  }
  assert_int_equal(atomic_load(&b.used), 0);
  assert_true(atomic_load(&b.peak) <= 10 * MiB);
  assert_true(atomic_load(&b.peak) >= 7 * MiB);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_try_within_and_over_cap),
      cmocka_unit_test(test_charge_passes_cap),
      cmocka_unit_test(test_concurrent_never_over_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
