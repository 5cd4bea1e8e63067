/* mfsymlink.c - Minshall+French symlink files: how the kernel's cifs client (mount option
 * mfsymlinks) stores a symbolic link on a server that has none. A regular file of exactly
 * SMB3_MFSYMLINK_SIZE (1067) bytes: "XSym\n", the target's length as four decimal digits and "\n",
 * the MD5 of the target as 32 lowercase hex digits and "\n", the target (1 to 1024 bytes), "\n" if
 * there is room, then spaces. The decoder reads untrusted file content: every field is checked,
 * and the digest must match, so that a file that only looks like one stays a file. */
#include <stdio.h>
#include <string.h>

#include "crypto/crypto.h"
#include "smb3/smb3.h"

#define LEN_OFF 5
#define MD5_OFF 10
#define TARGET_OFF 43

static int md5_hex(const void *s, size_t n, char out[33]) {
  uint8_t md[16];
  if (smb3_md5(s, n, md)) return SMB3_EIO;
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
  return 0;
}

int smb3_mfsymlink_format(const char *target, uint8_t buf[SMB3_MFSYMLINK_SIZE]) {
  size_t n = target ? strlen(target) : 0;
  if (n == 0) return SMB3_EINVAL;
  if (n > SMB3_MFSYMLINK_MAX) return SMB3_ENAMETOOLONG;
  char hex[33], head[TARGET_OFF + 1];
  if (md5_hex(target, n, hex)) return SMB3_EIO;
  snprintf(head, sizeof head, "XSym\n%04zu\n%s\n", n, hex);
  memset(buf, ' ', SMB3_MFSYMLINK_SIZE);
  memcpy(buf, head, TARGET_OFF);
  memcpy(buf + TARGET_OFF, target, n);
  if (TARGET_OFF + n < SMB3_MFSYMLINK_SIZE) buf[TARGET_OFF + n] = '\n';
  return 0;
}

int smb3_mfsymlink_parse(const uint8_t *buf, size_t len, char target[SMB3_MFSYMLINK_MAX + 1]) {
  if (!buf || len != SMB3_MFSYMLINK_SIZE || memcmp(buf, "XSym\n", 5) || buf[MD5_OFF - 1] != '\n' ||
      buf[TARGET_OFF - 1] != '\n')
    return SMB3_EPROTO;
  size_t n = 0;
  for (int i = LEN_OFF; i < LEN_OFF + 4; i++) {
    if (buf[i] < '0' || buf[i] > '9') return SMB3_EPROTO;
    n = n * 10 + (size_t)(buf[i] - '0');
  }
  if (n == 0 || n > SMB3_MFSYMLINK_MAX || memchr(buf + TARGET_OFF, 0, n)) return SMB3_EPROTO;
  char hex[33];
  if (md5_hex(buf + TARGET_OFF, n, hex)) return SMB3_EIO;
  if (memcmp(hex, buf + MD5_OFF, 32)) return SMB3_EPROTO;
  memcpy(target, buf + TARGET_OFF, n);
  target[n] = 0;
  return (int)n;
}
