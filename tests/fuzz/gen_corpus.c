/* gen_corpus.c - writes the seed inputs of the wire/fscc fuzz targets (valid encodings built
 * by the unit tests' response builders). Not part of the build; run once after changing a
 * builder, and commit the output:
 *   cc -std=gnu17 -D_GNU_SOURCE -Iinclude -Ilib -Itests/unit tests/fuzz/gen_corpus.c \
 *      build/lib/libsmb3_static.a -lcrypto -o /tmp/gen_corpus && /tmp/gen_corpus tests/fuzz/corpus
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "wire_test.h"

static const char *root;

static void put(const char *target, const char *seed, const uint8_t *p, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/fuzz_%s", root, target);
  if (mkdir(path, 0755) && errno != EEXIST) {
    perror(path);
    exit(1);
  }
  snprintf(path, sizeof path, "%s/fuzz_%s/%s", root, target, seed);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
    perror(path);
    exit(1);
  }
}

static void gen_hdr_transform(uint8_t *buf, size_t cap) {
  size_t n = wt_create_rsp(buf, cap);
  put("hdr", "create_rsp", buf, SMB2_HDR_LEN);
  struct smb2_hdr h = {.status = 0x103, .command = SMB2_READ, .flags = 3, .message_id = 9, .async_id = 77};
  smb2_hdr_encode(&h, buf);
  put("hdr", "async_pending", buf, SMB2_HDR_LEN);
  struct smb2_transform_hdr t = {.orig_msg_size = (uint32_t)n, .flags = 1, .session_id = 42};
  memset(t.nonce, 0x33, 12);
  smb2_transform_hdr_encode(&t, buf);
  wt_create_rsp(buf + SMB2_TRANSFORM_HDR_LEN, cap - SMB2_TRANSFORM_HDR_LEN);
  put("transform", "gcm", buf, SMB2_TRANSFORM_HDR_LEN + n);
}

static void gen_small(uint8_t *buf, size_t cap) {
  size_t n;
  n = wt_error_rsp(buf, cap, SMB2_CREATE, NULL, 0);
  put("error", "empty", buf, n);
  n = wt_error_rsp(buf, cap, SMB2_CREATE, "\x10\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08",
                   16);
  put("error", "data", buf, n);
  n = wt_session_setup_rsp(buf, cap);
  put("session_setup_rsp", "spnego", buf, n);
  n = wt_tree_connect_rsp(buf, cap);
  put("tree_connect_rsp", "disk", buf, n);
  n = wt_close_rsp(buf, cap);
  put("close_rsp", "postquery", buf, n);
  n = wt_write_rsp(buf, cap, 65536);
  put("write_rsp", "64k", buf, n);
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_FLUSH);
  le_put_u16(&w, 4);
  le_put_u16(&w, 0);
  put("flush_rsp", "ok", buf, w.off);
  le16_put(buf + SMB2_HDR_OFF_COMMAND, SMB2_ECHO);
  put("simple_rsp", "echo", buf, w.off);
  wt_rsp_start(&w, buf, cap, SMB2_SET_INFO);
  le_put_u16(&w, 2);
  put("set_info_rsp", "ok", buf, w.off);
}

static void gen_negotiate_create(uint8_t *buf, size_t cap) {
  size_t n = wt_negotiate_rsp(buf, cap, SMB2_DIALECT_302, 0);
  put("negotiate_rsp", "smb302", buf, n);
  n = wt_negotiate_rsp(buf, cap, SMB2_DIALECT_311, 1);
  put("negotiate_rsp", "smb311_ctx", buf, n);
  n = wt_create_rsp(buf, cap);
  put("create_rsp", "contexts", buf, n);
  le32_put(buf + 144, 0);
  le32_put(buf + 148, 0);
  put("create_rsp", "plain", buf, 152);
}

static void gen_read(uint8_t *buf, size_t cap) {
  size_t n = wt_read_rsp(buf, cap, 80, 64);
  put("read_rsp", "at80", buf, n);
  n = wt_read_rsp(buf, cap, 96, 20);
  put("read_rsp", "at96", buf, n);
  n = wt_read_rsp(buf + 4, cap - 4, 80, 1000);
  le32_put(buf, (uint32_t)n);
  put("read_rsp_head", "head_only", buf, 4 + 80);
  put("read_rsp_head", "whole", buf, 4 + n);
}

static void gen_info_dir(uint8_t *buf, size_t cap) {
  uint8_t info[512];
  size_t in = wt_all_info(info, sizeof info);
  put("fscc_all_info", "file", info, in);
  size_t n = wt_buf_rsp(buf, cap, SMB2_QUERY_INFO, info, (uint32_t)in);
  put("query_info_rsp", "all_info", buf, n);
  in = wt_fs_full_size(info, sizeof info);
  put("fscc_fs_full_size", "full", info, in);
  struct le_wr w;
  le_wr_init(&w, info, sizeof info);
  for (uint64_t i = 1; i <= 6; i++)
    le_put_u64(&w, i * 1000);
  le_put_u32(&w, SMB2_FILE_ATTRIBUTE_ARCHIVE);
  le_put_u32(&w, 0);
  put("fscc_network_open_info", "file", info, w.off);
  in = wt_dir_buf(info, sizeof info);
  put("fscc_dirent", "four", info, in);
  n = wt_buf_rsp(buf, cap, SMB2_QUERY_DIRECTORY, info, (uint32_t)in);
  put("query_dir_rsp", "four", buf, n);
}

static void gen_ioctl_break(uint8_t *buf, size_t cap) {
  size_t n = wt_ioctl_rsp(buf, cap);
  put("ioctl_rsp", "validate", buf, n);
  put("validate_negotiate", "rsp", buf + 112, 24);
  n = wt_oplock_break(buf, cap);
  put("break", "oplock", buf, n);
  n = wt_lease_break(buf, cap);
  put("break", "lease", buf, n);
  struct le_wr w;
  wt_rsp_start(&w, buf, cap, SMB2_OPLOCK_BREAK);
  le_put_u16(&w, 36);
  le_put_zero(&w, 6);
  for (int i = 0; i < 16; i++)
    le_put_u8(&w, (uint8_t)i);
  le_put_u32(&w, 1);
  le_put_u64(&w, 0);
  put("break", "lease_rsp", buf, w.off);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s tests/fuzz/corpus\n", argv[0]);
    return 2;
  }
  root = argv[1];
  static uint8_t buf[8192];
  gen_hdr_transform(buf, sizeof buf);
  gen_small(buf, sizeof buf);
  gen_negotiate_create(buf, sizeof buf);
  gen_read(buf, sizeof buf);
  gen_info_dir(buf, sizeof buf);
  gen_ioctl_break(buf, sizeof buf);
  return 0;
}
