/* wire.h - SMB2/SMB3 message codec: bytes <-> host structs. No I/O, no state.
 *
 * Encoders write one command's body (everything after the 64-byte header) into a bounded
 * writer (lib/util/le.h) whose position 0 is header offset 64: offsets that the protocol
 * measures from the start of the SMB2 header are computed as 64 + writer position. They return
 * 0, or SMB3_EINVAL when the writer overflowed or an argument is out of range.
 *
 * Decoders take one whole message: msg points at its SMB2 header and len is the message's
 * length (for a compound element: up to its NextCommand, else to the end of the frame). They
 * check StructureSize, every offset and length against len (overflow-safe), and return 0 or
 * SMB3_EPROTO. Pointers they return (e.g. `data`, `buf`) point into msg and live as long as it.
 *
 * One command per file; each file cites its MS-SMB2 section.
 */
#ifndef SMB3_WIRE_H
#define SMB3_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "fscc/fscc.h"
#include "util/le.h"

/* ---- header: MS-SMB2 2.2.1.2 (sync) / 2.2.1.1 (async) ---- hdr.c */
#define SMB2_HDR_LEN 64
#define SMB2_PROTO_ID 0x424d53feu       /* 0xFE 'S' 'M' 'B' read as LE u32 */
#define SMB2_TRANSFORM_ID 0x424d53fdu   /* 0xFD 'S' 'M' 'B' */
#define SMB2_COMPRESSION_ID 0x424d53fcu /* 0xFC 'S' 'M' 'B' (we never negotiate it) */

enum smb2_command {
  SMB2_NEGOTIATE = 0x00,
  SMB2_SESSION_SETUP = 0x01,
  SMB2_LOGOFF = 0x02,
  SMB2_TREE_CONNECT = 0x03,
  SMB2_TREE_DISCONNECT = 0x04,
  SMB2_CREATE = 0x05,
  SMB2_CLOSE = 0x06,
  SMB2_FLUSH = 0x07,
  SMB2_READ = 0x08,
  SMB2_WRITE = 0x09,
  SMB2_LOCK = 0x0A,
  SMB2_IOCTL = 0x0B,
  SMB2_CANCEL = 0x0C,
  SMB2_ECHO = 0x0D,
  SMB2_QUERY_DIRECTORY = 0x0E,
  SMB2_CHANGE_NOTIFY = 0x0F,
  SMB2_QUERY_INFO = 0x10,
  SMB2_SET_INFO = 0x11,
  SMB2_OPLOCK_BREAK = 0x12,
  SMB2_NCOMMANDS = 0x13
};

enum smb2_hdr_flags {
  SMB2_FLAGS_SERVER_TO_REDIR = 0x00000001,
  SMB2_FLAGS_ASYNC_COMMAND = 0x00000002,
  SMB2_FLAGS_RELATED_OPERATIONS = 0x00000004,
  SMB2_FLAGS_SIGNED = 0x00000008,
  SMB2_FLAGS_PRIORITY_MASK = 0x00000070,
  SMB2_FLAGS_DFS_OPERATIONS = 0x10000000,
  SMB2_FLAGS_REPLAY_OPERATION = 0x20000000,
};

struct smb2_hdr {
  uint16_t credit_charge;
  uint32_t status; /* NTSTATUS (responses); ChannelSequence/Reserved in requests = 0 */
  uint16_t command;
  uint16_t credits; /* CreditRequest (requests) / CreditResponse (responses) */
  uint32_t flags;
  uint32_t next_command;
  uint64_t message_id;
  uint64_t async_id;   /* valid when flags & ASYNC_COMMAND */
  uint32_t process_id; /* sync form only */
  uint32_t tree_id;    /* sync form only */
  uint64_t session_id;
  uint8_t signature[16];
};

/* Encode 64 bytes (StructureSize 64, ProtocolId FE SMB). */
void smb2_hdr_encode(const struct smb2_hdr *h, uint8_t out[SMB2_HDR_LEN]);
/* Decode and check ProtocolId and StructureSize; len must be >= 64. */
int smb2_hdr_decode(const uint8_t *p, size_t len, struct smb2_hdr *h);

/* Offsets of header fields, for patching in place (signature, message id, credits...). */
#define SMB2_HDR_OFF_CREDIT_CHARGE 6
#define SMB2_HDR_OFF_STATUS 8
#define SMB2_HDR_OFF_COMMAND 12
#define SMB2_HDR_OFF_CREDITS 14
#define SMB2_HDR_OFF_FLAGS 16
#define SMB2_HDR_OFF_NEXT 20
#define SMB2_HDR_OFF_MSGID 24
#define SMB2_HDR_OFF_ASYNCID 32
#define SMB2_HDR_OFF_TREEID 36
#define SMB2_HDR_OFF_SESSID 40
#define SMB2_HDR_OFF_SIG 48

