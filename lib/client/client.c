/* client.c - the client object: last error, counters, disconnect. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

int client_fail(smb3_client *c, int rc, uint32_t status, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&c->err_lock);
  if (status) {
    char nb[32];
    snprintf(c->last_error, sizeof c->last_error, "%s (%s)", msg, smb3_status_name(status, nb));
  } else {
    snprintf(c->last_error, sizeof c->last_error, "%s", msg);
  }
  pthread_mutex_unlock(&c->err_lock);
  return rc;
}

int client_msg_result(smb3_client *c, const struct smb3_chain *ch, int i, const char *what) {
  if (ch->error) return client_fail(c, ch->error, 0, "%s: %s", what, smb3_strerror(ch->error));
  uint32_t st = ch->msgs[i].status;
  if (st == NT_STATUS_SUCCESS) return 0;
  int rc = client_status_result(st);
  return client_fail(c, rc, st, "%s: %s", what, smb3_strerror(rc));
}

int client_status_result(uint32_t status) {
  if (status == NT_STATUS_SUCCESS) return 0;
  int rc = smb3_status_to_err(status);
  return rc ? rc : SMB3_ESTATUS;
}

const char *smb3_last_error(smb3_client *c) {
  return c ? c->last_error : "no client";
}

uint16_t smb3_dialect(smb3_client *c) {
  return core_negotiated(c->core)->dialect;
}
int smb3_signing_active(smb3_client *c) {
  return core_signing_active(c->core);
}
int smb3_encryption_active(smb3_client *c) {
  return core_encryption_active(c->core);
}
static void window_cb(struct smb3_core *core, void *arg) {
  *(uint32_t *)arg = core_window(core);
}

/* rsize/wsize, further limited by the credits the server has granted in all (a server with
 * "smb2 max credits = 16" can never take a 4 MiB request, which costs 64). */
uint32_t client_io_size(smb3_client *c, int is_read) {
  uint32_t sz = is_read ? c->rsize : c->wsize;
  if (!c->multi_credit || c->closed) return sz;
  uint32_t w = 0;
  transport_with_core(c->tr, window_cb, &w);
  uint64_t cap = (uint64_t)(w ? w : 1) * 65536u;
  return sz < cap ? sz : (uint32_t)cap;
}

uint32_t smb3_rsize(smb3_client *c) {
  return client_io_size(c, 1);
}
uint32_t smb3_wsize(smb3_client *c) {
  return client_io_size(c, 0);
}

static void stats_copy(struct smb3_core *core, void *arg) {
  struct core_stats cs;
  core_get_stats(core, &cs);
  struct smb3_stats *s = arg;
  memset(s, 0, sizeof *s);
  s->requests = cs.requests;
  s->round_trips = cs.round_trips;
  s->bytes_read = cs.bytes_read;
  s->bytes_written = cs.bytes_written;
  s->reads = cs.reads;
  s->writes = cs.writes;
  s->max_read_size = cs.max_read_size;
  s->max_write_size = cs.max_write_size;
  s->credits_max_in_flight = cs.credits_max_in_flight;
  for (int i = 0; i < SMB2_NCOMMANDS && i < 19; i++)
    s->per_command[i] = cs.per_command[i];
}

void smb3_get_stats(smb3_client *c, struct smb3_stats *s) {
  if (c->closed)
    memset(s, 0, sizeof *s);
  else
    transport_with_core(c->tr, stats_copy, s);
  uint64_t a = __atomic_load_n(&c->io_first_ns, __ATOMIC_ACQUIRE),
           b = __atomic_load_n(&c->io_last_ns, __ATOMIC_ACQUIRE);
  if (!c->closed && a && b > a) s->io_ns = b - a;
  if (!c->closed) s->bytes_copied = __atomic_load_n(&c->bytes_copied, __ATOMIC_RELAXED);
  if (!c->closed) s->compound_fallback = c->compound_fallback; /* fixed at connect */
}

int client_submit(smb3_client *c, struct smb3_chain *ch) {
  if (__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) return SMB3_ECLOSED;
  return transport_submit(c->tr, ch);
}

int client_defer(smb3_client *c, uint64_t delay_ns, void (*fn)(void *), void *arg) {
  if (__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) return SMB3_ECLOSED;
  return transport_defer(c->tr, delay_ns, fn, arg);
}

void client_ref(smb3_client *c) {
  __atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
}

