/* requests.c - builders that encode one request into a chain message (any of them can join a
 * compound chain). Bodies are encoded by lib/wire; sizes are the expected response
 * payloads used for credit charges. */
#include <fcntl.h>
#include <string.h>

#include "client/client.h"
#include "util/status.h"

int build_create(smb3_client *c, struct smb3_msg *m, const struct create_args *args) {
  struct create_args own = *args;
  const struct create_args *a = &own;
  dirlease_parent(c, &own); /* (a change in a directory this client holds a lease on) */
  struct smb2_create_req r = {0};
  r.oplock_level = a->oplock;
  r.impersonation = 2;
  r.desired_access = a->access;
  r.file_attributes = a->attributes;
  r.share_access = a->share ? a->share : SMB2_FILE_SHARE_ALL;
  r.create_disposition = a->disposition;
  r.create_options = a->options;
  r.name = a->path;
  r.lease = a->lease;
  r.want_disk_id = 1; /* "QFid": the server's file id comes back with the open (stable inode numbers) */
  if (c->posix_neg) {
    /* Samba gives a handle POSIX semantics (case-sensitive names, POSIX information) only when
     * its CREATE carries the POSIX context (source3/smbd/smb2_create.c: posix_pathnames). */
    r.posix = 1;
    r.posix_paths = c->posix; /* the share answers it: names are POSIX ('/' separators) */
    r.posix_mode = a->mode_set ? a->mode : (a->options & SMB2_FILE_DIRECTORY_FILE) ? 0755 : 0644;
    if (c->posix && a->no_follow) r.create_options |= SMB2_FILE_OPEN_REPARSE_POINT;
  }
  r.sfm_names = (client_names(c) & FSCC_NAMES_SFM) != 0;
  struct le_wr w;
  size_t cap = 256 + 4 * strlen(a->path);
  int rc = msg_body_begin(m, SMB2_CREATE, c->tree_id, cap, &w);
  if (!rc) rc = smb2_create_req_encode(&w, &r);
  return rc ? rc : msg_body_done(m, &w);
}

int build_close(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, int postquery) {
  struct smb2_close_req r = {.flags = postquery ? SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB : 0, .file_id = fid};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_CLOSE, c->tree_id, 64, &w);
  if (!rc) rc = smb2_close_req_encode(&w, &r);
  return rc ? rc : msg_body_done(m, &w);
}

int build_query_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t type, uint8_t cls,
                     uint32_t outlen) {
  struct smb2_query_info_req r = {
      .info_type = type, .file_info_class = cls, .output_buffer_length = outlen, .file_id = fid};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_QUERY_INFO, c->tree_id, 64, &w);
  if (!rc) rc = smb2_query_info_req_encode(&w, &r);
  m->expect_rsp_len = outlen;
  return rc ? rc : msg_body_done(m, &w);
}

int build_ioctl(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint32_t ctl_code,
                const uint8_t *input, uint32_t input_len, uint32_t max_out) {
  struct smb2_ioctl_req r = {.ctl_code = ctl_code,
                             .file_id = fid,
                             .input = input,
                             .input_len = input_len,
                             .max_output_response = max_out,
                             .flags = SMB2_0_IOCTL_IS_FSCTL};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_IOCTL, c->tree_id, 64 + input_len, &w);
  if (!rc) rc = smb2_ioctl_req_encode(&w, &r);
  m->expect_rsp_len = max_out;
  return rc ? rc : msg_body_done(m, &w);
}

int build_set_info(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t type, uint8_t cls,
                   const uint8_t *buf, uint32_t len) {
  return build_set_info_ai(c, m, fid, type, cls, 0, buf, len);
}

int build_set_info_ai(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t type, uint8_t cls,
                      uint32_t addl_info, const uint8_t *buf, uint32_t len) {
  struct smb2_set_info_req r = {.info_type = type,
                                .file_info_class = cls,
                                .additional_information = addl_info,
                                .file_id = fid,
                                .buf = buf,
                                .len = len};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_SET_INFO, c->tree_id, 64 + len, &w);
  if (!rc) rc = smb2_set_info_req_encode(&w, &r);
  return rc ? rc : msg_body_done(m, &w);
}

