/* version.c - the library's version string. SMB3_VERSION_STRING is CMake's project() version,
 * defined for every target by the top-level CMakeLists.txt, so the library, smb3 and smb3fs
 * built from one tree report the same number. */
#include "smb3/smb3.h"

#ifndef SMB3_VERSION_STRING
#error "SMB3_VERSION_STRING must be defined by the build (CMakeLists.txt: project() VERSION)"
#endif

const char *smb3_version(void) {
  return SMB3_VERSION_STRING;
}
