/* lockrange.c - byte-range lock records and the reconcile plan (lockrange.h). Pure: the caller
 * holds the locks and carries the plan out (locks.c). */
#include "lockrange.h"

#include <fcntl.h>
#include <stdlib.h>

static int overlap(const struct fs_lock *l, uint64_t start, uint64_t end) {
  return l->start < end && start < l->end;
}

struct fs_lock *lockrange_conflict(struct fs_lock *list, const struct lock_change *ch) {
  for (struct fs_lock *l = list; l; l = l->next)
    if (!(l->owner == ch->owner && l->flock == ch->flock) && overlap(l, ch->start, ch->end) &&
        (l->wr || ch->type == F_WRLCK))
      return l;
  return NULL;
}

static struct fs_lock *new_rec(const struct fs_lock *from, uint64_t start, uint64_t end) {
  struct fs_lock *l = malloc(sizeof *l);
  if (l) {
    *l = *from;
    l->next = NULL;
    l->start = start;
    l->end = end;
  }
  return l;
}

void lockrange_free(struct fs_lock *l) {
  while (l) {
    struct fs_lock *next = l->next;
    free(l);
    l = next;
  }
}

/* Push every record of from onto the head of *list (so in reverse order). */
static size_t push_all(struct fs_lock **list, struct fs_lock *from) {
  size_t n = 0;
  for (struct fs_lock *l = from, *next; l; l = next, n++)
    next = l->next, l->next = *list, *list = l;
  return n;
}

int lockrange_apply(struct fs_lock **list, const struct lock_change *ch, struct lock_undo *u) {
  *u = (struct lock_undo){NULL, 0, 0};
  if (ch->type != F_UNLCK && lockrange_conflict(*list, ch)) return LOCKRANGE_CONFLICT;
  /* The owner's records that ch touches, taken out of the list; and whether ch changes anything. */
  struct fs_lock *touched = NULL, **pp = list;
  int covered = 0;
  while (*pp) {
    struct fs_lock *l = *pp;
    if (l->owner == ch->owner && l->flock == ch->flock && overlap(l, ch->start, ch->end)) {
      if (ch->type != F_UNLCK && l->wr == (ch->type == F_WRLCK) && l->start <= ch->start && ch->end <= l->end)
        covered = 1; /* already held so: nothing to do */
      *pp = l->next;
      l->next = touched;
      touched = l;
    } else {
      pp = &l->next;
    }
  }
  if (covered || (!touched && ch->type == F_UNLCK)) {
    *pp = touched; /* back, at the end */
    return 0;
  }
  /* The new records: the touched ones' parts outside ch's range, and ch's. */
  struct fs_lock *fresh = NULL, *add = NULL;
  int rc = 0;
  for (struct fs_lock *l = touched; l && !rc; l = l->next) {
    if (l->start < ch->start) {
      struct fs_lock *p = new_rec(l, l->start, ch->start);
      if (!p)
        rc = LOCKRANGE_ENOMEM;
      else
        p->next = fresh, fresh = p;
    }
    if (!rc && l->end > ch->end) {
      struct fs_lock *p = new_rec(l, ch->end, l->end);
      if (!p)
        rc = LOCKRANGE_ENOMEM;
      else
        p->next = fresh, fresh = p;
    }
  }
  if (!rc && ch->type != F_UNLCK) {
    struct fs_lock proto = {NULL,    ch->owner,           ch->fh,    ch->start,
                            ch->end, ch->type == F_WRLCK, ch->flock, ch->pid};
    if (!(add = new_rec(&proto, ch->start, ch->end)))
      rc = LOCKRANGE_ENOMEM;
    else
      add->next = fresh, fresh = add;
  }
  if (rc) {
    lockrange_free(fresh);
    push_all(list, touched);
    return rc;
  }
  u->nfresh = push_all(list, fresh);
  u->old = touched;
  u->added = add != NULL;
  return 1;
}

void lockrange_undo(struct fs_lock **list, struct lock_undo *u) {
  for (size_t i = 0; i < u->nfresh; i++) { /* the fresh records are the first nfresh of the list */
    struct fs_lock *l = *list;
    *list = l->next;
    free(l);
  }
  push_all(list, u->old);
  u->old = NULL;
  u->nfresh = 0;
}

void lockrange_commit(struct lock_undo *u) {
  lockrange_free(u->old);
  u->old = NULL;
}

