/* options.c - the one option parser shared by the CLI (-o), the library and the mount.
 * Names follow mount.cifs where the meaning is the same. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "smb3/smb3.h"

void smb3_options_init(struct smb3_options *o) {
  memset(o, 0, sizeof *o);
  o->port = 445;
  o->vers_min = 0x0202;
  o->vers_max = 0x0311;
  o->rsize = o->wsize = 4u << 20;
  o->max_inflight = 0; /* auto: paced READs, a 24 MiB WRITE window (bulk.c) */
  o->credits = 1024;
  o->timeout_ms = 60000;
  o->connect_timeout_ms = 10000;
  o->echo_interval = 60;
  o->cache = SMB3_CACHE_STRICT;
  o->actimeo = 1.0;
  o->directio_min = 0; /* page cache for every reader: see smb3fs(8), directio_min */
  o->uid = o->gid = -1;
  o->file_mode = o->dir_mode = -1;
  o->cruid = -1;
  o->mfsymlinks = -1; /* smb3fs: on where the share has no POSIX extensions */
}

void smb3_options_free(struct smb3_options *o) {
  free(o->host);
  free(o->share);
  free(o->path);
  free(o->username);
  if (o->password) explicit_bzero(o->password, strlen(o->password));
  free(o->password);
  free(o->domain);
  free(o->ip);
  free(o->krb5_keytab);
  free(o->krb5_ccache);
  o->host = o->share = o->path = o->username = o->password = o->domain = NULL;
  o->ip = o->krb5_keytab = o->krb5_ccache = NULL;
}

static int set_str(char **dst, const char *v) {
  char *s = strdup(v);
  if (!s) return SMB3_ENOMEM;
  if (*dst) explicit_bzero(*dst, strlen(*dst)); /* the value replaced may be a password */
  free(*dst);
  *dst = s;
  return 0;
}

/* Sizes: plain bytes or with K/M/G suffix (binary). */
static int parse_size(const char *v, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || *v == '-') return -1;
  uint64_t mul = 1;
  if (*end == 'k' || *end == 'K')
    mul = 1024, end++;
  else if (*end == 'm' || *end == 'M')
    mul = 1024 * 1024, end++;
  else if (*end == 'g' || *end == 'G')
    mul = 1024ull * 1024 * 1024, end++;
  if (*end == 'i' || *end == 'B' || *end == 'b') end++;
  if (*end || n > max / mul) return -1;
  *out = n * mul;
  return 0;
}

static int parse_vers(const char *v, uint16_t *lo, uint16_t *hi) {
  static const struct {
    const char *name;
    uint16_t d;
  } tab[] = {{"2.0", 0x0202}, {"2.02", 0x0202}, {"2.0.2", 0x0202}, {"2.1", 0x0210},   {"3", 0x0300},
             {"3.0", 0x0300}, {"3.02", 0x0302}, {"3.0.2", 0x0302}, {"3.1.1", 0x0311}, {"3.11", 0x0311}};
  if (!strcmp(v, "default")) return *lo = 0x0202, *hi = 0x0311, 0;
  if (!strcmp(v, "3") || !strcmp(v, "3.x")) return *lo = 0x0300, *hi = 0x0311, 0;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (!strcmp(v, tab[i].name)) return *lo = *hi = tab[i].d, 0;
  return -1;
}

static int parse_mode(const char *v, int *out) {
  char *end;
  long m = strtol(v, &end, 8);
  if (*end || end == v || m < 0 || m > 07777) return -1;
  *out = (int)m;
  return 0;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || *end || *v == '-' || n > max) return -1;
  *out = n;
  return 0;
}

#define APPLY_ENOMEM (-3)

/* set_str for apply(): out of memory is not a bad value. */
static int apply_str(char **dst, const char *v) {
  return set_str(dst, v) ? APPLY_ENOMEM : 0;
}

/* One key[=value]; returns 0, 1 if unknown, -1 if the value is bad, -2 if err was written,
 * APPLY_ENOMEM when out of memory. */
