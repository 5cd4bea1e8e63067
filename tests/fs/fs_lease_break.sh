#!/usr/bin/env bash
# Leases under cache=strict: a second client (smbclient) changes a file the mount has in the
# kernel's page cache, and the next read through the mount sees the new bytes -- after a close
# (the next open's version check), and while the file stays open (lease break: invalidate, ack).
# Also: dirty write-back data is flushed when another client opens the file (W lease break).
# The same with SMB 2.0.2, where the mount holds oplocks instead of leases. cache=none and
# cache=loose (another client's changes seen after actimeo).
source "$(dirname "$0")/lib.sh"
command -v smbclient >/dev/null || { echo "smbclient missing"; exit 77; }
D=$SMB3_TEST_SHARE_DIR
smbc() { smbclient "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" -p "$SMB3_TEST_PORT" -U "$SMB3_TEST_USER%$SMB3_TEST_PASS" -c "$1" >/dev/null 2>&1; }
# strict_checks NAME FILE [MOUNT OPTIONS]: the checks above on a fresh mount.
strict_checks() {
  local T=$1 F=$2 M
  mount_into M "${3:-}"
cp "$WORK/a" "$M/$F"
expect "$T: first read (cached)" "$(cat "$M/$F")" "AAAAAAAAAAAAAAAA"
R0=$(stats "$M" reads)
expect "$T: second read (from the page cache)" "$(cat "$M/$F")" "AAAAAAAAAAAAAAAA"
expect "$T: second read sent no READ" "$(stats "$M" reads)" "$R0"
check "$T: second client overwrites (same size)" smbc "put $WORK/b $F"
expect "$T: read after another client's write, file closed meanwhile" "$(cat "$M/$F")" "BBBBBBBBBBBBBBBB"

# The file stays open (and cached) through the mount while the other client writes.
"$PYTHON" - "$M/$F" "$WORK/c" "$SMB3_TEST_HOST" "$SMB3_TEST_PORT" "$SMB3_TEST_SHARE" "$SMB3_TEST_USER%$SMB3_TEST_PASS" "$SMB3" <<'PY' >"$WORK/py" 2>&1 \
  && ok "$T: open file: read after a break sees the new bytes" || bad "$T: open file: $(cat "$WORK/py")"
import json, os, subprocess, sys, time
path, newfile, host, port, share, cred, smb3 = sys.argv[1:]
m, name = os.path.split(path)
fd = os.open(path, os.O_RDONLY)
assert os.pread(fd, 100, 0) == b"B" * 16
assert os.pread(fd, 100, 0) == b"B" * 16
def counter(k):
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)[k]
before = counter("invalidations")
subprocess.run(["smbclient", "//%s/%s" % (host, share), "-p", port, "-U", cred, "-c", "put %s %s" % (newfile, name)],
               check=True, capture_output=True)
# The break may need no acknowledgment, so the other client need not wait for us: wait (without
# a time limit of our own) until the mount has processed it, then read.
while counter("invalidations") == before:
    time.sleep(0.05)
got = os.pread(fd, 100, 0)
assert got == b"C" * 16, got
os.close(fd)
PY
expect "$T: breaks counted" "$(stats "$M" lease_breaks | "$PYTHON" -c 'import sys; print(int(sys.stdin.read()) > 0)')" True

# Dirty data in write-back while another client opens the file: the break flushes it.
"$PYTHON" - "$M/$F.w" "$SMB3_TEST_HOST" "$SMB3_TEST_PORT" "$SMB3_TEST_SHARE" "$SMB3_TEST_USER%$SMB3_TEST_PASS" "$WORK/got" <<'PY' >"$WORK/py" 2>&1 \
  && ok "$T: another client reads our unflushed writes (the break flushes)" || bad "$T: write-back flush on break: $(cat "$WORK/py")"
import os, subprocess, sys
path, host, port, share, cred, got = sys.argv[1:]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b"x" * 5000)   # stays in write-back: no close, no fsync
subprocess.run(["smbclient", "//%s/%s" % (host, share), "-p", port, "-U", cred, "-c", "get %s %s" % (os.path.basename(path), got)],
               check=True, capture_output=True)
