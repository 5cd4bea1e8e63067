/* dircache.c - a directory's last listing, kept to be served again (dircache.h). */
#include "dircache.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nameset.h"

struct fs_dlist {
  struct fs_dent *v;
  struct fs_dent **ord; /* v by name (strcmp): dircache_find */
  size_t n;
  double asked;
  uint64_t gen;
  int leased; /* asked for while its directory holds a directory lease, not broken since (dirlease.h) */
};

/* *at = max(*at, v) */
static void note_max(atomic_uint_fast64_t *at, uint64_t v) {
  uint_fast64_t cur = atomic_load(at);
  while (cur < v && !atomic_compare_exchange_weak(at, &cur, v)) {
  }
}

void dircache_ns_changed(struct fs_ctx *fs) {
  note_max(&fs->ns_all, atomic_fetch_add(&fs->ns_gen, 1) + 1);
}

void dircache_dir_changed(struct fs_ctx *fs, atomic_uint_fast64_t *moved) {
  note_max(moved, atomic_fetch_add(&fs->ns_gen, 1) + 1);
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
  free(d->ord);
  free(d);
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(struct fs_dent *const *)a)->name, (*(struct fs_dent *const *)b)->name);
}

struct fs_dent *dircache_copy_entries(const struct fs_dent *v, size_t n) {
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
  if (fs->actimeo <= 0 || n > DIRCACHE_MAX) return NULL;
  struct fs_dlist *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  if (!(d->v = dircache_copy_entries(v, n)) || !(d->ord = malloc((n ? n : 1) * sizeof *d->ord))) {
    dircache_free_entries(d->v, d->v ? n : 0);
    free(d);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    d->ord[i] = &d->v[i];
  qsort(d->ord, n, sizeof *d->ord, by_name);
  d->n = n;
  d->asked = asked;
  d->gen = gen;
  return d;
}

/* A move made before the listing was asked for is at most its gen (the value ns_gen had then); one
 * made after it, above. */
int dircache_gen_fresh(struct fs_ctx *fs, uint64_t gen, const atomic_uint_fast64_t *moved) {
  return atomic_load(moved) <= gen && atomic_load(&fs->ns_all) <= gen;
}

int dircache_fresh(struct fs_ctx *fs, const struct fs_dlist *d, const atomic_uint_fast64_t *moved) {
  return d && dircache_gen_fresh(fs, d->gen, moved) && dircache_recent(fs, d);
}

int dircache_recent(struct fs_ctx *fs, const struct fs_dlist *d) {
  if (!d) return 0;
  double age = fs_now() - d->asked;
  return age < fs->actimeo || (d->leased && age < DIRCACHE_LEASED_MAX);
}

void dircache_set_leased(struct fs_dlist *d, int on) {
  if (d) d->leased = on;
}

double dircache_vouched(const struct fs_dlist *d) {
  double now = fs_now();
  return d->leased && now - d->asked < DIRCACHE_LEASED_MAX ? now : d->asked;
}

static int has(char **out, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(out[i], name)) return 1;
  return 0;
}

static const struct fs_dent *nth(const struct fs_dlist *d, int sorted, size_t i) {
  return sorted ? d->ord[i] : &d->v[i];
}

/* Where the entry called name is in d's order (sorted: by name; d->ord points into d->v), or d->n. */
static size_t position(const struct fs_dlist *d, int sorted, const char *name) {
  struct fs_dent key = {.name = (char *)name}, *k = &key;
  struct fs_dent **e = bsearch(&k, d->ord, d->n, sizeof *d->ord, by_name);
  if (!e) return d->n;
  return sorted ? (size_t)(e - d->ord) : (size_t)(*e - d->v);
}

/* The directories after `after` in the listing's order or by name: into out (got there), up to k in
 * all and k / 2 + 1 of this order. */
static size_t dirs_after(const struct fs_dlist *d, int sorted, const char *after, char **out, size_t got,
                         size_t k) {
  size_t i = after ? position(d, sorted, after) + 1 : 0; /* (not there: none) */
  for (size_t took = 0; i < d->n && got < k && took < k / 2 + 1; i++) {
    const struct fs_dent *e = nth(d, sorted, i);
    if (!e->st.is_dir || has(out, got, e->name)) continue;
    if (!(out[got] = strdup(e->name))) break;
    got++, took++;
  }
  return got;
}

size_t dircache_dirs_after(const struct fs_dlist *d, const char *after, char **out, size_t k) {
  if (!d) return 0;
  size_t got = dirs_after(d, 0, after, out, 0, k); /* find, rm -rf, du: the listing's order */
  return dirs_after(d, 1, after, out, got, k);     /* ls -R: by name */
}

size_t dircache_files_after(const struct fs_dlist *d, int sorted, const char *after, char **out, size_t k,
                            char **dir_at) {
  if (dir_at) *dir_at = NULL;
  if (!d) return 0;
  size_t i = after ? position(d, sorted, after) : 0, got = 0;
  for (i += !!after; i < d->n && got < k; i++) { /* (after not there: none) */
    const struct fs_dent *e = nth(d, sorted, i);
    if (e->st.is_dir && dir_at) {
      *dir_at = strdup(e->name);
      break;
    }
    if (e->st.is_dir || !(out[got] = strdup(e->name))) continue;
    got++;
  }
  return got;
}

const struct fs_dent *dircache_find(const struct fs_dlist *d, const char *name) {
  if (!d) return NULL;
  struct fs_dent key = {.name = (char *)name}, *k = &key;
  struct fs_dent **e = bsearch(&k, d->ord, d->n, sizeof *d->ord, by_name);
  return e ? *e : NULL;
}

/* A name the server may find under another name: a mangled 8.3 name (with '~'), or one ending in a
 * dot or a space (Windows drops them). */
static int aliased(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '~') || (n && (s[n - 1] == '.' || s[n - 1] == ' '));
}

int dircache_absent(struct fs_ctx *fs, const struct fs_dlist *d, const atomic_uint_fast64_t *moved,
                    const char *name) {
  if (!d || !d->leased || !dircache_recent(fs, d) || !dircache_gen_fresh(fs, d->gen, moved) ||
      !nameset_ascii(name) || aliased(name))
    return 0;
  for (size_t i = 0; i < d->n; i++) /* (the server compares names without case) */
    if (!nameset_ascii(d->v[i].name) || !strcasecmp(d->v[i].name, name)) return 0;
  return 1;
}

size_t dircache_count(const struct fs_dlist *d) {
  return d ? d->n : 0;
}

double dircache_asked(const struct fs_dlist *d) {
  return d->asked;
}

uint64_t dircache_list_gen(const struct fs_dlist *d) {
  return d->gen;
}

void dircache_spoil(struct fs_dlist *d) {
  if (d) d->asked = -1e300, d->leased = 0;
}

struct fs_dent *dircache_copy(const struct fs_dlist *d, size_t *n, double *asked) {
  struct fs_dent *c = dircache_copy_entries(d->v, d->n);
  if (c) *n = d->n, *asked = dircache_vouched(d);
  return c;
}
