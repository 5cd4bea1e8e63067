/* xattr.c - extended attributes: the user.* namespace is the file's SMB extended attributes
 * (FILE_FULL_EA_INFORMATION; "user.NAME" <-> EA "NAME", as the kernel's cifs client maps them).
 * Other namespaces (security.*, system.*, trusted.*) are answered here without asking the
 * server: SMB has no place for them. Every call is one compound round trip (CREATE + QUERY_INFO or
 * SET_INFO + CLOSE); setxattr with XATTR_CREATE/XATTR_REPLACE and removexattr list first. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/xattr.h>

#include "conn.h"
#include "dfs.h"
#include "inode.h"
#include "xattr.h"

#define USER_PREFIX "user."
#define USER_PREFIX_LEN 5

enum xop_kind { X_GET, X_LIST, X_SET, X_REMOVE };

struct xop {
  fuse_req_t req;
  struct fs_ctx *fs;
  enum xop_kind kind;
  char *path;
  char *name;  /* the EA name (without "user.") */
  void *value; /* X_SET: a copy */
  size_t size; /* X_GET/X_LIST: the caller's buffer size (0: asks for the size); X_SET: value length */
  int flags;   /* X_SET: XATTR_CREATE / XATTR_REPLACE */
  fuse_ino_t ino;
};

static void xop_free(struct xop *o) {
  free(o->path);
  free(o->name);
  free(o->value);
  free(o);
}

static void xop_err(struct xop *o, int err) {
  fuse_reply_err(o->req, err);
  xop_free(o);
}

static const struct smb3_ea *find(const struct smb3_ea *eas, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcasecmp(eas[i].name, name)) return &eas[i]; /* EA names do not care about case */
  return NULL;
}

/* Reply with data of len bytes: its size when the caller asked for that, ERANGE if it does not fit. */
static void reply_sized(struct xop *o, const void *data, size_t len) {
  if (!o->size)
    fuse_reply_xattr(o->req, len);
  else if (o->size < len)
    fuse_reply_err(o->req, ERANGE);
  else
    fuse_reply_buf(o->req, data, len);
  xop_free(o);
}

static void set_done(int rc, void *arg) {
  struct xop *o = arg;
  if (!rc) { /* setxattr and removexattr move the file's ctime */
    struct fs_inode *in = inode_get(o->fs, o->ino);
    inode_touch(in, INODE_TOUCH_CTIME);
    inode_put(o->fs, in);
  }
  xop_err(o, rc ? fs_errno(rc) : 0);
}

static void send_set(struct xop *o) {
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = smb3_set_ea_async(r.c, r.path, o->name, o->kind == X_SET ? o->value : NULL,
                             o->kind == X_SET ? o->size : 0, set_done, o);
  fs_route_done(&r);
  if (rc) set_done(rc, o);
}

static void listed(int rc, const struct smb3_ea *eas, size_t n, void *arg) {
  struct xop *o = arg;
  if (rc) {
    xop_err(o, fs_errno(rc));
    return;
  }
  const struct smb3_ea *ea = o->name ? find(eas, n, o->name) : NULL;
  switch (o->kind) {
  case X_GET:
    if (!ea)
      xop_err(o, ENODATA);
    else
      reply_sized(o, ea->value, ea->len);
    return;
  case X_LIST: {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
      total += USER_PREFIX_LEN + strlen(eas[i].name) + 1;
    char *buf = malloc(total ? total : 1), *p = buf;
    if (!buf) {
      xop_err(o, ENOMEM);
      return;
    }
    for (size_t i = 0; i < n; i++) {
      size_t l = strlen(eas[i].name) + 1;
      memcpy(p, USER_PREFIX, USER_PREFIX_LEN);
      memcpy(p + USER_PREFIX_LEN, eas[i].name, l);
      p += USER_PREFIX_LEN + l;
    }
    reply_sized(o, buf, total);
    free(buf);
    return;
  }
  case X_SET:
    if ((o->flags & XATTR_CREATE) && ea)
      xop_err(o, EEXIST);
    else if ((o->flags & XATTR_REPLACE) && !ea)
      xop_err(o, ENODATA);
    else
      send_set(o);
    return;
  case X_REMOVE:
    if (!ea)
      xop_err(o, ENODATA);
    else
      send_set(o);
    return;
  }
}

