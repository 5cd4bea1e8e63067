/* inode.c - the inode table: one fs_inode per server file id, named by (parent, name) so that a
 * directory rename moves its whole subtree at once; paths are built on demand.
 *
 * Lifetime: an inode lives while the kernel holds lookups on it (nlookup) or anything of ours
 * references it (refs: children, open files, operations in flight). The FUSE nodeid is the
 * inode's address (the root is FUSE_ROOT_ID): no lookup is needed to find it, and an address is
 * reused only after the kernel forgot the old inode. Server file ids are reused by the server's
 * file system after a delete, so an unlinked or replaced inode is detached from the id index and a
 * new file with the same id gets a new inode (and a new lease key). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dircache.h"
#include "inode.h"
#include "nameset.h"

#define NBUCKETS 16384u

struct inode_table {
  pthread_mutex_t lock;
  void (*drop)(struct fs_inode *); /* frees what upper floors keep in an inode (itab_new) */
  struct fs_inode *root;
  char *base; /* path of the mount root inside the share ("" = the share root) */
  uint64_t next_gen;
  struct fs_inode *by_id[NBUCKETS];
  struct fs_inode *by_name[NBUCKETS];
  struct fs_inode *by_gen[NBUCKETS];
};

static unsigned hash64(uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdULL;
  v ^= v >> 33;
  return (unsigned)(v % NBUCKETS);
}

static unsigned hash_name(const struct fs_inode *parent, const char *name) {
  uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)parent;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return hash64(h);
}

/* ---- index maintenance (table lock held) ---- */
static void unlink_from(struct fs_inode **head, struct fs_inode *in, size_t link_off) {
  for (struct fs_inode **pp = head; *pp; pp = (struct fs_inode **)((char *)*pp + link_off)) {
    if (*pp == in) {
      *pp = *(struct fs_inode **)((char *)in + link_off);
      return;
    }
  }
}

static void id_unhash(struct inode_table *t, struct fs_inode *in) {
  if (!in->hashed_id) return;
  unlink_from(&t->by_id[hash64(in->srv_id)], in, offsetof(struct fs_inode, id_next));
  in->hashed_id = 0;
}

static void id_hash(struct inode_table *t, struct fs_inode *in) {
  if (!in->srv_id || in->hashed_id) return; /* id 0: the server gave none; never shared */
  unsigned b = hash64(in->srv_id);
  in->id_next = t->by_id[b];
  t->by_id[b] = in;
  in->hashed_id = 1;
}

static void name_unhash(struct inode_table *t, struct fs_inode *in) {
  if (!in->name || !in->parent) return;
  unlink_from(&t->by_name[hash_name(in->parent, in->name)], in, offsetof(struct fs_inode, name_next));
}

static void name_hash(struct inode_table *t, struct fs_inode *in) {
  if (!in->name || !in->parent) return;
  unsigned b = hash_name(in->parent, in->name);
  in->name_next = t->by_name[b];
  t->by_name[b] = in;
}

static struct fs_inode *find_id(struct inode_table *t, uint64_t id) {
  for (struct fs_inode *in = t->by_id[hash64(id)]; in; in = in->id_next)
    if (in->srv_id == id) return in;
  return NULL;
}

static struct fs_inode *find_name(struct inode_table *t, struct fs_inode *parent, const char *name) {
  for (struct fs_inode *in = t->by_name[hash_name(parent, name)]; in; in = in->name_next)
    if (in->parent == parent && !strcmp(in->name, name)) return in;
  return NULL;
}

static void known_drop(struct fs_inode *dir) {
  nameset_free(dir->known);
  dir->known = NULL;
}

/* The directory's name set follows the table (table lock held): a name added, or removed. */
static void known_add(struct fs_inode *dir, const char *name) {
  if (dir && dir->known && nameset_add(dir->known, name)) known_drop(dir); /* ENOMEM: no longer complete */
}
static void known_del(struct fs_inode *dir, const char *name) {
  if (dir && dir->known && name) nameset_del(dir->known, name);
}

/* Drop a reference; frees the inode (and walks up to release its parent) when unused. */
static void put_locked(struct inode_table *t, struct fs_inode *in) {
  while (in) {
    if (--in->refs || in->nlookup || in == t->root) return;
    struct fs_inode *parent = in->parent;
    name_unhash(t, in);
    id_unhash(t, in);
    unlink_from(&t->by_gen[hash64(in->generation)], in, offsetof(struct fs_inode, node_next));
    pthread_mutex_destroy(&in->lock);
    free(in->name);
    free(in->lnk_target);
    known_drop(in);
    dircache_free(in->dl);
    t->drop(in);
    free(in);
    in = parent;
  }
}

