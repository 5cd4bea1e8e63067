/* lease.c - lease and oplock breaks and their acknowledgments (MS-SMB2 3.2.5.19.1-2,
 * 3.2.4.25.1-2).
 *
 * Leases (2.1+) are named by the caller's key. Oplocks (2.0.2, or a server without leasing)
 * belong to one handle and the server names its FileId: the client keeps the files holding one
 * on c->oplocked and reports a break with the key the file was opened with and the lease state
 * the new level stands for, so a caller handles both alike. A break from LEVEL_II is never
 * acknowledged (2.2.24.1); one from BATCH or EXCLUSIVE is, by smb3_lease_ack_async with the
 * same key. */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "crypto/crypto.h"
#include "util/status.h"

#define NT_STATUS_INVALID_OPLOCK_PROTOCOL 0xC00000E3u
#define NT_STATUS_INVALID_DEVICE_STATE 0xC0000184u

int client_leasing(smb3_client *c) {
  const struct core_negotiated *ng = core_negotiated(c->core);
  return ng->dialect >= SMB2_DIALECT_210 && (ng->capabilities & SMB2_GLOBAL_CAP_LEASING);
}

int client_dir_leasing(smb3_client *c) {
  const struct core_negotiated *ng = core_negotiated(c->core);
  return ng->dialect >= SMB2_DIALECT_300 && (ng->capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING);
}

uint32_t oplock_state(uint8_t level) {
  switch (level) {
  case SMB2_OPLOCK_LEVEL_II:
    return SMB3_LEASE_READ;
  case SMB2_OPLOCK_LEVEL_EXCLUSIVE:
    return SMB3_LEASE_READ | SMB3_LEASE_WRITE;
  case SMB2_OPLOCK_LEVEL_BATCH:
    return SMB3_LEASE_READ | SMB3_LEASE_WRITE | SMB3_LEASE_HANDLE;
  default:
    return 0;
  }
}

void oplock_track(smb3_file *f, const uint8_t key[16], uint8_t level) {
  smb3_client *c = f->c;
  pthread_mutex_lock(&c->ol_lock);
  f->oplock = level;
  f->lease = oplock_state(level);
  memcpy(f->key, key, 16);
  f->tracked = 1;
  f->ol_next = c->oplocked;
  c->oplocked = f;
  pthread_mutex_unlock(&c->ol_lock);
}

void lease_untrack(smb3_file *f) {
  smb3_client *c = f->c;
  pthread_mutex_lock(&c->ol_lock);
  if (f->tracked)
    for (smb3_file **p = &c->oplocked; *p; p = &(*p)->ol_next)
      if (*p == f) {
        *p = f->ol_next;
        break;
      }
  f->tracked = 0;
  if (f->dl_tracked)
    for (smb3_file **p = &c->dleased; *p; p = &(*p)->dl_next)
      if (*p == f) {
        *p = f->dl_next;
        __atomic_sub_fetch(&c->n_dleased, 1, __ATOMIC_RELAXED); /* (dirlease_parent reads it unlocked) */
        break;
      }
  f->dl_tracked = 0;
  pthread_mutex_unlock(&c->ol_lock);
}

/* ---- directory leases held: the ParentLeaseKey of this client's own changes ----
 * A server that grants a lease on a directory breaks it before anything changes a name there,
 * and MS-SMB2 lets the change's own CREATE say which of its client's directory leases it comes
 * from: that one is not broken (the client knows of its own change). Without this, each change
 * this client makes in a directory it holds a lease on ends the lease and costs a CLOSE. */

void dirlease_track(smb3_file *dh, const uint8_t key[16]) {
  smb3_client *c = dh->c;
  pthread_mutex_lock(&c->ol_lock);
  memcpy(dh->key, key, 16);
  dh->dl_tracked = 1;
  dh->dl_next = c->dleased;
  c->dleased = dh;
  __atomic_add_fetch(&c->n_dleased, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&c->ol_lock);
}

static int is_sep(char ch) {
  return ch == '/' || ch == '\\';
}

/* Whether path names dir (the same components; '/' and '\\' alike; leading and trailing
 * separators ignored), the name compared exactly: a directory named with other case is not found,
 * and its lease is broken as before, which is only slower. */
static int same_dir(const char *dir, const char *path, size_t len) {
  while (*dir && is_sep(*dir))
    dir++;
  while (len && is_sep(*path))
    path++, len--;
  while (len && is_sep(path[len - 1]))
    len--;
  size_t i = 0;
  for (; i < len && dir[i]; i++)
    if (dir[i] != path[i] && !(is_sep(dir[i]) && is_sep(path[i]))) return 0;
  if (i < len) return 0;
  while (dir[i] && is_sep(dir[i]))
    i++;
  return !dir[i];
}

/* What a CREATE may change in its parent directory: a name (made, removed, renamed), a file's
 * data, size, times or attributes. A plain open for reading or for attributes changes nothing. */
