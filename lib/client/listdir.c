/* listdir.c - asynchronous whole-directory listing (for the FUSE layer's readdirplus):
 * CREATE + QUERY_DIRECTORY + QUERY_DIRECTORY + CLOSE as one compound, which lists a directory
 * whose entries fit in the first answer in one round trip (the second QUERY_DIRECTORY answers
 * STATUS_NO_MORE_FILES); a longer one is listed again the classic way: CREATE + QUERY_DIRECTORY,
 * then QUERY_DIRECTORY until STATUS_NO_MORE_FILES, then CLOSE, all chained from completion
 * callbacks on the I/O thread. With a directory lease (smb3_listdir_lease_async) the CREATE asks for
 * one, the compound has no CLOSE, and a granted lease keeps the handle open for the caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

/* QUERY_DIRECTORY's output buffer: 64 KiB (one credit), or with multi-credit requests up to 1 MiB
 * (16 credits; within the server's MaxTransactSize), about 10 000 short names: the directories
 * people list fit in the first answer, so the whole-directory compound is one round trip. */
#define LIST_OUTBUF_SMALL (64u * 1024u)
#define LIST_OUTBUF_LARGE (1024u * 1024u)
/* The largest FileIdFullDirectoryInformation entry: 80 fixed bytes + 255 UTF-16 characters,
 * 8-byte aligned. A server fills the output buffer while entries fit, so a response that left
 * room for one more of these most likely ended the directory: the next QUERY_DIRECTORY is then
 * compounded with the CLOSE (one round trip saved). If that guess is wrong, the listing starts
 * over without guessing, so it is never wrong, only slower. */
#define LIST_MAX_ENTRY 600u

struct listing {
  smb3_client *c;
  char *path;
  struct create_args ca;
  struct step steps[4];
  struct smb2_file_id fid;
  int have_fid;
  int rc;
  int last_guess; /* the last batch looked like the end (see batch_looks_last) */
  int classic;    /* a guess was wrong once (or nocompound): list to NO_MORE_FILES, then CLOSE */
  int keep;       /* a directory lease was asked for: no CLOSE compounded, the handle kept if granted */
  uint32_t granted;
  struct smb3_dirent *ents;
  char **names;
  size_t n, cap;
  smb3_list_cb cb;
  smb3_list_lease_cb lcb; /* (smb3_listdir_lease_async: instead of cb) */
  void *arg;
};

static uint32_t list_outbuf(smb3_client *c) {
  uint32_t max = core_negotiated(c->core)->max_transact;
  if (!c->multi_credit || max < LIST_OUTBUF_SMALL) return LIST_OUTBUF_SMALL;
  return max < LIST_OUTBUF_LARGE ? max : LIST_OUTBUF_LARGE;
}

static int enc_create(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)fid;
  return build_create(c, m, &((const struct listing *)arg)->ca);
}
static int enc_query_dir(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *arg) {
  (void)arg;
  return build_query_dir(c, m, fid, 0, list_outbuf(c));
}

static void listing_free(struct listing *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->names[i]);
  free(l->names);
  free(l->ents);
  free(l->path);
  free(l);
}

static void listing_end(struct listing *l, smb3_file *dh) {
  if (l->lcb)
    l->lcb(l->rc, l->rc ? NULL : l->ents, l->rc ? 0 : l->n, dh, l->arg);
  else
    l->cb(l->rc, l->rc ? NULL : l->ents, l->rc ? 0 : l->n, l->arg);
  listing_free(l);
}

static int listing_add(struct listing *l, const struct fscc_dirent *de) {
  if (!strcmp(de->name, ".") || !strcmp(de->name, "..")) return 0;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    struct smb3_dirent *e = realloc(l->ents, cap * sizeof *e);
    if (e) l->ents = e;
    char **nm = e ? realloc(l->names, cap * sizeof *nm) : NULL;
    if (!nm) return SMB3_ENOMEM;
    l->names = nm;
    l->cap = cap;
  }
  char *name = strdup(de->name);
  if (!name) return SMB3_ENOMEM;
  l->names[l->n] = name;
  l->ents[l->n].name = name;
  stat_from_fscc(&de->st, &l->ents[l->n].st);
  l->n++;
  return 0;
}

