/* steps.c - run CREATE ... CLOSE sequences as one related compound chain (MS-SMB2 3.2.4.1.4),
 * or one request at a time with the real FileId when the `nocompound` option is set. Both
 * forms are asynchronous; client_steps() waits for them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

#define STEPS_RIDERS_MAX 16 /* CLOSEs that ride with one compound (smb3_set_close_riders) */

struct steps_ctx {
  smb3_client *c;
  /* CLOSEs before the steps, in this order, each freed at the end: the riders
   * (smb3_set_close_riders; riders_done(rc, riders_arg) once they were answered), then lead
   * (client_steps_lead_async) */
  smb3_file *riders[STEPS_RIDERS_MAX];
  int nriders;
  smb3_done_cb riders_done;
  void *riders_arg;
  smb3_file *lead;
  const struct step *steps;
  int n, next, first_is_create;
  struct smb3_chain *result;
  struct smb2_file_id fid;
  uint32_t create_status;
  steps_done_fn done;
  void *arg;
};

/* Take messages 0..k-1 (the CLOSEs before the steps) out of a completed chain: the steps' messages
 * move down k. */
static void drop_leads(struct smb3_chain *ch, int k) {
  for (int i = 0; i < k; i++) {
    struct smb3_msg *m = &ch->msgs[i];
    if (m->body && m->body != m->inline_body) free(m->body);
    free(m->rsp);
  }
  memmove(&ch->msgs[0], &ch->msgs[k], (size_t)(ch->n - k) * sizeof ch->msgs[0]);
  ch->n -= k;
  for (int i = 0; i < ch->n; i++) { /* an inline body moved with its message */
    struct smb3_msg *d = &ch->msgs[i];
    if (d->body == ch->msgs[i + k].inline_body) d->body = d->inline_body;
  }
}

static void compound_done(struct smb3_chain *ch, void *arg) {
  struct steps_ctx *x = arg;
  steps_done_fn done = x->done;
  void *darg = x->arg;
  int k = x->nriders + (x->lead != NULL);
  for (int i = 0; i < x->nriders; i++) /* gone whatever the server said of their CLOSEs */
    file_free(x->riders[i]);
  if (x->lead) file_free(x->lead);
  if (k) drop_leads(ch, k);
  if (x->nriders) x->riders_done(ch->error, x->riders_arg);
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

void smb3_set_close_riders(smb3_client *c, smb3_riders_cb take, void *arg) {
  pthread_mutex_lock(&c->err_lock);
  c->riders = take;
  c->riders_arg = arg;
  pthread_mutex_unlock(&c->err_lock);
}

/* The CLOSEs that ride with a compound of n messages (x->riders). */
static void take_riders(smb3_client *c, struct steps_ctx *x, int n) {
  pthread_mutex_lock(&c->err_lock);
  smb3_riders_cb take = c->riders;
  void *targ = c->riders_arg;
  pthread_mutex_unlock(&c->err_lock);
  int max = CORE_MAX_CHAIN - n < STEPS_RIDERS_MAX ? CORE_MAX_CHAIN - n : STEPS_RIDERS_MAX;
  if (!take || max <= 0 || c->opts.nocompound) return;
  int r = take(targ, c, x->riders, max, &x->riders_done, &x->riders_arg);
  x->nriders = r > 0 && r <= max && x->riders_done ? r : 0;
}

/* A compound that was not sent: its riders are closed on their own. */
static void riders_alone(struct steps_ctx *x, int rc) {
  if (x->nriders && smb3_close_many_async(x->riders, x->nriders, x->riders_done, x->riders_arg))
    x->riders_done(rc, x->riders_arg); /* (the handles are freed) */
  x->nriders = 0;
}

static int steps_async(smb3_client *c, smb3_file *lead, const struct step *steps, int n, int first_is_create,
                       steps_done_fn done, void *arg) {
  struct steps_ctx *x = calloc(1, sizeof *x);
  if (!x) return SMB3_ENOMEM;
  *x = (struct steps_ctx){
      .c = c, .steps = steps, .n = n, .first_is_create = first_is_create, .done = done, .arg = arg};
  take_riders(c, x, n + (lead != NULL));
  int k = x->nriders + (lead != NULL);
  struct smb3_chain *ch = chain_new(n + k);
  if (!ch) {
    riders_alone(x, SMB3_ENOMEM);
    free(x);
    return SMB3_ENOMEM;
  }
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
  for (int i = 0; i < x->nriders && !rc; i++)
    rc = build_close(c, &ch->msgs[i], x->riders[i]->fid, 0);
  if (lead && !rc) rc = build_close(c, &ch->msgs[k - 1], lead->fid, 0);
  for (int i = 0; i < n && !rc; i++)
    rc = steps[i].encode(c, &ch->msgs[k + i], SMB2_FILE_ID_RELATED, steps[i].arg);
  ch->cb = compound_done;
  ch->arg = x;
  x->lead = lead; /* (x is the I/O thread's once submitted) */
  if (!rc) rc = client_submit(c, ch);
  if (rc) {
    riders_alone(x, rc);
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
