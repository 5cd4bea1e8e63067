/* steps.c - run CREATE ... CLOSE sequences as one related compound chain (MS-SMB2 3.2.4.1.4),
 * or one request at a time with the real FileId when the `nocompound` option is set. Both
 * forms are asynchronous; client_steps() waits for them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

struct steps_ctx {
  smb3_client *c;
  smb3_file *lead; /* client_steps_lead_async: closed by message 0, freed at the end */
  const struct step *steps;
  int n, next, first_is_create;
  struct smb3_chain *result;
  struct smb2_file_id fid;
  uint32_t create_status;
  steps_done_fn done;
  void *arg;
};

/* Take message 0 (the lead CLOSE) out of a completed chain: the steps' messages move down one. */
static void drop_lead(struct smb3_chain *ch) {
  struct smb3_msg *m = &ch->msgs[0];
  if (m->body && m->body != m->inline_body) free(m->body);
  free(m->rsp);
  memmove(&ch->msgs[0], &ch->msgs[1], (size_t)(ch->n - 1) * sizeof ch->msgs[0]);
  ch->n--;
  for (int i = 0; i < ch->n; i++) { /* an inline body moved with its message */
    struct smb3_msg *d = &ch->msgs[i];
    if (d->body == ch->msgs[i + 1].inline_body) d->body = d->inline_body;
  }
}

static void compound_done(struct smb3_chain *ch, void *arg) {
  struct steps_ctx *x = arg;
  steps_done_fn done = x->done;
  void *darg = x->arg;
  if (x->lead) { /* gone whatever the server said of its CLOSE */
    file_free(x->lead);
    drop_lead(ch);
  }
  free(x);
  done(ch, ch->error, darg);
}

/* Move the response of a one-request chain into message i of the result chain. */
static void take_response(struct smb3_chain *dst, int i, struct smb3_chain *one) {
  struct smb3_msg *d = &dst->msgs[i], *s = &one->msgs[0];
  d->command = s->command;
  d->done = 1;
  d->status = s->status;
  d->rsp = s->rsp;
  d->rsp_len = s->rsp_len;
  d->rd_len = s->rd_len;
  d->payload_len = s->payload_len;
  s->rsp = NULL;
}

static void one_done(struct smb3_chain *one, void *arg);

static void steps_finish(struct steps_ctx *x, int rc) {
  steps_done_fn done = x->done;
  void *darg = x->arg;
  struct smb3_chain *res = x->result;
  free(x);
  if (rc) res->error = rc;
  done(res, rc, darg);
}

/* Submit step x->next (skipping, with the CREATE's status, what follows a failed CREATE).
 * Returns the submit error without finishing when `first` (the caller reports it instead). */
static int steps_next(struct steps_ctx *x, int first) {
  while (x->next < x->n && x->create_status) {
    x->result->msgs[x->next].done = 1;
    x->result->msgs[x->next].status = x->create_status;
    x->next++;
  }
  if (x->next == x->n) {
    steps_finish(x, 0);
    return 0;
  }
  struct smb3_chain *one = chain_new(1);
  int rc = one ? x->steps[x->next].encode(x->c, &one->msgs[0], x->fid, x->steps[x->next].arg) : SMB3_ENOMEM;
  if (!rc) {
    one->cb = one_done;
    one->arg = x;
    rc = client_submit(x->c, one);
  }
  if (rc) {
    chain_free(one);
    if (first) return rc;
    steps_finish(x, rc);
  }
  return 0;
}

static void one_done(struct smb3_chain *one, void *arg) {
  struct steps_ctx *x = arg;
  int rc = one->error;
  if (!rc) {
    take_response(x->result, x->next, one);
    struct smb3_msg *d = &x->result->msgs[x->next];
    if (x->next == 0 && x->first_is_create) {
      struct smb2_create_rsp cr;
      if (d->status != NT_STATUS_SUCCESS)
        x->create_status = d->status;
      else if (smb2_create_rsp_decode(d->rsp, d->rsp_len, &cr) == 0)
        x->fid = cr.file_id;
      else
        x->create_status = NT_STATUS_INVALID_PARAMETER;
    }
    x->next++;
  }
  chain_free(one);
  if (rc)
    steps_finish(x, rc);
  else
    steps_next(x, 0);
}

