/* main.c - smb3: the command-line client. Global options come before the subcommand, a command's
 * own options (command_options: put --inplace) after its name:
 *   smb3 [-o OPTIONS] [-A FILE] [--stats] [-q] COMMAND [COMMAND-OPTIONS] ARGS...
 *   smb3 --help | --version | help [COMMAND]
 * Exit status (docs/man/smb3.1): 0 success, 1 the operation failed, 2 usage error (the command
 * line could not be used: unknown option or command, wrong number of arguments, a malformed URL,
 * -o option or credentials file). */
#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* One row per command: main() checks the number of arguments against min_args..max_args before
 * calling fn, so a command never sees a wrong count; `smb3 help NAME` prints args and details. */
static const struct command {
  const char *name;
  int (*fn)(struct cli *, int, char **);
  int min_args, max_args;
  const char *args;
  const char *summary;
  const char *details;
} commands[] = {
    {"ls", cmd_ls, 1, 1, "URL", "list a directory (or one file), or a server's shares",
     "One line per entry: type (d or -), w or r (the read-only attribute), size in bytes,\n"
     "modification time (UTC) and name; directories end in '/'. A URL naming a file lists that file.\n"
     "A URL with no share (smb://HOST/) lists the server's shares, as smbclient -L does: name, type\n"
     "(Disk, Printer, Device, IPC) and comment, one share a line under a header.\n"
     "\n"
     "-a, --all  also list hidden shares (names ending in '$', IPC$ among them).\n"
     "-l  ls -l's columns: mode (type character and rwx bits), links, owner uid, group gid, size,\n"
     "    modification time (UTC), name, and ' -> TARGET' for a symbolic link. On a share without\n"
     "    the SMB3 POSIX extensions the mode is synthesised and the owner and group show as '?'.\n"},
    {"stat", cmd_stat, 1, 1, "URL", "show a file's attributes",
     "Name, type, size, allocation size, server file id, attributes (FILE_ATTRIBUTE_* in hex),\n"
     "link count, and access, modify, change and birth times (UTC). On a share with the SMB3 POSIX\n"
     "extensions also the mode (octal and as ls -l shows it), uid, gid and device.\n"},
    {"cat", cmd_cat, 1, 1, "URL", "write a file to standard output",
     "Reads the file up to the size it had when it was opened, through the pipelined READ engine.\n"},
    {"get", cmd_get, 1, 2, "URL [LOCAL]", "download a file (atomically: temp name, then rename)",
     "LOCAL defaults to the file's name in the current directory; an existing directory as LOCAL\n"
     "receives the file under its own name. The data goes to a hidden temporary file next to LOCAL,\n"
     "which is synced and renamed to LOCAL only when complete; a failed get leaves no file.\n"
     "\n"
     "-r  a whole directory tree (as cp -r: into LOCAL/NAME when LOCAL is a directory), up to 32\n"
     "    files in flight, one round trip per small file; every file that fails is named and\n"
     "    the exit status is 1; a summary line at the end. See smb3(1).\n"},
    {"put", cmd_put, 2, 2, "LOCAL URL", "upload a file (atomically: temp name, then rename; or --inplace)",
     "A URL that ends in '/', names a directory or the share's root receives LOCAL under its own\n"
     "name. The data goes to a hidden temporary name in the target directory, renamed over the\n"
     "target when the server has acknowledged every WRITE; on failure it is removed and an existing\n"
     "target is left as it was. Until the rename the share needs room for both the old and the new\n"
     "file, and the result is a new file: nothing of the old one's identity is kept (its file id,\n"
     "hard links, extended attributes and security descriptor). A regular file is sent from the\n"
     "page cache with sendfile(2) unless the session signs or seals.\n"
     "\n"
     "--inplace  write into the target itself (created if missing): its size is set to LOCAL's,\n"
     "           then the data written over it. It keeps its identity (a hard link sees the new\n"
     "           bytes) and needs no room for a second copy, but a failed upload leaves it partly\n"
     "           written: exit status 1, and the message says so.\n"
     "-r         a whole directory tree, as get -r (into URL/NAME when URL is a directory);\n"
     "           symbolic links and special files are skipped with a warning.\n"},
    {"rm", cmd_rm, 1, 1, "URL", "delete a file", ""},
    {"mkdir", cmd_mkdir, 1, 1, "URL", "create a directory", ""},
    {"rmdir", cmd_rmdir, 1, 1, "URL", "remove an empty directory", ""},
    {"cp", cmd_cp, 2, 2, "URL NEWPATH", "copy within the share, by the server (NEWPATH: path or smb:// URL)",
     "NEWPATH is a path on the same share or an smb:// URL of the same server and share; one that\n"
     "ends in '/' or names a directory receives the file under its own name. The server copies the\n"
     "data (FSCTL_SRV_COPYCHUNK_WRITE: nothing crosses the network); a server that cannot copy gets\n"
     "it through this client. Written to a temporary name, renamed over NEWPATH when complete.\n"
     "\n"
     "-r  a whole directory tree, as get -r (into NEWPATH/NAME when NEWPATH is a directory).\n"},
    {"mv", cmd_mv, 2, 2, "URL NEWPATH", "rename within the share (NEWPATH: path or smb:// URL)",
     "NEWPATH is the new name (a path on the same share or an smb:// URL of the same server and\n"
     "share); an existing file of that name is not replaced.\n"},
    {"ln", cmd_ln, 2, 2, "URL NEWPATH", "a hard link: NEWPATH becomes a second name of the file",
     "NEWPATH (a path or an smb:// URL of the same share) must not exist yet.\n"
     "\n"
     "-s  smb3 ln -s TARGET URL: a symbolic link at URL whose target is the string TARGET (a reparse\n"
     "    point, IO_REPARSE_TAG_SYMLINK; Samba keeps it in an extended attribute of a regular file).\n"},
    {"chmod", cmd_chmod, 2, 2, "MODE URL", "set the permission bits (octal, 0..0777; SMB3 POSIX shares)",
     "MODE is octal. Needs the SMB3 POSIX extensions (Samba 4.22 with 'smb3 unix extensions'), which\n"
     "set only the 0777 bits this way: setuid, setgid and sticky are refused.\n"},
    {"chown", cmd_chown, 2, 2, "UID[:GID] URL", "set the owner and/or group (numeric; SMB3 POSIX shares)",
     "UID, UID:GID or :GID, as numbers (the server's Unix ids). Needs the SMB3 POSIX extensions; the\n"
     "server decides who may (root, or the owner giving a file to one of its groups).\n"},
    {"df", cmd_df, 1, 1, "URL", "show the share's size and free space",
     "Size, used and available space of the share in 1024-byte blocks.\n"},
    {"stats", cmd_stats, 1, 1, "MOUNTPOINT", "counters of an smb3fs mount as JSON",
     "Reads the counters of the smb3fs mounted at MOUNTPOINT (its root directory) with the\n"
     "SMB3FS_IOC_STATS ioctl and prints them as one JSON object; no connection is made.\n"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const char global_usage[] = "usage: smb3 [-o OPTIONS] [-A FILE] [-k] [--stats] [-q] COMMAND ARGS...\n"
                                   "       smb3 --help | --version | help COMMAND\n";

static void usage(FILE *to) {
  fprintf(to, "%s\ncommands:\n", global_usage);
  for (size_t i = 0; i < N_COMMANDS; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].args);
    fprintf(to, "  %-23s %s\n", head, commands[i].summary);
  }
  fprintf(to, "\nURL: smb://[DOMAIN;]USER[:PASSWORD]@HOST[:PORT]/SHARE[/PATH]\n"
              "password: from the URL, -o password=, -A FILE (username=/password=/domain= lines)\n"
              "          or the PASSWD environment variable\n"
              "options (-o, comma-separated): vers=2.0|2.1|3.0|3.0.2|3.1.1, min_vers=VERSION, sign, seal,\n"
              "          port=N, rsize=N, wsize=N, max_inflight=N, credits=N, nocompound, timeout=S, "
              "connect_timeout=S,\n"
              "          echo_interval=S, posix, noposix, username=, password=, domain=, credentials=FILE,\n"
              "          sec=krb5|ntlmssp, ip=ADDR (connect there, HOST names the server), krb5_keytab=FILE\n"
              "-k, --kerberos: log on with the Kerberos ticket in the credential cache (kinit; sec=krb5)\n"
              "exit status: 0 success, 1 the operation failed, 2 usage error. See smb3(1).\n");
}