/* A new operation on inode ino, or NULL after replying. name: the full attribute name (NULL for
 * list); anything outside user.* gets EOPNOTSUPP at once. */
static struct xop *xop_new(fuse_req_t req, fuse_ino_t ino, enum xop_kind kind, const char *name) {
  if (name && (strncmp(name, USER_PREFIX, USER_PREFIX_LEN) || !name[USER_PREFIX_LEN])) {
    fuse_reply_err(req, EOPNOTSUPP);
    return NULL;
  }
  if (name && strlen(name + USER_PREFIX_LEN) > 255) {
    fuse_reply_err(req, ERANGE); /* an EA name has at most 255 bytes */
    return NULL;
  }
  struct xop *o = calloc(1, sizeof *o);
  if (!o) {
    fuse_reply_err(req, ENOMEM);
    return NULL;
  }
  o->req = req;
  o->fs = fuse_req_userdata(req);
  o->kind = kind;
  o->ino = ino;
  struct fs_inode *in = inode_get(o->fs, ino);
  o->path = in ? inode_path(o->fs, in) : NULL;
  inode_put(o->fs, in);
  if (name) o->name = strdup(name + USER_PREFIX_LEN);
  if (!o->path || (name && !o->name)) {
    xop_err(o, o->path ? ENOMEM : ESTALE); /* no name: ESTALE makes the kernel look the file up again */
    return NULL;
  }
  return o;
}

static void list_now(struct xop *o) {
  struct fs_route r;
  fs_route(o->fs, o->path, &r);
  int rc = smb3_get_eas_async(r.c, r.path, listed, o);
  fs_route_done(&r);
  if (rc) listed(rc, NULL, 0, o);
}

/* Reply: I/O thread (the QUERY_INFO of the EAs); this worker outside user.*. */
static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) {
  struct xop *o = xop_new(req, ino, X_GET, name);
  if (!o) return;
  o->size = size;
  list_now(o);
}

/* Reply: I/O thread (the QUERY_INFO of the EAs). */
static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  struct xop *o = xop_new(req, ino, X_LIST, NULL);
  if (!o) return;
  o->size = size;
  list_now(o);
}

/* Reply: I/O thread (the SET_INFO, after a listing for XATTR_CREATE/REPLACE). */
static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                        int flags) {
  if (size > 65535) {
    fuse_reply_err(req, E2BIG); /* an EA value has at most 65535 bytes */
    return;
  }
  if (!size) {
    fuse_reply_err(req, EINVAL); /* SMB removes an attribute set to nothing: an empty one cannot exist */
    return;
  }
  struct xop *o = xop_new(req, ino, X_SET, name);
  if (!o) return;
  o->size = size;
  o->flags = flags;
  o->value = malloc(size);
  if (!o->value) {
    xop_err(o, ENOMEM);
    return;
  }
  memcpy(o->value, value, size);
  if (flags & (XATTR_CREATE | XATTR_REPLACE))
    list_now(o);
  else
    send_set(o);
}

/* Reply: I/O thread (the SET_INFO, after a listing). */
static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name) {
  struct xop *o = xop_new(req, ino, X_REMOVE, name);
  if (o) list_now(o); /* removing one that is not there is ENODATA, which SMB would not say */
}

void ops_xattr_fill(struct fuse_lowlevel_ops *op) {
  op->getxattr = ll_getxattr;
  op->listxattr = ll_listxattr;
  op->setxattr = ll_setxattr;
  op->removexattr = ll_removexattr;
}
