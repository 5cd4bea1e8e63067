/* core.h - the SMB2/3 connection engine, with no sockets in it ("sans-I/O").
 *
 * The core is fed received bytes and hands out bytes to send. It owns: message ids and the
 * credit window, the table of requests in flight, compound chains, session state (keys, preauth
 * hash), signing and sealing. It never blocks and never calls back into its caller while the
 * caller holds its lock: completed chains and server notifications are queued and handed out by
 * core_take_events(), and the caller (net/) runs their callbacks without the lock.
 *
 * Threading: a core is not thread-safe; net/transport.c serializes all calls with one mutex.
 *
 * Buffers: a chain's request bodies are owned by the chain (freed by chain_free()); a WRITE
 * payload and a READ destination buffer belong to the caller and must stay valid until the
 * chain's callback has run. Response messages are copied into per-message buffers owned by the
 * chain, except READ data, which goes straight into the caller's buffer when one is given.
 */
#ifndef SMB3_CORE_H
#define SMB3_CORE_H

#include <stdint.h>
#include <sys/uio.h>

#include "crypto/crypto.h"
#include "wire/wire.h"

#define CORE_MAX_CHAIN 32          /* requests in one compound chain */
#define CORE_MAX_BODY 1024         /* inline body bytes per request (bigger bodies are malloc'd) */
#define CORE_FRAME_MAX (16u << 20) /* largest frame we accept: 8 MiB READ + headers, with margin */

struct smb3_core;
struct smb3_chain;

/* One request of a chain and, once answered, its response. */
struct smb3_msg {
  uint16_t command;
  uint32_t tree_id;
  uint8_t hdr[SMB2_HDR_LEN];
  uint8_t *body; /* encoded body; == inline_body or malloc'd */
  size_t body_len;
  uint8_t inline_body[CORE_MAX_BODY];
  const uint8_t *payload; /* WRITE data, caller-owned, sent by writev (not copied) */
  size_t payload_len;
  /* Or (payload NULL): the data is payload_len bytes of the caller's open file payload_fd from
   * payload_fd_off, sent with sendfile(2) straight from the page cache. Never on a session that
   * signs or seals (the chain fails with SMB3_EINVAL: both need the bytes in memory); the file must
   * stay open and at least that long until the chain completes (a shorter one kills the
   * connection: the frame's length is on the wire already). At most one per chain. */
  int payload_in_fd;
  int payload_fd;
  uint64_t payload_fd_off;
  size_t pad_len;          /* zero padding after payload/body for 8-byte compound alignment */
  uint32_t expect_rsp_len; /* largest response payload expected (READ length, QUERY output) */
  uint16_t credit_charge;
  uint64_t msg_id;
  int sign_req; /* sent signed: its final response must be signed too (MS-SMB2 3.3.4.1.1) */
  uint64_t async_id;
  int got_interim;
  /* response */
  int done;
  uint32_t status; /* NTSTATUS of the final response */
  uint8_t *rsp;    /* whole response message (header + body), malloc'd, owned */
  size_t rsp_len;
  /* zero-copy READ: destination for the data (caller-owned) */
  uint8_t *rd_buf;
  size_t rd_cap;
  size_t rd_len; /* bytes of data placed into rd_buf */
  /* Optional progress of a zero-copy READ, called on the I/O thread with no lock held: when the
   * response starts arriving, and again once no more than rd_lowat data bytes remain (a single
   * call if both hold at the start). `remaining` counts data bytes not yet received. */
  void (*rd_progress)(void *arg, size_t remaining);
  void *rd_progress_arg;
  size_t rd_lowat;
  /* Optional (rd_use_pipe): pipes (both ends non-blocking, caller-owned, empty; rd_pipes[i].cap
   * bytes each, together at least rd_cap) into which the data of an unsigned, unsealed READ
   * answer is spliced straight from the socket, in order, instead of being copied into rd_buf
   * (the bytes never enter user space). rd_piped tells where they went: 1 = all rd_len bytes wait
   * in the pipes, 0 = in rd_buf (a signed or sealed answer, one that came whole with others, or a
   * pipe that filled up: what the pipes hold is read back into rd_buf and the rest follows
   * there). */
  int rd_use_pipe;
  const struct smb3_pipe *rd_pipes;
  int rd_npipes;
  int rd_piped;
};

typedef void (*smb3_chain_cb)(struct smb3_chain *c, void *arg);

/* Events handed out by core_take_events(): completed chains and server notifications. */
/* A chain's completion event is embedded in the chain (no allocation can fail at completion);
 * break events are malloc'd and freed by whoever takes them (core_event_free()). */
struct core_event {
  struct core_event *next;
  struct smb3_chain *chain; /* completed chain (callback still to run), or NULL */
  struct smb2_break brk;    /* valid when chain == NULL: oplock/lease break */
};