/* Options of one command, after its name (`smb3 put --inplace LOCAL URL`): each sets an int in
 * struct cli. `--` ends them (for a LOCAL that begins with "--"). */
static const struct command_option {
  const char *cmd, *name;
  size_t field; /* offsetof(struct cli, ...) */
} command_options[] = {
    {"put", "--inplace", offsetof(struct cli, inplace)},
    {"get", "-r", offsetof(struct cli, recursive)},
    {"put", "-r", offsetof(struct cli, recursive)},
    {"cp", "-r", offsetof(struct cli, recursive)},
    {"ls", "-l", offsetof(struct cli, long_list)},
    {"ln", "-s", offsetof(struct cli, symlink)},
    {"ls", "-a", offsetof(struct cli, all)},
    {"ls", "--all", offsetof(struct cli, all)},
};
#define N_COMMAND_OPTIONS (sizeof command_options / sizeof command_options[0])

/* c's options, " [-a] [--all]", into buf (empty when it has none): shown after the operands,
 * taken anywhere among them. */
static const char *command_option_list(const struct command *c, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (size_t i = 0; i < N_COMMAND_OPTIONS && k < n; i++)
    if (!strcmp(command_options[i].cmd, c->name))
      k += (size_t)snprintf(buf + k, n - k, " [%s]", command_options[i].name);
  return buf;
}

