/* wire_test.h - helpers shared by the wire/fscc unit tests and the fuzz corpus generator:
 * hex parsing and comparison, and builders for server responses laid out by hand from the
 * MS-SMB2 field tables (independent of the encoders under test). */
#ifndef SMB3_WIRE_TEST_H
#define SMB3_WIRE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/le.h"
#include "wire/wire.h"

/* Parse a hex string (whitespace and '|' ignored) into out; returns the byte count, or
 * (size_t)-1 on a stray character or overflow. */
static inline size_t wt_unhex(const char *s, uint8_t *out, size_t cap) {
  size_t n = 0;
  int hi = -1;
  for (; *s; s++) {
    int v;
    if (*s >= '0' && *s <= '9')
      v = *s - '0';
    else if (*s >= 'a' && *s <= 'f')
      v = *s - 'a' + 10;
    else if (*s >= 'A' && *s <= 'F')
      v = *s - 'A' + 10;
    else if (*s == ' ' || *s == '\n' || *s == '|')
      continue;
    else
      return (size_t)-1;
    if (hi < 0) {
      hi = v;
      continue;
    }
    if (n >= cap) return (size_t)-1;
    out[n++] = (uint8_t)(hi << 4 | v);
    hi = -1;
  }
  return hi < 0 ? n : (size_t)-1;
}

/* 1 if got[0..len) equals the hex string; prints both on mismatch. */
static inline int wt_hex_eq(const uint8_t *got, size_t len, const char *want_hex) {
  uint8_t want[4096];
  size_t n = wt_unhex(want_hex, want, sizeof want);
  if (n == len && !memcmp(got, want, len)) return 1;
  fprintf(stderr, "length got %zu want %zu\n got: ", len, n);
  for (size_t i = 0; i < len; i++)
    fprintf(stderr, "%02x%s", got[i], i % 8 == 7 ? " " : "");
  fprintf(stderr, "\nwant: ");
  for (size_t i = 0; n != (size_t)-1 && i < n; i++)
    fprintf(stderr, "%02x%s", want[i], i % 8 == 7 ? " " : "");
  fprintf(stderr, "\n");
  return 0;
}

/* Decoder under test, wrapped to one signature. */
typedef int (*wt_dec_fn)(const uint8_t *msg, size_t len);

/* 1 if f fails on every strict prefix of msg (each in an exact-size heap copy, so that ASan
 * sees any overread); prints the first length that decoded. */
static inline int wt_truncations_fail(wt_dec_fn f, const uint8_t *msg, size_t len) {
  for (size_t k = 0; k < len; k++) {
    uint8_t *copy = malloc(k ? k : 1);
    if (!copy) return 0;
    memcpy(copy, msg, k);
    int rc = f(copy, k);
    free(copy);
    if (rc == 0) {
      fprintf(stderr, "decoded a message truncated to %zu of %zu bytes\n", k, len);
      return 0;
    }
  }
  return 1;
}

/* Starts a server response for cmd in buf: a sync header (SERVER_TO_REDIR, MessageId 5), and
 * a writer positioned at the body, so that w->off is the header-relative offset. */
static inline void wt_rsp_start(struct le_wr *w, uint8_t *buf, size_t cap, uint16_t cmd) {
  struct smb2_hdr h;
  memset(&h, 0, sizeof h);
  h.command = cmd;
  h.credits = 1;
  h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
  h.message_id = 5;
  h.session_id = 0x1122334455667788ull;
  smb2_hdr_encode(&h, buf);
  le_wr_init(w, buf, cap);
  w->off = SMB2_HDR_LEN;
}

/* Sets the header's MessageId (e.g. UINT64_MAX for a break notification). */
static inline void wt_set_msgid(uint8_t *buf, uint64_t id) {
  le64_put(buf + SMB2_HDR_OFF_MSGID, id);
}

/* Builders of valid responses (each returns the message length). */

