/* transport.h - the socket, NBSS framing and the per-connection I/O thread.
 *
 * One I/O thread per connection runs an epoll loop over the socket and an eventfd. Any thread
 * submits chains with transport_submit(); the I/O thread writes them with writev (WRITE payloads
 * straight from the caller's buffer), reads frames (READ payloads straight into the caller's
 * buffer), and runs completion callbacks without holding the lock. A chain's callback runs
 * exactly once on the I/O thread, or never if transport_submit() returned an error.
 */
#ifndef SMB3_TRANSPORT_H
#define SMB3_TRANSPORT_H

#include <pthread.h>
#include <stddef.h>

#include "core/core.h"

struct smb3_transport;
typedef void (*transport_break_cb)(const struct smb2_break *b, void *arg);
typedef void (*transport_tick_cb)(void *arg); /* every ~250 ms on the I/O thread */

/* Resolve and connect to host:port within timeout_ms, then start the I/O thread over core (the
 * transport does not own core). On failure writes a one-line reason into err. */
int transport_connect(const char *host, int port, int timeout_ms, size_t sockbuf, struct smb3_core *core,
                      struct smb3_transport **out, char *err, size_t errlen);
/* Queue a chain (thread-safe). 0 or SMB3_E* (then no callback). */
int transport_submit(struct smb3_transport *t, struct smb3_chain *ch);
void transport_set_handlers(struct smb3_transport *t, transport_break_cb on_break, transport_tick_cb on_tick,
                            void *arg);
/* The I/O thread (running from transport_connect() to transport_close()): the client compares it
 * with pthread_self() so that a synchronous call made from a callback fails instead of waiting
 * for the very thread it runs on. */
pthread_t transport_thread(const struct smb3_transport *t);
/* Run fn(arg) on the I/O thread once delay_ns have passed (to the millisecond), or when the
 * transport stops, whichever comes first (the caller's fn then finds it closed: a submit fails).
 * 0, or SMB3_ECLOSED / SMB3_ENOMEM (then fn never runs). */
int transport_defer(struct smb3_transport *t, uint64_t delay_ns, void (*fn)(void *), void *arg);
/* Run fn(core, arg) under the transport's lock (stats, state queries). */
void transport_with_core(struct smb3_transport *t, void (*fn)(struct smb3_core *, void *), void *arg);
/* Stop the I/O thread (pending chains fail with SMB3_ECLOSED, callbacks run), close the socket,
 * free t. Must not be called from a callback. */
void transport_close(struct smb3_transport *t);

#endif
