/* cmd_info.c - ls, stat, df. */
#include <stdio.h>
#include <string.h>
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
  printf("%-*s %-9s %s\n%-*s %-9s %s\n", w, "Sharename", "Type", "Comment", w, "---------", "----", "-------");
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
      print_entry(path, &st);
      return 0;
    }
  }
  smb3_dir *d;
  rc = smb3_opendir(cli->client, path, &d);
  if (rc) return cli_fail(cli, "ls", rc);
  struct smb3_dirent e;
  while ((rc = smb3_readdir(d, &e)) > 0)
    print_entry(e.name, &e.st);
  int crc = smb3_closedir(d);
  if (rc < 0) return cli_fail(cli, "ls", rc);
  if (crc) return cli_fail(cli, "ls", crc);
  return 0;
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
         cli->opts.path[0] ? cli->opts.path : "/", st.is_dir ? "directory" : "file",
         (unsigned long long)st.size, (unsigned long long)st.alloc_size, (unsigned long long)st.ino,
         st.attributes, st.nlink, a, m, c, b);
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
