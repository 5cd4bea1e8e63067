/* utf16.h - bounded UTF-8 <-> UTF-16LE conversion for names and strings on the wire.
 *
 * SMB2 and NTLMSSP carry strings as UTF-16LE without a terminator; the API works with UTF-8.
 * Both converters validate strictly: no overlong UTF-8, no encoded surrogates, nothing above
 * U+10FFFF, no unpaired UTF-16 surrogates. Embedded NULs are passed through unchanged.
 */
#ifndef SMB3_UTF16_H
#define SMB3_UTF16_H

#include <stddef.h>
#include <stdint.h>

/* Largest input either converter accepts (bytes); longer input gives SMB3_ERANGE. Far above
 * anything SMB needs (a path is at most 32767 UTF-16 code units), small enough that no size
 * computation can overflow. */
#define SMB3_UTF_MAX_INPUT ((size_t)1 << 24)

/* UTF-8 (s, len bytes, need not be NUL-terminated) -> UTF-16LE.
 * On success *out is malloc'd (caller frees; never NULL, even for len == 0) and *outlen is its
 * length in bytes (always even, no terminator). Returns 0, SMB3_EINVAL for invalid UTF-8 or
 * NULL arguments, SMB3_ERANGE if len > SMB3_UTF_MAX_INPUT, SMB3_ENOMEM. On error *out is NULL. */
int smb3_utf8_to_utf16le(const char *s, size_t len, uint8_t **out, size_t *outlen);

/* UTF-16LE (p, len bytes, typically from the server) -> UTF-8.
 * On success *out is malloc'd (caller frees) and NUL-terminated; *outlen (may be NULL) receives
 * the length without the terminator. Returns 0, SMB3_EPROTO for an odd length or an unpaired
 * surrogate, SMB3_EINVAL for NULL arguments, SMB3_ERANGE if len > SMB3_UTF_MAX_INPUT,
 * SMB3_ENOMEM. On error *out is NULL. */
int smb3_utf16le_to_utf8(const uint8_t *p, size_t len, char **out, size_t *outlen);

/* Upper-case one UTF-16 code unit the way NTLM needs for user names (MS-NLMP 3.3.2 NTOWFv2).
 * Coverage: ASCII, Latin-1 Supplement, Latin Extended-A, basic Greek and basic Cyrillic.
 * Other characters (and anything whose simple upper case lies outside the BMP block it came
 * from) are returned unchanged; Windows' full upcase table is larger, so exotic user names
 * may hash differently than on Windows. */
uint16_t smb3_utf16_upper(uint16_t c);

/* Upper-case a UTF-16LE buffer in place with smb3_utf16_upper (len bytes; an odd last byte is
 * left untouched). Surrogate pairs are left unchanged. */
void smb3_utf16le_upper(uint8_t *p, size_t len);

/* Names POSIX allows and SMB does not: the characters Windows reserves in a file name (control
 * characters U+0001..U+001F and " * : < > ? |) travel as the private-use code points of Services
 * for Macintosh (U+F001..U+F01F, then U+F020 " U+F021 * U+F022 : U+F023 < U+F024 > U+F025 ?
 * U+F027 |), the mapping macOS and the kernel cifs client ('mapposix', its default) use, so a name
 * one of them stores reads back the same through the others. '\\' is not mapped (it is the
 * separator); trailing spaces and periods are not either (Samba keeps them as they are).
 * smb3_sfm_map rewrites UTF-16LE in place (len bytes); smb3_sfm_unmap rewrites UTF-8 in place
 * (len bytes, the three-byte form of each mapped code point becomes its one-byte character) and
 * returns the new length, keeping a terminator at s[len] if there was one. */
void smb3_sfm_map(uint8_t *p, size_t len);
size_t smb3_sfm_unmap(char *s, size_t len);

#endif