int step_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_close(c, m, fid, 0);
}

static int steps_async(smb3_client *c, smb3_file *lead, const struct step *steps, int n, int first_is_create,
                       steps_done_fn done, void *arg) {
  int k = lead ? 1 : 0;
  struct steps_ctx *x = calloc(1, sizeof *x);
  struct smb3_chain *ch = chain_new(n + k);
  if (!x || !ch) {
    free(x);
    chain_free(ch);
    return SMB3_ENOMEM;
  }
  *x = (struct steps_ctx){
      .c = c, .steps = steps, .n = n, .first_is_create = first_is_create, .done = done, .arg = arg};
  int rc = 0;
  if (c->opts.nocompound || n + k == 1) {
    ch->n = n; /* (the lead, if any, was closed by the caller) */
    x->result = ch;
    rc = steps_next(x, 1);
    if (rc) {
      chain_free(ch);
      free(x);
    }
    return rc;
  }
  ch->related = 1;
  ch->related_at = k;
  if (lead) rc = build_close(c, &ch->msgs[0], lead->fid, 0);
  for (int i = 0; i < n && !rc; i++)
    rc = steps[i].encode(c, &ch->msgs[k + i], SMB2_FILE_ID_RELATED, steps[i].arg);
  ch->cb = compound_done;
  ch->arg = x;
  x->lead = lead; /* (x is the I/O thread's once submitted) */
  if (!rc) rc = client_submit(c, ch);
  if (rc) {
    chain_free(ch);
    free(x);
  }
  return rc;
}

int client_steps_async(smb3_client *c, const struct step *steps, int n, int first_is_create,
                       steps_done_fn done, void *arg) {
  return steps_async(c, NULL, steps, n, first_is_create, done, arg);
}

int client_steps_lead_async(smb3_client *c, smb3_file *lead, const struct step *steps, int n,
                            int first_is_create, steps_done_fn done, void *arg) {
  if (c->opts.nocompound) { /* one request at a time: the CLOSE goes first, on its own */
    int rc = smb3_close_async(lead, NULL, NULL);
    if (rc) return rc;
    lead = NULL;
  }
  int rc = steps_async(c, lead, steps, n, first_is_create, done, arg);
  if (rc && lead) (void)smb3_close_async(lead, NULL, NULL); /* (frees it, even when it cannot be sent) */
  return rc;
}

/* ---- synchronous form ---- */
struct steps_wait {
  sem_t done;
  int rc;
  struct smb3_chain *ch;
};

static void steps_wait_done(struct smb3_chain *ch, int rc, void *arg) {
  struct steps_wait *w = arg;
  w->ch = ch;
  w->rc = rc;
  sem_post(&w->done);
}

int client_steps_first(smb3_client *c, const struct step *steps, int n, int first_is_create,
                       struct smb3_chain **out) {
  *out = NULL;
  int rc = client_sync_check(c, "request");
  if (rc) return rc;
  struct steps_wait w = {.rc = 0};
  sem_init(&w.done, 0, 0);
  rc = client_steps_async(c, steps, n, first_is_create, steps_wait_done, &w);
  if (!rc) {
    client_sem_wait(&w.done);
    rc = w.rc;
  }
  sem_destroy(&w.done);
  if (rc) {
    chain_free(w.ch);
    return client_fail(c, rc, 0, "%s", smb3_strerror(rc));
  }
  *out = w.ch;
  return 0;
}

int client_steps(smb3_client *c, const struct step *steps, int n, struct smb3_chain **out) {
  return client_steps_first(c, steps, n, 1, out);
}
