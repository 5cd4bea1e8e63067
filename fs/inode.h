/* inode.h - the inode table (inode.c): one fs_inode per server file, named by (parent, name);
 * the per-inode state other floors keep in it (write-back extents, lock records, symlink). */
#ifndef SMB3FS_INODE_H
#define SMB3FS_INODE_H

#include "extents.h"
#include "mount.h"

/* ---- write-back state of one inode: writeback.c is its mechanism; guarded by inode->lock.
 * Here because every inode holds one, and the attribute code below needs wb_dirty/wb_end. */
struct wb_chunk;
struct wb_waiter;
struct wb_parked;
struct fs_file;
struct fs_dlist;
struct relist_job;
/* Times set (futimens, utimensat) on a file whose data is still being gathered here: they go to the
 * server with that data (writeback.c, wb_set_times), through the handle it came through. */
struct wb_times {
  int pending, has_at, has_mt;
  struct timespec_smb3 at, mt;
  struct fs_file *fh; /* referenced while pending */
};
struct wb_state {
  struct extent_set open;    /* extents being filled (not yet on the wire), by offset */
  struct wb_chunk *wire;     /* on the wire */
  struct wb_chunk *blocked;  /* waiting for an overlapping extent on the wire */
  size_t inflight_bytes;     /* wire + blocked bytes */
  int inflight;              /* wire + blocked extents */
  uint64_t dirty_end;        /* end of the data not yet confirmed by the server */
  int err;                   /* first failed wire WRITE (negative errno), until reported */
  struct wb_waiter *waiters; /* flushes waiting for inflight == 0 */
  struct wb_parked *parked;  /* FUSE writes whose reply waits for the dirty bound */
  struct wb_times times;     /* pending times (counted as dirty) */
};

/* ---- inodes (inode.c) ---- */
struct fs_inode {
  /* guarded by the table lock */
  uint64_t nodeid; /* what the kernel knows it by (FUSE_ROOT_ID for the root) */
  uint64_t generation;
  uint64_t srv_id;         /* the server's file id (IndexNumber): st_ino */
  struct fs_inode *parent; /* holds a reference; NULL for the root and when detached */
  char *name;              /* NULL when detached (unlinked or replaced) */
  uint64_t nlookup;        /* kernel lookup count */
  uint32_t refs;           /* internal references: children, open files, operations */
  int hashed_id;           /* in the srv_id hash */
  struct nameset *known;   /* a directory whose every name this mount knows (it made it), until known_until */
  double known_until;
  struct fs_inode *id_next, *name_next, *node_next;
  /* guarded by lock */
  pthread_mutex_t lock;
  struct smb3_stat st;
  double attr_expiry;                /* monotonic seconds; 0 = invalid */
  double attr_lookup;                /* when a LOOKUP reply carried them (one GETATTR may use them); 0 = no */
  int nopen;                         /* open files */
  int nclosing;                      /* of them, released: their CLOSE sent or waiting in closeq.c */
  int opening;                       /* opens of this inode in flight (ops_file.c) */
  uint64_t oa_opened;                /* atomic: openahead.c's count of the program's opens at its last */
  int unlinked;                      /* renamed to a hidden name and delete-pending (ops_ns.c) */
  uint32_t lease;                    /* SMB3_LEASE_* currently held by the key */
  uint8_t key[16];                   /* lease key, shared by every open of this inode */
  uint64_t data_gen;                 /* bumped by every local change of the data (read-ahead coherence) */
  struct timespec_smb3 cached_mtime; /* version of the data in the kernel page cache */
  uint64_t cached_size;
  int cached_valid;
  int opened_ever;         /* opened through this mount (cache_pages_kept) */
  int lock_used;           /* a byte-range lock went to the server for it: never a deferred close (atomic) */
  int direct_writers;      /* cache=strict: open files written with direct I/O (cache_open_mode) */
  atomic_int direct_unfit; /* reads of direct read-only opens that direct I/O serves badly (away
                            * from the stream, or small: readahead.c); past FS_DIRECT_UNFIT, the
                            * file's next read-only opens use the page cache */
  /* mfsymlinks (symlink.c): whether this version (size, mtime) of the file is a symlink file */
  int lnk;          /* 1 = a link to lnk_target, -1 = not one, 0 = not read */
  mode_t kern_ifmt; /* S_IFMT the kernel's inode was given (first entry), never changed */
  char *lnk_target;
  uint64_t lnk_size;
  struct timespec_smb3 lnk_mtime;
  /* cache=loose only (the kernel's write-back cache keeps its own size and mtime of a regular file
   * and ignores ours): the size and mtime the kernel's inode was made with or last agreed with us
   * on, and whether this mount changed the file since (open for writing, setattr). inode_link_gen
   * gives a file that changed on the server behind the kernel's back a new inode. kern_size follows
   * the kernel's own size: taken from the server only when the kernel made its inode, then moved
   * by what the kernel sends (writes, truncation, O_TRUNC, fallocate), never by a stat of ours:
   * a stat at close may already show another client's append, which the kernel never saw. */
  uint64_t kern_size;
  struct timespec_smb3 kern_mtime;
  int kern_valid;
  double kern_at; /* when the server was asked for that view (fs_now()) */
  int local_mod;
  /* Times this mount moved (inode_touch; the local clock, as the kernel's cifs client): st_ctime is
   * never earlier than changed_at (Samba reports a file's ChangeTime as its mtime); st_mtime is
   * never earlier than written_at while the file is open here (the server times writes when they
   * arrive, and Samba 4.17 only up to 2 s later or at the close); an explicit mtime clears it. */
  struct timespec_smb3 changed_at, written_at;
  struct wb_state wb;
  struct fs_dlist *dl;       /* a directory's last listing (dircache.h; kept by relist.c), under lock */
  struct relist_job *relist; /* a directory's listing for lookups in flight (relist.c), under lock */
  smb3_file *dlh;   /* a directory's: the handle that holds its directory lease (dirlease.h), under lock */
  double dlease_at; /* ... when the listing that brought it was asked for */
  double dlease_broken;      /* ... when a break of its key was last handled (dirlease.c) */
  double relist_found_at;    /* a directory's: when a stat last found a name in it (relist.c), under lock */
  double relist_quiet_until; /* ... no listing for lookups of unknown names before then (too big, failed) */
  double relist_at; /* a directory's: when a listing for lookups of it was last asked for (relist.c), under
                       lock */
  double walked_at; /* a directory's: when a readdir of it started a listing or was served one (relist.c),
                       under lock */
  int walk_in; /* ... that readdir came while its parent's was recent: a tree walk (relist.c), under lock */
  struct fs_lock *locks;   /* byte-range locks held (locks.c); changed with fs->locks_mu held too */
  struct piece *srv_locks; /* ... and what the server holds for them (locks.c) */
  int lock_changing;       /* a change (locks.c apply) has some of them out of the list */
  int pending;             /* a new file whose CREATE is put off (pending.h; atomic, set under lock) */
  int made_in;             /* a directory in which this mount made something, or that it made (atomic) */
  atomic_uint_fast64_t ns_moved; /* a directory's: fs->ns_gen at the last change of its names (dircache.h) */
};