struct smb3_chain {
  int n;          /* requests in the chain */
  int related;    /* send as a related compound (3.2.4.1.4) ... */
  int related_at; /* ... from message related_at on: the ones before it, and it, are sent unrelated */
  int remaining;  /* responses still awaited */
  int error;      /* transport-level failure (SMB3_E*), 0 otherwise */
  int queued;     /* submitted to the core */
  int no_session; /* NEGOTIATE: no session/tree; SESSION_SETUP: no signing */
  int must_sign;  /* signed even when the session does not sign (VALIDATE_NEGOTIATE_INFO, 3.2.4.2.4) */
  /* The compound-signing probe (client/connect.c): a response of this chain whose signature does
   * not verify is discarded (nothing of it is kept, its message completes with
   * NT_STATUS_INVALID_SIGNATURE, bad_sigs counts it) instead of failing the connection. Only for
   * requests whose answers carry nothing (ECHO). */
  int probe;
  int bad_sigs;
  smb3_chain_cb cb;
  void *arg;
  struct smb3_chain *next, *prev; /* core-internal list links */
  int linked;                     /* on the core's in-flight list */
  uint64_t deadline_ns;           /* monotonic time after which the request times out */
  int deadline_extended;          /* an interim response gave it one more timeout (once) */
  struct core_event ev;           /* completion event (core-internal) */
  struct smb3_msg msgs[];         /* n of them (chain_new), at most CORE_MAX_CHAIN */
};

/* Allocate a chain of n empty messages (n <= CORE_MAX_CHAIN). NULL on ENOMEM. */
struct smb3_chain *chain_new(int n);
/* Free a chain and everything it owns (not caller payload/destination buffers). */
void chain_free(struct smb3_chain *c);
/* Prepare message i: command, tree id; returns a writer positioned at body offset 0 with room
 * for `body_cap` bytes (inline when it fits, else malloc'd). Call msg_body_done() after encoding. */
int msg_body_begin(struct smb3_msg *m, uint16_t command, uint32_t tree_id, size_t body_cap, struct le_wr *w);
int msg_body_done(struct smb3_msg *m, const struct le_wr *w);

/* Status helpers for completed chains. Returns the NTSTATUS of message i or a synthetic failure. */
static inline uint32_t msg_status(const struct smb3_msg *m) {
  return m->status;
}

/* ---- the engine ---- */
struct core_config {
  uint16_t dialect_min, dialect_max; /* e.g. 0x0202..0x0311 */
  int sign_wanted;                   /* client asks for signing ('sign' option) */
  int seal_wanted;                   /* client asks for encryption ('seal' option) */
  uint32_t credits_target;           /* credit window to grow to */
  uint32_t timeout_ms;               /* per request */
  int posix_wanted;                  /* offer Samba's SMB3 POSIX extensions (3.1.1 only) */
};

struct smb3_core *core_new(const struct core_config *cfg);
void core_free(struct smb3_core *c); /* fails nothing: call core_fail_all() first */

/* Queue a chain: assign message ids and credits, build headers, sign/seal. A chain that does not
 * fit the current credit window waits inside the core until credits arrive. Returns 0 or
 * SMB3_E* (then the chain is not queued and its callback will not run). */
int core_submit(struct smb3_core *c, struct smb3_chain *ch, uint64_t now_ns);

/* Bytes to send: fills up to max iovecs; returns the count (0 = nothing to send). */
int core_output(struct smb3_core *c, struct iovec *iov, int max);
/* The same; *file_next = 1 if it stopped before file data (see core_output_file()). */
int core_output_upto_file(struct smb3_core *c, struct iovec *iov, int max, int *file_next);
/* The head of the output is file data (a payload_in_fd WRITE) that core_output() stops before:
 * returns 1 and where it is (send it with sendfile(), then core_output_done()); 0 otherwise. */
int core_output_file(const struct smb3_core *c, int *fd, uint64_t *off, size_t *len);
/* n bytes of the output were written. */
void core_output_done(struct smb3_core *c, size_t n);
int core_want_write(const struct smb3_core *c);

/* Receiving. net/ reads a 4-byte NBSS header (length L <= CORE_FRAME_MAX) and then either:
 *  - the whole frame into a buffer and calls core_recv_frame(), or
 *  - first `head` bytes (>= 80 or the whole frame) and asks core_recv_direct() whether the
 *    rest may go straight to a caller's READ buffer. If so, it fills *iov (pad, data) for the
 *    remaining L-head bytes and later calls core_recv_direct_done(). */
int core_recv_frame(struct smb3_core *c, uint8_t *frame, size_t len);
struct core_direct {
  struct smb3_msg *msg;
  struct iovec iov[2]; /* where the remaining bytes go: [pad scratch][caller data] */
  int iovcnt;
  uint8_t head[SMB2_HDR_LEN + SMB2_READ_RSP_FIXED]; /* plaintext */
  uint8_t pad[256];
  size_t frame_len;       /* of the SMB2 message (sealed: its OriginalMessageSize) */
  size_t head_len;        /* bytes of the frame taken as the head (sealed: with the transform header) */
  struct smb3_aead *aead; /* sealed: the rest is ciphertext, decrypted in place as it arrives */
  uint8_t tag[16];
  int pipe; /* the data goes into msg->rd_pipes (spliced from the socket), not into iov */
};
/* Returns 1 if direct receive applies (d filled), 0 if not, <0 on a protocol error. A sealed
 * frame (starting with a transform header) needs head_len >= SMB2_TRANSFORM_HDR_LEN + 80 and
 * a cipher that takes its data in pieces (GCM); the head's plaintext is not authenticated until
 * core_recv_direct_done(), which wipes the data if the tag does not match. */
