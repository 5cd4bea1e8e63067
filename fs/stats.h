/* stats.h - the mount's counters as JSON (stats.c), for the stats ioctl. */
#ifndef SMB3FS_STATS_H
#define SMB3FS_STATS_H

#include "mount.h"

char *stats_json(struct fs_ctx *fs);

#endif