/* Detach from its name (table lock held); the parent reference goes with it. */
static void drop_name(struct inode_table *t, struct fs_inode *in) {
  struct fs_inode *parent = in->parent;
  name_unhash(t, in);
  free(in->name);
  in->name = NULL;
  in->parent = NULL;
  if (parent) put_locked(t, parent);
}

static int set_name(struct inode_table *t, struct fs_inode *in, struct fs_inode *parent, const char *name) {
  char *n = strdup(name);
  if (!n) return -ENOMEM;
  parent->refs++;
  drop_name(t, in);
  in->parent = parent;
  in->name = n;
  name_hash(t, in);
  known_add(parent, name);
  return 0;
}

static struct fs_inode *inode_alloc(struct fs_ctx *fs, uint64_t srv_id, uint64_t gen) {
  struct inode_table *t = fs->it;
  struct fs_inode *in = calloc(1, sizeof *in);
  if (!in) return NULL;
  pthread_mutex_init(&in->lock, NULL);
  in->generation = gen ? gen : ++t->next_gen;
  in->nodeid = (uint64_t)(uintptr_t)in;
  in->srv_id = srv_id;
  itab_make_key(fs, in->generation, in->key);
  unsigned b = hash64(in->generation);
  in->node_next = t->by_gen[b];
  t->by_gen[b] = in;
  return in;
}

/* ---- public ---- */
struct inode_table *itab_new(void (*drop)(struct fs_inode *)) {
  struct inode_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  pthread_mutex_init(&t->lock, NULL);
  t->drop = drop;
  return t;
}

void itab_free(struct inode_table *t) {
  if (!t) return;
  /* At unmount the kernel has forgotten everything it could; free what is left. */
  for (unsigned b = 0; b < NBUCKETS; b++) {
    for (struct fs_inode *in = t->by_gen[b], *next; in; in = next) {
      next = in->node_next;
      pthread_mutex_destroy(&in->lock);
      free(in->name);
      free(in->lnk_target);
      known_drop(in);
      dircache_free(in->dl);
      t->drop(in);
      free(in);
    }
  }
  pthread_mutex_destroy(&t->lock);
  free(t->base);
  free(t);
}

int itab_set_root(struct fs_ctx *fs, const struct smb3_stat *st) {
  struct inode_table *t = fs->it;
  t->base = strdup(fs->o.path ? fs->o.path : "");
  pthread_mutex_lock(&t->lock);
  struct fs_inode *root = t->base ? inode_alloc(fs, st->ino, 0) : NULL;
  if (root) {
    root->nodeid = FUSE_ROOT_ID;
    root->refs = 1;
    id_hash(t, root);
    t->root = root;
  }
  pthread_mutex_unlock(&t->lock);
  if (!root) return -ENOMEM;
  inode_set_attr(fs, root, st);
  return 0;
}

struct fs_inode *inode_get(struct fs_ctx *fs, fuse_ino_t nodeid) {
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  struct fs_inode *in = nodeid == FUSE_ROOT_ID ? t->root : (struct fs_inode *)(uintptr_t)nodeid;
  in->refs++;
  pthread_mutex_unlock(&t->lock);
  return in;
}

void inode_ref(struct fs_ctx *fs, struct fs_inode *in) {
  pthread_mutex_lock(&fs->it->lock);
  in->refs++;
  pthread_mutex_unlock(&fs->it->lock);
}

void inode_put(struct fs_ctx *fs, struct fs_inode *in) {
  if (!in) return;
  pthread_mutex_lock(&fs->it->lock);
  put_locked(fs->it, in);
  pthread_mutex_unlock(&fs->it->lock);
}

uint64_t itab_new_gen(struct fs_ctx *fs) {
  pthread_mutex_lock(&fs->it->lock);
  uint64_t g = ++fs->it->next_gen;
  pthread_mutex_unlock(&fs->it->lock);
  return g;
}

struct fs_inode *inode_link(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                            const struct smb3_stat *st, double asked) {
  return inode_link_gen(fs, parent, name, st, 0, asked);
}