/* ---- transform header: MS-SMB2 2.2.41 ---- transform.c */
#define SMB2_TRANSFORM_HDR_LEN 52
struct smb2_transform_hdr {
  uint8_t signature[16];
  uint8_t nonce[16]; /* 11 (CCM) or 12 (GCM) significant bytes, rest zero */
  uint32_t orig_msg_size;
  uint16_t flags; /* 0x0001 Encrypted (3.1.1) / EncryptionAlgorithm (3.0) */
  uint64_t session_id;
};
void smb2_transform_hdr_encode(const struct smb2_transform_hdr *t, uint8_t out[SMB2_TRANSFORM_HDR_LEN]);
/* Checks ProtocolId 0xFD 'SMB' and that orig_msg_size == len - 52. */
int smb2_transform_hdr_decode(const uint8_t *p, size_t len, struct smb2_transform_hdr *t);

/* ---- error response: MS-SMB2 2.2.2 ---- error.c
 * Any response may carry this body instead of the command's own when status is an error
 * (except the few statuses that keep the normal body, e.g. STATUS_BUFFER_OVERFLOW on READ/
 * QUERY_INFO/IOCTL, STATUS_MORE_PROCESSING_REQUIRED on SESSION_SETUP). */
struct smb2_error_rsp {
  uint8_t context_count;
  uint32_t byte_count;
  const uint8_t *data; /* ErrorData, byte_count bytes (may be NULL when 0) */
};
int smb2_error_rsp_decode(const uint8_t *msg, size_t len, struct smb2_error_rsp *e);

/* ---- NEGOTIATE: MS-SMB2 2.2.3, 2.2.4, contexts 2.2.3.1 / 2.2.4.1 ---- negotiate.c */
enum smb2_dialect {
  SMB2_DIALECT_202 = 0x0202,
  SMB2_DIALECT_210 = 0x0210,
  SMB2_DIALECT_300 = 0x0300,
  SMB2_DIALECT_302 = 0x0302,
  SMB2_DIALECT_311 = 0x0311,
  SMB2_DIALECT_WILDCARD = 0x02FF,
};
enum smb2_security_mode { SMB2_NEGOTIATE_SIGNING_ENABLED = 0x0001, SMB2_NEGOTIATE_SIGNING_REQUIRED = 0x0002 };
enum smb2_global_caps {
  SMB2_GLOBAL_CAP_DFS = 0x01,
  SMB2_GLOBAL_CAP_LEASING = 0x02,
  SMB2_GLOBAL_CAP_LARGE_MTU = 0x04,
  SMB2_GLOBAL_CAP_MULTI_CHANNEL = 0x08,
  SMB2_GLOBAL_CAP_PERSISTENT_HANDLES = 0x10,
  SMB2_GLOBAL_CAP_DIRECTORY_LEASING = 0x20,
  SMB2_GLOBAL_CAP_ENCRYPTION = 0x40,
};
enum smb2_negctx_type {
  SMB2_PREAUTH_INTEGRITY_CAPABILITIES = 0x0001,
  SMB2_ENCRYPTION_CAPABILITIES = 0x0002,
  SMB2_COMPRESSION_CAPABILITIES = 0x0003,
  SMB2_NETNAME_NEGOTIATE_CONTEXT_ID = 0x0005,
  SMB2_TRANSPORT_CAPABILITIES = 0x0006,
  SMB2_RDMA_TRANSFORM_CAPABILITIES = 0x0007,
  SMB2_SIGNING_CAPABILITIES = 0x0008,
  /* Samba's SMB3 POSIX extensions (not in MS-SMB2): libcli/smb/smb2_constants.h, data = the
   * 16-byte POSIX create context tag, offered by the client and echoed by the server. */
  SMB2_POSIX_EXTENSIONS_AVAILABLE = 0x0100,
};
/* The POSIX tag: the negotiate context's data and the POSIX create context's name (Samba
 * libcli/smb/smb2_constants.h SMB2_CREATE_TAG_POSIX). */
#define SMB2_POSIX_TAG_LEN 16
extern const uint8_t smb2_posix_tag[SMB2_POSIX_TAG_LEN];
#define SMB2_PREAUTH_SHA512 0x0001
#define SMB2_MAX_DIALECTS 8
#define SMB2_MAX_CIPHERS 4
#define SMB2_MAX_SIGN_ALGS 4

