/* cmd_info.c - ls, stat, df. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

static void fmt_time(char *buf, size_t n, const struct timespec_smb3 *t) {
  time_t s = (time_t)t->sec;
  struct tm tm;
  gmtime_r(&s, &tm);
  strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
}

static void print_entry(const char *name, const struct smb3_stat *st) {
  char tb[32];
  fmt_time(tb, sizeof tb, &st->mtime);
  printf("%c%c %12llu  %s  %s%s\n", st->is_dir ? 'd' : '-', (st->attributes & 1) ? 'r' : 'w',
         (unsigned long long)st->size, tb, name, st->is_dir ? "/" : "");
}

void cli_mode_string(const struct smb3_stat *st, char out[11]) {
  static const char rwx[] = "rwxrwxrwx";
  uint32_t m = st->mode;
  switch (m & S_IFMT) {
  case S_IFDIR:
    out[0] = 'd';
    break;
  case S_IFLNK:
    out[0] = 'l';
    break;
  case S_IFIFO:
    out[0] = 'p';
    break;
  case S_IFSOCK:
    out[0] = 's';
    break;
  case S_IFCHR:
    out[0] = 'c';
    break;
  case S_IFBLK:
    out[0] = 'b';
    break;
  default:
    out[0] = '-';
    break;
  }
  for (int i = 0; i < 9; i++)
    out[1 + i] = (m & (0400u >> i)) ? rwx[i] : '-';
  if (m & S_ISUID) out[3] = (m & S_IXUSR) ? 's' : 'S';
  if (m & S_ISGID) out[6] = (m & S_IXGRP) ? 's' : 'S';
  if (m & S_ISVTX) out[9] = (m & S_IXOTH) ? 't' : 'T';
  out[10] = 0;
}

static void fmt_id(char *buf, size_t n, uint32_t id) {
  if (id == SMB3_NO_ID)
    snprintf(buf, n, "?");
  else
    snprintf(buf, n, "%u", id);
}

/* ls -l: path is the entry's path in the share (for a symlink's target). */
static void print_long(smb3_client *c, const char *path, const char *name, const struct smb3_stat *st) {
  char tb[32], mode[11], u[16], g[16], target[4097] = "";
  fmt_time(tb, sizeof tb, &st->mtime);
  cli_mode_string(st, mode);
  fmt_id(u, sizeof u, st->uid);
  fmt_id(g, sizeof g, st->gid);
  if ((st->mode & S_IFMT) == S_IFLNK && smb3_readlink(c, path, target, sizeof target) < 0)
    snprintf(target, sizeof target, "?");
  printf("%s %3u %5s %5s %12llu  %s  %s%s%s\n", mode, st->nlink, u, g, (unsigned long long)st->size, tb, name,
         target[0] ? " -> " : "", target);
}

static const char *share_type(uint32_t type, char *buf, size_t n) {
  switch (type & SMB3_SHARE_TYPE_MASK) {
  case SMB3_SHARE_DISK:
    return "Disk";
  case SMB3_SHARE_PRINTQ:
    return "Printer";
  case SMB3_SHARE_DEVICE:
    return "Device";
  case SMB3_SHARE_IPC:
    return "IPC";
  default:
    snprintf(buf, n, "0x%x", type);
    return buf;
  }
}

static int share_hidden(const struct smb3_share *s) {
  size_t n = strlen(s->name);
  return n && s->name[n - 1] == '$';
}

/* smb3 ls smb://HOST/: the server's shares under a header, as smbclient -L shows them. */
static int list_shares(struct cli *cli) {
  int rc = cli_connect(cli, "ls");
  if (rc) return rc;
  struct smb3_share *s;
  int n = smb3_list_shares(cli->client, &s);
  if (n < 0) return cli_fail(cli, "ls", n);
  int w = 15;
  for (int i = 0; i < n; i++)
    if ((cli->all || !share_hidden(&s[i])) && (int)strlen(s[i].name) > w) w = (int)strlen(s[i].name);
  printf("%-*s %-9s %s\n%-*s %-9s %s\n", w, "Sharename", "Type", "Comment", w, "---------", "----",
         "-------");
  for (int i = 0; i < n; i++) {
    char tb[16];
    if (!cli->all && share_hidden(&s[i])) continue;
    const char *t = share_type(s[i].type, tb, sizeof tb);
    if (s[i].comment[0])
      printf("%-*s %-9s %s\n", w, s[i].name, t, s[i].comment);
    else
      printf("%-*s %s\n", w, s[i].name, t); /* no trailing blanks */
  }
  smb3_shares_free(s);
  return 0;
}