/* Write-back accessors (in->lock held): data not yet confirmed by the server, and its end. */
static inline int wb_dirty(const struct fs_inode *in) {
  return in->wb.open.head || in->wb.inflight || in->wb.times.pending;
} /* in->lock held */
/* Pending size including data not yet on the server (in->lock held). */
static inline uint64_t wb_end(const struct fs_inode *in) {
  return wb_dirty(in) ? in->wb.dirty_end : 0;
}

/* drop(in): called for each inode freed, for what upper floors keep in it (locks.c: locks_free). */
struct inode_table *itab_new(void (*drop)(struct fs_inode *));
void itab_free(struct inode_table *t);
/* The root inode (nodeid FUSE_ROOT_ID) with the server's attributes. */
int itab_set_root(struct fs_ctx *fs, const struct smb3_stat *st);
/* Find by nodeid; returns a referenced inode (inode_put it) or NULL. */
struct fs_inode *inode_get(struct fs_ctx *fs, fuse_ino_t nodeid);
void inode_ref(struct fs_ctx *fs, struct fs_inode *in);
void inode_put(struct fs_ctx *fs, struct fs_inode *in);
/* The child `name` of parent that the server reported with attributes st: finds the inode by
 * server id (moving it to parent/name if it was elsewhere) or creates it; counts one kernel lookup
 * and stores st. Returns a referenced inode or NULL (ENOMEM). asked: when the server was asked
 * (fs_now()), to tell an older answer from a newer one under cache=loose. */
struct fs_inode *inode_link(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                            const struct smb3_stat *st, double asked);
/* inode_link for a listing's entry, which has no link count (but on a POSIX share): an inode of the
 * same file (known by this name or another: a hard link) keeps the count it has. */