static int create_may_change(const struct create_args *a) {
  const uint32_t changing = SMB2_DELETE | SMB2_FILE_WRITE_DATA | SMB2_FILE_APPEND_DATA | SMB2_FILE_WRITE_EA |
                            SMB2_FILE_WRITE_ATTRIBUTES | SMB2_WRITE_DAC | SMB2_WRITE_OWNER |
                            SMB2_GENERIC_WRITE | SMB2_GENERIC_ALL | SMB2_MAXIMUM_ALLOWED;
  return a->disposition != SMB2_FILE_OPEN || (a->access & changing) ||
         (a->options & SMB2_FILE_DELETE_ON_CLOSE);
}

void dirlease_parent(smb3_client *c, struct create_args *a) {
  if (!__atomic_load_n(&c->n_dleased, __ATOMIC_RELAXED) || !create_may_change(a)) return;
  if (a->lease.version == 0 && a->oplock != SMB2_OPLOCK_LEVEL_NONE) return; /* (an oplock: not 3.x) */
  const char *p = a->path;
  size_t end = strlen(p);
  while (end && is_sep(p[end - 1]))
    end--;
  size_t len = end;
  while (len && !is_sep(p[len - 1]))
    len--;
  if (!end) return; /* the share's root has no parent here */
  int found = 0;
  pthread_mutex_lock(&c->ol_lock);
  for (smb3_file *d = c->dleased; d && !found; d = d->dl_next)
    if (same_dir(d->path, p, len)) {
      memcpy(a->lease.parent_key, d->key, 16);
      found = 1;
    }
  pthread_mutex_unlock(&c->ol_lock);
  if (!found) return;
  if (a->lease.version == 0) { /* a lease asking for nothing, only to carry the parent's key */
    if (smb3_random(a->lease.key, 16)) return; /* (then the lease is broken: only slower) */
    a->lease.version = 2;
    a->lease.state = 0;
    a->oplock = SMB2_OPLOCK_LEVEL_LEASE;
  }
  if (a->lease.version == 2) a->lease.flags |= SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET;
}

/* ---- acknowledgments ---- */
struct ack_ctx {
  smb3_done_cb cb;
  void *arg;
  int left; /* acknowledgments still unanswered (atomic) */
  int rc;   /* the first failure */
};