void client_unref(smb3_client *c) {
  if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL)) return;
  smb3_options_free(&c->opts);
  pthread_mutex_destroy(&c->err_lock);
  pthread_mutex_destroy(&c->root_lock);
  pthread_mutex_destroy(&c->ol_lock);
  dfs_cache_free(c);
  pthread_mutex_destroy(&c->dfs_lock);
  free(c);
}

smb3_file *file_make(smb3_client *c, const char *path, struct smb2_file_id fid, int is_dir, uint32_t lease) {
  smb3_file *f = calloc(1, sizeof *f);
  if (f) f->path = strdup(path);
  if (!f || !f->path) {
    free(f);
    return NULL;
  }
  f->c = c;
  client_ref(c);
  f->fid = fid;
  f->is_dir = is_dir;
  f->lease = lease;
  return f;
}

void file_free(smb3_file *f) {
  smb3_client *c = f->c;
  lease_untrack(f);
  free(f->path);
  free(f);
  client_unref(c);
}

static const char *const cmd_names[19] = {
    "negotiate",       "session_setup", "logoff",     "tree_connect", "tree_disconnect", "create", "close",
    "flush",           "read",          "write",      "lock",         "ioctl",           "cancel", "echo",
    "query_directory", "change_notify", "query_info", "set_info",     "oplock_break"};

char *smb3_stats_json(const struct smb3_stats *s) {
  size_t cap = 2048;
  char *out = malloc(cap);
  if (!out) return NULL;
  int n = snprintf(out, cap,
                   "{\"requests\":%llu,\"round_trips\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu,"
                   "\"reads\":%llu,\"writes\":%llu,\"max_read_size\":%u,\"max_write_size\":%u,"
                   "\"credits_max_in_flight\":%u,\"io_seconds\":%.6f,\"bytes_copied\":%llu,"
                   "\"compound_fallback\":%d,\"commands\":{",
                   (unsigned long long)s->requests, (unsigned long long)s->round_trips,
                   (unsigned long long)s->bytes_read, (unsigned long long)s->bytes_written,
                   (unsigned long long)s->reads, (unsigned long long)s->writes, s->max_read_size,
                   s->max_write_size, s->credits_max_in_flight, (double)s->io_ns / 1e9,
                   (unsigned long long)s->bytes_copied, s->compound_fallback);
  for (int i = 0; i < 19; i++)
    n += snprintf(out + n, cap - (size_t)n, "%s\"%s\":%llu", i ? "," : "", cmd_names[i],
                  (unsigned long long)s->per_command[i]);
  snprintf(out + n, cap - (size_t)n, "}}");
  return out;
}

static void dead_q(struct smb3_core *core, void *arg) {
  *(int *)arg = core_is_dead(core);
}

int smb3_connection_lost(smb3_client *c) {
  if (!c) return 1;
  if (__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) return 1;
  int dead = 0;
  transport_with_core(c->tr, dead_q, &dead);
  return dead;
}

void smb3_disconnect(smb3_client *c) {
  if (!c) return;
  /* On the I/O thread (from a callback) it would wait for its own requests' answers and then for
   * itself to stop, and free what the callback runs on: refuse, and leave c as it was. Unlike
   * client_sync_check this does not depend on c->closed: after a lost connection the thread may
   * still be running the callbacks that failed. */
  if (c->have_io_thread && pthread_equal(pthread_self(), c->io_thread)) {
    client_fail(c, SMB3_EDEADLK, 0,
                "smb3_disconnect: called from a callback on the connection's I/O thread; "
                "nothing done");
    return;
  }
  pthread_mutex_lock(&c->root_lock);
  c->closing = 1;
  int root = c->root_open && !c->root_opening;
  c->root_open = 0;
  pthread_mutex_unlock(&c->root_lock);
  if (c->tr && c->tree_id && !core_is_dead(c->core)) {
    /* Polite goodbye; failures do not matter, the connection closes either way. */
    struct smb3_chain *ch = chain_new(1);
    if (root && ch && !build_close(c, &ch->msgs[0], c->root_fid, 0)) client_run(c, ch);
    chain_free(ch);
    ch = chain_new(1);
    if (ch && !build_simple(c, &ch->msgs[0], SMB2_TREE_DISCONNECT)) client_run(c, ch);
    chain_free(ch);
    ch = chain_new(1);
    if (ch && !build_simple(c, &ch->msgs[0], SMB2_LOGOFF)) client_run(c, ch);
    chain_free(ch);
  }
  transport_close(c->tr);
  __atomic_store_n(&c->closed, 1, __ATOMIC_RELEASE);
  core_free(c->core);
  c->tr = NULL;
  c->core = NULL;
  client_unref(c); /* open files keep the memory until they are closed */
}
