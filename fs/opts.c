/* opts.c - the smb3fs command line, as mount.cifs and mount(8) helpers take it:
 *   smb3fs //HOST/SHARE[/PATH] MOUNTPOINT [-o OPTIONS] [-f] [-d]
 *   mount.fuse.smb3fs //HOST/SHARE MOUNTPOINT [-n] [-s] [-v] -o OPTIONS   (from mount -t fuse.smb3fs)
 * SMB options go through libsmb3's parser (smb3_options_parse with allow_unknown); what it does
 * not know must be a mount/FUSE option we pass to libfuse, or one of mount(8)'s own, else the
 * mount fails with "unknown option". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "opts.h"
#include "smb3fs_ioctl.h"
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

/* ---- -o remount ---- */
/* The kernel's mount flags a remount may set or clear (mount(2): what MS_REMOUNT changes). */
static const struct {
  const char *name;
  unsigned long flag;
  int set;
} vfs_flags[] = {
    {"ro", MS_RDONLY, 1},
    {"rw", MS_RDONLY, 0},
    {"nosuid", MS_NOSUID, 1},
    {"suid", MS_NOSUID, 0},
    {"nodev", MS_NODEV, 1},
    {"dev", MS_NODEV, 0},
    {"noexec", MS_NOEXEC, 1},
    {"exec", MS_NOEXEC, 0},
    {"noatime", MS_NOATIME, 1},
    {"atime", MS_NOATIME, 0},
    {"nodiratime", MS_NODIRATIME, 1},
    {"diratime", MS_NODIRATIME, 0},
    {"relatime", MS_RELATIME, 1},
    {"norelatime", MS_RELATIME, 0},
    {"strictatime", MS_STRICTATIME, 1},
    {"sync", MS_SYNCHRONOUS, 1},
    {"async", MS_SYNCHRONOUS, 0},
    {"dirsync", MS_DIRSYNC, 1},
    {"lazytime", MS_LAZYTIME, 1},
    {"nolazytime", MS_LAZYTIME, 0},
};
/* What /proc/mounts shows of a FUSE mount, which mount(8) passes back on a remount. */
static const char *const shown_keys[] = {"user_id", "group_id", "rootmode", "blksize", "max_read", NULL};

/* Sort a remount's options: the kernel's flags, what the daemon changes, what stays. 0, or 1 when
 * out of memory. */
static int split_remount(const char *optstr, struct fs_args *a) {
  char *copy = strdup(optstr ? optstr : "");
  if (!copy) return 1;
  int rc = 0;
  char *save = NULL;
  const size_t nflags = sizeof vfs_flags / sizeof vfs_flags[0];
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    size_t klen = strcspn(tok, "="), i;
    for (i = 0; i < nflags && strcmp(tok, vfs_flags[i].name); i++)
      ;
    if (i < nflags) {
      unsigned long f = vfs_flags[i].flag;
      if (vfs_flags[i].set)
        a->flags_set |= f, a->flags_clear &= ~f;
      else
        a->flags_clear |= f, a->flags_set &= ~f;
    }
    if (!strcmp(tok, "ro") || !strcmp(tok, "rw") || !strncmp(tok, "actimeo=", 8)) {
      rc = append(&a->remount_live, tok) ? 1 : 0;
    } else if (i < nflags || !strcmp(tok, "remount") || in_list(fuse_flags, tok, klen) ||
               in_list(fuse_keys, tok, klen) || in_list(shown_keys, tok, klen) ||
               in_list(ignored_flags, tok, klen) || !strncmp(tok, "x-", 2) || !strncmp(tok, "comment=", 8) ||
               !strncmp(tok, "password=", 9) || !strncmp(tok, "pass=", 5)) {
      continue;
    } else {
      char key[64];
      snprintf(key, sizeof key, "%.*s", (int)(klen < 63 ? klen : 63), tok);
      rc = append(&a->remount_fixed, key) ? 1 : 0;
    }
  }
  memset(copy, 0, strlen(optstr ? optstr : ""));
  free(copy);
  return rc;
}

static int is_remount(const char *opts) {
  for (const char *p = opts; p && *p;) {
    if (!strncmp(p, "remount", 7) && (p[7] == ',' || !p[7])) return 1;
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
  if (is_remount(all)) { /* nothing to connect to: the running mount is told (main.c fs_remount) */
    a->remount = 1;
    int rc = split_remount(all, a);
    memset(all, 0, strlen(all));
    free(all);
    return rc;
  }
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

/* ---- -o remount: the running mount at a->mountpoint is told what changes ---- */
#define FUSE_SUPER_MAGIC 0x65735546

/* The kernel's flags of the mount now, as statvfs reports them (ST_* are MS_* for these). */
static unsigned long mount_flags_now(const struct statvfs *v) {
  static const unsigned long keep[] = {ST_RDONLY,      ST_NOSUID,  ST_NODEV,      ST_NOEXEC,
                                       ST_SYNCHRONOUS, ST_NOATIME, ST_NODIRATIME, ST_RELATIME};
  static const unsigned long as[] = {MS_RDONLY,      MS_NOSUID,  MS_NODEV,      MS_NOEXEC,
                                     MS_SYNCHRONOUS, MS_NOATIME, MS_NODIRATIME, MS_RELATIME};
  unsigned long f = 0;
  for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
    if (v->f_flag & keep[i]) f |= as[i];
  return f;
}

int fs_remount(const struct fs_args *a) {
  int fd = open(a->mountpoint, O_RDONLY | O_DIRECTORY);
  struct statfs sf;
  char probe[SMB3FS_STATS_MAX];
  if (fd < 0 || fstatfs(fd, &sf) || sf.f_type != FUSE_SUPER_MAGIC || ioctl(fd, SMB3FS_IOC_STATS, probe)) {
    fprintf(stderr, "smb3fs: remount: %s is not an smb3fs mount point\n", a->mountpoint);
    if (fd >= 0) close(fd);
    return 1;
  }
  if (a->remount_fixed)
    fprintf(stderr, "smb3fs: remount: %s cannot change on a running mount (unmount and mount again)\n",
            a->remount_fixed);
  if (a->remount_live) {
    char buf[SMB3FS_REMOUNT_MAX] = "";
    if (strlen(a->remount_live) >= sizeof buf ||
        ioctl(fd, SMB3FS_IOC_REMOUNT, strcpy(buf, a->remount_live))) {
      fprintf(stderr, "smb3fs: remount: the mount refused '%s'\n", a->remount_live);
      close(fd);
      return 1;
    }
  }
  struct statvfs v;
  int rc = fstatvfs(fd, &v);
  close(fd);
  if (rc) {
    fprintf(stderr, "smb3fs: remount: %s: %s\n", a->mountpoint, strerror(errno));
    return 1;
  }
  unsigned long flags = (mount_flags_now(&v) | a->flags_set) & ~a->flags_clear;
  if (mount(NULL, a->mountpoint, NULL, MS_REMOUNT | flags, NULL)) {
    fprintf(stderr, "smb3fs: remount of %s: %s\n", a->mountpoint,
            errno == EPERM ? "only root may change a mount's flags" : strerror(errno));
    return 1;
  }
  return 0;
}