struct fs_lock *lockrange_take_file(struct fs_lock **list, const struct fs_file *fh) {
  struct fs_lock *gone = NULL;
  for (struct fs_lock **pp = list; *pp;) {
    struct fs_lock *l = *pp;
    if (l->fh == fh) {
      *pp = l->next;
      l->next = gone;
      gone = l;
    } else {
      pp = &l->next;
    }
  }
  return gone;
}

int lockrange_owner_holds(const struct fs_lock *list, uint64_t owner) {
  for (const struct fs_lock *l = list; l; l = l->next)
    if (!l->flock && l->owner == owner) return 1;
  return 0;
}

int lockrange_file_holds(const struct fs_lock *list, const struct piece *pieces, const struct fs_file *fh) {
  for (const struct fs_lock *l = list; l; l = l->next)
    if (l->fh == fh) return 1;
  for (const struct piece *p = pieces; p; p = p->next)
    if (p->holder == fh) return 1;
  return 0;
}

void lockrange_piece_link(struct piece **pieces, struct piece *p) {
  p->next = *pieces;
  *pieces = p;
}

void lockrange_piece_unlink(struct piece **pieces, struct piece *p) {
  for (struct piece **pp = pieces; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      return;
    }
}

/* ---- intervals ---- */
struct iv {
  uint64_t s, e;
  int wr;
  struct fs_file *fh;
};

static int iv_cmp(const void *a, const void *b) {
  const struct iv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}
/* Sort and join overlapping or touching intervals; returns the new count. */
static size_t iv_merge(struct iv *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, iv_cmp);
  size_t k = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].s <= v[k].e) {
      if (v[i].e > v[k].e) v[k].e = v[i].e;
    } else {
      v[++k] = v[i];
    }
  }
  return k + 1;
}
/* Is [s, e) inside the merged set v? */
static int iv_inside(const struct iv *v, size_t n, uint64_t s, uint64_t e) {
  for (size_t i = 0; i < n; i++)
    if (v[i].s <= s && e <= v[i].e) return 1;
  return 0;
}
/* a minus b (both merged) into out, which has room for na + nb. */
static size_t iv_minus(const struct iv *a, size_t na, const struct iv *b, size_t nb, struct iv *out) {
  size_t k = 0;
  for (size_t i = 0; i < na; i++) {
    uint64_t at = a[i].s;
    for (size_t j = 0; j < nb && at < a[i].e; j++) {
      if (b[j].e <= at || b[j].s >= a[i].e) continue;
      if (b[j].s > at) out[k++] = (struct iv){at, b[j].s, 0, NULL};
      at = b[j].e;
    }
    if (at < a[i].e) out[k++] = (struct iv){at, a[i].e, 0, NULL};
  }
  return k;
}

static int ranges_meet(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2) {
  return s1 < e2 && s2 < e1;
}