static int apply(struct smb3_options *o, const char *k, const char *v, char *err, size_t errlen) {
  uint64_t n;
  int flag = v == NULL;
#define NEED_V()                                                                                             \
  if (!v) return -1
  if (!strcmp(k, "vers")) {
    NEED_V();
    return parse_vers(v, &o->vers_min, &o->vers_max);
  }
  if (!strcmp(k, "min_vers")) { /* the lowest dialect offered and accepted; vers= may pin or cap */
    uint16_t lo, hi;
    NEED_V();
    if (parse_vers(v, &lo, &hi)) return -1;
    o->vers_min = lo;
    return 0;
  }
  if (!strcmp(k, "sign")) return flag ? (o->sign = 1, 0) : -1;
  if (!strcmp(k, "seal")) return flag ? (o->seal = 1, 0) : -1;
  if (!strcmp(k, "nocompound")) return flag ? (o->nocompound = 1, 0) : -1;
  if (!strcmp(k, "ro")) return flag ? (o->ro = 1, 0) : -1;
  if (!strcmp(k, "mfsymlinks") || !strcmp(k, "nomfsymlinks"))
    return flag ? (o->mfsymlinks = k[0] == 'm', 0) : -1;
  if (!strcmp(k, "nobrl")) return flag ? (o->nobrl = 1, 0) : -1;
  if (!strcmp(k, "lazyexcl")) return flag ? (o->lazyexcl = 1, 0) : -1;
  if (!strcmp(k, "dirleases")) return flag ? (o->dirleases = 1, 0) : -1;
  if (!strcmp(k, "posix")) return flag ? (o->noposix = 0, 0) : -1;
  if (!strcmp(k, "noposix")) return flag ? (o->noposix = 1, 0) : -1;
  if (!strcmp(k, "mapposix") || !strcmp(k, "nomapposix")) return flag ? (o->nomapposix = k[0] == 'n', 0) : -1;
  if (!strcmp(k, "forceuid") || !strcmp(k, "noforceuid")) return flag ? (o->forceuid = k[0] == 'f', 0) : -1;
  if (!strcmp(k, "forcegid") || !strcmp(k, "noforcegid")) return flag ? (o->forcegid = k[0] == 'f', 0) : -1;
  if (!strcmp(k, "rw")) return flag ? (o->ro = 0, 0) : -1;
  if (!strcmp(k, "port")) {
    NEED_V();
    if (parse_uint(v, 65535, &n) || !n) return -1;
    o->port = (int)n;
    return 0;
  }
  if (!strcmp(k, "rsize") || !strcmp(k, "wsize")) {
    NEED_V();
    if (parse_size(v, 16u << 20, &n) || n < 4096) return -1;
    *(k[0] == 'r' ? &o->rsize : &o->wsize) = (uint32_t)n;
    return 0;
  }
  if (!strcmp(k, "max_inflight")) {
    NEED_V();
    if (parse_uint(v, 256, &n)) return -1;
    o->max_inflight = (uint32_t)n;
    return 0;
  }
  if (!strcmp(k, "credits")) {
    NEED_V();
    if (parse_uint(v, 8192, &n) || n < 32) return -1; /* (one compound of CORE_MAX_CHAIN requests) */
    o->credits = (uint32_t)n;
    return 0;
  }
  if (!strcmp(k, "timeout")) {
    NEED_V();
    if (parse_uint(v, 3600, &n) || !n) return -1;
    o->timeout_ms = (uint32_t)n * 1000;
    return 0;
  }
  if (!strcmp(k, "connect_timeout")) {
    NEED_V();
    if (parse_uint(v, 3600, &n) || !n) return -1;
    o->connect_timeout_ms = (uint32_t)n * 1000;
    return 0;
  }
  if (!strcmp(k, "echo_interval")) {
    NEED_V();
    if (parse_uint(v, 600, &n)) return -1;
    o->echo_interval = (uint32_t)n;
    return 0;
  }
  if (!strcmp(k, "username") || !strcmp(k, "user")) {
    NEED_V();
    return apply_str(&o->username, v);
  }
  if (!strcmp(k, "password") || !strcmp(k, "pass")) {
    NEED_V();
    return apply_str(&o->password, v);
  }
  if (!strcmp(k, "domain") || !strcmp(k, "dom") || !strcmp(k, "workgroup")) {
    NEED_V();
    return apply_str(&o->domain, v);
  }
  if (!strcmp(k, "credentials") || !strcmp(k, "cred")) {
    NEED_V();
    int rc = smb3_options_credentials_file(o, v, err, errlen);
    return rc == SMB3_ENOMEM ? APPLY_ENOMEM : rc ? -2 : 0;
  }
  if (!strcmp(k, "guest")) return flag ? apply_str(&o->username, "") : -1;
  if (!strcmp(k, "cache")) {
    NEED_V();
    if (!strcmp(v, "strict"))
      o->cache = SMB3_CACHE_STRICT;
    else if (!strcmp(v, "none"))
      o->cache = SMB3_CACHE_NONE;
    else if (!strcmp(v, "loose"))
      o->cache = SMB3_CACHE_LOOSE;
    else
      return -1;
    return 0;
  }
  if (!strcmp(k, "actimeo")) {
    NEED_V();
    char *end;
    double d = strtod(v, &end);
    if (*end || end == v || d < 0 || d > 86400) return -1;
    o->actimeo = d;
    return 0;
  }
  if (!strcmp(k, "directio_min")) {
    NEED_V();
    if (parse_size(v, UINT64_MAX, &n)) return -1;
    o->directio_min = n;
    return 0;
  }
  if (!strcmp(k, "uid") || !strcmp(k, "gid")) {
    NEED_V();
    if (parse_uint(v, 0x7fffffff, &n)) return -1;
    *(k[0] == 'u' ? &o->uid : &o->gid) = (int)n;
    return 0;
  }
  if (!strcmp(k, "sec")) {
    NEED_V();
    /* mount.cifs's names; the "i" forms also ask for signing */
    if (!strcmp(v, "krb5") || !strcmp(v, "krb5i"))
      o->sec = 2;
    else if (!strcmp(v, "ntlmssp") || !strcmp(v, "ntlmsspi") || !strcmp(v, "ntlmv2") || !strcmp(v, "ntlmv2i"))
      o->sec = 1;
    else if (!strcmp(v, "auto"))
      o->sec = 0;
    else
      return -1;
    if (v[strlen(v) - 1] == 'i') o->sign = 1;
    return 0;
  }
  if (!strcmp(k, "ip") || !strcmp(k, "addr")) {
    NEED_V();
    return *v ? apply_str(&o->ip, v) : -1;
  }
  if (!strcmp(k, "krb5_keytab")) {
    NEED_V();
    return *v ? apply_str(&o->krb5_keytab, v) : -1;
  }
  if (!strcmp(k, "cruid")) {
    NEED_V();
    if (parse_uint(v, 0x7fffffff, &n)) return -1;
    o->cruid = (int)n;
    return 0;
  }
  if (!strcmp(k, "file_mode")) {
    NEED_V();
    return parse_mode(v, &o->file_mode);
  }
  if (!strcmp(k, "dir_mode")) {
    NEED_V();
    return parse_mode(v, &o->dir_mode);
  }
#undef NEED_V
  return 1;
}