/* Under the kernel's write-back cache (cache=loose) the kernel never takes a regular file's size
 * or mtime from us once its inode exists, so a file another client appended to, truncated or
 * rewrote would keep its old size (and its stale pages: the mtime check of AUTO_INVAL_DATA never
 * fires) for as long as the kernel keeps the inode. When a lookup or a listing shows such a change
 * and nothing of ours depends on the kernel's view (not open, no write-back data, not changed by
 * this mount since the kernel last agreed with the server), the file gets a new inode: the kernel
 * sees a new nodeid, drops the old dentry and its pages, and builds the inode from the server's
 * attributes. An answer asked for before the view was taken (a directory listing served a while
 * after it was fetched) says nothing. Called with the table lock held (then in->lock: the order
 * everywhere); returns 1 when in must be replaced. */
static int kernel_view_stale(struct fs_inode *in, const struct smb3_stat *st, double asked) {
  pthread_mutex_lock(&in->lock);
  int stale = in->kern_valid && asked >= in->kern_at && !in->local_mod && !in->nopen && !in->opening &&
              !in->unlinked && !wb_dirty(in) && !fs_same_version(in->kern_size, in->kern_mtime, st);
  pthread_mutex_unlock(&in->lock);
  return stale;
}

void inode_kernel_view_set(struct fs_inode *in, const struct smb3_stat *st, double asked) {
  in->kern_size = st->size;
  in->kern_mtime = st->mtime;
  in->kern_valid = 1;
  in->kern_at = asked;
}

/* After a lookup reply or listing entry carrying st (the kernel had no inode for it before when
 * fresh_kernel_inode): what the kernel's inode now holds, as far as cache=loose is concerned.
 * An open file keeps its old reference, so a change made meanwhile by others is still noticed
 * after the last close. */
static void kernel_view_update(struct fs_inode *in, const struct smb3_stat *st, int fresh_kernel_inode,
                               double asked) {
  pthread_mutex_lock(&in->lock);
  if (fresh_kernel_inode || (!in->nopen && !wb_dirty(in) && asked >= in->kern_at)) {
    inode_kernel_view_set(in, st, asked);
    in->local_mod = in->nopen > 0 && in->local_mod;
  }
  pthread_mutex_unlock(&in->lock);
}

/* The server gave in's file id to another file: in was deleted (by another client) and its id
 * reused, as ext4 and tmpfs do at once, for a file by another name. Without this, in would be taken
 * for renamed, and its old name, still in the kernel's cache, would show the new file. The birth
 * time tells them apart: a file's never changes. Only files known by another name: Samba's birth
 * time of a directory it made up from the other times (no stored one) moves with them, and a
 * same-named file with a new version is what the attribute checks are for. Not while in is open
 * here: the server keeps an open file, and its id, until it is closed. Nor when the server counts
 * more than one name for the file (links: st's link count is the server's): another of its names,
 * whose birth time Samba may report otherwise once it stored the file's DOS attributes (seen: the
 * sub-second part after a link). Table lock held. */
static int id_reused(struct fs_inode *in, const struct smb3_stat *st, int links, struct fs_inode *parent,
                     const char *name) {
  if (in->parent == parent && in->name && !strcmp(in->name, name)) return 0;
  if (links && st->nlink > 1) return 0;
  pthread_mutex_lock(&in->lock);
  const struct timespec_smb3 *a = &in->st.btime, *b = &st->btime;
  int reused = !st->is_dir && !in->st.is_dir && (a->sec || a->nsec) && (b->sec || b->nsec) &&
               (a->sec != b->sec || a->nsec != b->nsec) && !in->nopen && !in->opening && !in->unlinked;
  pthread_mutex_unlock(&in->lock);
  return reused;
}

static void set_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st, int keep_links);