int build_read(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, void *buf, uint32_t len,
               uint64_t off) {
  struct smb2_read_req r = {.length = len, .offset = off, .file_id = fid};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_READ, c->tree_id, 64, &w);
  if (!rc) rc = smb2_read_req_encode(&w, &r);
  m->expect_rsp_len = len;
  m->rd_buf = buf;
  m->rd_cap = len;
  return rc ? rc : msg_body_done(m, &w);
}

int build_write(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, const void *buf, uint32_t len,
                uint64_t off) {
  struct smb2_write_req r = {.length = len, .offset = off, .file_id = fid};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_WRITE, c->tree_id, 64, &w);
  if (!rc) rc = smb2_write_req_encode(&w, &r);
  m->payload = buf;
  m->payload_len = len;
  return rc ? rc : msg_body_done(m, &w);
}

int build_flush(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid) {
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_FLUSH, c->tree_id, 64, &w);
  if (!rc) rc = smb2_flush_req_encode(&w, fid);
  return rc ? rc : msg_body_done(m, &w);
}

int build_lock(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid,
               const struct smb2_lock_element *el) {
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_LOCK, c->tree_id, 64, &w);
  if (!rc) rc = smb2_lock_req_encode(&w, fid, el, 1);
  return rc ? rc : msg_body_done(m, &w);
}

int build_query_dir(smb3_client *c, struct smb3_msg *m, struct smb2_file_id fid, uint8_t flags,
                    uint32_t outlen) {
  struct smb2_query_dir_req r = {.file_info_class = c->posix ? FSCC_FILE_POSIX_INFORMATION
                                                             : FSCC_FILE_ID_FULL_DIRECTORY_INFORMATION,
                                 .flags = flags,
                                 .file_id = fid,
                                 .output_buffer_length = outlen,
                                 .pattern = "*"};
  struct le_wr w;
  int rc = msg_body_begin(m, SMB2_QUERY_DIRECTORY, c->tree_id, 128, &w);
  if (!rc) rc = smb2_query_dir_req_encode(&w, &r);
  m->expect_rsp_len = outlen;
  return rc ? rc : msg_body_done(m, &w);
}

int build_simple(smb3_client *c, struct smb3_msg *m, uint16_t command) {
  struct le_wr w;
  int rc = msg_body_begin(m, command, c->tree_id, 16, &w);
  if (!rc) rc = smb2_simple_req_encode(&w);
  return rc ? rc : msg_body_done(m, &w);
}

void create_args_from_flags(struct create_args *a, const char *path, int flags) {
  memset(a, 0, sizeof *a);
  a->path = path;
  int acc = flags & O_ACCMODE;
  a->access = SMB2_FILE_READ_ATTRIBUTES | SMB2_SYNCHRONIZE | SMB2_READ_CONTROL;
  if (acc == O_RDONLY || acc == O_RDWR) a->access |= SMB2_FILE_READ_DATA | SMB2_FILE_READ_EA;
  if (acc == O_WRONLY || acc == O_RDWR)
    a->access |=
        SMB2_FILE_WRITE_DATA | SMB2_FILE_APPEND_DATA | SMB2_FILE_WRITE_ATTRIBUTES | SMB2_FILE_WRITE_EA;
  if ((flags & O_CREAT) && (flags & O_EXCL))
    a->disposition = SMB2_FILE_CREATE;
  else if ((flags & O_CREAT) && (flags & O_TRUNC))
    a->disposition = SMB2_FILE_OVERWRITE_IF;
  else if (flags & O_CREAT)
    a->disposition = SMB2_FILE_OPEN_IF;
  else if (flags & O_TRUNC)
    a->disposition = SMB2_FILE_OVERWRITE;
  else
    a->disposition = SMB2_FILE_OPEN;
  if (flags & O_DIRECTORY) a->options |= SMB2_FILE_DIRECTORY_FILE;
  a->attributes = (flags & O_CREAT) ? SMB2_FILE_ATTRIBUTE_ARCHIVE : 0;
  a->share = SMB2_FILE_SHARE_ALL;
}
