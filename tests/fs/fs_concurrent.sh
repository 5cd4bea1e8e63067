#!/usr/bin/env bash
# Two concurrent writers to different files (sequential 4k writes and 1M writes), then two
# concurrent readers of them; checksums must match. Then two threads writing one file: disjoint
# halves, and woven 1 MiB blocks (write-back sees them out of order and must join them right).
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
# two writers interleaving 1 MiB blocks of one file (even and odd blocks, each thread in its
# own order): the FUSE writes reach write-back out of order, extents meet and merge
"$PYTHON" - "$M/woven" <<'PY' && ok "two threads weaving one file" || bad "two threads weaving one file"
import os, sys, threading, random
path = sys.argv[1]
blk, n = 1 << 20, 40
open(path, "wb").close()
def writer(parity):
    fd = os.open(path, os.O_WRONLY)
    idx = [i for i in range(n) if i % 2 == parity]
    random.Random(parity).shuffle(idx[len(idx) // 2:])  # the second half out of order
    for i in idx:
        os.pwrite(fd, bytes([i % 251]) * (blk - 7) + b"%07d" % i, i * blk)
    os.close(fd)
ts = [threading.Thread(target=writer, args=(p,)) for p in (0, 1)]
for t in ts: t.start()
for t in ts: t.join()
PY
want=$("$PYTHON" -c "
import hashlib
h = hashlib.md5()
for i in range(40): h.update(bytes([i % 251]) * ((1 << 20) - 7) + b'%07d' % i)
print(h.hexdigest())")
expect "woven file through the mount" "$(md5sum <"$M/woven" | cut -c1-32)" "$want"
fs_umount "$M"
expect "woven file on the server" "$(md5sum <"$D/woven" | cut -c1-32)" "$want"
finish