/* keep_links: st has no link count (a listing's entry, a CREATE's answer; but on a POSIX share) */
static struct fs_inode *link_gen(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                 const struct smb3_stat *st, uint64_t gen, double asked, int keep_links,
                                 int kernel) {
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  struct fs_inode *old = fs->wb_cache && st->ino && !st->is_dir ? find_id(t, st->ino) : NULL;
  if (old && old->nlookup && kernel_view_stale(old, st, asked)) { /* detach: a new one is made below */
    id_unhash(t, old);
    if (old->name) {
      old->refs++;
      drop_name(t, old);
      put_locked(t, old); /* lives on while the kernel has it (nlookup) */
    }
  }
  struct fs_inode *in = st->ino ? find_id(t, st->ino) : NULL;
  if (in && id_reused(in, st, !keep_links || st->posix, parent,
                      name)) { /* another file now: the one we knew is gone */
    id_unhash(t, in);
    if (in->name) {
      in->refs++;
      drop_name(t, in);
      put_locked(t, in);
    }
    in = NULL;
  }
  struct fs_inode *there = find_name(t, parent, name);
  if (there && there != in) { /* the name now refers to another file: the old one is gone */
    id_unhash(t, there);
    there->refs++;
    drop_name(t, there);
    put_locked(t, there);
  }
  if (!in) {
    in = inode_alloc(fs, st->ino, gen);
    if (in) id_hash(t, in);
  }
  if (in && (in->parent != parent || !in->name || strcmp(in->name, name))) {
    if (set_name(t, in, parent, name)) {
      if (!in->refs && !in->nlookup) {
        in->refs = 1;
        put_locked(t, in);
      }
      in = NULL;
    }
  }
  int fresh_kernel_inode = 0;
  if (in) {
    fresh_kernel_inode = in->nlookup == 0;
    in->nlookup += kernel;
    in->refs++;
  }
  pthread_mutex_unlock(&t->lock);
  if (in) {
    set_attr(fs, in, st, keep_links);
    if (fs->wb_cache && kernel) kernel_view_update(in, st, fresh_kernel_inode, asked);
  }
  return in;
}

struct fs_inode *inode_link_gen(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                const struct smb3_stat *st, uint64_t gen, double asked) {
  return link_gen(fs, parent, name, st, gen, asked, 0, 1);
}

struct fs_inode *inode_link_listed(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                   const struct smb3_stat *st, double asked) {
  return link_gen(fs, parent, name, st, 0, asked, 1, 1);
}

struct fs_inode *inode_link_unseen(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                   const struct smb3_stat *st, double asked) {
  return link_gen(fs, parent, name, st, 0, asked, 1, 0);
}

void inode_set_id(struct fs_ctx *fs, struct fs_inode *in, uint64_t id) {
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  if (id && !in->srv_id) {
    struct fs_inode *old = find_id(t, id);
    if (old && old != in) {
      id_unhash(t, old);
      if (old->name) {
        old->refs++;
        drop_name(t, old);
        put_locked(t, old);
      }
    }
    in->srv_id = id;
    id_hash(t, in);
  }
  pthread_mutex_unlock(&t->lock);
}

struct fs_inode *inode_link_kept(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                 const struct smb3_stat *st, double asked) {
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  struct fs_inode *in = st->ino ? find_id(t, st->ino) : NULL;
  int known = in && in->nlookup && in->parent == parent && in->name && !strcmp(in->name, name);
  if (known) {
    in->nlookup++;
    in->refs++;
  }
  pthread_mutex_unlock(&t->lock);
  return known ? in : inode_link_listed(fs, parent, name, st, asked);
}

/* The kernel forgot in (table lock held): the next lookup of its name, or a readdir, may take the
 * entry of its directory's kept listing for it. A listing whose entry differs from what this
 * mount knows of the file (it wrote or set it since the listing was asked for: such a change of
 * its own moves no name, and no directory lease break tells of it) is spoiled, so the server is
 * asked again. */
static void forgotten(struct fs_inode *in) {
  struct fs_inode *dir = in->parent;
  if (!dir || !in->name) return;
  pthread_mutex_lock(&in->lock);
  struct smb3_stat st = in->st;
  pthread_mutex_unlock(&in->lock);
  if (st.is_dir) return;
  pthread_mutex_lock(&dir->lock);
  const struct fs_dent *d = dircache_find(dir->dl, in->name);
  if (d && !fs_same_version(d->st.size, d->st.mtime, &st)) dircache_spoil(dir->dl);
  pthread_mutex_unlock(&dir->lock);
}

void inode_forget(struct fs_ctx *fs, fuse_ino_t nodeid, uint64_t n) {
  struct inode_table *t = fs->it;
  if (nodeid == FUSE_ROOT_ID) return;
  pthread_mutex_lock(&t->lock);
  struct fs_inode *in = (struct fs_inode *)(uintptr_t)nodeid;
  in->nlookup = in->nlookup > n ? in->nlookup - n : 0;
  if (!in->nlookup) forgotten(in);
  in->refs++;
  put_locked(t, in);
  pthread_mutex_unlock(&t->lock);
}