/* Append the entries of one QUERY_DIRECTORY response; returns 1 at the end of the listing. */
static int listing_batch(struct listing *l, const struct smb3_msg *m) {
  if (m->status == NT_STATUS_NO_MORE_FILES) return 1;
  if (m->status != NT_STATUS_SUCCESS) {
    int rc = smb3_status_to_err(m->status);
    l->rc = client_fail(l->c, rc ? rc : SMB3_ESTATUS, m->status, "readdir '%s'", l->path);
    return 1;
  }
  struct smb2_query_dir_rsp r;
  if (smb2_query_dir_rsp_decode(m->rsp, m->rsp_len, &r)) {
    l->rc = client_fail(l->c, SMB3_EPROTO, 0, "readdir: malformed QUERY_DIRECTORY response");
    return 1;
  }
  struct fscc_dir_iter it;
  struct fscc_dirent de;
  int rc;
  l->last_guess = !l->classic && list_outbuf(l->c) - r.len >= LIST_MAX_ENTRY;
  if (l->c->posix)
    fscc_dir_iter_init_posix(&it, r.buf, r.len);
  else
    fscc_dir_iter_init(&it, r.buf, r.len);
  it.sfm = (client_names(l->c) & FSCC_NAMES_SFM) != 0;
  while ((rc = fscc_dir_next(&it, &de)) > 0 && !l->rc)
    l->rc = listing_add(l, &de);
  fscc_dir_iter_free(&it);
  if (rc < 0 && !l->rc) l->rc = client_fail(l->c, rc, 0, "readdir: malformed directory entry from server");
  return l->rc != 0;
}

static void close_done(struct smb3_chain *ch, void *arg) {
  chain_free(ch);
  listing_end(arg, NULL);
}

/* The listing is complete (or failed): a handle that holds a granted directory lease goes to the
 * caller, any other is closed. */
static void listing_close(struct listing *l) {
  if (l->keep && l->have_fid && !l->rc && (l->granted & SMB3_LEASE_READ)) {
    smb3_file *dh = file_make(l->c, l->path, l->fid, 1, l->granted);
    if (dh) {
      dirlease_track(dh, l->ca.lease.key); /* (this client's changes there keep it: lease.c) */
      listing_end(l, dh);
      return;
    }
  }
  struct smb3_chain *ch = l->have_fid ? chain_new(1) : NULL;
  if (ch && !build_close(l->c, &ch->msgs[0], l->fid, 0)) {
    ch->cb = close_done;
    ch->arg = l;
    if (!client_submit(l->c, ch)) return;
  }
  chain_free(ch);
  listing_end(l, NULL);
}

static void next_done(struct smb3_chain *ch, void *arg);

static void listing_next(struct listing *l) {
  int with_close = l->last_guess && !l->keep;
  struct smb3_chain *ch = chain_new(with_close ? 2 : 1);
  int rc = ch ? build_query_dir(l->c, &ch->msgs[0], l->fid, 0, list_outbuf(l->c)) : SMB3_ENOMEM;
  if (!rc && with_close) {
    ch->related = 1;
    rc = build_close(l->c, &ch->msgs[1], l->fid, 0);
  }
  if (!rc) {
    ch->cb = next_done;
    ch->arg = l;
    rc = client_submit(l->c, ch);
  }
  if (rc) {
    chain_free(ch);
    l->rc = rc;
    listing_close(l);
  }
}

static int listing_start(struct listing *l);

/* Forget what was listed and start over, not guessing this time. */
static void listing_restart(struct listing *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->names[i]);
  l->n = 0;
  l->have_fid = 0;
  l->classic = 1;
  l->last_guess = 0;
  int rc = listing_start(l);
  if (rc) {
    l->rc = rc;
    listing_end(l, NULL);
  }
}

static void next_done(struct smb3_chain *ch, void *arg) {
  struct listing *l = arg;
  int end = 1, closed = ch->n == 2;
  if (ch->error)
    l->rc = ch->error;
  else
    end = listing_batch(l, &ch->msgs[0]);
  chain_free(ch);
  if (closed) {
    l->have_fid = 0;
    if (!end && !l->rc)
      listing_restart(l); /* the guess was wrong: entries came after all */
    else
      listing_end(l, NULL);
  } else if (end) {
    listing_close(l);
  } else {
    listing_next(l);
  }
}

