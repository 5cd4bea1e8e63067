/* test_inode.c - the inode table (fs/inode.c) with the kept listings it reads (fs/dircache.c):
 * when the kernel forgets a file whose attributes this mount knows to differ from its directory's
 * kept listing (it wrote or set them since), the listing is spoiled, so that its old entry is not
 * served for the name again (a directory lease is not broken by the mount's own changes); and the
 * orders a walk of the listing follows (openahead.c, relist.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dircache.h"
#include "inode.h"

static void no_drop(struct fs_inode *in) {
  (void)in;
}

struct world {
  struct fs_ctx fs;
  struct fs_inode *dir;
};

static struct smb3_stat file_st(uint64_t ino, uint64_t size, int64_t mtime) {
  struct smb3_stat st;
  memset(&st, 0, sizeof st);
  st.ino = ino;
  st.size = size;
  st.mode = S_IFREG | 0644;
  st.nlink = 1;
  st.mtime.sec = st.ctime.sec = mtime;
  return st;
}

/* A mount with a directory "d" holding a kept listing of the files a (3 bytes) and b (5 bytes). */
static int setup(void **state) {
  struct world *w = calloc(1, sizeof *w);
  assert_non_null(w);
  w->fs.actimeo = 60; /* (recent for the whole test) */
  w->fs.it = itab_new(no_drop);
  assert_non_null(w->fs.it);
  struct smb3_stat root = {.ino = 1, .is_dir = 1, .mode = S_IFDIR | 0755, .nlink = 2};
  assert_int_equal(itab_set_root(&w->fs, &root), 0);
  struct fs_inode *r = inode_get(&w->fs, FUSE_ROOT_ID);
  struct smb3_stat dst = {.ino = 2, .is_dir = 1, .mode = S_IFDIR | 0755, .nlink = 2};
  w->dir = inode_link(&w->fs, r, "d", &dst, fs_now());
  inode_put(&w->fs, r);
  assert_non_null(w->dir);
  struct fs_dent v[2] = {{"a", file_st(10, 3, 1000)}, {"b", file_st(11, 5, 1000)}};
  struct fs_dlist *d = dircache_new(&w->fs, v, 2, fs_now(), dircache_gen(&w->fs));
  assert_non_null(d);
  pthread_mutex_lock(&w->dir->lock);
  w->dir->dl = d;
  pthread_mutex_unlock(&w->dir->lock);
  assert_true(dircache_recent(&w->fs, d));
  *state = w;
  return 0;
}

static int teardown(void **state) {
  struct world *w = *state;
  inode_forget(&w->fs, w->dir->nodeid, 1);
  inode_put(&w->fs, w->dir);
  itab_free(w->fs.it);
  free(w);
  return 0;
}

/* The kernel looks name up (the listing's entry becomes the inode's), this mount may change what
 * it knows of the file, then the kernel forgets it: whether the kept listing is still recent. */
static int recent_after_forget(struct world *w, const char *name, uint64_t ino, uint64_t size, int64_t mtime,
                               uint64_t new_size, int64_t new_mtime) {
  struct smb3_stat st = file_st(ino, size, mtime);
  struct fs_inode *in = inode_link(&w->fs, w->dir, name, &st, fs_now());
  assert_non_null(in);
  pthread_mutex_lock(&in->lock); /* (what a write or a setattr through the mount leaves) */
  in->st.size = new_size;
  in->st.mtime.sec = new_mtime;
  pthread_mutex_unlock(&in->lock);
  inode_forget(&w->fs, in->nodeid, 1);
  inode_put(&w->fs, in);
  pthread_mutex_lock(&w->dir->lock);
  int r = dircache_recent(&w->fs, w->dir->dl);
  pthread_mutex_unlock(&w->dir->lock);
  return r;
}

static void test_unchanged_file_keeps_listing(void **state) {
  assert_true(recent_after_forget(*state, "a", 10, 3, 1000, 3, 1000));
}

static void test_written_file_spoils_listing(void **state) {
  assert_false(recent_after_forget(*state, "a", 10, 3, 1000, 9, 1000));
}

static void test_times_set_spoil_listing(void **state) {
  assert_false(recent_after_forget(*state, "b", 11, 5, 1000, 5, 2000));
}

static void test_name_not_listed_keeps_listing(void **state) {
  assert_true(recent_after_forget(*state, "c", 12, 1, 1000, 7, 3000));
}

/* The orders a walk follows in a kept listing (dircache_files_after, dircache_dirs_after): the
 * listing's (find, tar) and by name (git add, ls -R), from the first entry or after a name. */