static void ack_finish(struct ack_ctx *x, int rc) {
  if (rc) {
    int zero = 0;
    __atomic_compare_exchange_n(&x->rc, &zero, rc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  }
  if (__atomic_sub_fetch(&x->left, 1, __ATOMIC_ACQ_REL)) return;
  if (x->cb) x->cb(x->rc, x->arg);
  free(x);
}

static void ack_done(struct smb3_chain *ch, void *arg) {
  int rc = ch->error;
  uint32_t st = ch->msgs[0].status;
  /* The lease or the handle may already be gone (file closed meanwhile), or the break already
   * over: not an error for the caller. */
  if (!rc && st != NT_STATUS_SUCCESS && st != NT_STATUS_OBJECT_NAME_NOT_FOUND &&
      st != NT_STATUS_INVALID_PARAMETER && st != NT_STATUS_FILE_CLOSED &&
      st != NT_STATUS_INVALID_DEVICE_STATE && st != NT_STATUS_INVALID_OPLOCK_PROTOCOL) {
    rc = smb3_status_to_err(st);
    if (!rc) rc = SMB3_ESTATUS;
  }
  chain_free(ch);
  ack_finish(arg, rc);
}

/* One OPLOCK_BREAK request: a lease ack (key) or an oplock ack (fid, level). */
static int ack_send(smb3_client *c, const uint8_t *key, uint32_t state, const struct smb2_file_id *fid,
                    uint8_t level, struct ack_ctx *x) {
  struct smb3_chain *ch = chain_new(1);
  if (!ch) return SMB3_ENOMEM;
  struct le_wr w;
  int rc = msg_body_begin(&ch->msgs[0], SMB2_OPLOCK_BREAK, c->tree_id, 64, &w);
  if (!rc) rc = key ? smb2_lease_ack_encode(&w, key, state) : smb2_oplock_ack_encode(&w, level, *fid);
  if (!rc) rc = msg_body_done(&ch->msgs[0], &w);
  ch->cb = ack_done;
  ch->arg = x;
  if (!rc) rc = client_submit(c, ch);
  if (rc) chain_free(ch);
  return rc;
}

static struct ack_ctx *ack_ctx_new(smb3_done_cb cb, void *arg, int n) {
  struct ack_ctx *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->cb = cb;
  x->arg = arg;
  x->left = n + 1; /* + the sender's own reference, dropped once every ack is submitted */
  return x;
}

#define ACK_BATCH 8

/* Acknowledge the breaking oplocks opened with key. Returns how many files were acknowledged,
 * or a negative SMB3_E* code (acks already sent stay sent). */
static int oplock_ack(smb3_client *c, const uint8_t key[16], uint32_t state, smb3_done_cb cb, void *arg) {
  struct smb2_file_id fids[ACK_BATCH];
  uint8_t levels[ACK_BATCH];
  int n = 0;
  pthread_mutex_lock(&c->ol_lock);
  for (smb3_file *f = c->oplocked; f && n < ACK_BATCH; f = f->ol_next) {
    if (!f->breaking || memcmp(f->key, key, 16)) continue;
    /* LEVEL_II when the caller keeps READ and the server allows it, else NONE */
    uint8_t level = (state & SMB3_LEASE_READ) && f->break_to == SMB2_OPLOCK_LEVEL_II ? SMB2_OPLOCK_LEVEL_II
                                                                                     : SMB2_OPLOCK_LEVEL_NONE;
    f->breaking = 0;
    f->oplock = level;
    f->lease = oplock_state(level);
    fids[n] = f->fid;
    levels[n++] = level;
  }
  pthread_mutex_unlock(&c->ol_lock);
  if (!n) return 0;
  struct ack_ctx *x = ack_ctx_new(cb, arg, n);
  if (!x) return SMB3_ENOMEM;
  int rc = 0, sent = 0;
  for (int i = 0; i < n; i++) {
    int r = ack_send(c, NULL, 0, &fids[i], levels[i], x);
    if (!r) {
      sent++;
      continue;
    }
    if (!rc) rc = r;
    __atomic_sub_fetch(&x->left, 1, __ATOMIC_ACQ_REL); /* never answered */
  }
  if (!sent) { /* nothing went out: no callback */
    free(x);
    return rc;
  }
  ack_finish(x, rc); /* the sender's reference */
  return n;
}

int smb3_lease_ack_async(smb3_client *c, const uint8_t key[16], uint32_t state, smb3_done_cb cb, void *arg) {
  int n = oplock_ack(c, key, state, cb, arg);
  if (n) return n < 0 ? n : 0;
  if (!client_leasing(c)) {
    if (cb) cb(0, arg); /* no lease, no breaking oplock with this key (closed meanwhile): nothing to say */
    return 0;
  }
  struct ack_ctx *x = ack_ctx_new(cb, arg, 0);
  if (!x) return SMB3_ENOMEM;
  int rc = ack_send(c, key, state, NULL, 0, x);
  if (rc) free(x);
  return rc;
}

/* ---- break notifications (I/O thread) ---- */
static void on_oplock_break(smb3_client *c, const struct smb2_break *b, smb3_break_cb cb, void *cbarg) {
  uint8_t key[16];
  uint8_t to = b->oplock_level == SMB2_OPLOCK_LEVEL_II ? SMB2_OPLOCK_LEVEL_II : SMB2_OPLOCK_LEVEL_NONE;
  int ack = 0, found = 0;
  pthread_mutex_lock(&c->ol_lock);
  for (smb3_file *f = c->oplocked; f; f = f->ol_next) {
    if (f->fid.persistent != b->file_id.persistent || f->fid.volatile_ != b->file_id.volatile_) continue;
    found = 1;
    if (f->oplock == SMB2_OPLOCK_LEVEL_II || f->oplock == SMB2_OPLOCK_LEVEL_NONE) {
      to = SMB2_OPLOCK_LEVEL_NONE; /* from LEVEL_II only to none, and without an ack */
      f->oplock = to;
      f->lease = 0;
    } else {
      ack = 1;
      f->breaking = 1;
      f->break_to = to;
    }
    memcpy(key, f->key, 16);
    break;
  }
  pthread_mutex_unlock(&c->ol_lock);
  if (!found) return; /* a handle we closed (or are closing): the server ends the break itself */
  if (cb)
    cb(key, oplock_state(to), ack, cbarg);
  else if (ack) /* nobody to flush anything: let the other client go on */
    smb3_lease_ack_async(c, key, oplock_state(to), NULL, NULL);
}

static void on_break(const struct smb2_break *b, void *arg) {
  smb3_client *c = arg;
  pthread_mutex_lock(&c->err_lock);
  smb3_break_cb cb = c->break_cb;
  void *cbarg = c->break_arg;
  pthread_mutex_unlock(&c->err_lock);
  if (!b->is_lease) {
    on_oplock_break(c, b, cb, cbarg);
    return;
  }
  if (cb) cb(b->lease_key, b->new_state, (b->flags & 0x01) != 0, cbarg);
}

void client_install_handlers(smb3_client *c) {
  transport_set_handlers(c->tr, on_break, client_tick, c);
}

void smb3_set_break_handler(smb3_client *c, smb3_break_cb cb, void *arg) {
  pthread_mutex_lock(&c->err_lock);
  c->break_cb = cb;
  c->break_arg = arg;
  pthread_mutex_unlock(&c->err_lock);
}
