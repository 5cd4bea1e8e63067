/* ra_policy.c - sequential-read detection and window sizing (ra_policy.h). Pure: readahead.c
 * holds the lock, keeps the buffers and sends the READs. */
#include "ra_policy.h"

#include <string.h>

void ra_decide(const struct ra_input *in, struct ra_decision *d) {
  memset(d, 0, sizeof *d);
  uint64_t off = in->off, start = in->start, end = in->end, rsize = in->rsize;
  /* Without a read lease nothing tells us the file changed: in direct I/O, data goes to the
   * reader at most once (a read going back asks the server again), and a read at the end of
   * file asks whether the file grew. (In page-cache mode the kernel reads each page once.) */
  d->drop_all = !in->coherent && in->direct && (off < in->next_off || in->eof <= off);
  if (d->drop_all) start = end = 0;
  int stream = start < end;
  /* Sequential: where the last read ended; or near the start of the file before any stream (page
   * cache: the kernel's first read-ahead READs, in any order; direct I/O has none); or, with a
   * stream going, a little past its end (the kernel's own read-ahead running ahead of ours). */
  int early = !in->direct && !in->started && off < in->near;
  int sequential = off == in->next_off || early || (stream && off >= end && off - end < in->near);
  d->sequential = sequential;
  d->next_off = off + in->size > in->next_off || sequential ? off + in->size : in->next_off;
  /* Buffers the reader has moved past go, and the window grows when that happens. A buffer is
   * kept until the reader is `near` beyond it: the kernel's reads arrive slightly out of order
   * on different workers, and a late one must still find its data. */
  d->consume_to = off >= in->near ? off - in->near : 0;
  unsigned window = in->window;
  if (stream && start + rsize <= d->consume_to) {
    uint64_t k = (d->consume_to - start) / rsize, n = (end - start) / rsize;
    start += (k < n ? k : n) * rsize;
    if (window < in->max_window) window *= 2;
  }
  if (window > in->max_window) window = in->max_window;
  int covered = start < end && start <= off && off < end;
  if (!covered && stream && sequential && off >= end) { /* extend the stream up to off */
    d->action = RA_FROM_STREAM;
    d->issue_from = end;
  } else if (!covered) {
    if (!sequential) {
      d->action = RA_DIRECT;
      d->window = window;
      return;
    }
    d->action = RA_NEW_STREAM; /* at the start of the file for the first reads */
    window = 1;
    d->issue_from = early ? 0 : off;
  } else {
    d->action = RA_FROM_STREAM;
    d->issue_from = end;
  }
  d->window = window;
  /* Keep the window filled: buffers up to the end of this read, plus `window` more, but not past
   * the end of the file as far as we know it (size_hint), except for the reader's own range. */
  uint64_t want = off + in->size + (uint64_t)window * rsize, limit = off + in->size;
  if (in->size_hint > limit) limit = in->size_hint;
  d->issue_to = want < limit ? want : limit;
}
