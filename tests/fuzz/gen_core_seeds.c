/* gen_core_seeds.c - writes the seed inputs of fuzz_core (tests/fuzz/corpus/fuzz_core/): server
 * conversations answering the chains fuzz_core submits (READ = MessageId 0 on the initial credit;
 * after a grant, CREATE/QUERY_INFO/CLOSE = 1..3 and WRITE = 4; an extra ECHO = 5), built with the
 * unit tests' response builders. Not part of the build; run after changing fuzz_core's chains:
 *   cc -std=gnu17 -D_GNU_SOURCE -Iinclude -Ilib -Itests/unit tests/fuzz/gen_core_seeds.c \
 *      build/lib/libsmb3_static.a -lcrypto -o /tmp/gen_core_seeds && /tmp/gen_core_seeds
 * tests/fuzz/corpus/fuzz_core
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "util/status.h"
#include "wire_test.h"

static uint8_t out[1 << 16];
static size_t out_len;

static void rec(uint8_t flags, const uint8_t *frame, size_t n) {
  out[out_len++] = flags;
  out[out_len++] = (uint8_t)(n >> 16);
  out[out_len++] = (uint8_t)(n >> 8);
  out[out_len++] = (uint8_t)n;
  memcpy(out + out_len, frame, n);
  out_len += n;
}

static void hdr(uint8_t *m, uint64_t mid, uint16_t credits, uint32_t status, uint32_t flags,
                uint64_t async_id) {
  struct smb2_hdr h;
  smb2_hdr_decode(m, SMB2_HDR_LEN, &h);
  h.message_id = mid;
  h.credits = credits;
  h.status = status;
  h.flags = SMB2_FLAGS_SERVER_TO_REDIR | flags;
  h.async_id = async_id;
  h.session_id = 0;
  smb2_hdr_encode(&h, m);
}

static size_t read_rsp(uint8_t *m, uint64_t mid, uint16_t credits, uint32_t n) {
  size_t len = wt_read_rsp(m, 8192, 80, n);
  hdr(m, mid, credits, 0, 0, 0);
  return len;
}

/* CREATE + QUERY_INFO + CLOSE answers for MessageIds 1..3 as one compound frame (8-aligned). */
static size_t compound_rsp(uint8_t *f, uint32_t status) {
  static uint8_t m[3][1024];
  size_t n[3];
  if (status) {
    uint16_t cmds[3] = {SMB2_CREATE, SMB2_QUERY_INFO, SMB2_CLOSE};
    for (int i = 0; i < 3; i++) {
      n[i] = wt_error_rsp(m[i], sizeof m[i], cmds[i], NULL, 0);
      hdr(m[i], 1 + (uint64_t)i, 1, status, i ? SMB2_FLAGS_RELATED_OPERATIONS : 0, 0);
    }
  } else {
    uint8_t info[64] = {1, 2, 3};
    n[0] = wt_create_rsp(m[0], sizeof m[0]);
    n[1] = wt_buf_rsp(m[1], sizeof m[1], SMB2_QUERY_INFO, info, sizeof info);
    n[2] = wt_close_rsp(m[2], sizeof m[2]);
    for (int i = 0; i < 3; i++)
      hdr(m[i], 1 + (uint64_t)i, 1, 0, i ? SMB2_FLAGS_RELATED_OPERATIONS : 0, 0);
  }
  size_t len = 0;
  for (int i = 0; i < 3; i++) {
    size_t elen = i < 2 ? (n[i] + 7) & ~(size_t)7 : n[i];
    memset(f + len, 0, elen);
    memcpy(f + len, m[i], n[i]);
    if (i < 2) le32_put(f + len + SMB2_HDR_OFF_NEXT, (uint32_t)elen);
    len += elen;
  }
  return len;
}

static size_t write_rsp(uint8_t *m, uint64_t mid) {
  size_t n = wt_write_rsp(m, 1024, 3000);
  hdr(m, mid, 1, 0, 0, 0);
  return n;
}

static void put(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f)) {
    perror(path);
    exit(1);
  }
  out_len = 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  if (mkdir(dir, 0755) && errno != EEXIST) {
    perror(dir);
    return 1;
  }
  static uint8_t m[16384], f[16384];
  size_t n;

  /* everything answered in order */
  rec(0, m, read_rsp(m, 0, 8, 100));
  rec(0, f, compound_rsp(f, 0));
  rec(0, m, write_rsp(m, 4));
  put(dir, "in_order");

  /* the READ through the zero-copy path */
  rec(1, m, read_rsp(m, 0, 8, 200));
  rec(0, f, compound_rsp(f, 0));
  rec(0, m, write_rsp(m, 4));
  put(dir, "direct_read");

  /* interim (STATUS_PENDING, async) then the final READ answer; the compound fails */
  n = wt_error_rsp(m, sizeof m, SMB2_READ, NULL, 0);
  hdr(m, 0, 8, NT_STATUS_PENDING, SMB2_FLAGS_ASYNC_COMMAND, 0x77);
  rec(0, m, n);
  n = wt_read_rsp(m, sizeof m, 80, 50);
  hdr(m, 0, 0, 0, SMB2_FLAGS_ASYNC_COMMAND, 0x77);
  rec(0, m, n);
  rec(0, f, compound_rsp(f, NT_STATUS_OBJECT_NAME_NOT_FOUND));
  rec(2, m, write_rsp(m, 4)); /* then a timeout check with nothing in flight */
  put(dir, "interim");

  /* compound answered element by element, out of order */
  rec(0, m, read_rsp(m, 0, 8, 10));
  uint8_t info[16] = {9};
  n = wt_buf_rsp(m, sizeof m, SMB2_QUERY_INFO, info, sizeof info);
  hdr(m, 2, 1, 0, SMB2_FLAGS_RELATED_OPERATIONS, 0);
  rec(0, m, n);
  n = wt_close_rsp(m, sizeof m);
  hdr(m, 3, 1, 0, SMB2_FLAGS_RELATED_OPERATIONS, 0);
  rec(0, m, n);
  n = wt_create_rsp(m, sizeof m);
  hdr(m, 1, 1, 0, 0, 0);
  rec(0, m, n);
  rec(0, m, write_rsp(m, 4));
  put(dir, "split_compound");

  /* a lease break first, an extra ECHO (MessageId 5), the READ at EOF */
  n = wt_lease_break(m, sizeof m);
  rec(4, m, n);
  n = wt_error_rsp(m, sizeof m, SMB2_READ, NULL, 0);
  hdr(m, 0, 8, NT_STATUS_END_OF_FILE, 0, 0);
  rec(0, m, n);
  {
    struct le_wr w;
    wt_rsp_start(&w, m, sizeof m, SMB2_ECHO);
    le_put_u16(&w, 4);
    le_put_u16(&w, 0);
    hdr(m, 5, 1, 0, 0, 0);
    rec(0, m, w.off);
  }
  rec(0, f, compound_rsp(f, 0));
  put(dir, "break_echo");

  /* a transform header although nothing was negotiated */
  memset(m, 0x41, 52 + 80);
  le32_put(m, SMB2_TRANSFORM_ID);
  le32_put(m + 36, 80);
  rec(0, m, 52 + 80);
  put(dir, "transform");

  /* unknown MessageId after a valid answer */
  rec(0, m, read_rsp(m, 0, 8, 10));
  rec(0, m, read_rsp(m, 99, 1, 10));
  put(dir, "unknown_id");
  return 0;
}
