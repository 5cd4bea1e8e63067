/* nameset.h - pure: the names of one directory as spelt, looked up as a server that compares names
 * without case would (a POSIX share compares them with case: the set only ever says "may be there"
 * more often). A directory whose every name the mount knows (one it made itself) answers lookups
 * of other names without asking the server (inode.c: inode_known). libc only. */
#ifndef SMB3FS_NAMESET_H
#define SMB3FS_NAMESET_H

#include <stddef.h>

struct nameset;
struct nameset *nameset_new(void);
void nameset_free(struct nameset *s);
/* 0, or -1 on ENOMEM (the set is then no longer complete: the caller drops it). Adding a name
 * already there, spelt the same, is a no-op; another spelling is another entry (on a POSIX share,
 * "A" and "a" are two files: removing one leaves the other). */
int nameset_add(struct nameset *s, const char *name);
/* The entry spelt as name goes (one spelt otherwise stays: the set may then say "may be there" of
 * a name the server no longer has, and the lookup asks it). */
void nameset_del(struct nameset *s, const char *name);
/* 1 when a name equal to `name` without ASCII case is in the set, or when name has a byte the
 * set cannot compare the way the server does (non-ASCII: the server folds Unicode case), so that
 * the caller asks the server; 0 when it is certainly absent. */
int nameset_may_have(const struct nameset *s, const char *name);
size_t nameset_count(const struct nameset *s);
/* 1 when every byte of s is ASCII: a name whose case the server folds as ASCII does (and
 * strcasecmp in the C locale), which the mount can then compare as the server would */
int nameset_ascii(const char *s);

#endif
