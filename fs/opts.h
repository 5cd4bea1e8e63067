/* opts.h - the command line and -o options of smb3fs (opts.c). */
#ifndef SMB3FS_OPTS_H
#define SMB3FS_OPTS_H

#include "smb3/smb3.h"

/* The command line split into what libsmb3 and what libfuse take. */
struct fs_args {
  const char *source; /* //HOST/SHARE[/path] or smb://... */
  const char *mountpoint;
  int foreground, debug;
  char *fuse_opts; /* comma-separated options for libfuse (malloc'd) */
};
/* 0; 2, a usage error (err says which); 1, out of memory. The exit status smb3fs then ends with. */
int fs_parse_args(int argc, char **argv, struct fs_args *a, struct smb3_options *o, char *err, size_t errlen);

#endif
