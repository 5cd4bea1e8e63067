/* opts.c - the smb3fs command line, as mount.cifs and mount(8) helpers take it:
 *   smb3fs //HOST/SHARE[/PATH] MOUNTPOINT [-o OPTIONS] [-f] [-d]
 *   mount.fuse.smb3fs //HOST/SHARE MOUNTPOINT [-n] [-s] [-v] -o OPTIONS   (from mount -t fuse.smb3fs)
 * SMB options go through libsmb3's parser (smb3_options_parse with allow_unknown); what it does
 * not know must be a mount/FUSE option we pass to libfuse, or one of mount(8)'s own, else the
 * mount fails with "unknown option". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"
#include "util.h" /* fuse_pkgversion() */

/* Options libfuse's mount code understands (fuse_session_new, libfuse 3.14). */
static const char *const fuse_flags[] = {"allow_other",   "allow_root", "default_permissions",
                                         "auto_unmount",  "nosuid",     "suid",
                                         "nodev",         "dev",        "noexec",
                                         "exec",          "noatime",    "atime",
                                         "relatime",      "norelatime", "strictatime",
                                         "nostrictatime", "nodiratime", "diratime",
                                         "sync",          "async",      "dirsync",
                                         "lazytime",      "nolazytime", NULL};
static const char *const fuse_keys[] = {"fsname",    "subtype",    "max_read",    "context",
                                        "fscontext", "defcontext", "rootcontext", NULL};
/* mount(8)/fstab options that mean nothing to us. */
static const char *const ignored_flags[] = {"defaults",    "_netdev", "nofail", "auto",  "noauto",
                                            "user",        "users",   "nouser", "owner", "group",
                                            "nosharesock", "noperm",  NULL};

static int in_list(const char *const *list, const char *s, size_t n) {
  for (; *list; list++)
    if (strlen(*list) == n && !strncmp(*list, s, n)) return 1;
  return 0;
}

static int append(char **dst, const char *opt) {
  size_t old = *dst ? strlen(*dst) : 0, n = strlen(opt);
  char *s = realloc(*dst, old + n + 2);
  if (!s) return -1;
  if (old) s[old++] = ',';
  memcpy(s + old, opt, n + 1);
  *dst = s;
  return 0;
}

/* Is tok an option libsmb3 knows? (Parse it alone into a scratch set.) */
static int smb_knows(const char *tok) {
  struct smb3_options s;
  char err[256] = "";
  smb3_options_init(&s);
  int rc = smb3_options_parse(&s, tok, 0, err, sizeof err);
  smb3_options_free(&s);
  return !(rc && !strncmp(err, "unknown option", 14));
}

/* Sort every option of optstr: FUSE ones into a->fuse_opts, unknown ones are an error (2, err
 * says which); 1 when out of memory. */
static int split_options(const char *optstr, struct fs_args *a, char *err, size_t errlen) {
  char *copy = strdup(optstr ? optstr : "");
  if (!copy) return 1;
  int rc = 0, ro = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    size_t klen = strcspn(tok, "=");
    int has_val = tok[klen] == '=';
    if (!klen) continue;
    if ((!has_val && in_list(fuse_flags, tok, klen)) || (has_val && in_list(fuse_keys, tok, klen))) {
      rc = append(&a->fuse_opts, tok) ? 1 : 0;
    } else if ((!has_val && in_list(ignored_flags, tok, klen)) || !strncmp(tok, "x-", 2) ||
               !strncmp(tok, "comment=", 8)) {
      continue;
    } else if (!smb_knows(tok)) {
      snprintf(err, errlen, "unknown option '%.*s'", (int)klen, tok);
      rc = 2;
    } else if (!strcmp(tok, "ro") || !strcmp(tok, "rw")) {
      ro = tok[1] == 'o'; /* the last one counts, as for libsmb3's o->ro (fs->ro) */
    }
  }
  memset(copy, 0, strlen(optstr ? optstr : ""));
  free(copy);
  if (!rc && ro && append(&a->fuse_opts, "ro")) rc = 1; /* the kernel's read-only flag too */
  return rc;
}

static int has_key(const char *opts, const char *key) {
  size_t n = strlen(key);
  for (const char *p = opts; p && *p;) {
    if (!strncmp(p, key, n) && (p[n] == '=' || p[n] == ',' || !p[n])) return 1;
    p = strchr(p, ',');
    if (p) p++;
  }
  return 0;
}

