/* dir.c - directory listing: CREATE + QUERY_DIRECTORY in one compound, further
 * QUERY_DIRECTORY rounds until STATUS_NO_MORE_FILES, and CLOSE (MS-SMB2 3.2.4.17). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

#define DIR_OUTBUF (64u * 1024u)

static int enc_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, arg);
}
static int enc_query_dir(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_query_dir(c, m, fid, 0, DIR_OUTBUF);
}

/* Take QUERY_DIRECTORY message i of ch as the current batch (or end of listing). */
static int dir_take_batch(smb3_dir *d, struct smb3_chain *ch, int i) {
  uint32_t st = ch->msgs[i].status;
  if (d->have_iter) fscc_dir_iter_free(&d->it);
  d->have_iter = 0;
  chain_free(d->batch);
  d->batch = ch;
  if (st == NT_STATUS_NO_MORE_FILES) {
    d->eof = 1;
    return 0;
  }
  if (st != NT_STATUS_SUCCESS) return client_msg_result(d->c, ch, i, "readdir");
  struct smb2_query_dir_rsp r;
  if (smb2_query_dir_rsp_decode(ch->msgs[i].rsp, ch->msgs[i].rsp_len, &r))
    return client_fail(d->c, SMB3_EPROTO, 0, "readdir: malformed QUERY_DIRECTORY response");
  fscc_dir_iter_init(&d->it, r.buf, r.len);
  d->have_iter = 1;
  return 0;
}

int smb3_opendir(smb3_client *c, const char *path, smb3_dir **out) {
  *out = NULL;
  smb3_dir *d = calloc(1, sizeof *d);
  if (!d) return SMB3_ENOMEM;
  d->c = c;
  struct create_args a = {.path = path, .access = SMB2_FILE_LIST_DIRECTORY | SMB2_FILE_READ_ATTRIBUTES |
                                                  SMB2_SYNCHRONIZE,
                          .share = SMB2_FILE_SHARE_ALL, .disposition = SMB2_FILE_OPEN,
                          .options = SMB2_FILE_DIRECTORY_FILE};
  struct step s[2] = {{enc_create, &a}, {enc_query_dir, NULL}};
  struct smb3_chain *ch;
  int rc = client_steps(c, s, 2, &ch);
  if (rc) {
    free(d);
    return rc;
  }
  struct smb2_create_rsp cr;
  if (ch->msgs[0].status != NT_STATUS_SUCCESS) {
    char what[600];
    snprintf(what, sizeof what, "opendir '%s'", path);
    rc = client_msg_result(c, ch, 0, what);
  } else if (smb2_create_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &cr)) {
    rc = client_fail(c, SMB3_EPROTO, 0, "opendir: malformed CREATE response");
  }
  if (rc) {
    chain_free(ch);
    free(d);
    return rc;
  }
  d->fid = cr.file_id;
  d->open = 1;
  rc = dir_take_batch(d, ch, 1);
  if (rc) {
    smb3_closedir(d);
    return rc;
  }
  *out = d;
  return 0;
}

static int dir_next_batch(smb3_dir *d) {
  struct smb3_chain *ch = chain_new(1);
  if (!ch) return SMB3_ENOMEM;
  int rc = build_query_dir(d->c, &ch->msgs[0], d->fid, 0, DIR_OUTBUF);
  if (!rc) rc = client_run(d->c, ch);
  if (rc) {
    chain_free(ch);
    return rc;
  }
  return dir_take_batch(d, ch, 0);
}

int smb3_readdir(smb3_dir *d, struct smb3_dirent *e) {
  if (!d) return SMB3_EBADF;
  for (;;) {
    if (d->eof) return 0;
    if (d->have_iter) {
      struct fscc_dirent de;
      int rc = fscc_dir_next(&d->it, &de);
      if (rc < 0) return client_fail(d->c, rc, 0, "readdir: malformed directory entry from server");
      if (rc > 0) {
        if (!strcmp(de.name, ".") || !strcmp(de.name, "..")) continue;
        e->name = de.name;
        stat_from_fscc(&de.st, &e->st);
        return 1;
      }
    }
    int rc = dir_next_batch(d);
    if (rc) return rc;
  }
}

int smb3_closedir(smb3_dir *d) {
  if (!d) return SMB3_EBADF;
  int rc = 0;
  if (d->open) {
    struct smb3_chain *ch = chain_new(1);
    rc = ch ? build_close(d->c, &ch->msgs[0], d->fid, 0) : SMB3_ENOMEM;
    if (!rc) rc = client_run(d->c, ch);
    if (!rc) rc = client_msg_result(d->c, ch, 0, "closedir");
    chain_free(ch);
  }
  if (d->have_iter) fscc_dir_iter_free(&d->it);
  chain_free(d->batch);
  free(d);
  return rc;
}