static char *path_locked(struct inode_table *t, struct fs_inode *in, const char *child) {
  size_t len = strlen(t->base) + (child ? strlen(child) + 1 : 0) + 1;
  for (struct fs_inode *p = in; p != t->root; p = p->parent) {
    if (!p || !p->name) return NULL; /* detached: no path any more */
    len += strlen(p->name) + 1;
  }
  char *s = malloc(len);
  if (!s) return NULL;
  char *end = s + len - 1;
  *end = 0;
  if (child) {
    size_t n = strlen(child);
    end -= n;
    memcpy(end, child, n);
    *--end = '/';
  }
  for (struct fs_inode *p = in; p != t->root; p = p->parent) {
    size_t n = strlen(p->name);
    end -= n;
    memcpy(end, p->name, n);
    *--end = '/';
  }
  size_t blen = strlen(t->base);
  end -= blen;
  memcpy(end, t->base, blen);
  /* end == s now, with a leading '/' when base is "": the encoder drops leading separators. */
  return s;
}

char *inode_path(struct fs_ctx *fs, struct fs_inode *in) {
  pthread_mutex_lock(&fs->it->lock);
  char *s = path_locked(fs->it, in, NULL);
  pthread_mutex_unlock(&fs->it->lock);
  return s;
}

char *inode_child_path(struct fs_ctx *fs, struct fs_inode *parent, const char *name) {
  pthread_mutex_lock(&fs->it->lock);
  char *s = path_locked(fs->it, parent, name);
  pthread_mutex_unlock(&fs->it->lock);
  return s;
}

struct fs_inode *inode_parent(struct fs_ctx *fs, struct fs_inode *in, char **name) {
  pthread_mutex_lock(&fs->it->lock);
  struct fs_inode *p = in->parent;
  if (p && name && !(*name = strdup(in->name))) p = NULL;
  if (p) p->refs++;
  pthread_mutex_unlock(&fs->it->lock);
  return p;
}

struct fs_inode *inode_find_child(struct fs_ctx *fs, struct fs_inode *parent, const char *name) {
  pthread_mutex_lock(&fs->it->lock);
  struct fs_inode *in = find_name(fs->it, parent, name);
  if (in) in->refs++;
  pthread_mutex_unlock(&fs->it->lock);
  return in;
}

void inode_move(struct fs_ctx *fs, struct fs_inode *in, struct fs_inode *newparent, const char *newname) {
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  struct fs_inode *there = find_name(t, newparent, newname);
  if (there && there != in) {
    id_unhash(t, there);
    there->refs++;
    drop_name(t, there);
    put_locked(t, there);
  }
  if (set_name(t, in, newparent, newname)) { /* ENOMEM: forget the name (which exists) */
    drop_name(t, in);
    known_drop(newparent);
  }
  pthread_mutex_unlock(&t->lock);
}

void inode_detach(struct fs_ctx *fs, struct fs_inode *in) {
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  id_unhash(t, in);
  drop_name(t, in);
  pthread_mutex_unlock(&t->lock);
}

void inode_names_changing(struct fs_ctx *fs, fuse_ino_t dir) {
  struct fs_inode *in = inode_get(fs, dir);
  if (in)
    dircache_dir_changed(fs, &in->ns_moved);
  else
    dircache_ns_changed(fs);
  inode_put(fs, in);
}

void inode_dir_changed(struct fs_ctx *fs, struct fs_inode *dir, int links) {
  if (!dir) {
    dircache_ns_changed(fs);
    return;
  }
  dircache_dir_changed(fs, &dir->ns_moved); /* (nor one asked while the change was on its way) */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  pthread_mutex_lock(&dir->lock);
  dir->st.mtime = dir->st.ctime = (struct timespec_smb3){now.tv_sec, now.tv_nsec};
  if (links < 0 && dir->st.nlink > 2)
    dir->st.nlink--;
  else if (links > 0 && dir->st.posix)
    dir->st.nlink++;
  pthread_mutex_unlock(&dir->lock);
}

static struct timespec_smb3 clock_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (struct timespec_smb3){now.tv_sec, now.tv_nsec / 100 * 100}; /* a FILETIME's units */
}

static int ts_before(const struct timespec_smb3 *a, const struct timespec_smb3 *b) {
  return a->sec < b->sec || (a->sec == b->sec && a->nsec < b->nsec);
}