struct smb2_negotiate_req {
  uint16_t security_mode;
  uint32_t capabilities;
  uint8_t client_guid[16];
  uint16_t dialect_count;
  uint16_t dialects[SMB2_MAX_DIALECTS];
  /* 3.1.1 contexts, sent only when dialects include 0x0311: */
  uint8_t preauth_salt[32]; /* SHA-512 preauth integrity context with this salt */
  uint16_t cipher_count;    /* ENCRYPTION_CAPABILITIES if > 0 */
  uint16_t ciphers[SMB2_MAX_CIPHERS];
  uint16_t sign_alg_count; /* SIGNING_CAPABILITIES if > 0 (ids as in crypto.h) */
  uint16_t sign_algs[SMB2_MAX_SIGN_ALGS];
  const char *netname; /* NETNAME context if non-NULL (UTF-8; encoded UTF-16LE) */
  int posix;           /* SMB2_POSIX_EXTENSIONS_AVAILABLE context with the POSIX tag */
};
int smb2_negotiate_req_encode(struct le_wr *w, const struct smb2_negotiate_req *r);

struct smb2_negotiate_rsp {
  uint16_t security_mode;
  uint16_t dialect;
  uint8_t server_guid[16];
  uint32_t capabilities;
  uint32_t max_transact_size;
  uint32_t max_read_size;
  uint32_t max_write_size;
  uint64_t system_time;
  uint64_t server_start_time;
  const uint8_t *sec_buf; /* SPNEGO hint (may be NULL) */
  uint16_t sec_len;
  /* 3.1.1 contexts (0 when absent): */
  uint16_t preauth_hash_alg;
  uint16_t cipher;   /* the one cipher the server chose, 0 if none */
  uint16_t sign_alg; /* the one signing algorithm the server chose, as a crypto.h id (wire 0 =
                        HMAC-SHA256 -> SMB3_SIGN_HMAC_SHA256); 0xFFFF if the context was absent */
  int posix;         /* the server answered SMB2_POSIX_EXTENSIONS_AVAILABLE with the POSIX tag */
};
int smb2_negotiate_rsp_decode(const uint8_t *msg, size_t len, struct smb2_negotiate_rsp *r);

/* ---- SESSION_SETUP: 2.2.5 / 2.2.6 ---- session_setup.c */
enum smb2_session_flags {
  SMB2_SESSION_FLAG_IS_GUEST = 0x1,
  SMB2_SESSION_FLAG_IS_NULL = 0x2,
  SMB2_SESSION_FLAG_ENCRYPT_DATA = 0x4
};
struct smb2_session_setup_req {
  uint8_t flags; /* SMB2_SESSION_FLAG_BINDING = 0x01 */
  uint8_t security_mode;
  uint32_t capabilities;
  uint64_t previous_session_id;
  const uint8_t *sec_buf;
  uint16_t sec_len;
};
int smb2_session_setup_req_encode(struct le_wr *w, const struct smb2_session_setup_req *r);
struct smb2_session_setup_rsp {
  uint16_t session_flags;
  const uint8_t *sec_buf;
  uint16_t sec_len;
};
int smb2_session_setup_rsp_decode(const uint8_t *msg, size_t len, struct smb2_session_setup_rsp *r);

/* ---- LOGOFF 2.2.7/2.2.8, TREE_DISCONNECT 2.2.11/2.2.12, ECHO 2.2.28/2.2.29: 4-byte bodies ---- simple.c */
int smb2_simple_req_encode(struct le_wr *w);                /* StructureSize 4, Reserved */
int smb2_simple_rsp_decode(const uint8_t *msg, size_t len); /* checks StructureSize 4 */

/* ---- TREE_CONNECT: 2.2.9 / 2.2.10 ---- tree_connect.c */
enum smb2_share_type { SMB2_SHARE_TYPE_DISK = 1, SMB2_SHARE_TYPE_PIPE = 2, SMB2_SHARE_TYPE_PRINT = 3 };
#define SMB2_SHAREFLAG_DFS 0x00000001u
#define SMB2_SHAREFLAG_DFS_ROOT 0x00000002u
#define SMB2_SHAREFLAG_ENCRYPT_DATA 0x00008000u
#define SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY 0x10u
struct smb2_tree_connect_req {
  const char *path; /* UTF-8 "\\\\host\\share"; encoded as UTF-16LE */
};
int smb2_tree_connect_req_encode(struct le_wr *w, const struct smb2_tree_connect_req *r);
struct smb2_tree_connect_rsp {
  uint8_t share_type;
  uint32_t share_flags;
  uint32_t capabilities;
  uint32_t maximal_access;
};
int smb2_tree_connect_rsp_decode(const uint8_t *msg, size_t len, struct smb2_tree_connect_rsp *r);

