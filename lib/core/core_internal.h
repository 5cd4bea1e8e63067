/* core_internal.h - state shared by the core's files (conn.c, session.c, credits.c). */
#ifndef SMB3_CORE_INTERNAL_H
#define SMB3_CORE_INTERNAL_H

#include "core/core.h"
#include "crypto/crypto.h"

#define CORE_BUCKETS 1024
#define CORE_SPARE_BUFS 2

/* One frame waiting to be written: iovecs over the chain's headers/bodies and caller payloads,
 * or over an owned buffer (encrypted frames). */
struct out_frame {
  struct out_frame *next;
  uint8_t nbss[4];
  uint8_t transform[SMB2_TRANSFORM_HDR_LEN];
  struct iovec iov[2 + 4 * CORE_MAX_CHAIN];
  int iovcnt;
  int cur;        /* first iovec not fully written */
  size_t cur_off; /* bytes of iov[cur] already written */
  uint8_t *owned; /* ciphertext for sealed frames (core_buf_get), owned_cap bytes */
  size_t owned_cap;
  int has_file; /* iov[file_iov] (base NULL) stands for file data: fd from file_off */
  int file_iov;
  int file_fd;
  uint64_t file_off;
};

/* Entry of the in-flight table, keyed by MessageId. */
struct pending {
  struct pending *next;
  struct smb3_msg *msg;
  struct smb3_chain *chain;
};

struct smb3_core {
  struct core_config cfg;
  /* credits and message ids (MS-SMB2 3.2.4.1.5 / 3.2.5.1.4) */
  uint64_t next_msg_id;
  uint32_t credits;          /* available to spend */
  uint32_t in_flight_charge; /* charged by requests not yet answered */
  /* queues */
  struct smb3_chain *wait_head, *wait_tail; /* submitted, waiting for credits */
  struct out_frame *out_head, *out_tail;    /* frames to write */
  struct pending *table[CORE_BUCKETS];      /* in flight by MessageId */
  struct smb3_chain *inflight;              /* chains awaiting responses (for timeouts / failure) */
  struct core_event *ev_head, *ev_tail;
  int dead; /* SMB3_E* once the connection is unusable */
  /* negotiated */
  struct core_negotiated neg;
  uint8_t client_guid[16];
  uint16_t client_security_mode;
  uint32_t client_caps;
  uint16_t dialects[SMB2_MAX_DIALECTS];
  int ndialects;
  /* session */
  uint64_t session_id;
  int have_key;
  uint8_t session_key[16];
  uint8_t preauth[64]; /* connection hash, then session hash (3.1.1) */
  int preauth_active;
  int established;
  int anon;    /* guest or anonymous session: no keys */
  int signing; /* sign requests, verify responses */
  /* A response that verified came signed although its request was not (a server that signs
   * every answer of an authenticated session: impacket). Written on the I/O thread, read with
   * __atomic by the handshake (core_responses_signed). */
  int signed_unasked;
  int sealing; /* encrypt requests */
  int sign_alg;
  uint8_t sign_key[16];
  uint8_t enc_key[32], dec_key[32];
  uint64_t nonce_ctr;
  uint8_t nonce_salt[4];
  struct smb3_aead *enc_aead, *dec_aead; /* keyed once per session (derive_keys) */
  /* Freed ciphertext buffers kept for the next sealed frames: a 4 MiB malloc is an mmap whose pages
   * are faulted in and zeroed on every WRITE otherwise. */
  struct {
    uint8_t *p;
    size_t cap;
  } spare[CORE_SPARE_BUFS];
  struct core_stats stats;
};

/* conn.c */
size_t out_frame_len(const struct out_frame *f, int from);

/* session.c */
int core_session_on_send(struct smb3_core *c, struct smb3_msg *m);
int core_session_on_recv(struct smb3_core *c, struct smb3_msg *m, const uint8_t *msg, size_t len,
                         const struct smb2_hdr *h);
int core_verify(struct smb3_core *c, const struct iovec *iov, int iovcnt, const struct smb2_hdr *h);
/* Is msg (len >= header + fixed part) a final SESSION_SETUP response that must be signed? */
int core_setup_must_be_signed(const struct smb3_core *c, const uint8_t *msg, const struct smb2_hdr *h);
int core_seal_frame(struct smb3_core *c, struct out_frame *f);
/* A buffer of at least len bytes (a spare one if there is one big enough); *cap its size. */
uint8_t *core_buf_get(struct smb3_core *c, size_t len, size_t *cap);
/* Give a core_buf_get() buffer back (NULL: nothing); kept as a spare or freed. */
void core_buf_put(struct smb3_core *c, uint8_t *p, size_t cap);
int core_unseal_frame(struct smb3_core *c, uint8_t *frame, size_t len, uint8_t **plain, size_t *plain_len);
/* Start decrypting the sealed frame of frame_len bytes whose first len bytes are at frame: its
 * first outlen plaintext bytes into out; 1 if done (the context then waits for the rest), 0 if
 * not (not for this session, a cipher that cannot take pieces, ...: the frame path decides). */
int core_unseal_head(struct smb3_core *c, const uint8_t *frame, size_t len, size_t frame_len, uint8_t *out,
                     size_t outlen);

/* credits.c */
uint16_t credits_charge(const struct smb3_core *c, const struct smb3_msg *m);
uint16_t credits_request(const struct smb3_core *c, uint16_t charge);
void credits_grant(struct smb3_core *c, uint16_t granted);

#endif
