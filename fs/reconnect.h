/* reconnect.h - the reconnect thread (reconnect.c). */
#ifndef SMB3FS_RECONNECT_H
#define SMB3FS_RECONNECT_H

#include "mount.h"

int reconnect_start(struct fs_ctx *fs);
/* Stops the thread (fs_park refuses from then on); reconnect_free once fs->c is disconnected. */
void reconnect_stop(struct fs_ctx *fs);
void reconnect_free(struct fs_ctx *fs);

#endif