/* ---- CREATE: 2.2.13 / 2.2.14, create contexts 2.2.13.2 / 2.2.14.2 ---- create.c */
struct smb2_file_id {
  uint64_t persistent;
  uint64_t volatile_;
};
#define SMB2_FILE_ID_RELATED ((struct smb2_file_id){UINT64_MAX, UINT64_MAX}) /* 3.2.4.1.4 */

enum smb2_oplock_level {
  SMB2_OPLOCK_LEVEL_NONE = 0x00,
  SMB2_OPLOCK_LEVEL_II = 0x01,
  SMB2_OPLOCK_LEVEL_EXCLUSIVE = 0x08,
  SMB2_OPLOCK_LEVEL_BATCH = 0x09,
  SMB2_OPLOCK_LEVEL_LEASE = 0xFF,
};
enum smb2_lease_state { SMB2_LEASE_READ = 0x1, SMB2_LEASE_HANDLE = 0x2, SMB2_LEASE_WRITE = 0x4 };
/* A v2 lease context's flags (2.2.13.2.10): the request carries a ParentLeaseKey. */
#define SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET 0x4u
/* Access masks (MS-SMB2 2.2.13.1) */
#define SMB2_FILE_READ_DATA 0x00000001u
#define SMB2_FILE_LIST_DIRECTORY 0x00000001u
#define SMB2_FILE_WRITE_DATA 0x00000002u
#define SMB2_FILE_ADD_FILE 0x00000002u
#define SMB2_FILE_APPEND_DATA 0x00000004u
#define SMB2_FILE_READ_EA 0x00000008u
#define SMB2_FILE_WRITE_EA 0x00000010u
#define SMB2_FILE_EXECUTE 0x00000020u
#define SMB2_FILE_TRAVERSE 0x00000020u
#define SMB2_FILE_DELETE_CHILD 0x00000040u
#define SMB2_FILE_READ_ATTRIBUTES 0x00000080u
#define SMB2_FILE_WRITE_ATTRIBUTES 0x00000100u
#define SMB2_DELETE 0x00010000u
#define SMB2_READ_CONTROL 0x00020000u
#define SMB2_WRITE_DAC 0x00040000u
#define SMB2_WRITE_OWNER 0x00080000u
#define SMB2_SYNCHRONIZE 0x00100000u
#define SMB2_MAXIMUM_ALLOWED 0x02000000u
#define SMB2_GENERIC_ALL 0x10000000u
#define SMB2_GENERIC_EXECUTE 0x20000000u
#define SMB2_GENERIC_WRITE 0x40000000u
#define SMB2_GENERIC_READ 0x80000000u
/* ShareAccess */
#define SMB2_FILE_SHARE_READ 0x1u
#define SMB2_FILE_SHARE_WRITE 0x2u
#define SMB2_FILE_SHARE_DELETE 0x4u
#define SMB2_FILE_SHARE_ALL 0x7u
/* CreateDisposition */
enum smb2_create_disposition {
  SMB2_FILE_SUPERSEDE = 0,
  SMB2_FILE_OPEN = 1,
  SMB2_FILE_CREATE = 2,
  SMB2_FILE_OPEN_IF = 3,
  SMB2_FILE_OVERWRITE = 4,
  SMB2_FILE_OVERWRITE_IF = 5,
};
/* CreateOptions */
#define SMB2_FILE_DIRECTORY_FILE 0x00000001u
#define SMB2_FILE_WRITE_THROUGH 0x00000002u
#define SMB2_FILE_SEQUENTIAL_ONLY 0x00000004u
#define SMB2_FILE_NON_DIRECTORY_FILE 0x00000040u
#define SMB2_FILE_DELETE_ON_CLOSE 0x00001000u
#define SMB2_FILE_OPEN_REPARSE_POINT 0x00200000u
/* CreateAction */
enum smb2_create_action {
  SMB2_FILE_SUPERSEDED = 0,
  SMB2_FILE_OPENED = 1,
  SMB2_FILE_CREATED = 2,
  SMB2_FILE_OVERWRITTEN = 3
};
/* File attributes (MS-FSCC 2.6) */
#define SMB2_FILE_ATTRIBUTE_READONLY 0x00000001u
#define SMB2_FILE_ATTRIBUTE_HIDDEN 0x00000002u
#define SMB2_FILE_ATTRIBUTE_SYSTEM 0x00000004u
#define SMB2_FILE_ATTRIBUTE_DIRECTORY 0x00000010u
#define SMB2_FILE_ATTRIBUTE_ARCHIVE 0x00000020u
#define SMB2_FILE_ATTRIBUTE_NORMAL 0x00000080u
#define SMB2_FILE_ATTRIBUTE_REPARSE_POINT 0x00000400u

