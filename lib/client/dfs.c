/* dfs.c - following DFS referrals (MS-DFSC 3.1.4, through MS-SMB2 3.2.4.20.3): ask the server for
 * the referral that covers a path (FSCTL_DFS_GET_REFERRALS on the connected tree), keep it for its
 * TimeToLive, and connect to the first of its targets that answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/client.h"
#include "util/clock.h"
#include "util/status.h"
#include "util/utf16.h"
#include "wire/wire.h"

#define DFS_MAX_LEVEL 4    /* MaxReferralLevel: v4 entries (2.2.2) */
#define DFS_MAX_OUT 65535u /* output asked for: one credit's worth, as Windows asks */
#define DFS_CACHE_MAX 64   /* entries kept per client; the oldest goes first */
#define DFS_TTL_CAP_S 3600 /* a server's TTL is kept at most this long */

struct dfs_cache_entry {
  struct dfs_cache_entry *next;
  char *prefix;         /* "\\server\\share[\\link]" as the referral covered it */
  uint16_t server_type; /* of the first entry (DFS_SERVER_TYPE_ROOT: a root referral) */
  uint64_t expires_ns;
  int n;
  char *addr[DFS_REFERRAL_MAX]; /* targets in the server's order */
};

static void entry_free(struct dfs_cache_entry *e) {
  free(e->prefix);
  for (int i = 0; i < e->n; i++)
    free(e->addr[i]);
  free(e);
}

void dfs_cache_free(smb3_client *c) {
  while (c->dfs_cache) {
    struct dfs_cache_entry *e = c->dfs_cache;
    c->dfs_cache = e->next;
    entry_free(e);
  }
}

int smb3_dfs_share(smb3_client *c) {
  return !c->ipc && (c->share_flags & (SMB2_SHAREFLAG_DFS | SMB2_SHAREFLAG_DFS_ROOT)) != 0;
}

const char *smb3_client_host(smb3_client *c) {
  return c->opts.host;
}

const char *smb3_client_share(smb3_client *c) {
  return c->opts.share ? c->opts.share : "";
}

/* prefix covers path: equal to it (ASCII case-insensitively, as DFS names compare), or followed in
 * it by a '\\'. */
static int prefix_covers(const char *prefix, const char *path) {
  size_t n = strlen(prefix);
  return strncasecmp(prefix, path, n) == 0 && (path[n] == 0 || path[n] == '\\');
}

/* A copy of the longest unexpired cache entry covering path (expired ones are dropped), or NULL. */
static struct dfs_cache_entry *cache_find(smb3_client *c, const char *path) {
  uint64_t now = mono_ns();
  struct dfs_cache_entry *best = NULL, **pp = &c->dfs_cache;
  pthread_mutex_lock(&c->dfs_lock);
  while (*pp) {
    struct dfs_cache_entry *e = *pp;
    if (e->expires_ns <= now) {
      *pp = e->next;
      entry_free(e);
      continue;
    }
    /* a root referral answers for the root itself: a link below it has its own (MS-DFSC 3.1.4.2) */
    int covers = prefix_covers(e->prefix, path) &&
                 (!(e->server_type & DFS_SERVER_TYPE_ROOT) || strlen(e->prefix) == strlen(path));
    if (covers && (!best || strlen(e->prefix) > strlen(best->prefix))) best = e;
    pp = &e->next;
  }
  struct dfs_cache_entry *copy = NULL;
  if (best && (copy = calloc(1, sizeof *copy))) {
    int ok = (copy->prefix = strdup(best->prefix)) != NULL;
    copy->server_type = best->server_type;
    for (int i = 0; ok && i < best->n; i++, copy->n++)
      ok = (copy->addr[i] = strdup(best->addr[i])) != NULL;
    if (!ok) {
      entry_free(copy);
      copy = NULL;
    }
  }
  pthread_mutex_unlock(&c->dfs_lock);
  return copy;
}

static void cache_put(smb3_client *c, const struct dfs_cache_entry *e, uint32_t ttl) {
  if (!ttl) return; /* 0: not to be kept */
  if (ttl > DFS_TTL_CAP_S) ttl = DFS_TTL_CAP_S;
  struct dfs_cache_entry *k = calloc(1, sizeof *k);
  if (!k) return;
  int ok = (k->prefix = strdup(e->prefix)) != NULL;
  k->server_type = e->server_type;
  for (int i = 0; ok && i < e->n; i++, k->n++)
    ok = (k->addr[i] = strdup(e->addr[i])) != NULL;
  if (!ok) {
    entry_free(k);
    return;
  }
  k->expires_ns = mono_ns() + (uint64_t)ttl * 1000000000u;
  pthread_mutex_lock(&c->dfs_lock);
  k->next = c->dfs_cache;
  c->dfs_cache = k;
  int n = 0;
  for (struct dfs_cache_entry **pp = &c->dfs_cache; *pp;) {
    if (++n > DFS_CACHE_MAX) {
      struct dfs_cache_entry *old = *pp;
      *pp = old->next;
      entry_free(old);
    } else {
      pp = &(*pp)->next;
    }
  }
  pthread_mutex_unlock(&c->dfs_lock);
}

