/* test_lockrange - byte-range lock records and the reconcile plan (fs/lockrange.h), against a
 * simulated server: the plan is carried out as locks.c does (locking stops at the first refusal,
 * drops still happen; a refused change restores the records and plans again), and after every
 * change what the server holds must be what the records say. The server also checks, at each
 * step, the rule the plan exists for: no handle unlocks bytes that another handle holds (Samba
 * keeps a stale lock then), and no two live handles hold the same bytes. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lockrange.h"

/* The opens: lockrange only compares their addresses. */
struct fs_file {
  int id;
};
static struct fs_file F1 = {1}, F2 = {2}, F3 = {3};

struct other { /* a lock another client holds at the server */
  uint64_t s, e;
  int wr;
};

struct sim {
  struct fs_lock *recs;
  struct piece *pieces;
  struct other others[4];
  int nothers;
  char log[1024]; /* the steps carried out: "L1r0-40 U1w0-100 F2r0-10" (lock, unlock, forget) */
};

static int meet(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2) {
  return s1 < e2 && s2 < e1;
}

static void log_step(struct sim *s, char op, const struct fs_file *fh, int wr, uint64_t a, uint64_t b) {
  size_t n = strlen(s->log);
  snprintf(s->log + n, sizeof s->log - n, "%s%c%d%c%llu-%llu", n ? " " : "", op, fh->id, wr ? 'w' : 'r',
           (unsigned long long)a, (unsigned long long)b);
}

/* The server's answer to a LOCK through fh: refused (-1) over another client's conflicting lock. */
static int srv_lock(struct sim *s, const struct lock_step *st, const struct fs_file *dying) {
  for (int i = 0; i < s->nothers; i++)
    if (meet(s->others[i].s, s->others[i].e, st->start, st->end) && (s->others[i].wr || st->wr)) return -1;
  for (struct piece *p = s->pieces; p; p = p->next) {
    if (!meet(p->start, p->end, st->start, st->end)) continue;
    /* the mount's own locks never make the server refuse it */
    assert_false(p->wr || st->wr);
    /* stacking is on the same handle, or over a handle that is closing (its CLOSE frees it) */
    assert_true(p->holder == st->fh || p->holder == dying);
  }
  struct piece *p = malloc(sizeof *p);
  assert_non_null(p);
  *p = (struct piece){NULL, st->start, st->end, st->wr, st->fh};
  lockrange_piece_link(&s->pieces, p);
  return 0;
}

static int run_plan(struct sim *s, const struct fs_file *dying) {
  struct lock_plan plan;
  assert_int_equal(lockrange_plan(s->recs, s->pieces, dying, &plan), 0);
  int rc = 0;
  for (size_t i = 0; i < plan.n; i++) {
    const struct lock_step *st = &plan.steps[i];
    if (!st->lock) {
      struct piece *p = st->piece;
      assert_int_equal(st->unlock, p->holder != dying);
      if (st->unlock) /* Samba's stale lock: never unlock bytes another handle holds */
        for (struct piece *o = s->pieces; o; o = o->next)
          if (o != p && o->holder != p->holder) assert_false(meet(o->start, o->end, p->start, p->end));
      log_step(s, st->unlock ? 'U' : 'F', p->holder, p->wr, p->start, p->end);
      lockrange_piece_unlink(&s->pieces, p);
      free(p);
    } else if (!rc) {
      rc = srv_lock(s, st, dying);
      if (!rc) log_step(s, 'L', st->fh, st->wr, st->start, st->end);
    }
  }
  lockrange_plan_free(&plan);
  return rc;
}

/* Is every byte in [a, b) covered by the shared records the same as by the shared pieces, every
 * exclusive record a piece of its own (same range and handle), and no two pieces overlapping? */
