/* url.c - smb://[DOMAIN;]USER[:PASSWORD]@HOST[:PORT]/SHARE[/PATH] */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smb3/smb3.h"

static int hexval(int ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  ch = tolower(ch);
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

/* Decode %XX escapes of s[0..n) into a malloc'd string; NULL on a bad escape or embedded NUL. */
static char *unescape(const char *s, size_t n) {
  char *out = malloc(n + 1), *o = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') {
      if (n - i < 3) {
        free(out);
        return NULL;
      }
      int a = hexval((unsigned char)s[i + 1]), b = hexval((unsigned char)s[i + 2]);
      if (a < 0 || b < 0 || (a == 0 && b == 0)) {
        free(out);
        return NULL;
      }
      *o++ = (char)(a * 16 + b);
      i += 2;
    } else {
      *o++ = s[i];
    }
  }
  *o = 0;
  return out;
}

static int fail(char *err, size_t errlen, const char *url, const char *why) {
  if (err) snprintf(err, errlen, "bad URL '%s': %s", url, why);
  return SMB3_EURL;
}

static int set(char **dst, const char *s, size_t n) {
  char *v = unescape(s, n);
  if (!v) return -1;
  free(*dst);
  *dst = v;
  return 0;
}

/* userinfo = [DOMAIN;]USER[:PASSWORD] */
static int parse_userinfo(struct smb3_options *o, const char *s, size_t n) {
  const char *semi = memchr(s, ';', n);
  if (semi) {
    if (set(&o->domain, s, (size_t)(semi - s))) return -1;
    n -= (size_t)(semi + 1 - s);
    s = semi + 1;
  }
  const char *colon = memchr(s, ':', n);
  if (colon) {
    if (set(&o->password, colon + 1, n - (size_t)(colon + 1 - s))) return -1;
    n = (size_t)(colon - s);
  }
  return set(&o->username, s, n);
}

static int parse_hostport(struct smb3_options *o, const char *s, size_t n) {
  const char *colon = NULL;
  if (n && s[0] == '[') { /* [IPv6]:port */
    const char *close = memchr(s, ']', n);
    if (!close) return -1;
    if (set(&o->host, s + 1, (size_t)(close - s - 1))) return -1;
    if ((size_t)(close + 1 - s) < n) {
      if (close[1] != ':') return -1;
      colon = close + 1;
    }
  } else {
    colon = memchr(s, ':', n);
    if (set(&o->host, s, colon ? (size_t)(colon - s) : n)) return -1;
  }
  if (!o->host[0]) return -1;
  if (colon) {
    size_t pl = n - (size_t)(colon + 1 - s);
    if (pl == 0 || pl > 5) return -1;
    int port = 0;
    for (size_t i = 0; i < pl; i++) {
      if (!isdigit((unsigned char)colon[1 + i])) return -1;
      port = port * 10 + colon[1 + i] - '0';
    }
    if (port < 1 || port > 65535) return -1;
    o->port = port;
  }
  return 0;
}

static int url_parse(struct smb3_options *o, const char *url, int share_optional, char *err, size_t errlen) {
  if (!url || strncasecmp(url, "smb://", 6))
    return fail(err, errlen, url ? url : "", "must start with smb://");
  const char *p = url + 6;
  const char *slash = strchr(p, '/');
  const char *auth_end = slash ? slash : p + strlen(p);
  const char *at = NULL;
  for (const char *q = p; q < auth_end; q++)
    if (*q == '@') at = q; /* the last '@' before the path: passwords may contain '@' if escaped */
  if (at && parse_userinfo(o, p, (size_t)(at - p))) return fail(err, errlen, url, "bad user information");
  const char *hp = at ? at + 1 : p;
  if (parse_hostport(o, hp, (size_t)(auth_end - hp))) return fail(err, errlen, url, "bad host or port");
  if ((!slash || !slash[1]) && share_optional) { /* smb://HOST or smb://HOST/: the server itself */
    free(o->share);
    o->share = NULL;
    return set(&o->path, "", 0) ? fail(err, errlen, url, "out of memory") : 0;
  }
  if (!slash || !slash[1]) return fail(err, errlen, url, "no share name");
  const char *share = slash + 1;
  const char *rest = strchr(share, '/');
  size_t sl = rest ? (size_t)(rest - share) : strlen(share);
  if (!sl) return fail(err, errlen, url, "empty share name");
  if (set(&o->share, share, sl)) return fail(err, errlen, url, "bad share name");
  const char *path = rest ? rest + 1 : "";
  if (set(&o->path, path, strlen(path))) return fail(err, errlen, url, "bad path escape");
  size_t pl = strlen(o->path);
  while (pl && o->path[pl - 1] == '/')
    o->path[--pl] = 0; /* "dir/" names "dir" */
  return 0;
}

int smb3_url_parse(struct smb3_options *o, const char *url, char *err, size_t errlen) {
  return url_parse(o, url, 0, err, errlen);
}

int smb3_url_parse_server(struct smb3_options *o, const char *url, char *err, size_t errlen) {
  return url_parse(o, url, 1, err, errlen);
}
