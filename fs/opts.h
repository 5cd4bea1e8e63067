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
  /* -o remount,...: change a running mount (main.c fs_remount) instead of mounting */
  int remount;
  char *remount_live;        /* for the daemon (SMB3FS_IOC_REMOUNT): "ro", "rw", "actimeo=N" (malloc'd) */
  unsigned long flags_set;   /* the kernel's mount flags to set (MS_*) ... */
  unsigned long flags_clear; /* ... and to clear */
  char *remount_fixed;       /* options given that a running mount cannot change (malloc'd) */
};
/* 0; 2, a usage error (err says which); 1, out of memory. The exit status smb3fs then ends with. */
int fs_parse_args(int argc, char **argv, struct fs_args *a, struct smb3_options *o, char *err, size_t errlen);
/* -o remount: tell the mount at a->mountpoint what changes (SMB3FS_IOC_REMOUNT), then its kernel flags
 * (mount(2) with MS_REMOUNT, root only). The exit status: 0, or 1 with a message on standard error. */
int fs_remount(const struct fs_args *a);

#endif