static inline size_t wt_negotiate_rsp(uint8_t *buf, size_t cap, uint16_t dialect, int with_ctx) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_NEGOTIATE);
  static const uint8_t spnego[] = {0x60, 0x06, 0x06, 0x04, 0x2b, 0x06, 0x01, 0x05};
  le_put_u16(&w, 65);
  le_put_u16(&w, SMB2_NEGOTIATE_SIGNING_ENABLED);
  le_put_u16(&w, dialect);
  le_put_u16(&w, with_ctx ? 4 : 0); /* NegotiateContextCount */
  for (int i = 0; i < 16; i++)
    le_put_u8(&w, (uint8_t)(0xa0 + i));
  le_put_u32(&w, SMB2_GLOBAL_CAP_LEASING | SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_ENCRYPTION);
  le_put_u32(&w, 8388608);
  le_put_u32(&w, 4194304);
  le_put_u32(&w, 2097152);
  le_put_u64(&w, 0x01d0000000000001ull);
  le_put_u64(&w, 0);
  le_put_u16(&w, 128);           /* SecurityBufferOffset */
  le_put_u16(&w, sizeof spnego); /* SecurityBufferLength */
  le_put_u32(&w, with_ctx ? 136 : 0);
  le_put_bytes(&w, spnego, sizeof spnego); /* 128..135 */
  if (with_ctx) {
    /* 136: PREAUTH: 1 alg, 32-byte salt */
    le_put_u16(&w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
    le_put_u16(&w, 38);
    le_put_u32(&w, 0);
    le_put_u16(&w, 1);
    le_put_u16(&w, 32);
    le_put_u16(&w, SMB2_PREAUTH_SHA512);
    for (int i = 0; i < 32; i++)
      le_put_u8(&w, (uint8_t)i);
    le_put_align(&w, 8);
    /* context type 0x0100 (SMB2_POSIX_EXTENSIONS_AVAILABLE) holding no POSIX tag: ignored */
    le_put_u16(&w, 0x0100);
    le_put_u16(&w, 3);
    le_put_u32(&w, 0);
    le_put_bytes(&w, "xyz", 3);
    le_put_align(&w, 8);
    le_put_u16(&w, SMB2_ENCRYPTION_CAPABILITIES);
    le_put_u16(&w, 4);
    le_put_u32(&w, 0);
    le_put_u16(&w, 1);
    le_put_u16(&w, 2); /* AES-128-GCM */
    le_put_align(&w, 8);
    le_put_u16(&w, SMB2_SIGNING_CAPABILITIES);
    le_put_u16(&w, 4);
    le_put_u32(&w, 0);
    le_put_u16(&w, 1);
    le_put_u16(&w, 2); /* AES-GMAC */
  }
  return w.err ? 0 : w.off;
}

static inline size_t wt_session_setup_rsp(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_SESSION_SETUP);
  le_put_u16(&w, 9);
  le_put_u16(&w, SMB2_SESSION_FLAG_IS_GUEST);
  le_put_u16(&w, 72);
  le_put_u16(&w, 5);
  le_put_bytes(&w, "\xa1\x03\x0a\x01\x00", 5);
  return w.err ? 0 : w.off;
}

static inline size_t wt_tree_connect_rsp(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_TREE_CONNECT);
  le_put_u16(&w, 16);
  le_put_u8(&w, SMB2_SHARE_TYPE_DISK);
  le_put_u8(&w, 0);
  le_put_u32(&w, SMB2_SHAREFLAG_ENCRYPT_DATA);
  le_put_u32(&w, SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY);
  le_put_u32(&w, 0x001f01ff);
  return w.err ? 0 : w.off;
}

/* One create context (2.2.13.2) with a 4-byte name at 16 and data at 24; returns its start. */
static inline size_t wt_create_ctx(struct le_wr *w, const char *name, const void *data, uint32_t dlen,
                                   int last) {
  le_put_align(w, 8);
  size_t start = w->off;
  size_t total = 24 + dlen;
  le_put_u32(w, last ? 0 : (uint32_t)((total + 7) & ~(size_t)7));
  le_put_u16(w, 16);
  le_put_u16(w, 4);
  le_put_u16(w, 0);
  le_put_u16(w, dlen ? 24 : 0);
  le_put_u32(w, dlen);
  le_put_bytes(w, name, 4);
  le_put_zero(w, 4);
  le_put_bytes(w, data, dlen);
  return start;
}