data = open(got, "rb").read()
os.close(fd)
assert data == b"x" * 5000, "the other client read %d bytes" % len(data)
PY
  fs_umount "$M"
}
printf 'AAAAAAAAAAAAAAAA' >"$WORK/a"; printf 'BBBBBBBBBBBBBBBB' >"$WORK/b"; printf 'CCCCCCCCCCCCCCCC' >"$WORK/c"
strict_checks "leases (3.1.1)" f
strict_checks "oplocks (2.0.2)" f202 vers=2.0
# cache=none never uses the page cache: always the server's bytes
mount_into M "cache=none"
cp "$WORK/a" "$D/g"; chown "$SMB3_TEST_USER:" "$D/g"
exec 5<"$M/g"
expect "cache=none: first read" "$("$PYTHON" -c "import os; print(os.pread(5, 100, 0).decode())")" "AAAAAAAAAAAAAAAA"
cp "$WORK/b" "$D/g"
expect "cache=none: read after a server-side change" "$("$PYTHON" -c "import os; print(os.pread(5, 100, 0).decode())")" "BBBBBBBBBBBBBBBB"
exec 5<&-

# cache=loose: the kernel's write-back cache keeps its own size and mtime of a regular file and
# ignores the server's, so the mount gives a file that changed on the server a new inode at the
# next lookup after actimeo: sizes and bytes another client wrote show up (not while open here).
mount_into L "cache=loose,actimeo=1"
printf 'hello\n' >"$L/l"
expect "cache=loose: size of our own file" "$(stat -c %s "$L/l")" 6
printf 'more-bytes-here\n' >>"$D/l"
sleep 1.5
expect "cache=loose: another client's append, after actimeo: size" "$(stat -c %s "$L/l")" 22
expect "cache=loose: another client's append, after actimeo: bytes" "$(cat "$L/l")" "$(printf 'hello\nmore-bytes-here')"
printf 'HELLO\nMORE-BYTES-HERE\n' >"$D/l"
sleep 1.5
expect "cache=loose: another client's rewrite (same size), after actimeo" "$(cat "$L/l")" "$(printf 'HELLO\nMORE-BYTES-HERE')"
truncate -s 3 "$D/l"
sleep 1.5
expect "cache=loose: another client's truncate, after actimeo: size" "$(stat -c %s "$L/l")" 3
expect "cache=loose: another client's truncate, after actimeo: bytes" "$(cat "$L/l")" "HEL"
printf 'ours' >>"$L/l"
# Another client appends right after our close(2): the kernel's RELEASE (and our CLOSE with it) may
# still be on its way, and the size the server then answers is not the kernel's.
for i in 1 2 3 4 5 6 7 8; do printf 'hello\n' >"$L/r$i"; printf 'more-bytes-here\n' >>"$D/r$i"; done
sleep 1.5
expect "cache=loose: our own append, after actimeo" "$(cat "$L/l")" "HELours"
expect "cache=loose: our own append, on the server" "$(cat "$D/l")" "HELours"
for i in 1 2 3 4 5 6 7 8; do
  expect "cache=loose: another client's append racing our close ($i): size" "$(stat -c %s "$L/r$i")" 22
done

# cache=strict: another client replaces a file the mount has read (its put renames a new file over
# the name): the next open through the mount finds another file by that name (another file id)
# and opens that one, whole: the kernel's entry and size were the old file's, and its old size
# would cut the new bytes short.
mount_into S
printf 'hello\n' >"$D/h" && chown "$(stat -c %u "$D")" "$D/h"
"$PYTHON" - "$S" "$SMB3" "$(smb_url h)" "$WORK/h2" <<'PY' >"$WORK/py" 2>&1 && cat "$WORK/py" || bad "replaced: $(cat "$WORK/py")"
import os, subprocess, sys
sys.path.insert(0, os.environ["FSCHECK_DIR"])
from fscheck import check
m, smb3, url, other = sys.argv[1:]
before = []
for i in range(2):  # (the second open keeps the kernel's pages: the version it holds is known)
    with open(m + "/h") as f:
        before.append(f.read())
check("a file read through the mount, twice", before == ["hello\n"] * 2, repr(before))
open(other, "w").write("replaced by another client\n")
subprocess.run([smb3, "-q", "put", other, url], check=True)
with open(m + "/h") as f:
    after = f.read()
check("after another client replaced it: the new file, whole", after == "replaced by another client\n", repr(after))
check("... and its size", os.stat(m + "/h").st_size == 27, str(os.stat(m + "/h").st_size))
PY
PASSED=$((PASSED + $(grep -c '^ok' "$WORK/py" || true)))
FAILED=$((FAILED + $(grep -c '^FAIL' "$WORK/py" || true)))
finish
