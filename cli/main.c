/* main.c - smb3: the command-line client. Global options come before the subcommand:
 *   smb3 [-o OPTIONS] [-A FILE] [--stats] [-q] COMMAND ARGS... */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*fn)(struct cli *, int, char **);
  const char *usage;
} commands[] = {
    {"ls", cmd_ls, "ls URL                  list a directory (or one file)"},
    {"stat", cmd_stat, "stat URL                show a file's attributes"},
    {"cat", cmd_cat, "cat URL                 write a file to standard output"},
    {"get", cmd_get, "get URL [LOCAL]         download a file (atomically: temp name, then rename)"},
    {"put", cmd_put, "put LOCAL URL           upload a file (atomically: temp name, then rename)"},
    {"rm", cmd_rm, "rm URL                  delete a file"},
    {"mkdir", cmd_mkdir, "mkdir URL               create a directory"},
    {"rmdir", cmd_rmdir, "rmdir URL               remove an empty directory"},
    {"cp", cmd_cp, "cp URL NEWPATH          copy within the share, by the server (NEWPATH: path or smb:// URL)"},
    {"mv", cmd_mv, "mv URL NEWPATH          rename within the share (NEWPATH: path or smb:// URL)"},
    {"ln", cmd_ln, "ln URL NEWPATH          a hard link: NEWPATH becomes a second name of the file"},
    {"df", cmd_df, "df URL                  show the share's size and free space"},
    {"stats", cmd_stats, "stats MOUNTPOINT        counters of an smb3fs mount as JSON"},
};

static void usage(FILE *to) {
  fprintf(to, "usage: smb3 [-o OPTIONS] [-A FILE] [--stats] [-q] COMMAND ARGS...\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(to, "  %s\n", commands[i].usage);
  fprintf(to, "\nURL: smb://[DOMAIN;]USER[:PASSWORD]@HOST[:PORT]/SHARE[/PATH]\n"
              "password: from the URL, -o password=, -A FILE (username=/password=/domain= lines)\n"
              "          or the PASSWD environment variable\n"
              "options (-o, comma-separated): vers=2.0|2.1|3.0|3.0.2|3.1.1, sign, seal, port=N, rsize=N,\n"
              "          wsize=N, max_inflight=N, credits=N, nocompound, timeout=S, connect_timeout=S,\n"
              "          username=, password=, domain=, credentials=FILE\n");
}

int cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "smb3: %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

int cli_fail(struct cli *cli, const char *cmd, int rc) {
  const char *msg = cli->client ? smb3_last_error(cli->client) : "";
  return cli_error(cmd, "%s", msg && msg[0] ? msg : smb3_strerror(rc));
}

int cli_connect(struct cli *cli, const char *cmd, const char *url) {
  char err[512];
  smb3_options_init(&cli->opts);
  if (smb3_url_parse(&cli->opts, url, err, sizeof err)) return cli_error(cmd, "%s", err);
  if (cli->authfile && smb3_options_credentials_file(&cli->opts, cli->authfile, err, sizeof err))
    return cli_error(cmd, "%s", err);
  if (smb3_options_parse(&cli->opts, cli->optstr, 0, err, sizeof err)) return cli_error(cmd, "%s", err);
  const char *env = getenv("PASSWD");
  if (!cli->opts.password && env) cli->opts.password = strdup(env);
  int rc = smb3_connect(&cli->opts, &cli->client, err, sizeof err);
  if (rc) return cli_error(cmd, "%s", err);
  return 0;
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
  while (v >= 1024 && i < 4) v /= 1024, i++;
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

int main(int argc, char **argv) {
  struct cli cli = {0};
  static const struct option longopts[] = {{"options", required_argument, 0, 'o'},
                                           {"authentication-file", required_argument, 0, 'A'},
                                           {"stats", no_argument, 0, 'S'},
                                           {"quiet", no_argument, 0, 'q'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "+o:A:qh", longopts, NULL)) != -1) {
    switch (ch) {
    case 'o': cli.optstr = optarg; break;
    case 'A': cli.authfile = optarg; break;
    case 'S': cli.stats = 1; break;
    case 'q': cli.quiet = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[optind];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(name, commands[i].name)) continue;
    int rc = commands[i].fn(&cli, argc - optind - 1, argv + optind + 1);
    if (cli.client) {
      if (cli.stats) {
        struct smb3_stats s;
        smb3_get_stats(cli.client, &s);
        char *j = smb3_stats_json(&s);
        if (j) fprintf(stderr, "%s\n", j);
        free(j);
      }
      smb3_disconnect(cli.client);
    }
    smb3_options_free(&cli.opts);
    return rc;
  }
  fprintf(stderr, "smb3: unknown command '%s'\n", name);
  usage(stderr);
  return 2;
}
