/* budget.c - the mount's memory budget (see budget.h). */
#include "budget.h"

void budget_init(struct budget *b, size_t cap) {
  b->cap = cap;
  atomic_init(&b->used, 0);
  atomic_init(&b->peak, 0);
  atomic_init(&b->refused, 0);
}

static void note_peak(struct budget *b, size_t now) {
  size_t p = atomic_load_explicit(&b->peak, memory_order_relaxed);
  while (now > p && !atomic_compare_exchange_weak_explicit(&b->peak, &p, now, memory_order_relaxed,
                                                           memory_order_relaxed))
    ;
}

int budget_try(struct budget *b, size_t n) {
  size_t u = atomic_load_explicit(&b->used, memory_order_relaxed);
  do {
    if (n > b->cap || u > b->cap - n) {
      atomic_fetch_add_explicit(&b->refused, 1, memory_order_relaxed);
      return 0;
    }
  } while (!atomic_compare_exchange_weak_explicit(&b->used, &u, u + n, memory_order_relaxed,
                                                  memory_order_relaxed));
  note_peak(b, u + n);
  return 1;
}

void budget_charge(struct budget *b, size_t n) {
  size_t u = atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed) + n;
  note_peak(b, u);
}

size_t budget_release(struct budget *b, size_t n) {
  return atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed) - n;
}

int budget_room(const struct budget *b, size_t n) {
  size_t u = atomic_load_explicit(&b->used, memory_order_relaxed);
  return n <= b->cap && u <= b->cap - n;
}
