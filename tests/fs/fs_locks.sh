#!/usr/bin/env bash
# Byte-range locks: fcntl(2) POSIX locks and flock(2) on smb3fs are SMB2 locks at the server, so
# two mounts of one share (two clients) see each other's; locks of processes on one mount are
# decided by the mount; split, convert, whole-file, F_GETLK, F_SETLKW (waits, interruptible),
# release at close, taken again after a reconnect; data written under a lock is on the server when it is unlocked. With nobrl the
# kernel keeps them, on this machine only. The checks are in fs_locks.py.
source "$(dirname "$0")/lib.sh"
command -v ss >/dev/null || { echo "ss (iproute2) missing"; exit 77; }
mount_into M1
mount_into M2
mount_into N1 nobrl
mount_into N2 nobrl
if LOCK_UID=$(id -u "$SMB3_TEST_USER") "$PYTHON" "$(dirname "$0")/fs_locks.py" "$M1" "$M2" "$N1" "$N2" "$SMB3_TEST_SHARE_DIR" "$SMB3_TEST_PORT" "$SMB3" >"$WORK/py" 2>&1; then
  ok "lock checks: $(grep -c '^ok' "$WORK/py") passed"
else
  bad "lock checks:"
fi
cat "$WORK/py"
finish
