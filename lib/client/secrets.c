/* secrets.c - passwords out of a program's command line. /proc/PID/cmdline (what ps shows to every
 * local user) reads the argument strings in the process's own memory for as long as it runs, so a
 * mount started with -o password=... would show it for the life of the mount. The program keeps
 * private copies and the library removes the secrets from the originals in place. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "smb3/smb3.h"

/* Removes s[from, to) from the string s, zeroing the bytes freed at its end. */
static void cut(char *s, size_t from, size_t to) {
  size_t n = strlen(s);
  memmove(s + from, s + to, n - to + 1);
  memset(s + n - (to - from), 0, to - from);
}

/* Every "password=..." / "pass=..." element of a comma-separated option list (the keys
 * smb3_options_parse takes for the password), comma included. */
static int hide_in_options(char *s) {
  int hidden = 0;
  size_t i = 0;
  while (s[i]) {
    size_t end = i;
    while (s[end] && s[end] != ',')
      end++;
    size_t k = i;
    while (k < end && isspace((unsigned char)s[k]))
      k++; /* smb3_options_parse skips them too */
    if (!strncmp(s + k, "password=", 9) || !strncmp(s + k, "pass=", 5)) {
      /* the element and the comma after it; the last one takes the comma before it */
      size_t from = i, to = s[end] ? end + 1 : end;
      if (!s[end] && from > 0) from--;
      cut(s, from, to);
      hidden = 1;
      continue; /* the next element now starts at i (or the string ended) */
    }
    i = s[end] ? end + 1 : end;
  }
  return hidden;
}

/* The ":PASSWORD" of smb://[DOMAIN;]USER:PASSWORD@HOST/... or //USER:PASSWORD@HOST/SHARE (the last
 * '@' before the path ends the user information, as smb3_url_parse reads it). */
static int hide_in_url(char *s) {
  char *p = s;
  if (!strncasecmp(p, "smb://", 6))
    p += 6;
  else if ((p[0] == '/' && p[1] == '/') || (p[0] == '\\' && p[1] == '\\'))
    p += 2;
  else
    return 0;
  size_t auth = strcspn(p, "/\\");
  char *at = NULL;
  for (char *q = p; q < p + auth; q++)
    if (*q == '@') at = q;
  if (!at) return 0;
  char *colon = memchr(p, ':', (size_t)(at - p));
  if (!colon) return 0;
  cut(s, (size_t)(colon - s), (size_t)(at - s));
  return 1;
}

char **smb3_argv_hide_secrets(int argc, char **argv) {
  char **copy = calloc((size_t)argc + 1, sizeof *copy);
  if (!copy) return NULL;
  for (int i = 0; i < argc; i++) {
    if (!(copy[i] = strdup(argv[i]))) {
      smb3_argv_free(copy);
      return NULL;
    }
  }
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if ((!strcmp(a, "-o") || !strcmp(a, "--options")) && i + 1 < argc)
      hide_in_options(argv[++i]);
    else if (!strncmp(a, "--options=", 10))
      hide_in_options(a + 10);
    else if (!strncmp(a, "-o", 2))
      hide_in_options(a + 2);
    else
      hide_in_url(a);
  }
  return copy;
}

void smb3_argv_free(char **argv) {
  if (!argv) return;
  for (char **p = argv; *p; p++) {
    memset(*p, 0, strlen(*p)); /* may hold a password */
    free(*p);
  }
  free(argv);
}
