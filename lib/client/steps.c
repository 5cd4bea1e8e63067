/* steps.c - run CREATE ... CLOSE sequences as one related compound chain (MS-SMB2 3.2.4.1.4),
 * or one request at a time with the real FileId when the `nocompound` option is set. */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

static int run_compound(smb3_client *c, const struct step *steps, int n, struct smb3_chain *ch) {
  ch->related = 1;
  for (int i = 0; i < n; i++) {
    int rc = steps[i].encode(c, &ch->msgs[i], SMB2_FILE_ID_RELATED, steps[i].arg);
    if (rc) return rc;
  }
  return client_run(c, ch);
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
  s->rsp = NULL;
}

static int run_one_by_one(smb3_client *c, const struct step *steps, int n, struct smb3_chain *ch) {
  struct smb2_file_id fid = {0, 0};
  uint32_t create_status = 0;
  for (int i = 0; i < n; i++) {
    struct smb3_msg *d = &ch->msgs[i];
    if (create_status) { /* what a server does to the rest of a failed related chain */
      d->done = 1;
      d->status = create_status;
      continue;
    }
    struct smb3_chain *one = chain_new(1);
    if (!one) return SMB3_ENOMEM;
    int rc = steps[i].encode(c, &one->msgs[0], fid, steps[i].arg);
    /* READ destinations and WRITE payloads were set by encode on `one` */
    if (!rc) rc = client_run(c, one);
    if (rc) {
      chain_free(one);
      return rc;
    }
    take_response(ch, i, one);
    chain_free(one);
    if (i == 0) {
      struct smb2_create_rsp cr;
      if (d->status != NT_STATUS_SUCCESS) create_status = d->status;
      else if (smb2_create_rsp_decode(d->rsp, d->rsp_len, &cr) == 0) fid = cr.file_id;
      else create_status = NT_STATUS_INVALID_PARAMETER;
    }
  }
  return 0;
}

int client_steps(smb3_client *c, const struct step *steps, int n, struct smb3_chain **out) {
  *out = NULL;
  struct smb3_chain *ch = chain_new(n);
  if (!ch) return SMB3_ENOMEM;
  int rc = c->opts.nocompound ? run_one_by_one(c, steps, n, ch) : run_compound(c, steps, n, ch);
  if (rc) {
    chain_free(ch);
    return rc;
  }
  *out = ch;
  return 0;
}