static void test_listing_orders(void **state) {
  struct world *w = *state;
  struct smb3_stat dir = {.ino = 30, .is_dir = 1, .mode = S_IFDIR | 0755, .nlink = 2};
  struct fs_dent v[6] = {
      {"f", file_st(20, 1, 1)}, {"c", file_st(21, 1, 1)}, {"s", dir}, {"a", file_st(22, 1, 1)}, {"t", dir},
      {"b", file_st(23, 1, 1)}};
  struct fs_dlist *d = dircache_new(&w->fs, v, 6, fs_now(), dircache_gen(&w->fs));
  assert_non_null(d);
  char *out[8], *sub = NULL;
  /* the listing's order, from the first, directories skipped */
  assert_int_equal(dircache_files_after(d, 0, NULL, out, 8, NULL), 4);
  assert_string_equal(out[0], "f");
  assert_string_equal(out[1], "c");
  assert_string_equal(out[2], "a");
  assert_string_equal(out[3], "b");
  for (int i = 0; i < 4; i++)
    free(out[i]);
  /* ... after c, stopping at the directory met (a walk goes down into it) */
  assert_int_equal(dircache_files_after(d, 0, "c", out, 8, &sub), 0);
  assert_non_null(sub);
  assert_string_equal(sub, "s");
  free(sub);
  assert_int_equal(dircache_files_after(d, 0, "s", out, 8, &sub), 1);
  assert_string_equal(out[0], "a");
  assert_string_equal(sub, "t");
  free(out[0]);
  free(sub);
  assert_int_equal(dircache_files_after(d, 0, "b", out, 8, &sub), 0); /* the last: none, no directory */
  assert_null(sub);
  /* by name, after b, at most 2 */
  assert_int_equal(dircache_files_after(d, 1, "b", out, 2, NULL), 2);
  assert_string_equal(out[0], "c");
  assert_string_equal(out[1], "f");
  free(out[0]);
  free(out[1]);
  /* a name not in the listing: none */
  assert_int_equal(dircache_files_after(d, 0, "x", out, 8, &sub), 0);
  assert_null(sub);
  /* the directories after a, in the listing's order then by name */
  assert_int_equal(dircache_dirs_after(d, "a", out, 4), 2);
  assert_string_equal(out[0], "t");
  assert_string_equal(out[1], "s");
  free(out[0]);
  free(out[1]);
  assert_int_equal(dircache_dirs_after(d, NULL, out, 4), 2);
  assert_string_equal(out[0], "s");
  assert_string_equal(out[1], "t");
  free(out[0]);
  free(out[1]);
  dircache_free(d);
}

/* An inode made for a file the kernel has not seen (inode_link_unseen: openahead.c) counts no kernel
 * lookup: it goes with its last reference, and the kernel's first lookup of the name finds it and
 * counts then. */
static void test_unseen_inode(void **state) {
  struct world *w = *state;
  struct smb3_stat st = file_st(40, 7, 1000);
  struct fs_inode *u = inode_link_unseen(&w->fs, w->dir, "u", &st, fs_now());
  assert_non_null(u);
  assert_int_equal(u->nlookup, 0);
  struct fs_inode *k = inode_link_listed(&w->fs, w->dir, "u", &st, fs_now());
  assert_ptr_equal(k, u);
  assert_int_equal(k->nlookup, 1);
  fuse_ino_t id = k->nodeid;
  inode_put(&w->fs, k);
  inode_put(&w->fs, u);
  struct fs_inode *f = inode_find_child(&w->fs, w->dir, "u");
  assert_ptr_equal(f, u); /* the kernel's lookup keeps it */
  inode_put(&w->fs, f);
  inode_forget(&w->fs, id, 1);
  assert_null(inode_find_child(&w->fs, w->dir, "u"));
  struct smb3_stat st2 = file_st(41, 7, 1000);
  struct fs_inode *v = inode_link_unseen(&w->fs, w->dir, "v", &st2, fs_now());
  assert_non_null(v);
  inode_put(&w->fs, v); /* nobody looked it up: gone */
  assert_null(inode_find_child(&w->fs, w->dir, "v"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unchanged_file_keeps_listing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_written_file_spoils_listing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_times_set_spoil_listing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_name_not_listed_keeps_listing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_listing_orders, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unseen_inode, setup, teardown),
  };
  return cmocka_run_group_tests_name("inode", tests, NULL, NULL);
}
