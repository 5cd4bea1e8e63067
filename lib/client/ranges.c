/* ranges.c - where a file has data (FSCTL_QUERY_ALLOCATED_RANGES, MS-SMB2 3.2.4.20,
 * MS-FSCC 2.3.37): what SEEK_DATA and SEEK_HOLE are answered from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

#define RANGES_MAX 1024 /* per request: 16 KiB of output; a file with more says "more" */

struct ranges_op {
  smb3_client *c;
  smb3_ranges_cb cb;
  void *arg;
  char what[300];
};

static void ranges_done(struct smb3_chain *ch, void *arg) {
  struct ranges_op *op = arg;
  struct smb3_msg *m = &ch->msgs[0];
  static __thread struct smb2_range r[RANGES_MAX];   /* I/O thread only */
  static __thread struct smb3_range out[RANGES_MAX]; /* handed to the callback */
  size_t n = 0;
  int rc = ch->error, more = 0;
  struct smb2_ioctl_rsp ir;
  if (!rc && m->status != NT_STATUS_SUCCESS && m->status != NT_STATUS_BUFFER_OVERFLOW)
    rc = client_msg_result(op->c, ch, 0, op->what);
  if (!rc && (smb2_ioctl_rsp_decode(m->rsp, m->rsp_len, &ir) ||
              smb2_alloc_ranges_decode(ir.output, ir.output_len, r, RANGES_MAX, &n)))
    rc = client_fail(op->c, SMB3_EPROTO, 0, "%s: malformed allocated ranges", op->what);
  if (!rc) more = m->status == NT_STATUS_BUFFER_OVERFLOW || n == RANGES_MAX;
  for (size_t i = 0; i < n; i++)
    out[i] = (struct smb3_range){r[i].off, r[i].len};
  chain_free(ch);
  smb3_ranges_cb cb = op->cb;
  void *cbarg = op->arg;
  free(op);
  cb(rc, rc ? NULL : out, rc ? 0 : n, more, cbarg);
}

int smb3_allocated_ranges_async(smb3_file *f, uint64_t off, uint64_t len, smb3_ranges_cb cb, void *arg) {
  if (!f || !cb) return SMB3_EINVAL;
  if (off > INT64_MAX) return SMB3_ERANGE;
  if (len > INT64_MAX - off) len = INT64_MAX - off;
  struct ranges_op *op = malloc(sizeof *op);
  struct smb3_chain *ch = chain_new(1);
  if (!op || !ch) {
    free(op);
    chain_free(ch);
    return SMB3_ENOMEM;
  }
  *op = (struct ranges_op){f->c, cb, arg, ""};
  snprintf(op->what, sizeof op->what, "allocated ranges of '%s'", f->path);
  uint8_t in[16]; /* FILE_ALLOCATED_RANGE_BUFFER: FileOffset, Length */
  struct le_wr iw;
  le_wr_init(&iw, in, sizeof in);
  le_put_u64(&iw, off);
  le_put_u64(&iw, len);
  int rc =
      build_ioctl(f->c, &ch->msgs[0], f->fid, SMB2_FSCTL_QUERY_ALLOCATED_RANGES, in, 16, RANGES_MAX * 16);
  ch->cb = ranges_done;
  ch->arg = op;
  if (!rc) rc = client_submit(f->c, ch);
  if (rc) {
    chain_free(ch);
    free(op);
  }
  return rc;
}