int core_recv_direct(struct smb3_core *c, const uint8_t *head, size_t head_len, size_t frame_len,
                     struct core_direct *d);
/* Sealed: decrypt, in place, the next len bytes that arrived into d->iov (in order). Called
 * without the transport lock: only the receiving thread uses the decryption context. */
int core_recv_direct_decrypt(struct core_direct *d, uint8_t *p, size_t len);
int core_recv_direct_done(struct smb3_core *c, struct core_direct *d);
/* The connection failed before the rest arrived: a sealed READ's plaintext so far was never
 * authenticated, so it is wiped from the caller's buffer (the request then fails). */
void core_recv_direct_abort(struct core_direct *d);

/* Fail every queued and in-flight chain with err (connection lost, closing). */
void core_fail_all(struct smb3_core *c, int err);
/* Fail requests whose deadline passed; returns 1 if any did (the connection is then unusable). */
int core_check_timeouts(struct smb3_core *c, uint64_t now_ns);
/* Detach and return the queued events (oldest first); the caller runs callbacks and then
 * calls core_event_free() on each (which frees break events, not chains). */
struct core_event *core_take_events(struct smb3_core *c);
void core_event_free(struct core_event *e);
int core_is_dead(const struct smb3_core *c);
int core_dead_error(const struct smb3_core *c);

/* ---- negotiated and session state (client layer drives the handshake) ---- */
struct core_negotiated {
  uint16_t dialect;
  uint16_t security_mode;
  uint32_t capabilities;
  uint32_t max_read, max_write, max_transact;
  uint16_t cipher;
  uint16_t sign_alg;
  uint8_t server_guid[16];
  int posix; /* 3.1.1 and the server answered the POSIX negotiate context */
};
/* Build the NEGOTIATE request for the configured dialects into chain message 0. */
int core_build_negotiate(struct smb3_core *c, struct smb3_chain *ch);
/* Apply a NEGOTIATE response (message 0 of the completed chain). On failure *why (if not NULL)
 * names what was wrong with it (a static string). */
int core_apply_negotiate(struct smb3_core *c, struct smb3_chain *ch, const char **why);
const struct core_negotiated *core_negotiated(const struct smb3_core *c);
/* The request that VALIDATE_NEGOTIATE_INFO must echo (3.0/3.0.2). */
void core_validate_negotiate_info(const struct smb3_core *c, struct smb2_validate_negotiate *v);

/* Session setup: the session id is learnt from the first SESSION_SETUP response. */
void core_set_session_id(struct smb3_core *c, uint64_t sid);
uint64_t core_session_id(const struct smb3_core *c);
/* Give the 16-byte session key before the final SESSION_SETUP response arrives, so the core can
 * derive keys and verify that response's signature. NULL for anonymous/guest (no signing). */
void core_set_session_key(struct smb3_core *c, const uint8_t *key);
/* The session is up: session_flags from the final response. Turns on signing/encryption as the
 * negotiated state and the options require. Returns SMB3_ENCRYPT if sealing is required but not possible. */
int core_session_established(struct smb3_core *c, uint16_t session_flags);
/* Kerberos: the key is known only once the final SESSION_SETUP response (rsp: header + body, as
 * received) has been read. Set it, derive the keys from it and verify that response's
 * signature as core_verify would have on arrival. 0, SMB3_ESIGNATURE, SMB3_EINVAL. */
int core_session_verify_final(struct smb3_core *c, const uint8_t *key, const uint8_t *rsp, size_t len);
/* Require encryption from now on (share flag ENCRYPT_DATA). */
int core_require_encryption(struct smb3_core *c);
int core_signing_active(const struct smb3_core *c);
/* Whether the session's responses come signed: it signs, or a verified signed answer to an
 * unsigned request has been seen (some servers sign every answer). */
int core_responses_signed(const struct smb3_core *c);
int core_session_anonymous(const struct smb3_core *c); /* guest or anonymous: no keys */
int core_encryption_active(const struct smb3_core *c);

/* Counters (exact, for --stats). */
struct core_stats {
  uint64_t requests;    /* SMB2 requests sent */
  uint64_t round_trips; /* frames sent (a compound chain counts once) */
  uint64_t per_command[SMB2_NCOMMANDS];
  uint64_t bytes_read, bytes_written;
  uint64_t reads, writes;
  uint32_t max_read_size, max_write_size;
  uint32_t credits_max_in_flight;
  uint32_t credits_granted; /* current window (available + in flight) */
};
void core_get_stats(const struct smb3_core *c, struct core_stats *s);
/* Credits the server has granted us in all (available + charged to requests in flight): no
 * single request may cost more. */
uint32_t core_window(const struct smb3_core *c);

#endif