struct smb2_lease {
  uint8_t key[16];
  uint32_t state; /* SMB2_LEASE_* */
  uint32_t flags; /* response: SMB2_LEASE_FLAG_BREAK_IN_PROGRESS 0x2; request v2:
                     SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET */
  uint8_t parent_key[16];
  uint16_t epoch;
  int version; /* 1 or 2; 0 = no lease context */
};

/* The times, sizes and attributes a CREATE response (2.2.14) and a CLOSE response with
 * POSTQUERY_ATTRIB (2.2.16) carry, in this order on the wire (the layout of MS-FSCC 2.4.29
 * FileNetworkOpenInformation without its Reserved field). Decoded by wire_get_file_attrs. */
struct smb2_file_attrs {
  uint64_t creation_time, last_access_time, last_write_time, change_time; /* FILETIME */
  uint64_t allocation_size;
  uint64_t end_of_file;
  uint32_t file_attributes;
};

struct smb2_create_req {
  uint8_t oplock_level;   /* SMB2_OPLOCK_LEVEL_*; LEASE with lease.version != 0 */
  uint32_t impersonation; /* 2 = Impersonation */
  uint32_t desired_access;
  uint32_t file_attributes;
  uint32_t share_access;
  uint32_t create_disposition;
  uint32_t create_options;
  const char *name;        /* UTF-8 path relative to the share, '\\' or '/' separators (encoder converts
                              '/' to '\\' and drops leading separators); "" for the share root. With
                              posix_paths: '/' separators only, sent as they are ('\\' is a name's
                              character, as on the server's disk) */
  struct smb2_lease lease; /* "RqLs" context when version is 1 or 2 */
  int want_maximal_access; /* "MxAc" context */
  int want_disk_id;        /* "QFid" context */
  int posix;               /* the POSIX context (only on a connection that negotiated POSIX) */
  uint32_t posix_mode;     /* its mode: permission bits (07777) for a file the CREATE makes */
  int posix_paths;         /* a POSIX share: Samba parses a POSIX CREATE's name with '/' separators */
  int sfm_names;           /* not posix_paths: the characters Windows reserves go as SFM's (utf16.h) */
};
int smb2_create_req_encode(struct le_wr *w, const struct smb2_create_req *r);

struct smb2_create_rsp {
  uint8_t oplock_level;
  uint8_t flags;
  uint32_t create_action;
  struct smb2_file_attrs attrs;
  struct smb2_file_id file_id;
  struct smb2_lease lease; /* version 0 when no "RqLs" response context */
  int have_maximal_access;
  uint32_t maximal_access;
  int have_disk_id;
  uint64_t disk_file_id; /* first 8 bytes of the QFid DiskFileId */
  int have_posix;        /* a POSIX response context (lib/fscc/posix.c) */
  struct fscc_posix_cc posix;
};
int smb2_create_rsp_decode(const uint8_t *msg, size_t len, struct smb2_create_rsp *r);

/* ---- CLOSE: 2.2.15 / 2.2.16 ---- close.c */
#define SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB 0x0001
struct smb2_close_req {
  uint16_t flags;
  struct smb2_file_id file_id;
};
int smb2_close_req_encode(struct le_wr *w, const struct smb2_close_req *r);
struct smb2_close_rsp {
  uint16_t flags;
  struct smb2_file_attrs attrs; /* zeros unless flags has POSTQUERY_ATTRIB */
};
int smb2_close_rsp_decode(const uint8_t *msg, size_t len, struct smb2_close_rsp *r);

/* ---- LOCK: 2.2.26 (the response, 2.2.27, has the 4-byte shape: smb2_simple_rsp_decode) ---- lock.c */
#define SMB2_LOCKFLAG_SHARED_LOCK 0x01u
#define SMB2_LOCKFLAG_EXCLUSIVE_LOCK 0x02u
#define SMB2_LOCKFLAG_UNLOCK 0x04u
#define SMB2_LOCKFLAG_FAIL_IMMEDIATELY 0x10u
struct smb2_lock_element {
  uint64_t offset, length;
  uint32_t flags;
};
int smb2_lock_req_encode(struct le_wr *w, struct smb2_file_id file_id, const struct smb2_lock_element *locks,
                         uint16_t n);

