/* dfs.c - DFS links below the mounted directory.
 *
 * The mount's connection (fs_conn) serves the mounted share. When the share is a DFS root and an
 * operation meets a link in it, the server answers STATUS_PATH_NOT_COVERED (SMB3_EDFS) and the
 * operation comes here (fs_dfs_retry): a helper thread asks the referral for the path
 * (smb3_dfs_follow_link: one IOCTL on the mount's connection, then a logon to the first target that
 * answers), keeps that connection for the link, and starts the operation again. From then on
 * fs_route sends every path under the link to the link's connection, relative to the target's
 * share. The connection is made on first use, reused for everything under the link, and logged on
 * again (on the same helper thread) when an operation finds it lost.
 *
 * One level: the target of a link is not searched for further links (an operation that meets one
 * there ends with EOPNOTSUPP), and rename or link across a link's edge is EXDEV. Open files
 * under a link whose connection was lost are not reopened (they end with EIO; new opens work). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "dfs.h"

struct dfs_link {
  struct dfs_link *next;
  char *prefix; /* the link's path in the mounted share ('/' separated) */
  char *tpath;  /* the path it names in the target's share ("" for its root) */
  char *host, *share;
  smb3_client *c; /* current connection (atomic: fs_route reads it unlocked) */
};

struct fs_dfs {
  pthread_mutex_t
      lock; /* guards links (the list; entries are never removed before the end), retired, active */
  pthread_cond_t idle;
  pthread_mutex_t work; /* one referral or logon at a time (helper threads) */
  struct dfs_link *links;
  smb3_client *
      *retired; /* lost link connections, disconnected at the end (handles may still point at them) */
  int nretired;
  int active; /* helper threads running */
  smb3_break_cb break_cb;
};

int fs_dfs_init(struct fs_ctx *fs, smb3_break_cb break_cb) {
  struct fs_dfs *d = calloc(1, sizeof *d);
  if (!d) return -ENOMEM;
  pthread_mutex_init(&d->lock, NULL);
  pthread_mutex_init(&d->work, NULL);
  pthread_cond_init(&d->idle, NULL);
  d->break_cb = break_cb;
  fs->dfs = d;
  return 0;
}

/* path is link or under it. */
static const char *under(const char *link, const char *path) {
  while (*path == '/') /* (inode_path's paths start with one) */
    path++;
  size_t n = strlen(link);
  if (strncasecmp(link, path, n) || (path[n] && path[n] != '/')) return NULL;
  return path[n] == '/' ? path + n + 1 : path + n;
}

/* Lock held: the link covering path, or NULL. */
static struct dfs_link *find(struct fs_dfs *d, const char *path, const char **rest) {
  for (struct dfs_link *l = d->links; l; l = l->next)
    if ((*rest = under(l->prefix, path))) return l;
  return NULL;
}

void fs_route(struct fs_ctx *fs, const char *path, struct fs_route *r) {
  struct fs_dfs *d = fs->dfs;
  *r = (struct fs_route){fs_conn(fs), path, NULL};
  if (!d || !path || !__atomic_load_n(&d->links, __ATOMIC_ACQUIRE)) return;
  pthread_mutex_lock(&d->lock);
  const char *rest;
  struct dfs_link *l = find(d, path, &rest);
  if (l) {
    r->c = __atomic_load_n(&l->c, __ATOMIC_ACQUIRE);
    if (!l->tpath[0]) {
      r->path = rest;
    } else if ((r->own = malloc(strlen(l->tpath) + strlen(rest) + 2))) {
      strcpy(r->own, l->tpath);
      if (rest[0]) strcat(strcat(r->own, "/"), rest);
      r->path = r->own;
    } else {
      r->path = NULL; /* the caller's submission fails: SMB3_EINVAL / ENOMEM */
    }
  }
  pthread_mutex_unlock(&d->lock); /* (rest points into path, the caller's string) */
}

void fs_route_done(struct fs_route *r) {
  free(r->own);
  r->own = NULL;
}

static struct dfs_link *link_of_conn(struct fs_dfs *d, smb3_client *c) {
  for (struct dfs_link *l = d->links; l; l = l->next)
    if (__atomic_load_n(&l->c, __ATOMIC_ACQUIRE) == c) return l;
  return NULL;
}