/* The part of req (UTF-8) whose UTF-16 form is consumed bytes long, as a malloc'd copy. It must end
 * at a path component: MS-DFSC 3.1.5.4.4 (PathConsumed is the matched prefix). */
static int consumed_prefix(const char *req, uint16_t consumed, char **out) {
  *out = NULL;
  size_t units = consumed / 2, i = 0, u = 0;
  while (req[i] && u < units) {
    unsigned char ch = (unsigned char)req[i];
    size_t len = ch < 0x80 ? 1 : ch < 0xE0 ? 2 : ch < 0xF0 ? 3 : 4;
    u += len == 4 ? 2 : 1;
    i += len;
  }
  if (u != units || (req[i] && req[i] != '\\')) return SMB3_EPROTO;
  *out = strndup(req, i);
  return *out ? 0 : SMB3_ENOMEM;
}

/* Ask c's server for the referral covering dfs_path (the 2.2.2 request on c's tree). 0 with e
 * filled, SMB3_ENOENT when the server has none for it, or an error recorded on c. */
static int ask_referral(smb3_client *c, const char *dfs_path, struct dfs_cache_entry *e, uint32_t *ttl) {
  size_t cap = 4 + 4 * strlen(dfs_path) + 4;
  uint8_t *in = malloc(cap);
  if (!in) return SMB3_ENOMEM;
  struct le_wr w;
  le_wr_init(&w, in, cap);
  int rc = smb2_dfs_referral_req_encode(&w, dfs_path, DFS_MAX_LEVEL);
  struct smb3_chain *ch = rc ? NULL : chain_new(1);
  if (!rc && !ch) rc = SMB3_ENOMEM;
  if (!rc)
    rc = build_ioctl(c, &ch->msgs[0], (struct smb2_file_id){UINT64_MAX, UINT64_MAX},
                     SMB2_FSCTL_DFS_GET_REFERRALS, in, (uint32_t)w.off, DFS_MAX_OUT);
  if (!rc) rc = client_run(c, ch);
  free(in);
  if (rc) {
    chain_free(ch);
    return rc == SMB3_EINVAL ? client_fail(c, rc, 0, "DFS path '%s' cannot be encoded", dfs_path) : rc;
  }
  uint32_t st = ch->msgs[0].status;
  if (st == NT_STATUS_NOT_FOUND || st == NT_STATUS_OBJECT_NAME_NOT_FOUND ||
      st == NT_STATUS_PATH_NOT_COVERED || st == NT_STATUS_NOT_SUPPORTED ||
      st == NT_STATUS_INVALID_DEVICE_REQUEST || st == NT_STATUS_FS_DRIVER_REQUIRED) {
    chain_free(ch);
    return SMB3_ENOENT; /* not in a namespace: the path is what it is */
  }
  if (st != NT_STATUS_SUCCESS) {
    rc = client_msg_result(c, ch, 0, "DFS referral");
    chain_free(ch);
    return rc;
  }
  struct smb2_ioctl_rsp ir;
  struct smb2_dfs_referral r;
  if (smb2_ioctl_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &ir) ||
      (rc = smb2_dfs_referral_decode(ir.output, ir.output_len, &r))) {
    chain_free(ch);
    return client_fail(c, rc == SMB3_ENOMEM ? rc : SMB3_EPROTO, 0, "malformed DFS referral for '%s'",
                       dfs_path);
  }
  chain_free(ch);
  rc = consumed_prefix(dfs_path, r.path_consumed, &e->prefix);
  if (rc)
    client_fail(c, rc, 0, "DFS referral for '%s': PathConsumed %u is not a prefix of it", dfs_path,
                r.path_consumed);
  e->server_type = r.t[0].server_type;
  *ttl = UINT32_MAX;
  for (int i = 0; !rc && i < r.n; i++) {
    if ((r.t[i].flags & DFS_ENTRY_NAME_LIST) || !r.t[i].address[0]) continue; /* domain referral */
    if (!(e->addr[e->n] = strdup(r.t[i].address)))
      rc = SMB3_ENOMEM;
    else
      e->n++;
    if (r.t[i].ttl < *ttl) *ttl = r.t[i].ttl;
  }
  smb2_dfs_referral_free(&r);
  if (!rc && !e->n) rc = client_fail(c, SMB3_ENOTSUP, 0, "DFS referral for '%s' names no server", dfs_path);
  return rc;
}

/* "\\server\\share[\\path]" into its parts (malloc'd; *path "" when absent). */
static int split_target(const char *addr, char **server, char **share, char **path) {
  *server = *share = *path = NULL;
  while (*addr == '\\')
    addr++;
  const char *s1 = strchr(addr, '\\');
  if (!s1 || s1 == addr || !s1[1] || s1[1] == '\\') return SMB3_EPROTO;
  const char *s2 = strchr(s1 + 1, '\\');
  *server = strndup(addr, (size_t)(s1 - addr));
  *share = s2 ? strndup(s1 + 1, (size_t)(s2 - s1 - 1)) : strdup(s1 + 1);
  *path = strdup(s2 ? s2 + 1 : "");
  if (!*server || !*share || !*path) return SMB3_ENOMEM;
  return 0;
}