/* The index of c's option a in command_options, or -1. */
static int command_option_find(const struct command *c, const char *a) {
  for (size_t j = 0; j < N_COMMAND_OPTIONS; j++)
    if (!strcmp(command_options[j].cmd, c->name) && !strcmp(command_options[j].name, a)) return (int)j;
  return -1;
}

/* Takes c's options out of args into cli: the operands end up first, in their order, and *nargs
 * becomes their count (args is only permuted: main() frees its elements). An argument that begins
 * with "--" before a "--" and is not one of c's options is a usage error; one that begins with a
 * single '-' is an option when it is one of c's ("ls -a") and an operand otherwise (a LOCAL file
 * named "-x"), as before commands had short options. */
static int command_options_parse(struct cli *cli, const struct command *c, int *nargs, char **args) {
  int k = 0, ended = 0;
  for (int i = 0; i < *nargs; i++) {
    char *a = args[i];
    int j = ended ? -1 : command_option_find(c, a);
    if (j < 0 && (ended || strncmp(a, "--", 2))) {
      memmove(args + k + 1, args + k, (size_t)(i - k) * sizeof *args); /* the taken ones move up */
      args[k++] = a;
      continue;
    }
    if (j < 0 && !a[2]) { /* "--" */
      ended = 1;
      continue;
    }
    if (j < 0) return cli_usage_error(c->name, "unknown option '%s' (see 'smb3 help %s')", a, c->name);
    *(int *)((char *)cli + command_options[j].field) = 1;
  }
  *nargs = k;
  return CLI_OK;
}

static const struct command *command_find(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (!strcmp(name, commands[i].name)) return &commands[i];
  return NULL;
}

static void command_usage(FILE *to, const struct command *c) {
  char opts[128];
  /* The command's options after its operands ("ls URL [-a] [--all]"): they may stand anywhere. */
  fprintf(to, "usage: smb3 [-o OPTIONS] [-A FILE] [-k] [--stats] [-q] %s %s%s\n\n%c%s.\n%s%s", c->name,
          c->args, command_option_list(c, opts, sizeof opts), toupper((unsigned char)c->summary[0]),
          c->summary + 1, c->details[0] ? "\n" : "", c->details);
}

static void version(void) {
  printf("smb3 %s\nlibsmb3 %s\n", SMB3_VERSION_STRING, smb3_version());
}

