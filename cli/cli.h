/* cli.h - shared state of the smb3 command-line client. */
#ifndef SMB3_CLI_H
#define SMB3_CLI_H

#include <stdint.h>

#include "smb3/smb3.h"

/* Exit status of smb3: every path out of main() returns one of these. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

struct cli {
  const char *optstr;   /* -o */
  const char *authfile; /* -A */
  int stats;            /* --stats */
  int quiet;            /* -q */
  int kerberos;         /* -k, --kerberos: sec=krb5 */
  int inplace;          /* put --inplace */
  int long_list;        /* ls -l */
  int symlink;          /* ln -s */
  int all;              /* ls -a: hidden shares too */
  int recursive;        /* get -r, put -r, cp -r: whole trees (cli/cmd_tree.c) */
  smb3_client *client;  /* connected by cli_connect(); reported by --stats at exit */
  /* DFS: the clients cli_connect() went through before cli->client (the URL's share first), kept
   * until exit so that --stats counts their round trips too */
  smb3_client *dfs_hops[SMB3_DFS_MAX_HOPS];
  int n_dfs_hops;
  char *dfs_from; /* cli->opts.path as the URL gave it, when DFS moved it (cli_dfs_rebase) */
  struct smb3_options opts;
};

/* The URL, -A and -o (in rising precedence) and PASSWD into cli->opts. On failure prints
 * "smb3: <cmd>: <reason>" and returns CLI_USAGE (a malformed URL, -o option or credentials file).
 * Commands check what else they need of their arguments after it and before cli_connect(), so that
 * a usage error never costs a connection. */
int cli_parse(struct cli *cli, const char *cmd, const char *url);
/* The same for a URL that may name only the server (smb://HOST/): cli->opts.share is NULL then. */
int cli_parse_server(struct cli *cli, const char *cmd, const char *url);
/* Connect with cli->opts (after cli_parse). On a share in a DFS namespace, follows the referrals for
 * cli->opts.path (smb3_dfs_follow) and leaves cli->client on the target share and cli->opts.path
 * the path there. CLI_FAILED, after the message, when the connection or logon failed, no DFS
 * target answers, or the referrals loop. */
int cli_connect(struct cli *cli, const char *cmd);
/* A second path of the URL's share (cli_same_share_path), after cli_connect followed DFS referrals
 * for the first: rewritten in place to the same place on the target share. CLI_USAGE, after the
 * message, when it is not under the same DFS link as the first (or does not fit in n). */
int cli_dfs_rebase(struct cli *cli, const char *cmd, char *path, size_t n);
/* Print "smb3: <cmd>: <message>" (cmd NULL: "smb3: <message>") to stderr; return CLI_FAILED. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a command line that cannot be used as given; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The client's last error as a CLI error (CLI_FAILED). */
int cli_fail(struct cli *cli, const char *cmd, int rc);

/* Progress meter on stderr (only when it is a terminal and not -q). */
struct progress {
  int on;
  uint64_t total;
  double start, last;
};
void progress_start(struct progress *p, const struct cli *cli, uint64_t total);
void progress_update(uint64_t done, void *p);
void progress_end(struct progress *p, uint64_t done);

/* The commands. main() has checked argc against the command table (cli/main.c) before the call;
 * each returns the exit status. */
int cmd_get(struct cli *cli, int argc, char **argv);
int cmd_put(struct cli *cli, int argc, char **argv);
int cmd_cat(struct cli *cli, int argc, char **argv);
int cmd_ls(struct cli *cli, int argc, char **argv);
int cmd_stat(struct cli *cli, int argc, char **argv);
int cmd_df(struct cli *cli, int argc, char **argv);
int cmd_rm(struct cli *cli, int argc, char **argv);
int cmd_mkdir(struct cli *cli, int argc, char **argv);
int cmd_rmdir(struct cli *cli, int argc, char **argv);
int cmd_mv(struct cli *cli, int argc, char **argv);
int cmd_cp(struct cli *cli, int argc, char **argv);
int cmd_ln(struct cli *cli, int argc, char **argv);
/* get -r, put -r, cp -r (cli/cmd_tree.c): cmd_get, cmd_put and cmd_cp hand over to them. */
int cmd_get_tree(struct cli *cli, int argc, char **argv);
int cmd_put_tree(struct cli *cli, int argc, char **argv);
int cmd_cp_tree(struct cli *cli, int argc, char **argv);
/* A second path on the connected share (a path or an smb:// URL of the same share), without its
 * leading '/'; CLI_USAGE after printing why it is not one. */
int cli_same_share_path(struct cli *cli, const char *cmd, const char *arg, char *out, size_t n);
int cmd_stats(struct cli *cli, int argc, char **argv);
int cmd_chmod(struct cli *cli, int argc, char **argv);
int cmd_chown(struct cli *cli, int argc, char **argv);
/* ls -l's mode string of st (10 characters and a NUL). */
void cli_mode_string(const struct smb3_stat *st, char out[11]);

#endif