/* target path + remainder ("\\a\\b" or ""), '\\' turned into '/', no leading or doubled separator. */
static char *join_path(const char *tpath, const char *rest) {
  size_t n = strlen(tpath) + strlen(rest) + 2;
  char *p = malloc(n), *o = p;
  if (!p) return NULL;
  for (const char *parts[2] = {tpath, rest}, **q = parts; q < parts + 2; q++)
    for (const char *s = *q; *s; s++) {
      char ch = *s == '\\' ? '/' : *s;
      if (ch == '/' && (o == p || o[-1] == '/')) continue;
      *o++ = ch;
    }
  if (o > p && o[-1] == '/') o--;
  *o = 0;
  return p;
}

static char *norm_path(const char *path) {
  return join_path(path ? path : "", "");
}

/* Connect to one target with c's options (credentials, security, sizes) for server and share. */
static int connect_target(smb3_client *c, const char *server, const char *share, smb3_client **out, char *err,
                          size_t errlen) {
  struct smb3_options o = c->opts;
  o.host = (char *)server;
  o.share = (char *)share;
  o.path = NULL;
  /* ip= names the address of the URL's host; another server is found by its own name */
  if (strcasecmp(server, c->opts.host)) o.ip = NULL;
  return smb3_connect(&o, out, err, errlen);
}

int smb3_dfs_follow(smb3_client *c, const char *path, smb3_client **out, char **out_path) {
  return smb3_dfs_follow_link(c, path, out, out_path, NULL);
}

int smb3_dfs_follow_link(smb3_client *c, const char *path, smb3_client **out, char **out_path, char **link) {
  *out = c;
  *out_path = NULL;
  if (link) *link = NULL;
  if (c->ipc || !c->opts.share) return 0;
  char *rel = norm_path(path);
  if (!rel) return SMB3_ENOMEM;
  size_t n = strlen(c->opts.host) + strlen(c->opts.share) + strlen(rel) + 4;
  char *req = malloc(n);
  if (!req) {
    free(rel);
    return SMB3_ENOMEM;
  }
  snprintf(req, n, "\\%s\\%s%s%s", c->opts.host, c->opts.share, rel[0] ? "\\" : "", rel);
  for (char *s = req; *s; s++)
    if (*s == '/') *s = '\\';
  int rc = 0;
  struct dfs_cache_entry *e = cache_find(c, req);
  if (!e) {
    uint32_t ttl = 0;
    if (!(e = calloc(1, sizeof *e))) rc = SMB3_ENOMEM;
    if (!rc) rc = ask_referral(c, req, e, &ttl);
    if (!rc) cache_put(c, e, ttl);
  }
  if (rc) {
    if (e) entry_free(e);
    free(req);
    free(rel);
    return rc == SMB3_ENOENT ? 0 : rc;
  }
  const char *rest = req + strlen(e->prefix);
  char err[512] = "";
  int self = 0, tried = 0;
  rc = 0;
  for (int i = 0; i < e->n && *out == c && !rc; i++) {
    char *server, *share, *tpath, *np = NULL;
    rc = split_target(e->addr[i], &server, &share, &tpath);
    if (!rc && !(np = join_path(tpath, rest))) rc = SMB3_ENOMEM;
    if (!rc && !strcasecmp(server, c->opts.host) && !strcasecmp(share, c->opts.share) &&
        !strcasecmp(np, rel)) {
      self = 1; /* the path itself: a root referral says "here"; a link says "here" only in a loop */
    } else if (!rc) {
      tried++;
      smb3_client *t = NULL;
      int crc = connect_target(c, server, share, &t, err, sizeof err);
      if (!crc) {
        *out = t;
        *out_path = np;
        np = NULL;
      } else if (crc == SMB3_ENOMEM) {
        rc = crc;
      }
    } else if (rc == SMB3_EPROTO) {
      client_fail(c, rc, 0, "DFS referral for '%s': bad target '%s'", req, e->addr[i]);
    }
    free(server);
    free(share);
    free(tpath);
    free(np);
  }
  if (!rc && *out == c && tried)
    rc = client_fail(c, SMB3_ECONNECT, 0, "DFS '%s': none of its %d target(s) answers (last: %s)", req, tried,
                     err[0] ? err : "?");
  else if (!rc && *out == c && self && !(e->server_type & DFS_SERVER_TYPE_ROOT))
    rc = client_fail(c, SMB3_ELOOP, 0, "DFS link '%s' refers back to itself", e->prefix);
  if (!rc && *out != c && link) {
    /* the link: the referral's prefix without "\\host\\share" (a prefix of req, so at most as long),
     * as a share-relative path */
    size_t base = 1 + strlen(c->opts.host) + 1 + strlen(c->opts.share), pl = strlen(e->prefix);
    if (!(*link = norm_path(pl > base ? e->prefix + base : ""))) {
      smb3_disconnect(*out);
      *out = c;
      free(*out_path);
      *out_path = NULL;
      rc = SMB3_ENOMEM;
    }
  }
  entry_free(e);
  free(req);
  free(rel);
  return rc;
}
