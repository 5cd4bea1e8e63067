/* smb3-ops: run N metadata operations through libsmb3 and report time and round trips per op.
 *   smb3-ops [-o OPTIONS] [-n N] statvfs|stat|ls|listdir URL
 * Prints one line: op=<op> n=<N> seconds=<s> per_op_ms=<ms> round_trips_per_op=<r> */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smb3/smb3.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct list_wait {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int done, rc;
  size_t n;
};

static void list_done(int rc, const struct smb3_dirent *e, size_t n, void *arg) {
  (void)e;
  struct list_wait *w = arg;
  pthread_mutex_lock(&w->m);
  w->rc = rc;
  w->n = n;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->m);
}

/* The asynchronous whole-directory listing, waited for. */
static int listdir(smb3_client *c, const char *path) {
  struct list_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
  int rc = smb3_listdir_async(c, path, list_done, &w);
  if (rc) return rc;
  pthread_mutex_lock(&w.m);
  while (!w.done)
    pthread_cond_wait(&w.cv, &w.m);
  pthread_mutex_unlock(&w.m);
  return w.rc;
}

static int one(smb3_client *c, const char *op, const char *path) {
  if (!strcmp(op, "listdir")) return listdir(c, path);
  if (!strcmp(op, "statvfs")) {
    struct smb3_statvfs sv;
    return smb3_statvfs(c, &sv);
  }
  if (!strcmp(op, "stat")) {
    struct smb3_stat st;
    return smb3_stat(c, path, &st);
  }
  if (!strcmp(op, "ls")) {
    smb3_dir *d;
    int rc = smb3_opendir(c, path, &d);
    struct smb3_dirent e;
    if (!rc)
      while ((rc = smb3_readdir(d, &e)) > 0) {
      }
    int crc = d ? smb3_closedir(d) : 0;
    return rc < 0 ? rc : crc;
  }
  return SMB3_EINVAL;
}

int main(int argc, char **argv) {
  const char *optstr = NULL;
  long n = 1000;
  int ch;
  while ((ch = getopt(argc, argv, "o:n:")) != -1) {
    if (ch == 'o')
      optstr = optarg;
    else if (ch == 'n')
      n = strtol(optarg, NULL, 10);
    else
      return 2;
  }
  if (argc - optind != 2 || n < 1) {
    fprintf(stderr, "usage: smb3-ops [-o OPTIONS] [-n N] statvfs|stat|ls|listdir URL\n");
    return 2;
  }
  const char *op = argv[optind];
  struct smb3_options o;
  char err[512];
  smb3_options_init(&o);
  if (smb3_url_parse(&o, argv[optind + 1], err, sizeof err) ||
      smb3_options_parse(&o, optstr, 0, err, sizeof err)) {
    fprintf(stderr, "smb3-ops: %s\n", err);
    return 1;
  }
  const char *pw = getenv("PASSWD");
  if (!o.password && pw) o.password = strdup(pw);
  smb3_client *c;
  if (smb3_connect(&o, &c, err, sizeof err)) {
    fprintf(stderr, "smb3-ops: %s\n", err);
    smb3_options_free(&o);
    return 1;
  }
  struct smb3_stats s0, s1;
  smb3_get_stats(c, &s0);
  double t0 = now_s();
  int rc = 0;
  for (long i = 0; i < n && !rc; i++)
    rc = one(c, op, o.path);
  double t = now_s() - t0;
  smb3_get_stats(c, &s1);
  if (rc)
    fprintf(stderr, "smb3-ops: %s: %s\n", op, smb3_last_error(c));
  else
    printf("op=%s n=%ld seconds=%.4f per_op_ms=%.4f round_trips_per_op=%.3f\n", op, n, t,
           t * 1000 / (double)n, (double)(s1.round_trips - s0.round_trips) / (double)n);
  smb3_disconnect(c);
  smb3_options_free(&o);
  return rc ? 1 : 0;
}