struct fs_inode *inode_link_listed(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                   const struct smb3_stat *st, double asked);
/* inode_link_listed for an entry the kernel has not seen (openahead.c: a file of a listing kept here,
 * opened before the program's readdir gives the kernel its names): counts no kernel lookup, lives
 * while referenced; the kernel's first lookup of it finds it (by id) and counts then. */
struct fs_inode *inode_link_unseen(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                   const struct smb3_stat *st, double asked);
/* inode_link_listed for an entry of a listing served again (dircache.h): a file the kernel already has
 * under that name keeps the attributes its inode has (they may be newer than the listing). */
struct fs_inode *inode_link_kept(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                 const struct smb3_stat *st, double asked);
/* The same, giving a newly created inode the generation gen (from itab_new_gen(), so that its
 * lease key was known before the file existed). */
struct fs_inode *inode_link_gen(struct fs_ctx *fs, struct fs_inode *parent, const char *name,
                                const struct smb3_stat *st, uint64_t gen, double asked);
/* cache=loose (in->lock held): the kernel's inode holds st's size and mtime, as the server said
 * when asked at `asked` (see kernel_view_stale() in inode.c). */
void inode_kernel_view_set(struct fs_inode *in, const struct smb3_stat *st, double asked);
uint64_t itab_new_gen(struct fs_ctx *fs);
/* fn(in, arg) for every inode, each referenced and with no lock held. */
void itab_each(struct fs_ctx *fs, void (*fn)(struct fs_inode *, void *), void *arg);
/* Kernel forget. */
void inode_forget(struct fs_ctx *fs, fuse_ino_t nodeid, uint64_t n);
/* Path relative to the share ("" for the root), malloc'd; NULL when detached or ENOMEM. */
char *inode_path(struct fs_ctx *fs, struct fs_inode *in);
/* parent's path joined with name, malloc'd; NULL on ENOMEM/detached. */
char *inode_child_path(struct fs_ctx *fs, struct fs_inode *parent, const char *name);
/* in's parent (referenced) and, unless name is NULL, in *name its name there (malloc'd); or NULL
 * (the root, detached, ENOMEM). */
struct fs_inode *inode_parent(struct fs_ctx *fs, struct fs_inode *in, char **name);
/* The known inode at parent/name (referenced) or NULL. */
struct fs_inode *inode_find_child(struct fs_ctx *fs, struct fs_inode *parent, const char *name);
/* After a rename on the server: move in to newparent/newname. */
void inode_move(struct fs_ctx *fs, struct fs_inode *in, struct fs_inode *newparent, const char *newname);
/* A file made without a server id (a put-off create, pending.h) got one: index in by it (an
 * inode of ours that had that id is another, gone file: it loses the id and its name). */
void inode_set_id(struct fs_ctx *fs, struct fs_inode *in, uint64_t id);
/* The name is gone on the server (unlinked/replaced): drop it from the name and id indexes. */
void inode_detach(struct fs_ctx *fs, struct fs_inode *in);
/* What we know of in's attributes is out of date (its link count, ctime, a directory's mtime
 * changed by an entry operation): the next GETATTR asks the server. NULL: nothing. */
void inode_attr_expire(struct fs_inode *in);
/* This mount changed the file now: its ctime (INODE_TOUCH_CTIME: its attributes, links or name),
 * and with INODE_TOUCH_DATA its mtime too (a write, truncation or allocation change). The one place
 * that moves a file's times ahead of what the server says (in->lock held: _locked). */
#define INODE_TOUCH_CTIME 1
#define INODE_TOUCH_DATA 2
void inode_touch(struct fs_inode *in, int how);
void inode_touch_locked(struct fs_inode *in, int how);
/* One of the names of a file is gone: links_left is how many it has now (the server's count at the
 * removal, less one), or -1 when unknown (then the count it had here, less one). One that has names
 * left stays their inode (found again by its server id), one link less and its ctime moved; the
 * name it was known by is dropped. One with none left is detached (inode_detach). */
void inode_unlinked(struct fs_ctx *fs, struct fs_inode *in, int64_t links_left, struct fs_inode *parent,
                    const char *name);
/* The inode of the server's file id (a reference, or NULL). */
struct fs_inode *inode_find_id(struct fs_ctx *fs, uint64_t srv_id);
/* An entry operation of ours changed dir: its mtime and ctime become now (this machine's clock;
 * the server's own come with the next refresh) and its link count follows a subdirectory made
 * (links 1, POSIX shares) or removed (-1). What we cache stays valid: the GETATTR the kernel sends
 * after every create (its permission check of the directory) costs no round trip. NULL: nothing.
 * No listing of dir (NULL: of any directory) asked for before is served again (dircache.h). */