int cmd_ls(struct cli *cli, int argc, char **argv) {
  (void)argc;
  int rc = cli_parse_server(cli, "ls", argv[0]);
  if (rc) return rc;
  if (!cli->opts.share) return list_shares(cli);
  if ((rc = cli_connect(cli, "ls"))) return rc;
  const char *path = cli->opts.path;
  struct smb3_stat st;
  if (path[0]) {
    rc = smb3_stat(cli->client, path, &st);
    if (rc) return cli_fail(cli, "ls", rc);
    if (!st.is_dir) {
      if (cli->long_list)
        print_long(cli->client, path, path, &st);
      else
        print_entry(path, &st);
      return 0;
    }
  }
  smb3_dir *d;
  rc = smb3_opendir(cli->client, path, &d);
  if (rc) return cli_fail(cli, "ls", rc);
  struct smb3_dirent e;
  while ((rc = smb3_readdir(d, &e)) > 0) {
    if (!cli->long_list) {
      print_entry(e.name, &e.st);
      continue;
    }
    char full[8192];
    snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "/" : "", e.name);
    print_long(cli->client, full, e.name, &e.st);
  }
  int crc = smb3_closedir(d);
  if (rc < 0) return cli_fail(cli, "ls", rc);
  if (crc) return cli_fail(cli, "ls", crc);
  return 0;
}

static const char *stat_type(const struct smb3_stat *st) {
  switch (st->mode & S_IFMT) {
  case S_IFDIR:
    return "directory";
  case S_IFLNK:
    return "symlink";
  case S_IFIFO:
    return "fifo";
  case S_IFSOCK:
    return "socket";
  case S_IFCHR:
    return "character device";
  case S_IFBLK:
    return "block device";
  default:
    return "file";
  }
}

int cmd_stat(struct cli *cli, int argc, char **argv) {
  (void)argc;
  int rc = cli_parse(cli, "stat", argv[0]);
  if (rc || (rc = cli_connect(cli, "stat"))) return rc;
  struct smb3_stat st;
  rc = smb3_stat(cli->client, cli->opts.path, &st);
  if (rc) return cli_fail(cli, "stat", rc);
  char a[32], m[32], c[32], b[32];
  fmt_time(a, sizeof a, &st.atime);
  fmt_time(m, sizeof m, &st.mtime);
  fmt_time(c, sizeof c, &st.ctime);
  fmt_time(b, sizeof b, &st.btime);
  printf("name: %s\ntype: %s\nsize: %llu\nallocation: %llu\nfile id: %llu\nattributes: 0x%08x\nlinks: %u\n"
         "access: %s\nmodify: %s\nchange: %s\nbirth: %s\n",
         cli->opts.path[0] ? cli->opts.path : "/", stat_type(&st), (unsigned long long)st.size,
         (unsigned long long)st.alloc_size, (unsigned long long)st.ino, st.attributes, st.nlink, a, m, c, b);
  if (st.posix) {
    char mode[11], u[16], g[16];
    cli_mode_string(&st, mode);
    fmt_id(u, sizeof u, st.uid);
    fmt_id(g, sizeof g, st.gid);
    printf("mode: %04o (%s)\nuid: %s\ngid: %s\ndevice: %u\n", st.mode & 07777u, mode, u, g, st.dev);
    if ((st.mode & S_IFMT) == S_IFLNK) {
      char target[4097];
      if (smb3_readlink(cli->client, cli->opts.path, target, sizeof target) >= 0)
        printf("target: %s\n", target);
    }
  }
  return 0;
}

int cmd_df(struct cli *cli, int argc, char **argv) {
  (void)argc;
  int rc = cli_parse(cli, "df", argv[0]);
  if (rc || (rc = cli_connect(cli, "df"))) return rc;
  struct smb3_statvfs sv;
  rc = smb3_statvfs(cli->client, &sv);
  if (rc) return cli_fail(cli, "df", rc);
  unsigned long long k = 1024;
  printf("%-30s %14s %14s %14s\n", "share", "1K-blocks", "used", "available");
  printf("//%s/%-24s %14llu %14llu %14llu\n", cli->opts.host, cli->opts.share,
         (unsigned long long)(sv.blocks * sv.bsize / k),
         (unsigned long long)((sv.blocks - sv.bfree) * sv.bsize / k),
         (unsigned long long)(sv.bavail * sv.bsize / k));
  return 0;
}