static void check_consistent(const struct sim *s) {
  uint64_t pts[128];
  int n = 0;
  for (const struct fs_lock *l = s->recs; l; l = l->next)
    pts[n++] = l->start, pts[n++] = l->end;
  for (const struct piece *p = s->pieces; p; p = p->next)
    pts[n++] = p->start, pts[n++] = p->end;
  assert_true(n < 128);
  for (int i = 0; i < n; i++) {
    uint64_t at = pts[i]; /* each elementary interval starts at one of the points */
    uint64_t next = UINT64_MAX;
    for (int j = 0; j < n; j++)
      if (pts[j] > at && pts[j] < next) next = pts[j];
    if (next == UINT64_MAX) continue;
    int rec_sh = 0, piece_sh = 0, npieces = 0;
    for (const struct fs_lock *l = s->recs; l; l = l->next)
      if (!l->wr && l->start <= at && next <= l->end) rec_sh = 1;
    for (const struct piece *p = s->pieces; p; p = p->next)
      if (p->start <= at && next <= p->end) npieces++, piece_sh |= !p->wr;
    assert_int_equal(rec_sh, piece_sh);
    assert_true(npieces <= 1);
  }
  int nwr_rec = 0, nwr_piece = 0;
  for (const struct fs_lock *l = s->recs; l; l = l->next) {
    for (const struct fs_lock *m = l->next; m; m = m->next)
      if (m->owner == l->owner && m->flock == l->flock)
        assert_false(meet(l->start, l->end, m->start, m->end));
    if (!l->wr) continue;
    nwr_rec++;
    int found = 0;
    for (const struct piece *p = s->pieces; p; p = p->next)
      found |= p->wr && p->start == l->start && p->end == l->end && p->holder == l->fh;
    assert_true(found);
  }
  for (const struct piece *p = s->pieces; p; p = p->next)
    nwr_piece += p->wr;
  assert_int_equal(nwr_rec, nwr_piece);
}

/* A change as locks.c's apply() makes it: 1 took a lock, 0 needed none, <0 refused/conflict. */
static int change(struct sim *s, uint64_t owner, struct fs_file *fh, uint64_t start, uint64_t end, int type) {
  struct lock_change ch = {owner, fh, start, end, type, 0, (pid_t)owner};
  struct lock_undo u;
  s->log[0] = 0;
  int rc = lockrange_apply(&s->recs, &ch, &u);
  if (rc <= 0) {
    check_consistent(s);
    return rc;
  }
  rc = run_plan(s, NULL);
  if (rc) {
    lockrange_undo(&s->recs, &u);
    assert_int_equal(run_plan(s, NULL), 0);
  }
  lockrange_commit(&u);
  check_consistent(s);
  return rc ? rc : u.added;
}