void inode_touch_locked(struct fs_inode *in, int how) {
  struct timespec_smb3 now = clock_now();
  in->changed_at = now;
  if (ts_before(&in->st.ctime, &now)) in->st.ctime = now;
  if (how & INODE_TOUCH_DATA) {
    in->written_at = now;
    if (ts_before(&in->st.mtime, &now)) in->st.mtime = now;
  }
}

void inode_touch(struct fs_inode *in, int how) {
  if (!in) return;
  pthread_mutex_lock(&in->lock);
  inode_touch_locked(in, how);
  pthread_mutex_unlock(&in->lock);
}

void inode_unlinked(struct fs_ctx *fs, struct fs_inode *in, int64_t links_left, struct fs_inode *parent,
                    const char *name) {
  pthread_mutex_lock(&in->lock);
  if (links_left < 0) links_left = in->st.nlink > 1 ? in->st.nlink - 1 : 0;
  int others = links_left > 0;
  if (others) {
    in->st.nlink = (uint32_t)links_left;
    inode_touch_locked(in, INODE_TOUCH_CTIME);
  } else {
    in->attr_expiry = 0;
    in->attr_lookup = 0;
  }
  pthread_mutex_unlock(&in->lock);
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  if (!others) id_unhash(t, in);
  /* (found by its id, it may be known by another of its names, which stays) */
  if (!others || (in->parent == parent && in->name && !strcmp(in->name, name))) drop_name(t, in);
  pthread_mutex_unlock(&t->lock);
}

struct fs_inode *inode_find_id(struct fs_ctx *fs, uint64_t srv_id) {
  pthread_mutex_lock(&fs->it->lock);
  struct fs_inode *in = srv_id ? find_id(fs->it, srv_id) : NULL;
  if (in) in->refs++;
  pthread_mutex_unlock(&fs->it->lock);
  return in;
}

void inode_attr_expire(struct fs_inode *in) {
  if (!in) return;
  pthread_mutex_lock(&in->lock);
  in->attr_expiry = 0;
  in->attr_lookup = 0;
  pthread_mutex_unlock(&in->lock);
}

static void expire_if_linked(struct fs_inode *in, void *arg) {
  (void)arg;
  pthread_mutex_lock(&in->lock);
  if (!in->st.is_dir && in->st.nlink > 1) {
    in->attr_expiry = 0;
    in->attr_lookup = 0;
  }
  pthread_mutex_unlock(&in->lock);
}

void itab_expire_linked(struct fs_ctx *fs) {
  itab_each(fs, expire_if_linked, NULL);
}

void inode_known_empty(struct fs_ctx *fs, struct fs_inode *dir) {
  __atomic_store_n(&dir->made_in, 1, __ATOMIC_RELEASE);
  if (fs->actimeo <= 0) return;
  struct nameset *s = nameset_new();
  pthread_mutex_lock(&fs->it->lock);
  known_drop(dir);
  dir->known = s;
  dir->known_until = fs_now() + fs->actimeo;
  pthread_mutex_unlock(&fs->it->lock);
}

enum known_answer inode_known(struct fs_ctx *fs, struct fs_inode *dir, const char *name) {
  pthread_mutex_lock(&fs->it->lock);
  enum known_answer k = !dir->known                          ? KNOWN_NOTHING
                        : fs_now() >= dir->known_until       ? KNOWN_EXPIRED
                        : nameset_may_have(dir->known, name) ? KNOWN_NOTHING
                                                             : KNOWN_ABSENT;
  pthread_mutex_unlock(&fs->it->lock);
  return k;
}

void inode_known_renew(struct fs_ctx *fs, struct fs_inode *dir, const struct smb3_dirent *e, size_t n,
                       double asked) {
  if (fs->actimeo <= 0) return;
  pthread_mutex_lock(&fs->it->lock);
  for (size_t i = 0; i < n && dir->known; i++)
    known_add(dir, e[i].name); /* (ENOMEM drops it) */
  if (dir->known && asked + fs->actimeo > dir->known_until) dir->known_until = asked + fs->actimeo;
  pthread_mutex_unlock(&fs->it->lock);
}

void inode_known_add(struct fs_ctx *fs, struct fs_inode *dir, const char *name) {
  pthread_mutex_lock(&fs->it->lock);
  known_add(dir, name);
  pthread_mutex_unlock(&fs->it->lock);
}

