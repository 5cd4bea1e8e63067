/* keepalive.c - ECHO when the connection has been idle for echo_interval seconds, so that a dead
 * server is noticed (the request times out) even when the application sends nothing. */
#include <stdlib.h>

#include "client/client.h"
#include "util/clock.h"

static uint64_t mono_s(void) {
  return mono_ns() / 1000000000u;
}

static void echo_done(struct smb3_chain *ch, void *arg) {
  smb3_client *c = arg;
  chain_free(ch);
  __atomic_store_n(&c->echo_outstanding, 0, __ATOMIC_RELEASE);
}

static void stats_requests(struct smb3_core *core, void *arg) {
  struct core_stats s;
  core_get_stats(core, &s);
  *(uint64_t *)arg = s.requests;
}

/* Runs on the I/O thread about every 250 ms. */
void client_tick(void *arg) {
  smb3_client *c = arg;
  if (!c->opts.echo_interval || !c->tree_id) return;
  uint64_t now = mono_s(), reqs = 0;
  transport_with_core(c->tr, stats_requests, &reqs);
  if (reqs != c->last_requests) { /* traffic since the last look: not idle */
    c->last_requests = reqs;
    c->last_activity_s = now;
    return;
  }
  if (now - c->last_activity_s < c->opts.echo_interval ||
      __atomic_load_n(&c->echo_outstanding, __ATOMIC_ACQUIRE))
    return;
  struct smb3_chain *ch = chain_new(1);
  if (!ch || build_simple(c, &ch->msgs[0], SMB2_ECHO)) {
    chain_free(ch);
    return;
  }
  ch->cb = echo_done;
  ch->arg = c;
  __atomic_store_n(&c->echo_outstanding, 1, __ATOMIC_RELEASE);
  c->last_activity_s = now;
  if (client_submit(c, ch)) {
    chain_free(ch);
    __atomic_store_n(&c->echo_outstanding, 0, __ATOMIC_RELEASE);
  }
}