/* The open fh is released: its records go, its pieces go with its CLOSE (no UNLOCK). */
static void release(struct sim *s, struct fs_file *fh) {
  s->log[0] = 0;
  struct fs_lock *gone = lockrange_take_file(&s->recs, fh);
  assert_int_equal(run_plan(s, fh), 0);
  for (const struct piece *p = s->pieces; p; p = p->next)
    assert_ptr_not_equal(p->holder, fh);
  lockrange_free(gone);
  check_consistent(s);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The records as sorted text: "o1f1w0-40 o2f2r5-10" (owner, open, shared/exclusive, range). */
static const char *records(const struct sim *s) {
  static char out[512];
  char items[32][40], *ptrs[32];
  int n = 0;
  for (const struct fs_lock *l = s->recs; l && n < 32; l = l->next, n++) {
    snprintf(items[n], sizeof items[n], "o%llu%s%d%c%llu-%llu", (unsigned long long)l->owner,
             l->flock ? "F" : "f", l->fh->id, l->wr ? 'w' : 'r', (unsigned long long)l->start,
             (unsigned long long)l->end);
    ptrs[n] = items[n];
  }
  qsort(ptrs, (size_t)n, sizeof *ptrs, cmp_str);
  out[0] = 0;
  for (int i = 0; i < n; i++)
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", ptrs[i]);
  return out;
}

/* The pieces as sorted text: "f1w0-40 f2r40-50". */
static const char *pieces(const struct sim *s) {
  static char out[512];
  char items[32][40], *ptrs[32];
  int n = 0;
  for (const struct piece *p = s->pieces; p && n < 32; p = p->next, n++) {
    snprintf(items[n], sizeof items[n], "f%d%c%llu-%llu", p->holder->id, p->wr ? 'w' : 'r',
             (unsigned long long)p->start, (unsigned long long)p->end);
    ptrs[n] = items[n];
  }
  qsort(ptrs, (size_t)n, sizeof *ptrs, cmp_str);
  out[0] = 0;
  for (int i = 0; i < n; i++)
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", ptrs[i]);
  return out;
}

static void sim_free(struct sim *s) {
  lockrange_free(s->recs);
  for (struct piece *p = s->pieces, *next; p; p = next)
    next = p->next, free(p);
  memset(s, 0, sizeof *s);
}

/* ---- records ---- */

static void test_split(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_WRLCK), 1);
  assert_string_equal(s.log, "L1w0-100");
  assert_int_equal(change(&s, 1, &F1, 40, 60, F_UNLCK), 0);
  assert_string_equal(records(&s), "o1f1w0-40 o1f1w60-100");
  assert_string_equal(pieces(&s), "f1w0-40 f1w60-100");
  /* an exclusive piece cannot be split at the server: unlocked, then its parts locked again */
  assert_string_equal(s.log, "U1w0-100 L1w0-40 L1w60-100");
  /* a shared lock in the middle of an exclusive one: three records */
  assert_int_equal(change(&s, 1, &F1, 10, 20, F_RDLCK), 1);
  assert_string_equal(records(&s), "o1f1r10-20 o1f1w0-10 o1f1w20-40 o1f1w60-100");
  assert_string_equal(pieces(&s), "f1r10-20 f1w0-10 f1w20-40 f1w60-100");
  sim_free(&s);
}

static void test_covered_needs_nothing(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_RDLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 10, 20, F_RDLCK), 0); /* held so already */
  assert_string_equal(s.log, "");
  assert_int_equal(change(&s, 2, &F2, 200, 300, F_UNLCK), 0); /* nothing to unlock */
  assert_string_equal(records(&s), "o1f1r0-100");
  sim_free(&s);
}

static void test_upgrade(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_RDLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_WRLCK), 1);
  assert_string_equal(records(&s), "o1f1w0-100");
  assert_string_equal(pieces(&s), "f1w0-100");
  assert_string_equal(s.log, "U1r0-100 L1w0-100");
  sim_free(&s);
}

static void test_refused_upgrade_keeps_both(void **state) {
  (void)state;
  struct sim s = {0};
  s.others[s.nothers++] = (struct other){5, 10, 0}; /* another client shares [5, 10) */
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_RDLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_WRLCK), -1);
  /* the shared lock was given up for the upgrade, which the server refused: taken again */
  assert_string_equal(s.log, "U1r0-10 L1r0-10");
  assert_string_equal(records(&s), "o1f1r0-10");
  assert_string_equal(pieces(&s), "f1r0-10");
  /* a refused upgrade of part of a range keeps the rest as it was */
  assert_int_equal(change(&s, 1, &F1, 20, 40, F_WRLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 0, 40, F_WRLCK), -1);
  assert_string_equal(records(&s), "o1f1r0-10 o1f1w20-40");
  assert_string_equal(pieces(&s), "f1r0-10 f1w20-40");
  sim_free(&s);
}

