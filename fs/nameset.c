/* nameset.c - see nameset.h. Chained hash of names as spelt, hashed ASCII-folded (the spellings of
 * one name for the server share a bucket); the table doubles past 1 name per bucket. */
#include "nameset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct nm {
  struct nm *next;
  uint64_t h;  /* of the folded name */
  char name[]; /* as spelt */
};

struct nameset {
  struct nm **b;
  size_t nb, n;
};

static int fold(int c) {
  return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

int nameset_ascii(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s >= 0x80) return 0;
  return 1;
}

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (uint64_t)fold((unsigned char)*s)) * 1099511628211ull;
  return h;
}

struct nameset *nameset_new(void) {
  struct nameset *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nb = 16;
  s->b = calloc(s->nb, sizeof *s->b);
  if (!s->b) {
    free(s);
    return NULL;
  }
  return s;
}

void nameset_free(struct nameset *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nb; i++)
    for (struct nm *e = s->b[i], *n; e; e = n) {
      n = e->next;
      free(e);
    }
  free(s->b);
  free(s);
}

/* The entry spelt as name (exact) or one equal to it without ASCII case (strcasecmp: the daemon
 * never leaves the C locale, as fold() and the hash). */
static struct nm **find(const struct nameset *s, const char *name, uint64_t h, int exact) {
  struct nm **pp = &s->b[h % s->nb];
  while (*pp && !((*pp)->h == h && (exact ? strcmp((*pp)->name, name) : strcasecmp((*pp)->name, name)) == 0))
    pp = &(*pp)->next;
  return pp;
}

static int grow(struct nameset *s) {
  size_t nb = s->nb * 2;
  struct nm **b = calloc(nb, sizeof *b);
  if (!b) return -1;
  for (size_t i = 0; i < s->nb; i++)
    for (struct nm *e = s->b[i], *n; e; e = n) {
      n = e->next;
      e->next = b[e->h % nb];
      b[e->h % nb] = e;
    }
  free(s->b);
  s->b = b;
  s->nb = nb;
  return 0;
}

int nameset_add(struct nameset *s, const char *name) {
  uint64_t h = hash(name);
  if (*find(s, name, h, 1)) return 0;
  if (s->n >= s->nb && grow(s)) return -1;
  size_t len = strlen(name);
  struct nm *e = malloc(sizeof *e + len + 1);
  if (!e) return -1;
  e->h = h;
  memcpy(e->name, name, len + 1);
  struct nm **pp = &s->b[h % s->nb];
  e->next = *pp;
  *pp = e;
  s->n++;
  return 0;
}

void nameset_del(struct nameset *s, const char *name) {
  struct nm **pp = find(s, name, hash(name), 1);
  if (!*pp) return;
  struct nm *e = *pp;
  *pp = e->next;
  free(e);
  s->n--;
}

int nameset_may_have(const struct nameset *s, const char *name) {
  if (!nameset_ascii(name)) return 1;
  return *find(s, name, hash(name), 0) != NULL;
}

size_t nameset_count(const struct nameset *s) {
  return s->n;
}
