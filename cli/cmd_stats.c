/* cmd_stats.c - smb3 stats MOUNTPOINT: the counters of a mounted smb3fs as JSON (the keys of
 * smb3_stats_json() plus smb3fs' read-ahead and write-back counts), read with the private
 * SMB3FS_IOC_STATS ioctl on the mount's root directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../fs/smb3fs_ioctl.h"
#include "cli.h"

int cmd_stats(struct cli *cli, int argc, char **argv) {
  (void)cli;
  (void)argc;
  int fd = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return cli_error("stats", "%s: %s", argv[0], strerror(errno));
  char *buf = calloc(1, SMB3FS_STATS_MAX);
  if (!buf) {
    close(fd);
    return cli_error("stats", "out of memory");
  }
  int rc = ioctl(fd, SMB3FS_IOC_STATS, buf);
  int err = errno;
  close(fd);
  if (rc < 0) {
    free(buf);
    if (err == ENOTTY || err == ENOSYS || err == EINVAL)
      return cli_error("stats", "%s: not the root of an smb3fs mount", argv[0]);
    return cli_error("stats", "%s: %s", argv[0], strerror(err));
  }
  buf[SMB3FS_STATS_MAX - 1] = 0;
  printf("%s\n", buf);
  free(buf);
  return 0;
}