/* //HOST/SHARE[/PATH] (or \\HOST\SHARE, or an smb:// URL) into o. */
static int parse_source(const char *src, struct smb3_options *o, char *err, size_t errlen) {
  if (!strncmp(src, "smb://", 6)) return smb3_url_parse(o, src, err, errlen);
  if (!((src[0] == '/' && src[1] == '/') || (src[0] == '\\' && src[1] == '\\'))) {
    snprintf(err, errlen, "source must be //HOST/SHARE, not '%s'", src);
    return SMB3_EURL;
  }
  size_t n = strlen(src);
  char *url = malloc(n + 5);
  if (!url) return SMB3_ENOMEM;
  memcpy(url, "smb:", 4);
  for (size_t i = 0; i <= n; i++)
    url[4 + i] = src[i] == '\\' ? '/' : src[i];
  int rc = smb3_url_parse(o, url, err, errlen);
  free(url);
  return rc;
}

static void usage(FILE *to) {
  fprintf(to, "usage: smb3fs //HOST/SHARE[/PATH] MOUNTPOINT [-o OPTIONS] [-f] [-d]\n"
              "       smb3fs -h | --help | -V | --version\n"
              "  -f  stay in the foreground      -d  debug (FUSE requests on stderr; implies -f)\n"
              "options (mount.cifs names): username=, password= (or PASSWD env), credentials=FILE, domain=,\n"
              "  port=, vers=, min_vers=, rsize=, wsize=, cache=strict|none|loose, actimeo=, uid=, gid=,\n"
              "  forceuid, forcegid, file_mode=, dir_mode=, sign, seal, nocompound, echo_interval=, ro,\n"
              "  mfsymlinks, nobrl, lazyexcl, dirleases, posix, noposix; and the FUSE mount options\n"
              "  allow_other, default_permissions, fsname=, nosuid, nodev, noexec, noatime, ...\n"
              "exit status: 0 mounted, 1 the mount failed, 2 usage error. See smb3fs(8).\n");
}

/* The versions of smb3fs, of the libsmb3 and libfuse it runs with. */
static void version(void) {
  printf("smb3fs %s\nlibsmb3 %s\nlibfuse %s\n", SMB3_VERSION_STRING, smb3_version(), fuse_pkgversion());
}

int fs_parse_args(int argc, char **argv, struct fs_args *a, struct smb3_options *o, char *err,
                  size_t errlen) {
  memset(a, 0, sizeof *a);
  char *all = NULL;
  const char *pos[2] = {NULL, NULL};
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(s, "-V") || !strcmp(s, "--version")) {
      version();
      exit(0);
    } else if (!strcmp(s, "-f")) {
      a->foreground = 1;
    } else if (!strcmp(s, "-d")) {
      a->debug = a->foreground = 1;
    } else if (!strcmp(s, "-n") || !strcmp(s, "-s") || !strcmp(s, "-v")) {
      continue; /* from mount(8): no mtab, sloppy, verbose */
    } else if (!strncmp(s, "-o", 2)) {
      const char *v = s[2] ? s + 2 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) {
        snprintf(err, errlen, "-o needs a value");
        free(all);
        return 2;
      }
      if (append(&all, v)) {
        free(all);
        return 1;
      }
    } else if (s[0] == '-' && s[1]) {
      snprintf(err, errlen, "unknown flag '%s' (try --help)", s);
      free(all);
      return 2;
    } else if (npos < 2) {
      pos[npos++] = s;
    } else {
      snprintf(err, errlen, "too many arguments (try --help)");
      free(all);
      return 2;
    }
  }
  if (npos != 2) {
    snprintf(err, errlen, "usage: smb3fs //HOST/SHARE MOUNTPOINT [-o OPTIONS] (try --help)");
    free(all);
    return 2;
  }
  a->source = pos[0];
  a->mountpoint = pos[1];
  int rc = parse_source(a->source, o, err, errlen);
  if (!rc && all) rc = smb3_options_parse(o, all, 1, err, errlen);
  rc = rc == SMB3_ENOMEM ? 1 : rc ? 2 : split_options(all, a, err, errlen);
  if (all) memset(all, 0, strlen(all)); /* may hold a password */
  free(all);
  if (rc) return rc;
  const char *pw = getenv("PASSWD");
  if (!o->password && pw && !(o->password = strdup(pw))) return 1;
  /* Defaults: the source in /proc/mounts, type fuse.smb3fs, and, mounted by root, visible to
   * every user with permissions checked by the kernel against uid/gid/file_mode/dir_mode (as a
   * kernel cifs mount). */
  char fsname[600];
  snprintf(fsname, sizeof fsname, "fsname=//%s/%s", o->host, o->share);
  if (!has_key(a->fuse_opts, "fsname") && append(&a->fuse_opts, fsname)) return 1;
  if (!has_key(a->fuse_opts, "subtype") && append(&a->fuse_opts, "subtype=smb3fs")) return 1;
  if (!has_key(a->fuse_opts, "default_permissions") && append(&a->fuse_opts, "default_permissions")) return 1;
  if (getuid() == 0 && !has_key(a->fuse_opts, "allow_other") && append(&a->fuse_opts, "allow_other"))
    return 1;
  return 0;
}