/* smb3 help [COMMAND] */
static int cmd_help(int argc, char **argv) {
  if (argc == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (argc > 1) return cli_usage_error("help", "usage: smb3 help [COMMAND]");
  const struct command *c = command_find(argv[0]);
  if (!c) return cli_usage_error("help", "unknown command '%s' (see 'smb3 --help')", argv[0]);
  command_usage(stdout, c);
  return CLI_OK;
}

/* -o and -A are checked before any command runs: a mistyped option or an unreadable credentials
 * file is a usage error (exit 2) even for a command that makes no connection, and it is found
 * before anything is sent. cli_parse() applies them again, in their order of precedence. */
static int options_check(const struct cli *cli, const char *cmd) {
  struct smb3_options o;
  char err[512] = "";
  smb3_options_init(&o);
  int rc = 0;
  if (cli->authfile) rc = smb3_options_credentials_file(&o, cli->authfile, err, sizeof err);
  int exposed = o.credentials_exposed;
  if (!rc) rc = smb3_options_parse(&o, cli->optstr, 0, err, sizeof err);
  /* once, here: cli_parse() reads the files again for every URL */
  if (!rc && exposed)
    fprintf(stderr, "smb3: warning: credentials file '%s' is readable by group or others (chmod 600 it)\n",
            cli->authfile);
  else if (!rc && o.credentials_exposed)
    fprintf(stderr, "smb3: warning: the credentials= file is readable by group or others (chmod 600 it)\n");
  smb3_options_free(&o);
  return rc ? cli_usage_error(cmd, "%s", err[0] ? err : smb3_strerror(rc)) : CLI_OK;
}

/* "smb3: CMD: message" (or "smb3: message" before a command is known): one line on stderr. */
static void verror(const char *cmd, const char *fmt, va_list ap) {
  if (cmd)
    fprintf(stderr, "smb3: %s: ", cmd);
  else
    fputs("smb3: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

int cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(cmd, fmt, ap);
  va_end(ap);
  return CLI_FAILED;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(cmd, fmt, ap);
  va_end(ap);
  return CLI_USAGE;
}

int cli_fail(struct cli *cli, const char *cmd, int rc) {
  const char *msg = cli->client ? smb3_last_error(cli->client) : "";
  return cli_error(cmd, "%s", msg && msg[0] ? msg : smb3_strerror(rc));
}

static int parse_url(struct cli *cli, const char *cmd, const char *url, int server_only_ok) {
  char err[512];
  smb3_options_free(&cli->opts);
  smb3_options_init(&cli->opts);
  int rc = server_only_ok ? smb3_url_parse_server(&cli->opts, url, err, sizeof err)
                          : smb3_url_parse(&cli->opts, url, err, sizeof err);
  if (rc) return cli_usage_error(cmd, "%s", err);
  if (cli->authfile && smb3_options_credentials_file(&cli->opts, cli->authfile, err, sizeof err))
    return cli_usage_error(cmd, "%s", err);
  if (smb3_options_parse(&cli->opts, cli->optstr, 0, err, sizeof err)) return cli_usage_error(cmd, "%s", err);
  if (cli->kerberos) cli->opts.sec = 2; /* -k: Kerberos required, as smbclient's */
  const char *env = getenv("PASSWD");
  if (!cli->opts.password && env && !(cli->opts.password = strdup(env)))
    return cli_error(cmd, "out of memory");
  /* Holding a password: no core dump, and no ptrace or /proc/PID/mem by other processes of the
   * same user (as the kernel does for setuid programs). */
  if (cli->opts.password && cli->opts.password[0]) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  return CLI_OK;
}

int cli_parse(struct cli *cli, const char *cmd, const char *url) {
  return parse_url(cli, cmd, url, 0);
}

int cli_parse_server(struct cli *cli, const char *cmd, const char *url) {
  return parse_url(cli, cmd, url, 1);
}

/* Places visited while following DFS referrals: "server\\share\\path", to refuse a loop. */
static int dfs_visited(char seen[][1024], int n, const char *place) {
  for (int i = 0; i < n; i++)
    if (!strcasecmp(seen[i], place)) return 1;
  return 0;
}

static int cli_follow_dfs(struct cli *cli, const char *cmd) {
  char seen[SMB3_DFS_MAX_HOPS + 1][1024];
  int nseen = 0;
  const char *host = cli->opts.host, *share = cli->opts.share;
  int moved = 0;
  snprintf(seen[nseen++], sizeof seen[0], "%s\\%s\\%s", host, share, cli->opts.path ? cli->opts.path : "");
  for (int hop = 0; smb3_dfs_share(cli->client); hop++) {
    smb3_client *t;
    char *path;
    int rc = smb3_dfs_follow(cli->client, cli->opts.path ? cli->opts.path : "", &t, &path);
    if (rc) return cli_fail(cli, cmd, rc);
    if (t == cli->client) break;
    if (hop == SMB3_DFS_MAX_HOPS) {
      smb3_disconnect(t);
      free(path);
      return cli_error(cmd, "DFS: more than %d referrals for '%s' (a loop of links?)", SMB3_DFS_MAX_HOPS,
                       seen[0]);
    }
    cli->dfs_hops[cli->n_dfs_hops++] = cli->client;
    cli->client = t;
    if (!moved++) {
      cli->dfs_from = cli->opts.path ? cli->opts.path : strdup("");
      if (!cli->dfs_from) return cli_error(cmd, "out of memory");
    } else {
      free(cli->opts.path);
    }
    cli->opts.path = path;
    char place[1024];
    snprintf(place, sizeof place, "%s\\%s\\%s", smb3_client_host(t), smb3_client_share(t), path);
    if (dfs_visited(seen, nseen, place))
      return cli_error(cmd, "DFS: the referrals for '%s' lead back to %s (a loop of links)", seen[0], place);
    snprintf(seen[nseen++], sizeof seen[0], "%s", place);
  }
  return CLI_OK;
}

int cli_connect(struct cli *cli, const char *cmd) {
  char err[512];
  int rc = smb3_connect(&cli->opts, &cli->client, err, sizeof err);
  if (rc) return cli_error(cmd, "%s", err);
  return cli_follow_dfs(cli, cmd);
}

/* The length of the longest common tail of a and b that is whole path components ('/'-separated,
 * leading and trailing '/' ignored by the callers' normalization). */
static size_t common_tail(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), k = 0, best = 0;
  while (k < la && k < lb && a[la - 1 - k] == b[lb - 1 - k]) {
    k++;
    int edge_a = k == la || a[la - k - 1] == '/', edge_b = k == lb || b[lb - k - 1] == '/';
    if (edge_a && edge_b) best = k;
  }
  return best;
}

int cli_dfs_rebase(struct cli *cli, const char *cmd, char *path, size_t n) {
  if (!cli->dfs_from) return CLI_OK;
  const char *from = cli->dfs_from, *now = cli->opts.path;
  while (*from == '/')
    from++;
  while (*now == '/')
    now++;
  /* from = LINK + tail, now = TARGET + tail: the link's part and the target's */
  size_t tail = common_tail(from, now);
  size_t link_len = strlen(from) - tail, target_len = strlen(now) - tail;
  while (link_len && from[link_len - 1] == '/')
    link_len--;
  while (target_len && now[target_len - 1] == '/')
    target_len--;
  const char *p = path;
  while (*p == '/')
    p++;
  if (strncasecmp(p, from, link_len) || (p[link_len] && p[link_len] != '/'))
    return cli_usage_error(cmd, "'%s' is not under the DFS link of the first path (%.*s)", path,
                           (int)link_len, from);
  char out[4096];
  const char *rest = p + link_len;
  while (*rest == '/')
    rest++;
  int w = snprintf(out, sizeof out, "%.*s%s%s", (int)target_len, now, target_len && rest[0] ? "/" : "", rest);
  if (w < 0 || (size_t)w >= n || (size_t)w >= sizeof out) return cli_usage_error(cmd, "path too long");
  memcpy(path, out, (size_t)w + 1);
  return CLI_OK;
}

/* --stats of every client the command used (DFS hops first, then cli->client). */
static void stats_add(struct smb3_stats *a, const struct smb3_stats *b) {
  a->requests += b->requests;
  a->round_trips += b->round_trips;
  a->bytes_read += b->bytes_read;
  a->bytes_written += b->bytes_written;
  a->reads += b->reads;
  a->writes += b->writes;
  if (b->max_read_size > a->max_read_size) a->max_read_size = b->max_read_size;
  if (b->max_write_size > a->max_write_size) a->max_write_size = b->max_write_size;
  if (b->credits_max_in_flight > a->credits_max_in_flight)
    a->credits_max_in_flight = b->credits_max_in_flight;
  for (size_t i = 0; i < sizeof a->per_command / sizeof a->per_command[0]; i++)
    a->per_command[i] += b->per_command[i];
  a->io_ns += b->io_ns;
  a->bytes_copied += b->bytes_copied;
  a->compound_fallback |= b->compound_fallback;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_start(struct progress *p, const struct cli *cli, uint64_t total) {
  p->on = !cli->quiet && isatty(2);
  p->total = total;
  p->start = p->last = now_s();
}

static void human(char *buf, size_t n, double v) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (v >= 1024 && i < 4)
    v /= 1024, i++;
  snprintf(buf, n, "%.1f %s", v, u[i]);
}

static void progress_draw(struct progress *p, uint64_t done, double t) {
  double el = t - p->start, rate = el > 0 ? (double)done / el : 0;
  char d[32], tot[32], r[32];
  human(d, sizeof d, (double)done);
  human(tot, sizeof tot, (double)p->total);
  human(r, sizeof r, rate);
  double eta = rate > 0 && p->total > done ? (double)(p->total - done) / rate : 0;
  fprintf(stderr, "\r%s / %s  %s/s  ETA %d:%02d   ", d, tot, r, (int)eta / 60, (int)eta % 60);
}

void progress_update(uint64_t done, void *arg) {
  struct progress *p = arg;
  if (!p->on) return;
  double t = now_s();
  if (t - p->last < 0.1) return;
  p->last = t;
  progress_draw(p, done, t);
}

void progress_end(struct progress *p, uint64_t done) {
  if (!p->on) return;
  progress_draw(p, done, now_s());
  fputc('\n', stderr);
}

static int run(int argc, char **argv) {
  struct cli cli = {0};
  static const struct option longopts[] = {
      {"options", required_argument, 0, 'o'}, {"authentication-file", required_argument, 0, 'A'},
      {"stats", no_argument, 0, 'S'},         {"kerberos", no_argument, 0, 'k'},
      {"quiet", no_argument, 0, 'q'},         {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},       {0, 0, 0, 0}};
  int ch;
  opterr = 0; /* our own one-line messages */
  /* '+': options end at the command name; ':' first: a missing value is reported as ':' */
  while ((ch = getopt_long(argc, argv, "+:o:A:kqhV", longopts, NULL)) != -1) {
    switch (ch) {
    case 'o':
      cli.optstr = optarg;
      break;
    case 'A':
      cli.authfile = optarg;
      break;
    case 'S':
      cli.stats = 1;
      break;
    case 'q':
      cli.quiet = 1;
      break;
    case 'k':
      cli.kerberos = 1;
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    case 'V':
      version();
      return CLI_OK;
    case ':':
      return cli_usage_error(NULL, "option '%s' needs a value (see 'smb3 --help')", argv[optind - 1]);
    default:
      if (optopt) return cli_usage_error(NULL, "unknown option '-%c' (see 'smb3 --help')", optopt);
      return cli_usage_error(NULL, "unknown option '%s' (see 'smb3 --help')", argv[optind - 1]);
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[optind];
  int nargs = argc - optind - 1;
  char **args = argv + optind + 1;
  if (!strcmp(name, "help")) return cmd_help(nargs, args);
  const struct command *c = command_find(name);
  if (!c) return cli_usage_error(NULL, "unknown command '%s' (see 'smb3 --help')", name);
  if (nargs == 1 && (!strcmp(args[0], "--help") || !strcmp(args[0], "-h"))) {
    command_usage(stdout, c);
    return CLI_OK;
  }
  int rc = command_options_parse(&cli, c, &nargs, args);
  if (rc) return rc;
  if (nargs < c->min_args || nargs > c->max_args)
    return cli_usage_error(name, "usage: smb3 %s %s (see 'smb3 help %s')", name, c->args, name);
  rc = options_check(&cli, name);
  if (rc) return rc;
  rc = c->fn(&cli, nargs, args);
  if (cli.client) {
    if (cli.stats) {
      struct smb3_stats s = {0}, h;
      for (int i = 0; i < cli.n_dfs_hops; i++) {
        smb3_get_stats(cli.dfs_hops[i], &h);
        stats_add(&s, &h);
      }
      smb3_get_stats(cli.client, &h);
      stats_add(&s, &h);
      char *j = smb3_stats_json(&s);
      if (j) fprintf(stderr, "%s\n", j);
      free(j);
    }
    smb3_disconnect(cli.client);
  }
  for (int i = 0; i < cli.n_dfs_hops; i++)
    smb3_disconnect(cli.dfs_hops[i]);
  free(cli.dfs_from);
  smb3_options_free(&cli.opts);
  return rc;
}

int main(int argc, char **argv) {
  /* A transfer can run for minutes: keep a password given on the command line out of ps. */
  char **args = smb3_argv_hide_secrets(argc, argv);
  if (!args) {
    fprintf(stderr, "smb3: out of memory\n");
    return CLI_FAILED;
  }
  int rc = run(argc, args);
  smb3_argv_free(args);
  return rc;
}
