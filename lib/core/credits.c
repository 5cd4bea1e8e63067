/* credits.c - credit charge and request policy (MS-SMB2 3.1.5.2, 3.2.4.1.5, 3.2.5.1.4).
 *
 * A request of N bytes (sent or expected back) costs ceil(N / 64 KiB) credits on dialects with
 * LARGE_MTU (2.1+); 2.0.2 has no multi-credit requests and each costs one. Every request asks
 * for its own charge back plus a share of the gap to the configured window, so the window
 * grows quickly to the bandwidth-delay product and then holds steady.
 */
#include "core/core_internal.h"

static int multi_credit(const struct smb3_core *c) {
  return c->neg.dialect >= SMB2_DIALECT_210 && (c->neg.capabilities & SMB2_GLOBAL_CAP_LARGE_MTU);
}

uint16_t credits_charge(const struct smb3_core *c, const struct smb3_msg *m) {
  if (!multi_credit(c)) return 1;
  /* 3.1.5.2: the payload is what the command carries (a WRITE's data, else its body) */
  size_t send = m->payload_len ? m->payload_len : m->body_len;
  size_t recv = m->expect_rsp_len;
  size_t n = send > recv ? send : recv;
  size_t charge = n ? (n - 1) / 65536 + 1 : 1;
  return charge > 0xFFFF ? 0xFFFF : (uint16_t)charge;
}

uint16_t credits_request(const struct smb3_core *c, uint16_t charge) {
  uint32_t window = c->credits + c->in_flight_charge;
  uint32_t want = charge;
  if (window < c->cfg.credits_target) {
    uint32_t gap = c->cfg.credits_target - window;
    want += gap > 256 ? 256 : gap;
  }
  return want > 0xFFFF ? 0xFFFF : (uint16_t)want;
}

/* A hostile server could grant without end; no honest window is anywhere near this. */
#define CREDITS_MAX (1u << 20)

void credits_grant(struct smb3_core *c, uint16_t granted) {
  c->credits = c->credits + granted > CREDITS_MAX ? CREDITS_MAX : c->credits + granted;
  uint32_t window = c->credits + c->in_flight_charge;
  c->stats.credits_granted = window;
}