/* CREATE response with MxAc, QFid, a v2 lease and an unknown "DHnQ" context. */
static inline size_t wt_create_rsp(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_CREATE);
  le_put_u16(&w, 89);
  le_put_u8(&w, SMB2_OPLOCK_LEVEL_LEASE);
  le_put_u8(&w, 0);
  le_put_u32(&w, SMB2_FILE_CREATED);
  le_put_u64(&w, 1001);
  le_put_u64(&w, 1002);
  le_put_u64(&w, 1003);
  le_put_u64(&w, 1004);
  le_put_u64(&w, 4096);
  le_put_u64(&w, 123);
  le_put_u32(&w, SMB2_FILE_ATTRIBUTE_ARCHIVE);
  le_put_u32(&w, 0);
  le_put_u64(&w, 0x1111);
  le_put_u64(&w, 0x2222);
  size_t ctx_hdr = w.off;
  le_put_u32(&w, 0); /* CreateContextsOffset, patched */
  le_put_u32(&w, 0); /* CreateContextsLength, patched */
  uint8_t mxac[8], qfid[32], lease[52];
  le32_put(mxac, 0);
  le32_put(mxac + 4, 0x001f01ff);
  memset(qfid, 0, sizeof qfid);
  le64_put(qfid, 0xdeadbeefcafef00dull);
  memset(lease, 0, sizeof lease);
  for (int i = 0; i < 16; i++)
    lease[i] = (uint8_t)(i + 1);
  le32_put(lease + 16, SMB2_LEASE_READ | SMB2_LEASE_HANDLE);
  le32_put(lease + 20, 0x4);
  for (int i = 0; i < 16; i++)
    lease[32 + i] = (uint8_t)(0x80 + i);
  le16_put(lease + 48, 7);
  size_t first = wt_create_ctx(&w, "MxAc", mxac, 8, 0);
  wt_create_ctx(&w, "QFid", qfid, 32, 0);
  wt_create_ctx(&w, "DHnQ", "\0\0\0\0\0\0\0\0", 8, 0);
  wt_create_ctx(&w, "RqLs", lease, 52, 1);
  if (w.err) return 0;
  le32_put(buf + ctx_hdr, (uint32_t)first);
  le32_put(buf + ctx_hdr + 4, (uint32_t)(w.off - first));
  return w.off;
}

static inline size_t wt_close_rsp(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_CLOSE);
  le_put_u16(&w, 60);
  le_put_u16(&w, SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB);
  le_put_u32(&w, 0);
  for (uint64_t i = 1; i <= 6; i++)
    le_put_u64(&w, i * 100);
  le_put_u32(&w, SMB2_FILE_ATTRIBUTE_DIRECTORY);
  return w.err ? 0 : w.off;
}

/* READ response carrying n bytes 0, 1, 2, ... at DataOffset data_off (>= 80). */
static inline size_t wt_read_rsp(uint8_t *buf, size_t cap, uint8_t data_off, uint32_t n) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_READ);
  le_put_u16(&w, 17);
  le_put_u8(&w, data_off);
  le_put_u8(&w, 0);
  le_put_u32(&w, n);
  le_put_u32(&w, 0);
  le_put_u32(&w, 0);
  le_put_zero(&w, data_off - w.off);
  for (uint32_t i = 0; i < n; i++)
    le_put_u8(&w, (uint8_t)i);
  return w.err ? 0 : w.off;
}

static inline size_t wt_write_rsp(uint8_t *buf, size_t cap, uint32_t count) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_WRITE);
  le_put_u16(&w, 17);
  le_put_u16(&w, 0);
  le_put_u32(&w, count);
  le_put_u32(&w, 0);
  le_put_u16(&w, 0);
  le_put_u16(&w, 0);
  return w.err ? 0 : w.off;
}

/* QUERY_INFO / QUERY_DIRECTORY response (same layout, 2.2.38 / 2.2.34) with the output at 72. */
static inline size_t wt_buf_rsp(uint8_t *buf, size_t cap, uint16_t cmd, const void *out, uint32_t n) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, cmd);
  le_put_u16(&w, 9);
  le_put_u16(&w, 72);
  le_put_u32(&w, n);
  le_put_bytes(&w, out, n);
  return w.err ? 0 : w.off;
}

/* IOCTL response: VALIDATE_NEGOTIATE_INFO output at 112. */
static inline size_t wt_ioctl_rsp(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_IOCTL);
  le_put_u16(&w, 49);
  le_put_u16(&w, 0);
  le_put_u32(&w, SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO);
  le_put_u64(&w, UINT64_MAX);
  le_put_u64(&w, UINT64_MAX);
  le_put_u32(&w, 112); /* InputOffset, InputCount 0 */
  le_put_u32(&w, 0);
  le_put_u32(&w, 112); /* OutputOffset */
  le_put_u32(&w, 24);
  le_put_u32(&w, 0);
  le_put_u32(&w, 0);
  le_put_u32(&w, SMB2_GLOBAL_CAP_LEASING);
  for (int i = 0; i < 16; i++)
    le_put_u8(&w, (uint8_t)(0xa0 + i));
  le_put_u16(&w, SMB2_NEGOTIATE_SIGNING_ENABLED);
  le_put_u16(&w, SMB2_DIALECT_302);
  return w.err ? 0 : w.off;
}

/* Lease break notification (2.2.23.2), MessageId all ones. */
static inline size_t wt_lease_break(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_OPLOCK_BREAK);
  wt_set_msgid(buf, UINT64_MAX);
  le_put_u16(&w, 44);
  le_put_u16(&w, 3);
  le_put_u32(&w, 1); /* ACK_REQUIRED */
  for (int i = 0; i < 16; i++)
    le_put_u8(&w, (uint8_t)(i + 1));
  le_put_u32(&w, SMB2_LEASE_READ | SMB2_LEASE_HANDLE | SMB2_LEASE_WRITE);
  le_put_u32(&w, SMB2_LEASE_READ);
  le_put_zero(&w, 12);
  return w.err ? 0 : w.off;
}