void inode_dir_changed(struct fs_ctx *fs, struct fs_inode *dir, int links);
/* An entry operation in the directory with that nodeid starts: no listing of it asked for before
 * is served again (of any directory, when the table has no such inode). */
void inode_names_changing(struct fs_ctx *fs, fuse_ino_t dir);
/* After the unlink of a name no inode of ours carries (a hard link's other name): every file with
 * more than one link may be the one that lost a link. */
void itab_expire_linked(struct fs_ctx *fs);
/* Negative lookups without a round trip. A directory this mount has just made holds nothing but
 * what the mount puts in it; for actimeo seconds (the staleness every cached attribute has, and
 * the kernel's cifs client's for its negative dentries) a lookup of a name it does not hold is
 * answered "no such file" here. The names come and go with the inode table's own (a new entry,
 * a rename, an unlink); anything unexpected from the server about the directory (a name that
 * exists, or does not, against what we hold) drops it, as does a reconnect.
 * inode_known_empty: dir was just made (mkdir); inode_known: KNOWN_ABSENT when name is certainly
 * not in dir; inode_known_forget: stop answering for dir. A name the table gets under dir (inode_link,
 * inode_move) is added by the table; a name removed on the server (unlink, rmdir, the source of a
 * rename) is removed by the operation that removed it, inode_known_del, by its own name (the table
 * keeps one name per inode: a hard link's other names are still there); inode_known_add for a
 * name made without an inode (a rename's target whose source the table did not know).
 * Once actimeo has passed, the set no longer answers (KNOWN_EXPIRED) but goes on following
 * the table, until a complete listing of dir asked for at `asked` renews it (inode_known_renew,
 * relist.c): every listed name is added, and it answers again until asked + actimeo. The union
 * is never short of a name: a name the set lacks was in neither what the mount did nor what the
 * server listed; one the set has in excess (removed elsewhere) is only asked of the server. */
void inode_known_empty(struct fs_ctx *fs, struct fs_inode *dir);
enum known_answer { KNOWN_NOTHING, KNOWN_ABSENT, KNOWN_EXPIRED };
enum known_answer inode_known(struct fs_ctx *fs, struct fs_inode *dir, const char *name);
void inode_known_renew(struct fs_ctx *fs, struct fs_inode *dir, const struct smb3_dirent *e, size_t n,
                       double asked);
void inode_known_forget(struct fs_ctx *fs, struct fs_inode *dir);
void inode_known_add(struct fs_ctx *fs, struct fs_inode *dir, const char *name);
void inode_known_del(struct fs_ctx *fs, struct fs_inode *dir, const char *name);
/* Find by lease key (a lease break, notifier.c): referenced inode or NULL. */
struct fs_inode *inode_by_key(struct fs_ctx *fs, const uint8_t key[16]);

/* The lease key of the inode of generation `generation` (inode_by_key finds it again). */
void itab_make_key(struct fs_ctx *fs, uint64_t generation, uint8_t key[16]);
/* Attributes: cache st in `in` for fs_attr_ttl() (with the size write-back data still makes). */
void inode_set_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st);
/* The same with the attributes of a CREATE's answer, which has no link count (but on a POSIX
 * share): the inode keeps the one it had (a hard link's). */
void inode_set_open_attr(struct fs_ctx *fs, struct fs_inode *in, const struct smb3_stat *st);
/* Is st the version of the file that (size, mtime) recorded? What the page cache (cache.c), the
 * kernel's view under cache=loose (inode.c) and symlink files (symlink.c) are keyed on. */
static inline int fs_same_version(uint64_t size, struct timespec_smb3 mtime, const struct smb3_stat *st) {
  return size == st->size && mtime.sec == st->mtime.sec && mtime.nsec == st->mtime.nsec;
}
/* in->lock held: would attributes of type ifmt contradict the kernel's inode? */
static inline int fs_type_changed(const struct fs_inode *in, mode_t ifmt) {
  return in->kern_ifmt && in->kern_ifmt != ifmt;
}
/* Seconds the kernel and we may keep an inode's attributes: actimeo, except for the share root,
 * whose attributes are kept at least FS_ROOT_ATTR_TTL: every path walk checks the root's
 * permissions (default_permissions), and what decides them (uid, gid, dir_mode) comes from the
 * mount options, not from the server; with actimeo=0 each stat() would otherwise cost a round
 * trip for the root on top of the file's own. */
#define FS_ROOT_ATTR_TTL 1.0
double fs_attr_ttl(const struct fs_ctx *fs, const struct fs_inode *in);

#endif
