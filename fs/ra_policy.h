/* ra_policy.h - read-ahead's decisions for one FUSE read: is it sequential, how large is the
 * window, what is read ahead (the pure part of readahead.c: no threads, no FUSE, no I/O).
 *
 * A stream is the open's read-ahead buffers: contiguous, ascending, rsize bytes each. Reads that
 * continue where the previous one ended (or, in page-cache mode, start near the beginning before
 * any stream: the kernel's first reads arrive out of order on different workers; or land a little
 * past the stream's end: the kernel's own read-ahead running ahead of ours) are sequential. The
 * window of buffers kept ahead of the reader starts at one and doubles each time the reader moves
 * past a buffer, up to max_window. A read elsewhere goes to the server as it is and leaves the
 * stream alone. Depends on libc only, so that the unit tests link it alone. */
#ifndef SMB3FS_RA_POLICY_H
#define SMB3FS_RA_POLICY_H

#include <stddef.h>
#include <stdint.h>

struct ra_input {
  /* the open's read-ahead state */
  uint64_t next_off;   /* where a sequential reader reads next */
  int started;         /* a stream was started on this open */
  unsigned window;     /* buffers to keep ahead */
  uint64_t start, end; /* the stream: [start, end), whole rsize buffers (start == end: none) */
  uint64_t eof;        /* where the data is known to end (a completed short READ), or UINT64_MAX */
  /* the read */
  uint64_t off;
  size_t size;
  /* the open and the limits */
  int direct;         /* direct I/O (no page cache: the kernel reads no page twice otherwise) */
  int coherent;       /* a read lease: another client's change would break it */
  uint64_t size_hint; /* the file's size as far as the mount knows */
  uint64_t rsize;
  uint64_t near;       /* how far past the stream a read still continues it */
  unsigned max_window; /* at least 1 */
};

enum ra_action {
  RA_FROM_STREAM, /* the stream answers it (maybe after reading further ahead) */
  RA_NEW_STREAM,  /* drop the buffers; a stream starts (window 1) */
  RA_DIRECT,      /* not sequential and not in the stream: straight to the server */
};

struct ra_decision {
  int drop_all; /* first of all the buffers go (direct I/O without a lease, going back or
                 * at the known end: data goes to the reader at most once) */
  int sequential;
  uint64_t next_off;   /* the new ra_input.next_off */
  uint64_t consume_to; /* then the buffers that end at or before this go: the reader is past them */
  unsigned window;     /* the new window */
  enum ra_action action;
  /* What to read ahead (not for RA_DIRECT): rsize READs at issue_from, issue_from + rsize, ...
   * while below issue_to and below the end of file as known once the buffers above are gone. */
  uint64_t issue_from, issue_to;
};

void ra_decide(const struct ra_input *in, struct ra_decision *d);

#endif