void inode_known_del(struct fs_ctx *fs, struct fs_inode *dir, const char *name) {
  pthread_mutex_lock(&fs->it->lock);
  known_del(dir, name);
  pthread_mutex_unlock(&fs->it->lock);
}

void inode_known_forget(struct fs_ctx *fs, struct fs_inode *dir) {
  pthread_mutex_lock(&fs->it->lock);
  known_drop(dir);
  pthread_mutex_unlock(&fs->it->lock);
}

void itab_each(struct fs_ctx *fs, void (*fn)(struct fs_inode *, void *), void *arg) {
  struct inode_table *t = fs->it;
  size_t n = 0, cap = 256;
  struct fs_inode **all = malloc(cap * sizeof *all);
  if (!all) return;
  pthread_mutex_lock(&t->lock);
  for (unsigned b = 0; b < NBUCKETS; b++)
    for (struct fs_inode *in = t->by_gen[b]; in; in = in->node_next) {
      if (n == cap) {
        struct fs_inode **bigger = realloc(all, 2 * cap * sizeof *all);
        if (!bigger) goto full; /* the ones collected so far still get fn */
        all = bigger;
        cap *= 2;
      }
      in->refs++;
      all[n++] = in;
    }
full:
  pthread_mutex_unlock(&t->lock);
  for (size_t i = 0; i < n; i++) {
    fn(all[i], arg);
    inode_put(fs, all[i]);
  }
  free(all);
}

void itab_make_key(struct fs_ctx *fs, uint64_t generation, uint8_t key[16]) {
  /* One key per inode (MS-SMB2 3.2.4.3.8: all opens of a file share the client's lease key);
   * the generation part finds the inode again when the server breaks the lease. */
  memcpy(key, fs->lease_salt, 8);
  memcpy(key + 8, &generation, 8);
}

struct fs_inode *inode_by_key(struct fs_ctx *fs, const uint8_t key[16]) {
  uint64_t gen;
  if (memcmp(key, fs->lease_salt, 8)) return NULL;
  memcpy(&gen, key + 8, 8);
  struct inode_table *t = fs->it;
  pthread_mutex_lock(&t->lock);
  struct fs_inode *in = t->by_gen[hash64(gen)];
  while (in && in->generation != gen)
    in = in->node_next;
  if (in) in->refs++;
  pthread_mutex_unlock(&t->lock);
  return in;
}

/* ---- attributes ---- */
double fs_attr_ttl(const struct fs_ctx *fs, const struct fs_inode *in) {
  if (in->nodeid == FUSE_ROOT_ID && fs->actimeo < FS_ROOT_ATTR_TTL) return FS_ROOT_ATTR_TTL;
  if (__atomic_load_n(&in->pending, __ATOMIC_ACQUIRE)) return 0; /* its id comes with the CREATE */
  return fs->actimeo;
}

static void set_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st, int keep_links) {
  pthread_mutex_lock(&in->lock);
  uint64_t ino = in->srv_id;
  uint64_t rdev = in->st.rdev, ifmt = in->st.mode & S_IFMT;
  uint32_t nlink = in->st.nlink;
  struct timespec_smb3 mtime = in->st.mtime;
  in->st = *st;
  if (keep_links && !st->posix && nlink) in->st.nlink = nlink;
  /* what this mount did that the server does not show yet (inode_touch) */
  if (ts_before(&in->st.ctime, &in->changed_at)) in->st.ctime = in->changed_at;
  if ((in->nopen || wb_dirty(in)) && ts_before(&in->st.mtime, &in->written_at) &&
      !ts_before(&mtime, &in->written_at))
    in->st.mtime = mtime;
  /* a device's numbers (fs_rdev_check) stay what they were while it stays the same device */
  if (!in->st.rdev && (in->st.mode & S_IFMT) == ifmt) in->st.rdev = rdev;
  in->st.ino = ino ? ino : st->ino;
  /* Data still in write-back is part of the file as far as the kernel is concerned. */
  uint64_t end = wb_end(in);
  if (end > in->st.size) in->st.size = end;
  double ttl = fs_attr_ttl(fs, in);
  in->attr_expiry = ttl > 0 ? fs_now() + ttl : 0;
  pthread_mutex_unlock(&in->lock);
}

void inode_set_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st) {
  set_attr(fs, in, st, 0);
}

void inode_set_open_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st) {
  set_attr(fs, in, st, 1);
}