int smb3_options_parse(struct smb3_options *o, const char *s, int allow_unknown, char *err, size_t errlen) {
  if (!s) return 0;
  char *copy = strdup(s);
  if (!copy) return SMB3_ENOMEM;
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*tok))
      tok++;
    if (!*tok) continue;
    char *eq = strchr(tok, '=');
    if (eq) *eq = 0;
    int r = apply(o, tok, eq ? eq + 1 : NULL, err, errlen);
    if (r == 1 && allow_unknown) continue;
    if (r == 1) {
      if (err) snprintf(err, errlen, "unknown option '%s'", tok);
      rc = SMB3_EURL;
    } else if (r == -1) {
      if (err) snprintf(err, errlen, "bad value for option '%s'%s%s", tok, eq ? ": " : "", eq ? eq + 1 : "");
      rc = SMB3_EURL;
    } else if (r == -2) {
      rc = SMB3_EURL; /* message already written */
    } else if (r == APPLY_ENOMEM) {
      if (err) snprintf(err, errlen, "out of memory");
      rc = SMB3_ENOMEM;
    }
  }
  if (copy) explicit_bzero(copy, strlen(s)); /* may hold a password */
  free(copy);
  return rc;
}

int smb3_options_credentials_file(struct smb3_options *o, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    if (err) snprintf(err, errlen, "cannot read credentials file '%s': %s", path, strerror(errno));
    return SMB3_EURL;
  }
  struct stat st;
  if (!fstat(fileno(f), &st) && (st.st_mode & (S_IRWXG | S_IRWXO))) o->credentials_exposed = 1;
  char line[1024];
  int rc = 0, lineno = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    char *p = line;
    while (isspace((unsigned char)*p))
      p++;
    if (!*p || *p == '#') continue;
    char *eq = strchr(p, '=');
    if (!eq) {
      if (err) snprintf(err, errlen, "%s:%d: expected key=value", path, lineno);
      rc = SMB3_EURL;
      break;
    }
    *eq = 0;
    char *k = p, *v = eq + 1;
    for (char *e = k + strlen(k); e > k && isspace((unsigned char)e[-1]);)
      *--e = 0;
    if (!strcmp(k, "username") || !strcmp(k, "user")) {
      char *slash = strchr(v, '/'); /* DOMAIN/user, as smbclient allows */
      if (slash) {
        *slash = 0;
        rc = set_str(&o->domain, v);
        v = slash + 1;
      }
      if (!rc) rc = set_str(&o->username, v);
    } else if (!strcmp(k, "password") || !strcmp(k, "pass"))
      rc = set_str(&o->password, v);
    else if (!strcmp(k, "domain") || !strcmp(k, "workgroup"))
      rc = set_str(&o->domain, v);
    else {
      if (err) snprintf(err, errlen, "%s:%d: unknown key '%s'", path, lineno, k);
      rc = SMB3_EURL;
    }
  }
  explicit_bzero(line, sizeof line); /* a memset before the buffer dies may be optimized away */
  fclose(f);
  return rc;
}