int fs_dfs_current(struct fs_ctx *fs, smb3_client *c) {
  if (c == fs_conn(fs)) return 1;
  struct fs_dfs *d = fs->dfs;
  if (!d) return 0;
  pthread_mutex_lock(&d->lock);
  int cur = link_of_conn(d, c) != NULL;
  pthread_mutex_unlock(&d->lock);
  return cur;
}

struct job {
  struct fs_ctx *fs;
  struct fs_retry *r;
  char *path;       /* resolve the link covering it (NULL: log on again) */
  smb3_client *old; /* the lost link connection */
  void (*resume)(void *arg, int ok);
  void *arg;
};

/* The link covering path, on the mount's connection. 0 when routed (now or by another thread). */
static int resolve(struct fs_ctx *fs, const char *path) {
  struct fs_dfs *d = fs->dfs;
  const char *rest;
  pthread_mutex_lock(&d->lock);
  int known = find(d, path, &rest) != NULL;
  pthread_mutex_unlock(&d->lock);
  if (known) return 0; /* another operation found it meanwhile */
  smb3_client *c = fs_conn(fs), *t;
  char *tp, *link;
  int rc = smb3_dfs_follow_link(c, path, &t, &tp, &link);
  if (rc) {
    syslog(LOG_WARNING, "smb3fs: DFS: %s", smb3_last_error(c));
    return rc;
  }
  if (t == c) return SMB3_EDFS; /* "not covered", yet no referral leads elsewhere */
  /* tp is the target's path followed by what path has below the link */
  rest = under(link, path);
  size_t tl = strlen(tp), rl = rest ? strlen(rest) : 0;
  struct dfs_link *l = calloc(1, sizeof *l);
  if (!rest || tl < rl || strcasecmp(tp + tl - rl, rest) || !l) {
    syslog(LOG_WARNING, "smb3fs: DFS: cannot place '%s' under link '%s' (target path '%s')", path, link, tp);
    smb3_disconnect(t);
    free(tp);
    free(link);
    free(l);
    return l ? SMB3_EPROTO : SMB3_ENOMEM;
  }
  tl -= rl;
  if (tl && rl) tl--; /* the '/' before rest */
  tp[tl] = 0;
  l->prefix = link;
  l->tpath = tp;
  l->host = strdup(smb3_client_host(t));
  l->share = strdup(smb3_client_share(t));
  l->c = t;
  if (!l->host || !l->share) {
    smb3_disconnect(t);
    free(l->host);
    free(l->share);
    free(tp);
    free(link);
    free(l);
    return SMB3_ENOMEM;
  }
  if (d->break_cb) smb3_set_break_handler(t, d->break_cb, fs);
  syslog(LOG_INFO, "smb3fs: DFS link '%s' -> \\\\%s\\%s%s%s", l->prefix, l->host, l->share, tp[0] ? "\\" : "",
         tp);
  pthread_mutex_lock(&d->lock);
  l->next = d->links;
  __atomic_store_n(&d->links, l, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&d->lock);
  return 0;
}

/* The link whose connection old was: log on to its target again. */
static int relink(struct fs_ctx *fs, smb3_client *old) {
  struct fs_dfs *d = fs->dfs;
  pthread_mutex_lock(&d->lock);
  struct dfs_link *l = link_of_conn(d, old);
  pthread_mutex_unlock(&d->lock);
  if (!l) return 0;                         /* replaced meanwhile */
  if (!smb3_connection_lost(old)) return 0; /* a timeout that did not end it: send again */
  struct smb3_options o = fs->o;
  o.host = l->host;
  o.share = l->share;
  o.path = NULL;
  if (fs->o.host && strcasecmp(l->host, fs->o.host)) o.ip = NULL; /* ip= is the URL host's */
  smb3_client *nc;
  char err[512] = "";
  int rc = smb3_connect(&o, &nc, err, sizeof err);
  if (rc) {
    syslog(LOG_WARNING, "smb3fs: DFS link '%s': cannot log on to \\\\%s\\%s again: %s", l->prefix, l->host,
           l->share, err[0] ? err : smb3_strerror(rc));
    return rc;
  }
  if (d->break_cb) smb3_set_break_handler(nc, d->break_cb, fs);
  pthread_mutex_lock(&d->lock);
  smb3_client **nr = realloc(d->retired, (size_t)(d->nretired + 1) * sizeof *nr);
  if (nr) {
    d->retired = nr;
    d->retired[d->nretired++] = old;
  } /* else: it is never freed (a leak, not a use after free) */
  __atomic_store_n(&l->c, nc, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&d->lock);
  atomic_fetch_add(&fs->ctr.reconnects, 1);
  return 0;
}

