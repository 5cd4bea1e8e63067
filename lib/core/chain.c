/* chain.c - allocation of request chains and their message bodies. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "smb3/smb3_errors.h"

struct smb3_chain *chain_new(int n) {
  if (n < 1 || n > CORE_MAX_CHAIN) return NULL;
  /* only the n messages asked for: each holds an inline body, and most chains are one or two */
  struct smb3_chain *c = calloc(1, sizeof *c + (size_t)n * sizeof c->msgs[0]);
  if (!c) return NULL;
  c->n = n;
  return c;
}

void chain_free(struct smb3_chain *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    struct smb3_msg *m = &c->msgs[i];
    if (m->body && m->body != m->inline_body) free(m->body);
    free(m->rsp);
  }
  free(c);
}

int msg_body_begin(struct smb3_msg *m, uint16_t command, uint32_t tree_id, size_t body_cap, struct le_wr *w) {
  m->command = command;
  m->tree_id = tree_id;
  if (m->body && m->body != m->inline_body) free(m->body);
  if (body_cap <= sizeof m->inline_body) {
    m->body = m->inline_body;
    body_cap = sizeof m->inline_body;
  } else {
    m->body = malloc(body_cap);
    if (!m->body) return SMB3_ENOMEM;
  }
  le_wr_init(w, m->body, body_cap);
  return 0;
}

int msg_body_done(struct smb3_msg *m, const struct le_wr *w) {
  if (w->err) return SMB3_EINVAL;
  m->body_len = w->off;
  return 0;
}
