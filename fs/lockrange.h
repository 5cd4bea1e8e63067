/* lockrange.h - the byte-range lock records of an inode and the plan that brings what the server
 * holds in line with them (the pure part of locks.c: no threads, no FUSE, no I/O).
 *
 * Records: one per lock an owner holds (the kernel's lock owner; flock: the open file), an
 * owner's never overlapping. Pieces: what the server holds for the mount, never overlapping one
 * another. Every exclusive record is a piece of its own, held through the handle of the open it
 * was taken through (the server refuses I/O of other handles in it); the shared records are
 * covered by shared pieces, through any handle. Two handles never hold locks over the same bytes
 * (locks.c says why). The caller guards both lists (in->lock, changes under fs->locks_mu) and
 * owns their memory: records and pieces are malloc'd, one list node each.
 *
 * Depends on libc only, so that the unit tests link it alone. */
#ifndef SMB3FS_LOCKRANGE_H
#define SMB3FS_LOCKRANGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "To the end of the file" (l_len 0): the end of what off_t can address. */
#define LOCK_EOF ((uint64_t)INT64_MAX)

/* The open a lock goes through. Never dereferenced here: only compared. */
struct fs_file;

struct fs_lock {
  struct fs_lock *next;
  uint64_t owner;      /* the kernel's lock owner (flock: the open file's) */
  struct fs_file *fh;  /* the open it was taken through */
  uint64_t start, end; /* [start, end) */
  int wr;              /* exclusive */
  int flock;           /* flock(2) lock (its owner is the open file) */
  pid_t pid;
};

struct piece {
  struct piece *next;
  uint64_t start, end; /* [start, end) */
  int wr;
  struct fs_file *holder; /* the open whose handle holds it */
};

/* One change of an owner's locks. */
struct lock_change {
  uint64_t owner;
  struct fs_file *fh;
  uint64_t start, end;
  int type; /* F_RDLCK, F_WRLCK, F_UNLCK */
  int flock;
  pid_t pid;
};

/* What lockrange_apply() took out of the list, to put back if the server refuses the change. */
struct lock_undo {
  struct fs_lock *old; /* the owner's records the change replaced */
  size_t nfresh;       /* the records it put in: the first nfresh of the list */
  int added;           /* it added a lock (not only an unlock) */
};

#define LOCKRANGE_ENOMEM (-1)
#define LOCKRANGE_CONFLICT (-2) /* another owner on this machine holds a lock that forbids it */

/* A record of another owner that forbids ch (or NULL). flock and fcntl locks of different files'
 * descriptors conflict too: at the server both are the same byte-range locks. */
struct fs_lock *lockrange_conflict(struct fs_lock *list, const struct lock_change *ch);

/* Apply ch to the records: the owner's records it touches are split around its range, and a lock
 * puts its own record in. 0: nothing changes (an unlock of nothing, or held so already: the list
 * is as it was, though maybe reordered); 1: changed, *u says how to undo it (then either
 * lockrange_undo() or lockrange_commit()); LOCKRANGE_CONFLICT; LOCKRANGE_ENOMEM (unchanged). */
int lockrange_apply(struct fs_lock **list, const struct lock_change *ch, struct lock_undo *u);
/* The server refused: the owner gets back what it had (nothing else changed the list since). */
void lockrange_undo(struct fs_lock **list, struct lock_undo *u);
/* The change stands: free what it replaced. */
void lockrange_commit(struct lock_undo *u);

/* Take fh's records out of *list; returns them (a list, for lockrange_free). */
struct fs_lock *lockrange_take_file(struct fs_lock **list, const struct fs_file *fh);
/* Does owner hold a POSIX (not flock) record? */
int lockrange_owner_holds(const struct fs_lock *list, uint64_t owner);
/* Does fh hold a record or a piece? */
int lockrange_file_holds(const struct fs_lock *list, const struct piece *pieces, const struct fs_file *fh);
void lockrange_free(struct fs_lock *list);

/* One step that brings the server in line with the records, in order. */
struct lock_step {
  int lock;            /* 1: lock [start, end) through fh's handle; 0: drop `piece` */
  int wr;              /* lock: exclusive */
  uint64_t start, end; /* lock: the range */
  struct fs_file *fh;  /* lock: the open to lock through */
  struct piece *piece; /* drop: the piece that goes (the caller unlinks and frees it) */
  int unlock;          /* drop: send its UNLOCK (0: its holder is closing; the CLOSE frees it) */
};
struct lock_plan {
  struct lock_step *steps;
  size_t n;
};

/* The steps from pieces to records: shared pieces that can be added at once first (a new shared
 * piece stacks on the handle of a shared piece being given up over it, so the bytes stay locked
 * throughout); then the pieces that go; then the rest of the shared pieces and the exclusive
 * records not yet held. Locking stops at the first refusal, the drops are still done (then the
 * caller restores the records and plans again). dying: an open being released (or NULL): its
 * pieces go without an UNLOCK, after what they covered that is still needed was locked through
 * another handle; its records must be out of the list already. 0 or LOCKRANGE_ENOMEM. */
int lockrange_plan(const struct fs_lock *recs, struct piece *pieces, const struct fs_file *dying,
                   struct lock_plan *out);
void lockrange_plan_free(struct lock_plan *plan);

/* The pieces list as a lock step finishes: a granted piece goes in (at the head), a dropped one out. */
void lockrange_piece_link(struct piece **pieces, struct piece *p);
void lockrange_piece_unlink(struct piece **pieces, struct piece *p);

/* The gaps in [start, end) between the pieces (what F_GETLK may probe at the server: a probe
 * over the mount's own locks would conflict with them), ascending, at most max; returns the count. */
int lockrange_gaps(const struct piece *pieces, uint64_t start, uint64_t end, uint64_t (*gaps)[2], int max);

#endif
