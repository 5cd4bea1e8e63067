/* lease.c - lease break notifications and acknowledgments (MS-SMB2 3.2.5.19.2, 3.2.4.25.2). */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

static void on_break(const struct smb2_break *b, void *arg) {
  smb3_client *c = arg;
  pthread_mutex_lock(&c->err_lock);
  smb3_break_cb cb = c->break_cb;
  void *cbarg = c->break_arg;
  pthread_mutex_unlock(&c->err_lock);
  /* We only ever ask for leases, never oplocks; an oplock break has nothing to act on. */
  if (!b->is_lease || !cb) return;
  cb(b->lease_key, b->new_state, (b->flags & 0x01) != 0, cbarg);
}

void client_install_handlers(smb3_client *c) { transport_set_handlers(c->tr, on_break, client_tick, c); }

void smb3_set_break_handler(smb3_client *c, smb3_break_cb cb, void *arg) {
  pthread_mutex_lock(&c->err_lock);
  c->break_cb = cb;
  c->break_arg = arg;
  pthread_mutex_unlock(&c->err_lock);
}

struct ack_ctx {
  smb3_done_cb cb;
  void *arg;
};

static void ack_done(struct smb3_chain *ch, void *arg) {
  struct ack_ctx x = *(struct ack_ctx *)arg;
  free(arg);
  int rc = ch->error;
  uint32_t st = ch->msgs[0].status;
  /* The lease may already be gone (file closed meanwhile): not an error for the caller. */
  if (!rc && st != NT_STATUS_SUCCESS && st != NT_STATUS_OBJECT_NAME_NOT_FOUND && st != NT_STATUS_INVALID_PARAMETER) {
    rc = smb3_status_to_err(st);
    if (!rc) rc = SMB3_ESTATUS;
  }
  chain_free(ch);
  if (x.cb) x.cb(rc, x.arg);
}

int smb3_lease_ack_async(smb3_client *c, const uint8_t key[16], uint32_t state, smb3_done_cb cb, void *arg) {
  struct smb3_chain *ch = chain_new(1);
  struct ack_ctx *x = malloc(sizeof *x);
  if (!ch || !x) {
    chain_free(ch);
    free(x);
    return SMB3_ENOMEM;
  }
  x->cb = cb;
  x->arg = arg;
  struct le_wr w;
  int rc = msg_body_begin(&ch->msgs[0], SMB2_OPLOCK_BREAK, c->tree_id, 64, &w);
  if (!rc) rc = smb2_lease_ack_encode(&w, key, state);
  if (!rc) rc = msg_body_done(&ch->msgs[0], &w);
  ch->cb = ack_done;
  ch->arg = x;
  if (!rc) rc = client_submit(c, ch);
  if (rc) {
    chain_free(ch);
    free(x);
  }
  return rc;
}
