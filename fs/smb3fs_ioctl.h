/* smb3fs_ioctl.h - the private ioctl that reads a mount's counters (`smb3 stats MOUNTPOINT`).
 *
 * Issued on a file descriptor of the mount's root directory (open(MOUNTPOINT, O_RDONLY)); the
 * answer is a NUL-terminated JSON object: the keys of smb3_stats_json() plus smb3fs' own
 * read-ahead/write-back counters. An ioctl (rather than a getxattr or a file) adds nothing to
 * the share's namespace, and it lets smb3fs leave getxattr unimplemented: the kernel then stops
 * asking for security.capability before every write, which would otherwise cost one extra
 * FUSE round trip per write(2). Shared by fs/ and cli/; no FUSE headers needed. */
#ifndef SMB3FS_IOCTL_H
#define SMB3FS_IOCTL_H

#include <sys/ioctl.h>

#define SMB3FS_STATS_MAX 8192 /* _IOC_SIZE is 14 bits; FUSE copies out exactly this much */
#define SMB3FS_IOC_STATS _IOR('S', 0x33, char[SMB3FS_STATS_MAX])
/* `smb3fs SOURCE MOUNTPOINT -o remount,...` (mount -o remount through mount.fuse.smb3fs): the options
 * a running mount can change, NUL-terminated and comma-separated ("ro", "rw", "actimeo=N"), from root
 * or the user who mounted it; EINVAL for anything else. */
#define SMB3FS_REMOUNT_MAX 256
#define SMB3FS_IOC_REMOUNT _IOW('S', 0x34, char[SMB3FS_REMOUNT_MAX])

#endif