/* ---- FLUSH: 2.2.17 / 2.2.18 ---- flush.c */
int smb2_flush_req_encode(struct le_wr *w, struct smb2_file_id file_id);
int smb2_flush_rsp_decode(const uint8_t *msg, size_t len);

/* ---- READ: 2.2.19 / 2.2.20 ---- read.c */
#define SMB2_READ_RSP_FIXED 16 /* body bytes before the data, so header+fixed = 80 */
struct smb2_read_req {
  uint8_t flags;
  uint32_t length;
  uint64_t offset;
  struct smb2_file_id file_id;
  uint32_t minimum_count;
  uint32_t remaining_bytes;
};
int smb2_read_req_encode(struct le_wr *w, const struct smb2_read_req *r);
struct smb2_read_rsp {
  uint8_t data_offset;
  uint32_t data_length;
  uint32_t data_remaining;
  const uint8_t *data; /* points into msg */
};
int smb2_read_rsp_decode(const uint8_t *msg, size_t len, struct smb2_read_rsp *r);
/* Decode only the first 80 bytes (header + fixed part) of a READ response whose data is not
 * (yet) in memory, for zero-copy receive: checks StructureSize and that data_offset >= 80 and
 * data_offset + data_length <= msg_len (the whole message length from the frame). r->data points
 * into head only when all the data is already there, else it is NULL. */
int smb2_read_rsp_decode_head(const uint8_t *head, size_t head_len, size_t msg_len, struct smb2_read_rsp *r);

/* ---- WRITE: 2.2.21 / 2.2.22 ---- write.c
 * The encoder writes the 48-byte fixed part with DataOffset = 64 + 48 = 0x70; the payload
 * (length bytes) is sent separately from the caller's buffer right after it. */
#define SMB2_WRITE_REQ_FIXED 48
struct smb2_write_req {
  uint32_t length;
  uint64_t offset;
  struct smb2_file_id file_id;
  uint32_t remaining_bytes;
  uint32_t flags; /* SMB2_WRITEFLAG_WRITE_THROUGH 0x1 */
};
int smb2_write_req_encode(struct le_wr *w, const struct smb2_write_req *r);
struct smb2_write_rsp {
  uint32_t count;
  uint32_t remaining;
};
int smb2_write_rsp_decode(const uint8_t *msg, size_t len, struct smb2_write_rsp *r);

/* ---- QUERY_INFO: 2.2.37 / 2.2.38 ---- query_info.c */
enum smb2_info_type {
  SMB2_0_INFO_FILE = 1,
  SMB2_0_INFO_FILESYSTEM = 2,
  SMB2_0_INFO_SECURITY = 3,
  SMB2_0_INFO_QUOTA = 4
};
struct smb2_query_info_req {
  uint8_t info_type;
  uint8_t file_info_class;
  uint32_t output_buffer_length;
  uint32_t additional_information;
  uint32_t flags;
  struct smb2_file_id file_id;
  const uint8_t *input; /* optional input buffer */
  uint32_t input_len;
};
int smb2_query_info_req_encode(struct le_wr *w, const struct smb2_query_info_req *r);
struct smb2_query_info_rsp {
  const uint8_t *buf;
  uint32_t len;
};
int smb2_query_info_rsp_decode(const uint8_t *msg, size_t len, struct smb2_query_info_rsp *r);

/* ---- SET_INFO: 2.2.39 / 2.2.40 ---- set_info.c */
struct smb2_set_info_req {
  uint8_t info_type;
  uint8_t file_info_class;
  uint32_t additional_information;
  struct smb2_file_id file_id;
  const uint8_t *buf;
  uint32_t len;
};
int smb2_set_info_req_encode(struct le_wr *w, const struct smb2_set_info_req *r);
int smb2_set_info_rsp_decode(const uint8_t *msg, size_t len);

