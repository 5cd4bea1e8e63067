/* dircache.c - a directory's last listing, kept to be served again (dircache.h). */
#include "dircache.h"

#include <stdlib.h>
#include <string.h>

struct fs_dlist {
  struct fs_dent *v;
  size_t n;
  double asked;
  uint64_t gen;
};

void dircache_ns_changed(struct fs_ctx *fs) {
  atomic_fetch_add(&fs->ns_gen, 1);
}

uint64_t dircache_gen(struct fs_ctx *fs) {
  return atomic_load(&fs->ns_gen);
}

void dircache_free_entries(struct fs_dent *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i].name);
  free(v);
}

void dircache_free(struct fs_dlist *d) {
  if (!d) return;
  dircache_free_entries(d->v, d->n);
  free(d);
}

/* NULL on ENOMEM */
static struct fs_dent *copy_entries(const struct fs_dent *v, size_t n) {
  struct fs_dent *c = calloc(n ? n : 1, sizeof *c);
  for (size_t i = 0; c && i < n; i++) {
    c[i].st = v[i].st;
    if (!(c[i].name = strdup(v[i].name))) {
      dircache_free_entries(c, i);
      return NULL;
    }
  }
  return c;
}

struct fs_dlist *dircache_new(struct fs_ctx *fs, const struct fs_dent *v, size_t n, double asked,
                              uint64_t gen) {
  if (fs->actimeo <= 0 || n > DIRCACHE_MAX || gen != dircache_gen(fs)) return NULL;
  struct fs_dlist *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  if (!(d->v = copy_entries(v, n))) {
    free(d);
    return NULL;
  }
  d->n = n;
  d->asked = asked;
  d->gen = gen;
  return d;
}

int dircache_fresh(struct fs_ctx *fs, const struct fs_dlist *d) {
  return d && d->gen == dircache_gen(fs) && fs_now() - d->asked < fs->actimeo;
}

struct fs_dent *dircache_copy(const struct fs_dlist *d, size_t *n, double *asked) {
  struct fs_dent *c = copy_entries(d->v, d->n);
  if (c) *n = d->n, *asked = d->asked;
  return c;
}