/* Oplock break notification (2.2.23.1). */
static inline size_t wt_oplock_break(uint8_t *buf, size_t cap) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_OPLOCK_BREAK);
  wt_set_msgid(buf, UINT64_MAX);
  le_put_u16(&w, 24);
  le_put_u8(&w, SMB2_OPLOCK_LEVEL_II);
  le_put_zero(&w, 5);
  le_put_u64(&w, 0xaaaa);
  le_put_u64(&w, 0xbbbb);
  return w.err ? 0 : w.off;
}

/* Error response (2.2.2) with n bytes of ErrorData (or the 1 pad byte when n == 0). */
static inline size_t wt_error_rsp(uint8_t *buf, size_t cap, uint16_t cmd, const void *data, uint32_t n) {
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, cmd);
  le32_put(buf + SMB2_HDR_OFF_STATUS, 0xC0000022u);
  le_put_u16(&w, 9);
  le_put_u8(&w, 0);
  le_put_u8(&w, 0);
  le_put_u32(&w, n);
  if (n)
    le_put_bytes(&w, data, n);
  else
    le_put_u8(&w, 0);
  return w.err ? 0 : w.off;
}

/* One FileIdFullDirectoryInformation entry (MS-FSCC 2.4.18) with an ASCII name, 8-aligned;
 * returns the entry start. The caller patches NextEntryOffset (wt_dirent_link). */
static inline size_t wt_dirent(struct le_wr *w, const char *name, uint64_t file_id, uint32_t attrs) {
  le_put_align(w, 8);
  size_t start = w->off;
  size_t n = strlen(name);
  le_put_u32(w, 0);
  le_put_u32(w, 0);
  le_put_u64(w, 11);
  le_put_u64(w, 12);
  le_put_u64(w, 13);
  le_put_u64(w, 14);
  le_put_u64(w, 1000 + n); /* EndOfFile */
  le_put_u64(w, 4096);     /* AllocationSize */
  le_put_u32(w, attrs);
  le_put_u32(w, (uint32_t)(2 * n));
  le_put_u32(w, 0);
  le_put_u32(w, 0);
  le_put_u64(w, file_id);
  for (size_t i = 0; i < n; i++)
    le_put_u16(w, (uint8_t)name[i]);
  return start;
}

static inline size_t wt_dir_buf(uint8_t *buf, size_t cap) {
  struct le_wr w;
  le_wr_init(&w, buf, cap);
  const char *names[] = {".", "..", "file.txt", "sub"};
  size_t prev = 0;
  for (int i = 0; i < 4; i++) {
    size_t s = wt_dirent(&w, names[i], 100 + (uint64_t)i, i == 2 ? 0x20 : 0x10);
    if (i && !w.err) le32_put(buf + prev, (uint32_t)(s - prev));
    prev = s;
  }
  return w.err ? 0 : w.off;
}

/* FileAllInformation (MS-FSCC 2.4.2) for a 5-byte file named "x". */
static inline size_t wt_all_info(uint8_t *buf, size_t cap) {
  struct le_wr w;
  le_wr_init(&w, buf, cap);
  le_put_u64(&w, 21);
  le_put_u64(&w, 22);
  le_put_u64(&w, 23);
  le_put_u64(&w, 24);
  le_put_u32(&w, SMB2_FILE_ATTRIBUTE_ARCHIVE);
  le_put_u32(&w, 0);
  le_put_u64(&w, 4096); /* Standard */
  le_put_u64(&w, 5);
  le_put_u32(&w, 2);
  le_put_u8(&w, 0);
  le_put_u8(&w, 0);
  le_put_u16(&w, 0);
  le_put_u64(&w, 0x1234567890ull); /* Internal */
  le_put_u32(&w, 0);               /* EA */
  le_put_u32(&w, 0x001f01ff);      /* Access */
  le_put_u64(&w, 0);               /* Position */
  le_put_u32(&w, 0);               /* Mode */
  le_put_u32(&w, 0);               /* Alignment */
  le_put_u32(&w, 2);               /* Name */
  le_put_u16(&w, 'x');
  return w.err ? 0 : w.off;
}

static inline size_t wt_fs_full_size(uint8_t *buf, size_t cap) {
  struct le_wr w;
  le_wr_init(&w, buf, cap);
  le_put_u64(&w, 1000000);
  le_put_u64(&w, 250000);
  le_put_u64(&w, 300000);
  le_put_u32(&w, 8);
  le_put_u32(&w, 512);
  return w.err ? 0 : w.off;
}

#endif