static void first_done(struct smb3_chain *ch, int rc, void *arg) {
  struct listing *l = arg;
  struct smb2_create_rsp cr;
  int end = 1;
  if (rc) {
    l->rc = rc;
  } else if (ch->msgs[0].status != NT_STATUS_SUCCESS) {
    char what[600];
    snprintf(what, sizeof what, "opendir '%s'", l->path);
    l->rc = client_msg_result(l->c, ch, 0, what);
  } else if (smb2_create_rsp_decode(ch->msgs[0].rsp, ch->msgs[0].rsp_len, &cr)) {
    l->rc = client_fail(l->c, SMB3_EPROTO, 0, "opendir: malformed CREATE response");
  } else {
    l->fid = cr.file_id;
    l->have_fid = 1;
    if (l->keep) l->granted = cr.lease.version ? cr.lease.state : 0;
    end = listing_batch(l, &ch->msgs[1]);
    if (ch->n == 3 && !end) end = listing_batch(l, &ch->msgs[2]); /* (the leased compound: no CLOSE) */
    if (ch->n == 4) { /* the whole-directory compound: its CLOSE ended the handle */
      if (!end) end = listing_batch(l, &ch->msgs[2]);
      l->have_fid = ch->msgs[3].status != NT_STATUS_SUCCESS; /* (a CLOSE that failed: try again) */
      if (!end && !l->rc) { /* longer than two answers: the handle is gone, list it classically */
        chain_free(ch);
        listing_restart(l);
        return;
      }
    }
  }
  chain_free(ch);
  if (!l->have_fid)
    listing_end(l, NULL);
  else if (end)
    listing_close(l);
  else
    listing_next(l);
}

static int list_async(smb3_client *c, const char *path, const uint8_t *key, smb3_list_cb cb,
                      smb3_list_lease_cb lcb, void *arg) {
  struct listing *l = calloc(1, sizeof *l);
  if (!l || !(l->path = strdup(path))) {
    free(l);
    return SMB3_ENOMEM;
  }
  l->c = c;
  l->classic = c->opts.nocompound; /* the one-by-one baseline never compounds QUERY_DIRECTORY+CLOSE */
  l->cb = cb;
  l->lcb = lcb;
  l->arg = arg;
  l->ca =
      (struct create_args){.path = l->path,
                           .access = SMB2_FILE_LIST_DIRECTORY | SMB2_FILE_READ_ATTRIBUTES | SMB2_SYNCHRONIZE,
                           .share = SMB2_FILE_SHARE_ALL,
                           .disposition = SMB2_FILE_OPEN,
                           .options = SMB2_FILE_DIRECTORY_FILE};
  l->steps[0] = (struct step){enc_create, l};
  l->steps[1] = (struct step){enc_query_dir, l};
  l->steps[2] = (struct step){enc_query_dir, l};
  l->steps[3] = (struct step){step_close, NULL};
  if (key && client_dir_leasing(c)) {
    l->keep = 1;
    l->ca.oplock = SMB2_OPLOCK_LEVEL_LEASE;
    l->ca.lease.version = 2;
    memcpy(l->ca.lease.key, key, 16);
    l->ca.lease.state = SMB3_LEASE_READ | SMB3_LEASE_HANDLE;
  }
  int rc = listing_start(l);
  if (rc) listing_free(l);
  return rc;
}

int smb3_listdir_async(smb3_client *c, const char *path, smb3_list_cb cb, void *arg) {
  if (!c || !path || !cb) return SMB3_EINVAL;
  return list_async(c, path, NULL, cb, NULL, arg);
}

int smb3_listdir_lease_async(smb3_client *c, const char *path, const uint8_t key[16], smb3_list_lease_cb cb,
                             void *arg) {
  if (!c || !path || !cb) return SMB3_EINVAL;
  return list_async(c, path, key, NULL, cb, arg);
}

/* The whole-directory compound (CREATE + 2 QUERY_DIRECTORY + CLOSE; without the CLOSE when a
 * directory lease is asked for), or CREATE + QUERY_DIRECTORY (classic). */
static int listing_start(struct listing *l) {
  return client_steps_async(l->c, l->steps, l->classic ? 2 : l->keep ? 3 : 4, 1, first_done, l);
}