static void test_local_conflicts(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_RDLCK), 1);
  assert_int_equal(change(&s, 2, &F2, 5, 15, F_RDLCK), 1); /* shared with shared: fine */
  assert_int_equal(change(&s, 2, &F2, 5, 15, F_WRLCK), LOCKRANGE_CONFLICT);
  assert_string_equal(s.log, ""); /* decided here: nothing sent */
  assert_int_equal(change(&s, 2, &F2, 10, 15, F_WRLCK), 1);
  /* a flock lock of the same owner number is another owner (another open file) */
  struct lock_change fl = {1, &F1, 0, 5, F_WRLCK, 1, 0};
  struct fs_lock *l = lockrange_conflict(s.recs, &fl);
  assert_non_null(l);
  assert_true(l->owner == 1 && !l->flock);
  struct lock_change posix = {2, &F2, 10, 15, F_WRLCK, 0, 0};
  assert_null(lockrange_conflict(s.recs, &posix)); /* its own lock never conflicts */
  sim_free(&s);
}

static void test_downgrade(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_WRLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_RDLCK), 1);
  assert_string_equal(records(&s), "o1f1r0-100");
  assert_string_equal(pieces(&s), "f1r0-100");
  /* the shared lock cannot stack on an exclusive one: that goes first */
  assert_string_equal(s.log, "U1w0-100 L1r0-100");
  /* now another client may share it */
  s.others[s.nothers++] = (struct other){50, 60, 0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_WRLCK), -1);
  assert_string_equal(records(&s), "o1f1r0-100");
  sim_free(&s);
}

static void test_whole_file(void **state) {
  (void)state;
  struct sim s = {0};
  struct lock_change ch = {7, &F1, 0, LOCK_EOF, F_WRLCK, 1, 0}; /* flock(LOCK_EX) */
  struct lock_undo u;
  assert_int_equal(lockrange_apply(&s.recs, &ch, &u), 1);
  assert_int_equal(run_plan(&s, NULL), 0);
  lockrange_commit(&u);
  assert_string_equal(records(&s), "o7F1w0-9223372036854775807");
  /* a POSIX lock of the same owner number is another owner: refused here */
  assert_int_equal(change(&s, 7, &F1, 100, 200, F_RDLCK), LOCKRANGE_CONFLICT);
  ch.type = F_RDLCK; /* convert to shared (LOCK_SH) */
  assert_int_equal(lockrange_apply(&s.recs, &ch, &u), 1);
  assert_int_equal(run_plan(&s, NULL), 0);
  lockrange_commit(&u);
  assert_string_equal(pieces(&s), "f1r0-9223372036854775807");
  assert_int_equal(change(&s, 8, &F2, 100, 200, F_RDLCK), 1); /* covered by the shared piece */
  assert_string_equal(s.log, "");
  ch.type = F_UNLCK;
  assert_int_equal(lockrange_apply(&s.recs, &ch, &u), 1);
  assert_int_equal(run_plan(&s, NULL), 0);
  lockrange_commit(&u);
  assert_int_equal(u.added, 0);
  /* what owner 8 needs stays locked throughout: stacked on the same handle, then the rest goes */
  assert_string_equal(s.log, "L1r100-200 U1r0-9223372036854775807");
  assert_string_equal(pieces(&s), "f1r100-200");
  check_consistent(&s);
  sim_free(&s);
}

static void test_unlock_in_the_middle(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_RDLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 40, 60, F_UNLCK), 0);
  assert_string_equal(records(&s), "o1f1r0-40 o1f1r60-100");
  assert_string_equal(pieces(&s), "f1r0-40 f1r60-100");
  /* shared parts stack on the handle first, so [0,40) and [60,100) are never unlocked */
  assert_string_equal(s.log, "L1r0-40 L1r60-100 U1r0-100");
  assert_int_equal(change(&s, 1, &F1, 0, 200, F_UNLCK), 0);
  assert_string_equal(records(&s), "");
  assert_string_equal(pieces(&s), "");
  sim_free(&s);
}