/* ---- QUERY_DIRECTORY: 2.2.33 / 2.2.34 ---- query_dir.c */
#define SMB2_RESTART_SCANS 0x01
#define SMB2_RETURN_SINGLE_ENTRY 0x02
#define SMB2_INDEX_SPECIFIED 0x04
#define SMB2_REOPEN 0x10
struct smb2_query_dir_req {
  uint8_t file_info_class;
  uint8_t flags;
  uint32_t file_index;
  struct smb2_file_id file_id;
  uint32_t output_buffer_length;
  const char *pattern; /* UTF-8, e.g. "*"; NULL or "" is sent as "*" */
};
int smb2_query_dir_req_encode(struct le_wr *w, const struct smb2_query_dir_req *r);
struct smb2_query_dir_rsp {
  const uint8_t *buf;
  uint32_t len;
};
int smb2_query_dir_rsp_decode(const uint8_t *msg, size_t len, struct smb2_query_dir_rsp *r);

/* ---- IOCTL: 2.2.31 / 2.2.32 ---- ioctl.c */
#define SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO 0x00140204u
#define SMB2_FSCTL_SRV_REQUEST_RESUME_KEY 0x00140078u
#define SMB2_FSCTL_SRV_COPYCHUNK_WRITE 0x001480F2u
#define SMB2_FSCTL_SET_ZERO_DATA 0x000980C8u          /* input: FILE_ZERO_DATA_INFORMATION (MS-FSCC 2.3.85) */
#define SMB2_FSCTL_QUERY_ALLOCATED_RANGES 0x000940CFu /* MS-FSCC 2.3.37/2.3.38 */
#define SMB2_FSCTL_SET_SPARSE 0x000900C4u             /* no input: SetSparse = TRUE (MS-FSCC 2.3.64) */
#define SMB2_FSCTL_SET_REPARSE_POINT 0x000900A4u      /* MS-FSCC 2.3.65: input a reparse data buffer */
#define SMB2_FSCTL_GET_REPARSE_POINT 0x000900A8u      /* MS-FSCC 2.3.29/2.3.30: output one */
#define SMB2_FSCTL_DFS_GET_REFERRALS 0x00060194u      /* MS-DFSC 2.2.2/2.2.4 through MS-SMB2 2.2.31 */
#define SMB2_0_IOCTL_IS_FSCTL 0x00000001u
struct smb2_ioctl_req {
  uint32_t ctl_code;
  struct smb2_file_id file_id;
  const uint8_t *input;
  uint32_t input_len;
  uint32_t max_output_response;
  uint32_t flags;
};
int smb2_ioctl_req_encode(struct le_wr *w, const struct smb2_ioctl_req *r);
struct smb2_ioctl_rsp {
  uint32_t ctl_code;
  struct smb2_file_id file_id;
  const uint8_t *output;
  uint32_t output_len;
};
int smb2_ioctl_rsp_decode(const uint8_t *msg, size_t len, struct smb2_ioctl_rsp *r);
/* Server-side copy: SRV_REQUEST_RESUME_KEY output (2.2.32.3), SRV_COPYCHUNK_COPY input (2.2.31.1)
 * and SRV_COPYCHUNK_RESPONSE output (2.2.32.1). */
#define SMB2_RESUME_KEY_LEN 24
#define SMB2_COPYCHUNK_MAX 64 /* chunks we ever put in one request */
struct smb2_copychunk {
  uint64_t src_off, dst_off;
  uint32_t len;
};
int smb2_resume_key_decode(const uint8_t *p, size_t len, uint8_t key[SMB2_RESUME_KEY_LEN]);
int smb2_copychunk_encode(struct le_wr *w, const uint8_t key[SMB2_RESUME_KEY_LEN],
                          const struct smb2_copychunk *c, int n);
/* On success: what was copied. With STATUS_INVALID_PARAMETER: the server's limits (most chunks per
 * request, bytes per chunk, bytes per request). */
struct smb2_copychunk_rsp {
  uint32_t chunks_written, chunk_bytes_written, total_bytes_written;
};
int smb2_copychunk_rsp_decode(const uint8_t *p, size_t len, struct smb2_copychunk_rsp *r);
/* FSCTL_QUERY_ALLOCATED_RANGES output (MS-FSCC 2.3.38): FILE_ALLOCATED_RANGE_BUFFERs, ascending and
 * not overlapping (checked). At most max go to out; *n is how many. */
struct smb2_range {
  uint64_t off, len;
};
int smb2_alloc_ranges_decode(const uint8_t *p, size_t len, struct smb2_range *out, size_t max, size_t *n);
/* VALIDATE_NEGOTIATE_INFO request input (2.2.31.4) and response output (2.2.32.6). */
struct smb2_validate_negotiate {
  uint32_t capabilities;
  uint8_t guid[16];
  uint16_t security_mode;
  uint16_t dialect;       /* response */
  uint16_t dialect_count; /* request */
  uint16_t dialects[SMB2_MAX_DIALECTS];
};
int smb2_validate_negotiate_encode(struct le_wr *w, const struct smb2_validate_negotiate *v);
int smb2_validate_negotiate_decode(const uint8_t *p, size_t len, struct smb2_validate_negotiate *v);

