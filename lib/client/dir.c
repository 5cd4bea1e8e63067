/* dir.c - the synchronous directory API over smb3_listdir_async (one listing, then iteration
 * over the copy). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"

struct smb3_dir {
  smb3_client *c;
  struct smb3_dirent *ents;
  char **names;
  size_t n, next;
  int rc, done;
  pthread_mutex_t m;
  pthread_cond_t cv;
};

static void dir_free(smb3_dir *d) {
  for (size_t i = 0; i < d->n; i++)
    free(d->names[i]);
  free(d->names);
  free(d->ents);
  pthread_cond_destroy(&d->cv);
  pthread_mutex_destroy(&d->m);
  free(d);
}

/* Copy the listing (its names live only during the callback). */
static int dir_copy(smb3_dir *d, const struct smb3_dirent *e, size_t n) {
  d->ents = calloc(n ? n : 1, sizeof *d->ents);
  d->names = calloc(n ? n : 1, sizeof *d->names);
  if (!d->ents || !d->names) return SMB3_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!(d->names[i] = strdup(e[i].name))) return SMB3_ENOMEM;
    d->ents[i] = e[i];
    d->ents[i].name = d->names[i];
    d->n = i + 1;
  }
  return 0;
}

static void dir_listed(int rc, const struct smb3_dirent *e, size_t n, void *arg) {
  smb3_dir *d = arg;
  if (!rc) rc = dir_copy(d, e, n);
  pthread_mutex_lock(&d->m);
  d->rc = rc;
  d->done = 1;
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->m);
}

int smb3_opendir(smb3_client *c, const char *path, smb3_dir **out) {
  *out = NULL;
  int rc = client_sync_check(c, "opendir");
  if (rc) return rc;
  smb3_dir *d = calloc(1, sizeof *d);
  if (!d) return SMB3_ENOMEM;
  d->c = c;
  pthread_mutex_init(&d->m, NULL);
  pthread_cond_init(&d->cv, NULL);
  rc = smb3_listdir_async(c, path, dir_listed, d);
  if (!rc) {
    pthread_mutex_lock(&d->m);
    while (!d->done)
      pthread_cond_wait(&d->cv, &d->m);
    pthread_mutex_unlock(&d->m);
    rc = d->rc;
  }
  if (rc) {
    dir_free(d);
    return rc;
  }
  *out = d;
  return 0;
}

int smb3_readdir(smb3_dir *d, struct smb3_dirent *e) {
  if (!d) return SMB3_EBADF;
  if (d->next == d->n) return 0;
  *e = d->ents[d->next++];
  return 1;
}

int smb3_closedir(smb3_dir *d) {
  if (!d) return SMB3_EBADF;
  dir_free(d);
  return 0;
}