int lockrange_plan(const struct fs_lock *recs, struct piece *pieces, const struct fs_file *dying,
                   struct lock_plan *out) {
  *out = (struct lock_plan){NULL, 0};
  size_t nr = 0, np = 0;
  for (const struct fs_lock *l = recs; l; l = l->next)
    nr++;
  for (struct piece *p = pieces; p; p = p->next)
    np++;
  struct iv *rec = calloc(nr + 1, sizeof *rec), *cov = calloc(nr + 1, sizeof *cov);
  struct iv *keptr = calloc(np + 1, sizeof *keptr), *need = calloc(nr + np + 1, sizeof *need);
  struct piece **ps = calloc(np + 1, sizeof *ps);
  int *keep = calloc(np + 1, sizeof *keep), *matched = calloc(nr + 1, sizeof *matched);
  /* at most: every needed shared piece, every piece dropped, every exclusive record */
  struct lock_step *steps = calloc(nr + np + np + nr + 1, sizeof *steps);
  int rc = 0;
  if (!rec || !cov || !keptr || !need || !ps || !keep || !matched || !steps) {
    rc = LOCKRANGE_ENOMEM;
    free(steps);
    goto out;
  }
  size_t ncov = 0, k = 0;
  for (const struct fs_lock *l = recs; l; l = l->next, k++) {
    rec[k] = (struct iv){l->start, l->end, l->wr, l->fh};
    if (!l->wr) cov[ncov++] = rec[k];
  }
  k = 0;
  for (struct piece *p = pieces; p; p = p->next)
    ps[k++] = p;
  ncov = iv_merge(cov, ncov);

  /* What stays: an exclusive piece that is exactly an exclusive record (same handle), a shared
   * piece inside the shared records. */
  size_t nkept = 0;
  for (size_t i = 0; i < np; i++) {
    struct piece *p = ps[i];
    if (p->holder == dying) continue;
    if (p->wr) {
      for (size_t j = 0; j < nr && !keep[i]; j++)
        if (rec[j].wr && !matched[j] && rec[j].s == p->start && rec[j].e == p->end && rec[j].fh == p->holder)
          keep[i] = matched[j] = 1;
    } else if (iv_inside(cov, ncov, p->start, p->end)) {
      keep[i] = 1;
      keptr[nkept++] = (struct iv){p->start, p->end, 0, NULL};
    }
  }
  nkept = iv_merge(keptr, nkept);
  size_t nneed = iv_minus(cov, ncov, keptr, nkept, need); /* shared, not yet held */

  /* Holder of a new shared piece: the holder of a shared piece being given up over it (the new
   * one stacks on the same handle before the old goes, so the bytes stay locked throughout),
   * else the open of a record in it. */
  for (size_t i = 0; i < nneed; i++) {
    for (size_t j = 0; j < np && !need[i].fh; j++)
      if (!keep[j] && !ps[j]->wr && ps[j]->holder != dying &&
          ranges_meet(ps[j]->start, ps[j]->end, need[i].s, need[i].e))
        need[i].fh = ps[j]->holder;
    for (size_t j = 0; j < nr && !need[i].fh; j++)
      if (!rec[j].wr && rec[j].fh != dying && ranges_meet(rec[j].s, rec[j].e, need[i].s, need[i].e))
        need[i].fh = rec[j].fh;
  }
  size_t n = 0;
  /* 1. shared pieces that overlap no piece of another handle (nor an exclusive one) being given
   * up: before anything goes */
  for (size_t i = 0; i < nneed; i++) {
    int early = 1;
    for (size_t j = 0; j < np; j++)
      if (!keep[j] && ps[j]->holder != dying && (ps[j]->wr || ps[j]->holder != need[i].fh) &&
          ranges_meet(ps[j]->start, ps[j]->end, need[i].s, need[i].e))
        early = 0;
    if (early && need[i].fh) {
      steps[n++] = (struct lock_step){1, 0, need[i].s, need[i].e, need[i].fh, NULL, 0};
      need[i].fh = NULL; /* done */
    }
  }
  /* 2. what goes */
  for (size_t i = 0; i < np; i++)
    if (!keep[i])
      steps[n++] = (struct lock_step){
          0, ps[i]->wr, ps[i]->start, ps[i]->end, ps[i]->holder, ps[i], ps[i]->holder != dying};
  /* 3. the rest: shared pieces that had to wait, exclusive records */
  for (size_t i = 0; i < nneed; i++)
    if (need[i].fh) steps[n++] = (struct lock_step){1, 0, need[i].s, need[i].e, need[i].fh, NULL, 0};
  for (size_t j = 0; j < nr; j++)
    if (rec[j].wr && !matched[j])
      steps[n++] = (struct lock_step){1, 1, rec[j].s, rec[j].e, rec[j].fh, NULL, 0};
  out->steps = steps;
  out->n = n;
out:
  free(rec), free(cov), free(keptr), free(need), free(ps), free(keep), free(matched);
  return rc;
}

void lockrange_plan_free(struct lock_plan *plan) {
  free(plan->steps);
  plan->steps = NULL;
  plan->n = 0;
}

int lockrange_gaps(const struct piece *pieces, uint64_t start, uint64_t end, uint64_t (*gaps)[2], int max) {
  int n = 0;
  uint64_t at = start;
  while (at < end && n < max) {
    const struct piece *first = NULL; /* the next piece from `at` on */
    for (const struct piece *o = pieces; o; o = o->next)
      if (o->end > at && o->start < end && (!first || o->start < first->start)) first = o;
    uint64_t gap_end = !first ? end : first->start > at ? first->start : at;
    if (gap_end > at) gaps[n][0] = at, gaps[n][1] = gap_end, n++;
    at = first ? first->end : end;
  }
  return n;
}
