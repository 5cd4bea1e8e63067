/* fusereq.h - the head of a FUSE request as the session's read of /dev/fuse got it (main.c
 * io_read), parsed once there for those who look at a request before libfuse dispatches it:
 * file.c (RELEASEs numbered), pending.c (the barrier before requests that need the server) and
 * main.c itself (the kernel's INIT offer). Layouts and opcodes are the kernel's (linux/fuse.h). */
#ifndef SMB3FS_FUSEREQ_H
#define SMB3FS_FUSEREQ_H

#include <linux/fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fs_req {
  uint32_t opcode; /* enum fuse_opcode */
  uint64_t unique, nodeid;
  const uint8_t *arg; /* what follows struct fuse_in_header */
  size_t arg_len;
};

/* 0 and *r from the len bytes at buf, or -1 when they are shorter than a header. */
static inline int fs_req_parse(const void *buf, size_t len, struct fs_req *r) {
  struct fuse_in_header h;
  if (len < sizeof h) return -1;
  memcpy(&h, buf, sizeof h);
  r->opcode = h.opcode;
  r->unique = h.unique;
  r->nodeid = h.nodeid;
  r->arg = (const uint8_t *)buf + sizeof h;
  r->arg_len = len - sizeof h;
  return 0;
}

#endif