/* Two processes' shared locks over the same bytes, one lets go, the other upgrades (fs.locks). */
static void test_two_handles_one_lets_go(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_RDLCK), 1);
  assert_int_equal(change(&s, 2, &F2, 50, 150, F_RDLCK), 1);
  assert_string_equal(s.log, "L2r100-150"); /* [50,100) is locked already, through F1 */
  assert_int_equal(change(&s, 1, &F1, 0, 100, F_UNLCK), 0);
  /* owner 2's [50,100) stays on F1's handle (stacked before F1's piece goes) */
  assert_string_equal(s.log, "L1r50-100 U1r0-100");
  assert_string_equal(pieces(&s), "f1r50-100 f2r100-150");
  assert_int_equal(change(&s, 2, &F2, 50, 150, F_WRLCK), 1);
  assert_string_equal(pieces(&s), "f2w50-150");
  assert_int_equal(change(&s, 2, &F2, 0, 50, F_WRLCK), 1); /* the other's old part, free too */
  assert_string_equal(records(&s), "o2f2w0-50 o2f2w50-150");
  sim_free(&s);
}

/* The open whose handle holds shared bytes for another owner goes away: they move to that
 * owner's handle before the CLOSE, and that owner can still upgrade. */
static void test_two_handles_one_closes(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_RDLCK), 1);
  assert_int_equal(change(&s, 2, &F2, 0, 10, F_RDLCK), 1);
  assert_string_equal(s.log, ""); /* covered by F1's shared piece */
  assert_int_equal(change(&s, 3, &F3, 5, 20, F_RDLCK), 1);
  assert_string_equal(s.log, "L3r10-20");
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_UNLCK), 0); /* close(2): the owner's locks go */
  assert_string_equal(s.log, "");                          /* owners 2 and 3 still need all of it */
  release(&s, &F1);
  /* locked through a live handle first (of the first record over it), then F1's piece is left
   * to its CLOSE */
  assert_string_equal(s.log, "L3r0-10 F1r0-10");
  assert_string_equal(pieces(&s), "f3r0-10 f3r10-20");
  assert_int_equal(change(&s, 2, &F2, 0, 10, F_WRLCK), LOCKRANGE_CONFLICT); /* owner 3 shares [5,10) */
  assert_int_equal(change(&s, 3, &F3, 0, 100, F_UNLCK), 0);
  assert_int_equal(change(&s, 2, &F2, 0, 10, F_WRLCK), 1);
  assert_string_equal(pieces(&s), "f2w0-10");
  release(&s, &F2);
  assert_string_equal(s.log, "F2w0-10");
  assert_string_equal(pieces(&s), "");
  assert_false(lockrange_file_holds(s.recs, s.pieces, &F2));
  sim_free(&s);
}

/* fs.locks: the parent's second open holds shared [0,10), the child shares them through its own;
 * the parent closes that open: the bytes stay locked (for client 2) through the child's; the
 * child upgrades. */
static void test_close_moves_shared_bytes(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_RDLCK), 1);
  assert_int_equal(change(&s, 2, &F2, 0, 10, F_RDLCK), 1);
  assert_int_equal(change(&s, 1, &F1, 0, LOCK_EOF, F_UNLCK), 0); /* the close's FLUSH */
  assert_string_equal(s.log, "");
  release(&s, &F1);
  assert_string_equal(s.log, "L2r0-10 F1r0-10");
  assert_string_equal(pieces(&s), "f2r0-10");
  assert_int_equal(change(&s, 2, &F2, 0, 10, F_WRLCK), 1);
  assert_string_equal(s.log, "U2r0-10 L2w0-10");
  sim_free(&s);
}

