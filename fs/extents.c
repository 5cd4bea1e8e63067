/* extents.c - placement and merging of write-back extents (extents.h). Pure: the caller holds
 * the lock and sends what is sealed (writeback.c). */
#include "extents.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t extent_window_end(uint64_t off, size_t wsize) {
  return (off / wsize + 1) * wsize;
}

/* Room for n more bytes. A streaming writer (a first write of 64 KiB or more) gets the rest of
 * the extent's window at once, so its bytes are copied once; a small writer starts at 64 KiB, then
 * 256 KiB, then the window, so that small files do not cost a wsize allocation each and the
 * re-copying on growth stays under a tenth of the data. While memory is tight (ops->tight), only
 * what comes: the caller then seals extents long before their window is full. */
static int reserve(struct extent *e, size_t n, size_t wsize, const struct extent_ops *ops, void *ctx) {
  if (e->len + n <= e->cap) return 0;
  size_t window = (size_t)(extent_window_end(e->off, wsize) - e->off);
  size_t cap = e->len + n;
  if (ops->tight && ops->tight(ctx))
    cap = cap < 64 * 1024 ? 64 * 1024 : cap;
  else if (!e->cap && n >= 64 * 1024)
    cap = window;
  else if (cap <= 64 * 1024)
    cap = 64 * 1024;
  else if (cap <= 256 * 1024)
    cap = 256 * 1024;
  else
    cap = window;
  if (cap > window) cap = window;
  uint8_t *b = realloc(e->buf, cap);
  if (!b) return -ENOMEM;
  size_t more = cap - e->cap;
  e->buf = b;
  e->cap = cap;
  if (ops->grew) ops->grew(ctx, e, more);
  return 0;
}

/* Take e out of the set. */
static void unlink_extent(struct extent_set *set, struct extent *e) {
  for (struct extent **pp = &set->head; *pp; pp = &(*pp)->next)
    if (*pp == e) {
      *pp = e->next;
      break;
    }
  e->next = NULL;
  set->n--;
  set->bytes -= e->len;
}

static void seal(struct extent_set *set, struct extent *e, const struct extent_ops *ops, void *ctx) {
  unlink_extent(set, e);
  ops->seal(ctx, e);
}

/* An extent whose bytes are all elsewhere (or none) leaves the set. */
static void bury(struct extent_set *set, struct extent *e, const struct extent_ops *ops, void *ctx) {
  unlink_extent(set, e);
  ops->bury(ctx, e);
}

/* Whole window: ready for the wire. */
static int is_full(const struct extent *e, size_t wsize) {
  return e->off % wsize == 0 && e->len == wsize;
}

/* Reached the end of its window: nothing more can be appended. */
static int at_window_end(const struct extent *e, size_t wsize) {
  return e->off + e->len == extent_window_end(e->off, wsize);
}

/* e grew up to the start of the next extent of the same open (in its window): take that one's
 * bytes, so out-of-order writes still make whole extents. */
static int merge_next(struct extent_set *set, struct extent *e, size_t wsize, const struct extent_ops *ops,
                      void *ctx) {
  struct extent *g = e->next;
  while (g && g->off == e->off + e->len && !at_window_end(e, wsize) && g->fh == e->fh) {
    size_t room = (size_t)(extent_window_end(e->off, wsize) - (e->off + e->len));
    size_t m = room < g->len ? room : g->len;
    if (reserve(e, m, wsize, ops, ctx)) return -ENOMEM;
    memcpy(e->buf + e->len, g->buf, m);
    e->len += m;
    memmove(g->buf, g->buf + m, g->len - m);
    g->off += m;
    g->len -= m;
    if (!g->len) bury(set, g, ops, ctx); /* its bytes moved to e: set->bytes is unchanged */
    g = e->next;
  }
  return 0;
}

int extents_add(struct extent_set *set, struct fs_file *fh, const void *data, size_t size, uint64_t off,
                size_t wsize, const struct extent_ops *ops, void *ctx, uint64_t *reached) {
  const char *buf = data;
  *reached = off;
  while (size) {
    struct extent *c = NULL;
    for (struct extent *e = set->head; e; e = e->next)
      if (e->off + e->len == off && !at_window_end(e, wsize) && e->fh == fh) c = e;
    size_t n = size, room = (size_t)(extent_window_end(off, wsize) - off);
    if (n > room) n = room;
    /* Older bytes that these overwrite must reach the server first. */
    for (struct extent *e = set->head, *next; e; e = next) {
      next = e->next;
      if (e != c && e->off < off + n && off < e->off + e->len) seal(set, e, ops, ctx);
    }
    if (!c) {
      if (set->n == EXTENTS_OPEN_MAX) seal(set, set->head, ops, ctx); /* the lowest offset */
      c = ops->make(ctx, fh, off);
      if (!c) return -ENOMEM;
      struct extent **pos = &set->head;
      while (*pos && (*pos)->off < off)
        pos = &(*pos)->next;
      c->next = *pos;
      *pos = c;
      set->n++;
    }
    if (reserve(c, n, wsize, ops, ctx)) {
      if (!c->len) bury(set, c, ops, ctx); /* never leave an empty extent behind */
      return -ENOMEM;
    }
    memcpy(c->buf + c->len, buf, n);
    c->len += n;
    set->bytes += n;
    buf += n, off += n, size -= n;
    *reached = off;
    if (merge_next(set, c, wsize, ops, ctx)) return -ENOMEM;
    if (is_full(c, wsize)) seal(set, c, ops, ctx);
  }
  return 0;
}

void extents_seal_all(struct extent_set *set, const struct extent_ops *ops, void *ctx) {
  while (set->head)
    seal(set, set->head, ops, ctx);
}