static void *job_main(void *arg) {
  struct job *j = arg;
  struct fs_dfs *d = j->fs->dfs;
  pthread_mutex_lock(&d->work);
  int rc = j->path ? resolve(j->fs, j->path) : relink(j->fs, j->old);
  pthread_mutex_unlock(&d->work);
  if (rc) {
    j->r->rc = rc;
    j->r->dfs = 2; /* not again for this operation */
  }
  j->resume(j->arg, rc == 0);
  free(j->path);
  free(j);
  pthread_mutex_lock(&d->lock);
  if (--d->active == 0) pthread_cond_broadcast(&d->idle);
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

int fs_dfs_retry(struct fs_ctx *fs, struct fs_retry *r, int rc, const char *path,
                 void (*resume)(void *arg, int ok), void *arg) {
  struct fs_dfs *d = fs->dfs;
  if (!d || r->dfs >= 2 || !r->conn) return 0;
  int is_link = 0;
  if (rc == SMB3_EDFS || fs_conn_error(rc)) {
    pthread_mutex_lock(&d->lock);
    is_link = link_of_conn(d, r->conn) != NULL;
    pthread_mutex_unlock(&d->lock);
  }
  int follow = rc == SMB3_EDFS && !is_link && r->conn == fs_conn(fs) && path;
  int again = fs_conn_error(rc) && is_link;
  if (!follow && !again) return 0;
  struct job *j = calloc(1, sizeof *j);
  if (!j || (follow && !(j->path = strdup(path)))) {
    free(j);
    return 0;
  }
  j->fs = fs;
  j->r = r;
  j->old = r->conn;
  j->resume = resume;
  j->arg = arg;
  pthread_mutex_lock(&d->lock);
  d->active++;
  pthread_mutex_unlock(&d->lock);
  r->dfs++;
  pthread_t t;
  if (pthread_create(&t, NULL, job_main, j)) {
    pthread_mutex_lock(&d->lock);
    d->active--;
    pthread_mutex_unlock(&d->lock);
    free(j->path);
    free(j);
    return 0;
  }
  pthread_detach(t);
  return 1;
}

void fs_dfs_add_stats(struct fs_ctx *fs, struct smb3_stats *s) {
  struct fs_dfs *d = fs->dfs;
  if (!d) return;
  pthread_mutex_lock(&d->lock);
  for (struct dfs_link *l = d->links; l; l = l->next) {
    struct smb3_stats x;
    smb3_get_stats(l->c, &x);
    s->requests += x.requests;
    s->round_trips += x.round_trips;
    s->bytes_read += x.bytes_read;
    s->bytes_written += x.bytes_written;
    s->reads += x.reads;
    s->writes += x.writes;
    if (x.max_read_size > s->max_read_size) s->max_read_size = x.max_read_size;
    if (x.max_write_size > s->max_write_size) s->max_write_size = x.max_write_size;
    if (x.credits_max_in_flight > s->credits_max_in_flight)
      s->credits_max_in_flight = x.credits_max_in_flight;
    for (size_t i = 0; i < sizeof s->per_command / sizeof s->per_command[0]; i++)
      s->per_command[i] += x.per_command[i];
    s->io_ns += x.io_ns;
    s->bytes_copied += x.bytes_copied;
    s->compound_fallback |= x.compound_fallback;
  }
  pthread_mutex_unlock(&d->lock);
}

void fs_dfs_free(struct fs_ctx *fs) {
  struct fs_dfs *d = fs->dfs;
  if (!d) return;
  pthread_mutex_lock(&d->lock);
  while (d->active)
    pthread_cond_wait(&d->idle, &d->lock);
  pthread_mutex_unlock(&d->lock);
  fs->dfs = NULL;
  while (d->links) {
    struct dfs_link *l = d->links;
    d->links = l->next;
    smb3_disconnect(l->c);
    free(l->prefix);
    free(l->tpath);
    free(l->host);
    free(l->share);
    free(l);
  }
  for (int i = 0; i < d->nretired; i++)
    smb3_disconnect(d->retired[i]);
  free(d->retired);
  pthread_cond_destroy(&d->idle);
  pthread_mutex_destroy(&d->work);
  pthread_mutex_destroy(&d->lock);
  free(d);
}
