#!/usr/bin/env bash
# Leases under cache=strict: a second client (smbclient) changes a file the mount has in the
# kernel's page cache, and the next read through the mount sees the new bytes -- after a close
# (the next open's version check), and while the file stays open (lease break: invalidate, ack).
# Also: dirty write-back data is flushed when another client opens the file (W lease break).
source "$(dirname "$0")/lib.sh"
command -v smbclient >/dev/null || { echo "smbclient missing"; exit 77; }
D=$SMB3_TEST_SHARE_DIR
smbc() { smbclient "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" -p "$SMB3_TEST_PORT" -U "$SMB3_TEST_USER%$SMB3_TEST_PASS" -c "$1" >/dev/null 2>&1; }
mount_into M
printf 'AAAAAAAAAAAAAAAA' >"$WORK/a"; printf 'BBBBBBBBBBBBBBBB' >"$WORK/b"; printf 'CCCCCCCCCCCCCCCC' >"$WORK/c"
cp "$WORK/a" "$M/f"
expect "first read (cached)" "$(cat "$M/f")" "AAAAAAAAAAAAAAAA"
expect "second read (from the page cache)" "$(cat "$M/f")" "AAAAAAAAAAAAAAAA"
check "second client overwrites (same size)" smbc "put $WORK/b f"
expect "read after another client's write, file closed meanwhile" "$(cat "$M/f")" "BBBBBBBBBBBBBBBB"

# The file stays open (and cached) through the mount while the other client writes.
"$PYTHON" - "$M" "$WORK/c" "$SMB3_TEST_HOST" "$SMB3_TEST_PORT" "$SMB3_TEST_SHARE" "$SMB3_TEST_USER%$SMB3_TEST_PASS" "$SMB3" <<'PY' >"$WORK/py" 2>&1 \
  && ok "open file: read after a lease break sees the new bytes" || bad "open file: $(cat "$WORK/py")"
import json, os, subprocess, sys, time
m, newfile, host, port, share, cred, smb3 = sys.argv[1:]
fd = os.open(m + "/f", os.O_RDONLY)
assert os.pread(fd, 100, 0) == b"B" * 16
assert os.pread(fd, 100, 0) == b"B" * 16
def counter(k):
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)[k]
before = counter("invalidations")
subprocess.run(["smbclient", "//%s/%s" % (host, share), "-p", port, "-U", cred, "-c", "put %s f" % newfile],
               check=True, capture_output=True)
# The break may need no acknowledgment, so the other client need not wait for us: wait (without
# a time limit of our own) until the mount has processed it, then read.
while counter("invalidations") == before:
    time.sleep(0.05)
got = os.pread(fd, 100, 0)
assert got == b"C" * 16, got
os.close(fd)
PY
expect "lease breaks counted" "$(stats "$M" lease_breaks | "$PYTHON" -c 'import sys; print(int(sys.stdin.read()) > 0)')" True

# Dirty data in write-back while another client opens the file: the break flushes it.
"$PYTHON" - "$M" "$SMB3_TEST_HOST" "$SMB3_TEST_PORT" "$SMB3_TEST_SHARE" "$SMB3_TEST_USER%$SMB3_TEST_PASS" "$WORK/got" <<'PY' >"$WORK/py" 2>&1 \
  && ok "another client reads our unflushed writes (write lease break flushes)" || bad "write-back flush on break: $(cat "$WORK/py")"
import os, subprocess, sys
m, host, port, share, cred, got = sys.argv[1:]
fd = os.open(m + "/w", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b"x" * 5000)   # stays in write-back: no close, no fsync
subprocess.run(["smbclient", "//%s/%s" % (host, share), "-p", port, "-U", cred, "-c", "get w %s" % got],
               check=True, capture_output=True)
data = open(got, "rb").read()
os.close(fd)
assert data == b"x" * 5000, "the other client read %d bytes" % len(data)
PY
# cache=none never uses the page cache: always the server's bytes
fs_umount "$M"
mount_into M "cache=none"
cp "$WORK/a" "$D/g"; chown "$SMB3_TEST_USER:" "$D/g"
exec 5<"$M/g"
expect "cache=none: first read" "$("$PYTHON" -c "import os; print(os.pread(5, 100, 0).decode())")" "AAAAAAAAAAAAAAAA"
cp "$WORK/b" "$D/g"
expect "cache=none: read after a server-side change" "$("$PYTHON" -c "import os; print(os.pread(5, 100, 0).decode())")" "BBBBBBBBBBBBBBBB"
exec 5<&-
finish