/* ---- OPLOCK_BREAK: notifications 2.2.23.1/2.2.23.2, acks 2.2.24.1/2.2.24.2, responses 2.2.25.x ----
 * oplock_break.c */
struct smb2_break {
  int is_lease; /* 0: oplock break (StructureSize 24); 1: lease break (StructureSize 44) */
  /* oplock */
  uint8_t oplock_level;
  struct smb2_file_id file_id;
  /* lease */
  uint16_t new_epoch;
  uint32_t flags; /* SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED 0x01 */
  uint8_t lease_key[16];
  uint32_t current_state;
  uint32_t new_state;
};
/* Decodes a server-initiated break notification (MessageId 0xFFFFFFFFFFFFFFFF: StructureSize
 * 24 oplock, 44 lease) or the response to our acknowledgment (24 oplock, 2.2.25.1; 36 lease,
 * 2.2.25.2, whose granted LeaseState lands in new_state, current_state and new_epoch 0). */
int smb2_break_decode(const uint8_t *msg, size_t len, struct smb2_break *b);
int smb2_oplock_ack_encode(struct le_wr *w, uint8_t level, struct smb2_file_id file_id);
int smb2_lease_ack_encode(struct le_wr *w, const uint8_t key[16], uint32_t state);

/* ---- which StructureSize each response must have (table) ---- hdr.c */
/* Returns the expected response StructureSize for a command, or 0 if unknown. */
uint16_t smb2_rsp_structure_size(uint16_t command);

/* ---- DFS referrals: MS-DFSC 2.2.2 REQ_GET_DFS_REFERRAL, 2.2.4 RESP_GET_DFS_REFERRAL ---- dfs.c */
#define DFS_REFERRAL_MAX 16         /* entries kept of one response (more are ignored) */
#define DFS_SERVER_TYPE_ROOT 0x0001 /* 2.2.5.x ServerType: root targets */
#define DFS_ENTRY_NAME_LIST 0x0002  /* ReferralEntryFlags NameListReferral (v3/v4) */
#define DFS_ENTRY_TARGET_SET 0x0004 /* ReferralEntryFlags TargetSetBoundary (v4) */
#define DFS_HDR_REFERRAL_SERVERS 0x1u
#define DFS_HDR_STORAGE_SERVERS 0x2u
#define DFS_HDR_TARGET_FAILBACK 0x4u
struct smb2_dfs_target {
  uint16_t server_type, flags;
  uint32_t ttl;  /* seconds (v1 has none: 0) */
  char *path;    /* DFSPath (v2+) or SpecialName (name list); "" when absent; UTF-8, malloc'd */
  char *address; /* NetworkAddress "\\server\share[\path]" (v1: ShareName; name list: the first
                  * expanded name, "" when none); UTF-8, malloc'd */
};
struct smb2_dfs_referral {
  uint16_t path_consumed; /* bytes of the UTF-16 request path the referral covers */
  uint16_t version;       /* of every entry (2.2.5: all entries have the same) */
  uint32_t header_flags;  /* DFS_HDR_* */
  int n;                  /* entries decoded, <= DFS_REFERRAL_MAX */
  struct smb2_dfs_target t[DFS_REFERRAL_MAX];
};
/* REQ_GET_DFS_REFERRAL: MaxReferralLevel, then path (UTF-8, '/' or '\\' separated; written as
 * UTF-16LE with '\\' and a NUL terminator). Returns 0 or SMB3_EINVAL / SMB3_ENOMEM. */
int smb2_dfs_referral_req_encode(struct le_wr *w, const char *path, uint16_t max_level);
/* The IOCTL output p/len as RESP_GET_DFS_REFERRAL with v1..v4 entries. Every entry's Size and
 * string offsets are checked against the buffer, strings must be NUL-terminated inside it, and all
 * entries must have one version. On success r holds malloc'd strings: smb2_dfs_referral_free().
 * On error r holds nothing. Returns 0, SMB3_EPROTO or SMB3_ENOMEM. */
int smb2_dfs_referral_decode(const uint8_t *p, size_t len, struct smb2_dfs_referral *r);
void smb2_dfs_referral_free(struct smb2_dfs_referral *r);

#endif