static void test_owner_and_file_holds(void **state) {
  (void)state;
  struct sim s = {0};
  assert_int_equal(change(&s, 1, &F1, 0, 10, F_RDLCK), 1);
  assert_int_equal(change(&s, 2, &F1, 20, 30, F_RDLCK), 1);
  struct lock_change fl = {9, &F2, 50, 60, F_WRLCK, 1, 0}; /* flock(LOCK_EX) of owner 9 */
  struct lock_undo u;
  assert_int_equal(lockrange_apply(&s.recs, &fl, &u), 1);
  lockrange_commit(&u);
  assert_true(lockrange_owner_holds(s.recs, 1));
  assert_true(lockrange_owner_holds(s.recs, 2));
  assert_false(lockrange_owner_holds(s.recs, 3));
  assert_false(lockrange_owner_holds(s.recs, 9)); /* a flock lock is not the owner's POSIX lock */
  assert_true(lockrange_file_holds(s.recs, s.pieces, &F1));
  assert_true(lockrange_file_holds(s.recs, NULL, &F1));   /* by its records alone */
  assert_true(lockrange_file_holds(NULL, s.pieces, &F1)); /* by its pieces alone */
  assert_false(lockrange_file_holds(s.recs, s.pieces, &F3));
  lockrange_free(lockrange_take_file(&s.recs, &F2));
  struct fs_lock *gone = lockrange_take_file(&s.recs, &F1);
  assert_null(s.recs);
  assert_non_null(gone);
  assert_non_null(gone->next);
  assert_true(lockrange_file_holds(s.recs, s.pieces, &F1)); /* its pieces, until the plan */
  lockrange_free(gone);
  sim_free(&s);
}

/* An exclusive record is a piece of its own through the handle it was taken with: one of the
 * same range through another handle does not do (the server refuses other handles' I/O there). */
static void test_plan_exclusive_through_its_handle(void **state) {
  (void)state;
  struct sim s = {0};
  struct fs_lock *l = malloc(sizeof *l);
  struct piece *p = malloc(sizeof *p);
  assert_true(l && p);
  *l = (struct fs_lock){NULL, 1, &F2, 0, 10, 1, 0, 1};
  *p = (struct piece){NULL, 0, 10, 1, &F1};
  s.recs = l;
  s.pieces = p;
  assert_int_equal(run_plan(&s, NULL), 0);
  assert_string_equal(s.log, "U1w0-10 L2w0-10");
  assert_string_equal(pieces(&s), "f2w0-10");
  s.log[0] = 0;
  assert_int_equal(run_plan(&s, NULL), 0); /* in line: nothing to do */
  assert_string_equal(s.log, "");
  sim_free(&s);
}

static void test_gaps(void **state) {
  (void)state;
  struct piece b = {NULL, 30, 40, 1, &F2}, a = {&b, 10, 20, 0, &F1};
  uint64_t g[4][2];
  assert_int_equal(lockrange_gaps(&a, 0, 50, g, 4), 3);
  assert_true(g[0][0] == 0 && g[0][1] == 10);
  assert_true(g[1][0] == 20 && g[1][1] == 30);
  assert_true(g[2][0] == 40 && g[2][1] == 50);
  assert_int_equal(lockrange_gaps(&a, 12, 35, g, 4), 1);
  assert_true(g[0][0] == 20 && g[0][1] == 30);
  assert_int_equal(lockrange_gaps(&a, 10, 20, g, 4), 0);
  assert_int_equal(lockrange_gaps(&a, 0, 50, g, 2), 2);
  assert_int_equal(lockrange_gaps(NULL, 5, 6, g, 4), 1);
  assert_true(g[0][0] == 5 && g[0][1] == 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_covered_needs_nothing),
      cmocka_unit_test(test_upgrade),
      cmocka_unit_test(test_refused_upgrade_keeps_both),
      cmocka_unit_test(test_local_conflicts),
      cmocka_unit_test(test_downgrade),
      cmocka_unit_test(test_whole_file),
      cmocka_unit_test(test_unlock_in_the_middle),
      cmocka_unit_test(test_two_handles_one_lets_go),
      cmocka_unit_test(test_two_handles_one_closes),
      cmocka_unit_test(test_close_moves_shared_bytes),
      cmocka_unit_test(test_owner_and_file_holds),
      cmocka_unit_test(test_plan_exclusive_through_its_handle),
      cmocka_unit_test(test_gaps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
