/* cmd_ns.c - namespace changes: rm, mkdir, rmdir, mv, ln. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int one_path(struct cli *cli, const char *cmd, int argc, char **argv,
                    int (*fn)(smb3_client *, const char *)) {
  (void)argc;
  int rc = cli_parse(cli, cmd, argv[0]);
  if (rc) return rc;
  if (!cli->opts.path[0]) return cli_usage_error(cmd, "no path in URL '%s'", argv[0]);
  if ((rc = cli_connect(cli, cmd))) return rc;
  rc = fn(cli->client, cli->opts.path);
  return rc ? cli_fail(cli, cmd, rc) : 0;
}

int cmd_rm(struct cli *cli, int argc, char **argv) {
  return one_path(cli, "rm", argc, argv, smb3_unlink);
}
int cmd_mkdir(struct cli *cli, int argc, char **argv) {
  return one_path(cli, "mkdir", argc, argv, smb3_mkdir);
}
int cmd_rmdir(struct cli *cli, int argc, char **argv) {
  return one_path(cli, "rmdir", argc, argv, smb3_rmdir);
}

/* A second path on the connected share: a path, or an smb:// URL naming the same server and share.
 * Written to out without leading '/'; 1 (after the message) if it is none. */
int cli_same_share_path(struct cli *cli, const char *cmd, const char *arg, char *out, size_t n) {
  const char *to = arg;
  struct smb3_options o;
  char err[512];
  smb3_options_init(&o);
  if (!strncmp(to, "smb://", 6)) {
    if (smb3_url_parse(&o, to, err, sizeof err)) {
      smb3_options_free(&o);
      return cli_usage_error(cmd, "%s", err);
    }
    if (strcmp(o.host, cli->opts.host) || strcmp(o.share, cli->opts.share)) {
      smb3_options_free(&o);
      const char *verb = !strcmp(cmd, "mv") ? "move" : !strcmp(cmd, "ln") ? "link" : "copy";
      return cli_usage_error(cmd, "cannot %s across servers or shares", verb);
    }
    to = o.path;
  }
  while (*to == '/')
    to++;
  snprintf(out, n, "%s", to);
  smb3_options_free(&o);
  return 0;
}

/* mv and ln: the URL's file gets the second argument's path (as its new name, or as one more). */
static int two_names(struct cli *cli, const char *cmd, int argc, char **argv,
                     int (*fn)(smb3_client *, const char *, const char *)) {
  (void)argc;
  int rc = cli_parse(cli, cmd, argv[0]);
  if (rc) return rc;
  if (!cli->opts.path[0]) return cli_usage_error(cmd, "no path in URL '%s'", argv[0]);
  char to[4096];
  if ((rc = cli_same_share_path(cli, cmd, argv[1], to, sizeof to))) return rc;
  if (!to[0]) return cli_usage_error(cmd, "empty target path");
  if ((rc = cli_connect(cli, cmd)) || (rc = cli_dfs_rebase(cli, cmd, to, sizeof to))) return rc;
  rc = fn(cli->client, cli->opts.path, to);
  return rc ? cli_fail(cli, cmd, rc) : 0;
}

static int rename_keep(smb3_client *c, const char *from, const char *to) {
  return smb3_rename(c, from, to, 0);
}
int cmd_mv(struct cli *cli, int argc, char **argv) {
  return two_names(cli, "mv", argc, argv, rename_keep);
}
/* ln -s TARGET URL */
static int ln_symlink(struct cli *cli, char **argv) {
  int rc = cli_parse(cli, "ln", argv[1]);
  if (rc) return rc;
  if (!cli->opts.path[0]) return cli_usage_error("ln", "no path in URL '%s'", argv[1]);
  if (!argv[0][0]) return cli_usage_error("ln", "empty symlink target");
  if ((rc = cli_connect(cli, "ln"))) return rc;
  rc = smb3_symlink(cli->client, argv[0], cli->opts.path);
  return rc ? cli_fail(cli, "ln", rc) : 0;
}

int cmd_ln(struct cli *cli, int argc, char **argv) {
  if (cli->symlink) return ln_symlink(cli, argv);
  return two_names(cli, "ln", argc, argv, smb3_link);
}

int cmd_chmod(struct cli *cli, int argc, char **argv) {
  (void)argc;
  char *end;
  unsigned long mode = strtoul(argv[0], &end, 8);
  if (!argv[0][0] || *end || mode > 07777) return cli_usage_error("chmod", "bad octal mode '%s'", argv[0]);
  int rc = cli_parse(cli, "chmod", argv[1]);
  if (rc) return rc;
  if ((rc = cli_connect(cli, "chmod"))) return rc;
  rc = smb3_chmod(cli->client, cli->opts.path, (uint32_t)mode);
  return rc ? cli_fail(cli, "chmod", rc) : 0;
}

/* "N" into *id; "" leaves it SMB3_NO_ID. */
static int parse_id(const char *s, size_t n, uint32_t *id) {
  *id = SMB3_NO_ID;
  if (!n) return 0;
  char buf[16], *end;
  if (n >= sizeof buf) return -1;
  memcpy(buf, s, n);
  buf[n] = 0;
  if (buf[0] < '0' || buf[0] > '9') return -1;
  unsigned long v = strtoul(buf, &end, 10);
  if (*end || v >= SMB3_NO_ID) return -1;
  *id = (uint32_t)v;
  return 0;
}

int cmd_chown(struct cli *cli, int argc, char **argv) {
  (void)argc;
  const char *spec = argv[0], *colon = strchr(spec, ':');
  uint32_t uid, gid;
  size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);
  if (parse_id(spec, ulen, &uid) || parse_id(colon ? colon + 1 : "", colon ? strlen(colon + 1) : 0, &gid) ||
      (uid == SMB3_NO_ID && gid == SMB3_NO_ID))
    return cli_usage_error("chown", "bad owner '%s' (UID, UID:GID or :GID, numeric)", spec);
  int rc = cli_parse(cli, "chown", argv[1]);
  if (rc) return rc;
  if ((rc = cli_connect(cli, "chown"))) return rc;
  rc = smb3_chown(cli->client, cli->opts.path, uid, gid);
  return rc ? cli_fail(cli, "chown", rc) : 0;
}
