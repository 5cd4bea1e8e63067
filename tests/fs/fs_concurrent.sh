#!/usr/bin/env bash
# Two concurrent writers to different files (sequential 4k writes and 1M writes), then two
# concurrent readers of them; checksums must match.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mount_into M
head -c $((40 << 20)) /dev/urandom >"$WORK/a"
head -c $((40 << 20)) /dev/urandom >"$WORK/b"
dd if="$WORK/a" of="$M/a" bs=4k status=none & pa=$!
dd if="$WORK/b" of="$M/b" bs=1M status=none & pb=$!
wait $pa && ok "writer 1 (bs=4k)" || bad "writer 1 failed"
wait $pb && ok "writer 2 (bs=1M)" || bad "writer 2 failed"
expect "file 1 on the server" "$(md5sum <"$D/a")" "$(md5sum <"$WORK/a")"
expect "file 2 on the server" "$(md5sum <"$D/b")" "$(md5sum <"$WORK/b")"
md5sum <"$M/a" >"$WORK/ra" & pa=$!
md5sum <"$M/b" >"$WORK/rb" & pb=$!
wait $pa; wait $pb
expect "reader 1" "$(cat "$WORK/ra")" "$(md5sum <"$WORK/a")"
expect "reader 2" "$(cat "$WORK/rb")" "$(md5sum <"$WORK/b")"
# two writers interleaving 64 KiB blocks into disjoint halves of one file
"$PYTHON" - "$M/shared" <<'PY' && ok "two threads, one file, disjoint ranges" || bad "two threads, one file"
import os, sys, threading
path = sys.argv[1]
blk, n = 65536, 200
open(path, "wb").close()
def writer(base, byte):
    fd = os.open(path, os.O_WRONLY)
    for i in range(n):
        os.pwrite(fd, bytes([byte]) * blk, base + i * blk)
    os.close(fd)
ts = [threading.Thread(target=writer, args=(0, 65)), threading.Thread(target=writer, args=(n * blk, 66))]
for t in ts: t.start()
for t in ts: t.join()
data = open(path, "rb").read()
assert data == b"A" * (n * blk) + b"B" * (n * blk), "content"
PY
expect "shared file on the server" "$(md5sum <"$D/shared" | cut -c1-32)" \
  "$("$PYTHON" -c "import hashlib; print(hashlib.md5(b'A'*(200*65536)+b'B'*(200*65536)).hexdigest())")"
finish
