# fscheck.py - what the Python halves of the fs tests share: one "ok"/"FAIL" line per check, and
# the mount's counters (the stats ioctl: no process is started, so no descriptor is closed by it).
import fcntl, json, os

IOC_STATS = (2 << 30) | (8192 << 16) | (ord("S") << 8) | 0x33  # SMB3FS_IOC_STATS (fs/smb3fs_ioctl.h)


class Report:
    """report(name, got, want): prints the check's line under label; .failed counts the FAILs."""

    def __init__(self, label):
        self.label = label
        self.failed = 0

    def __call__(self, name, got, want):
        if got == want:
            print("ok   %s: %s" % (self.label, name))
        else:
            self.failed += 1
            print("FAIL %s: %s: got %r, want %r" % (self.label, name, got, want))


def mount_stats(mnt):
    fd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    buf = bytearray(8192)
    try:
        fcntl.ioctl(fd, IOC_STATS, buf)
    finally:
        os.close(fd)
    return json.loads(bytes(buf).split(b"\0")[0])


# For the checks written inline in a test's shell script (lib.sh exports FSCHECK_DIR, which such a
# script puts on sys.path): one line per check, as lib.sh counts them.
def check(name, cond, detail=""):
    print(("ok   %s" % name) if cond else ("FAIL %s%s" % (name, ": " + detail if detail else "")))


def lstat(path):
    """os.lstat, or None when there is no such file."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
