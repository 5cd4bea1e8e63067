#!/usr/bin/env bash
# Wire sizes from `smb3 stats`: sequential dd bs=4k and bs=1M, reading and writing, produce wire
# READs/WRITEs of rsize/wsize (max_read_size == rsize, reads ~ size/rsize; the same for writes),
# under the default rsize/wsize (4 MiB) and rsize=wsize=1M; and random reads do not trigger
# read-ahead. Each measurement on a fresh mount so that the counters are its own.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
SIZE=$((64 << 20))
head -c "$SIZE" /dev/urandom >"$WORK/src"
cp "$WORK/src" "$D/data"; chown "$SMB3_TEST_USER:" "$D/data"
j() { "$PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$WORK/stats" "$1"; }
measure() { # LABEL OPTIONS CMD...: run CMD on a fresh mount ($M), leave its stats in $WORK/stats
  local label=$1 opts=$2; shift 2
  mount_into M "$opts"
  if ! (cd "$M" && eval "$*"); then bad "$label: command failed"; fi
  "$SMB3" stats "$M" >"$WORK/stats"
  fs_umount "$M"
  echo "measured $label: $(j '"reads=%d max_read_size=%d writes=%d max_write_size=%d rsize=%d wsize=%d" % (reads, max_read_size, writes, max_write_size, rsize, wsize)')"
}
for opts in "" "rsize=1M,wsize=1M" "cache=none" "cache=loose"; do
  for bs in 4k 1M; do
    measure "read bs=$bs ${opts:-defaults}" "$opts" "dd if=data of=/dev/null bs=$bs status=none"
    expect "read bs=$bs ${opts:-defaults}: max_read_size == rsize" "$(j 'max_read_size == rsize')" True
    expect "read bs=$bs ${opts:-defaults}: reads ~ size/rsize" "$(j "$SIZE // rsize <= reads <= $SIZE // rsize + 2")" True
    expect "read bs=$bs ${opts:-defaults}: bytes read" "$(j "$SIZE <= bytes_read <= $SIZE + 2 * rsize")" True
    measure "write bs=$bs ${opts:-defaults}" "$opts" "dd if=$WORK/src of=out-$bs bs=$bs status=none"
    expect "write bs=$bs ${opts:-defaults}: max_write_size == wsize" "$(j 'max_write_size == wsize')" True
    if [ "$opts" = cache=loose ]; then
      # The kernel's write-back sends several 1 MiB FUSE writes at once, which arrive in any order,
      # and updates the file's mtime (a SETATTR, which flushes) along the way: the extents still
      # join up (36 WRITEs for this file before they could), but a few go out partial: 17-20
      # usually, up to 25 when another test loads the machine (the kernel flushes mtime more often).
      expect "write bs=$bs cache=loose: writes ~ size/wsize" "$(j "$SIZE // wsize <= writes <= $SIZE // wsize * 2")" True
    else
      expect "write bs=$bs ${opts:-defaults}: writes ~ size/wsize" "$(j "$SIZE // wsize <= writes <= $SIZE // wsize + 2")" True
    fi
    expect "write bs=$bs ${opts:-defaults}: bytes written" "$(j "bytes_written == $SIZE")" True
    expect "write bs=$bs ${opts:-defaults}: data" "$(md5sum <"$D/out-$bs")" "$(md5sum <"$WORK/src")"
    if [ "$opts" = cache=loose ]; then
      # the kernel's write-back cache gathers the application's writes: they reach smb3fs as
      # FUSE writes of up to 1 MiB (pages), not one per write(2)
      expect "write bs=$bs cache=loose: FUSE writes are large" "$(j "writeback_hits <= $SIZE // (128 << 10)")" True
    else
      expect "write bs=$bs ${opts:-defaults}: one FUSE write per write(2)" "$(j "writeback_hits >= $SIZE // $( [ $bs = 4k ] && echo 4096 || echo 1048576 )")" True
    fi
  done
done
# random 4 KiB reads (no two adjacent): no read-ahead
measure "random reads" "cache=none" "$PYTHON -c \"
import os, random
fd = os.open('data', os.O_RDONLY)
r = random.Random(7)
for off in r.sample(range(1, $SIZE // 8192), 200):
    os.pread(fd, 4096, off * 8192)
os.close(fd)\""
expect "random reads: no read-ahead wire READs" "$(j 'readahead_wire_reads')" 0
expect "random reads: one wire READ each" "$(j 'reads')" 200

# Uncached stat() (actimeo=0): one round trip each (the file's LOOKUP; the GETATTR that follows
# it uses what that LOOKUP fetched, and the share root's permissions need no round trip), and
# still uncached: a size changed on the server is seen by the very next stat().
echo one >"$D/st"; chown "$SMB3_TEST_USER:" "$D/st"
mount_into M "actimeo=0"
stat "$M/st" >/dev/null
rt() { "$SMB3" stats "$M" | "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['round_trips'])"; }
r0=$(rt)
got=$("$PYTHON" -c "
import os, sys
sizes = []
for i in range(200):
    if i == 100:
        open(sys.argv[2], 'w').write('changed on the server')
    sizes.append(os.stat(sys.argv[1]).st_size)
print(sizes[99], sizes[100], sizes[199])" "$M/st" "$D/st")
r1=$(rt)
fs_umount "$M"
echo "measured uncached stat: $((r1 - r0)) round trips for 200 stat() calls"
# 200 LOOKUPs must cost 200 round trips; a GETATTR that misses the LOOKUP's window (a slow,
# sanitized run) costs one more, so allow a few; two per stat() is what it used to cost.
expect "uncached stat: about one round trip per stat()" "$(((r1 - r0) >= 200 && (r1 - r0) <= 220))" 1
expect "uncached stat: a change on the server is seen at once" "$got" "4 21 21"

# mkdir and create through the mount: the kernel's LOOKUP of the new name (negative) and one
# compound for the operation itself: the CREATE's own response (with the QFid context) gives
# the new inode's attributes and file id, no second round trip for them.
mount_into M ""
r0=$(rt)
mkdir "$M/newdir"
r1=$(rt)
"$PYTHON" -c "import os, sys; fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o644); open(sys.argv[2], 'w').write(str(os.fstat(fd).st_ino)); os.close(fd)" "$M/newfile" "$WORK/ino"
ino_mount=$(cat "$WORK/ino")
r2=$(rt)
ino_again=$(stat -c %i "$M/newfile")
fs_umount "$M"
echo "measured mkdir: $((r1 - r0)) round trips; create + close: $((r2 - r1))"
expect "mkdir: LOOKUP + one compound" "$((r1 - r0))" 2
expect "create + close: LOOKUP + one compound + CLOSE" "$((r2 - r1))" 3
expect "created file's inode number is the server's file id" "$ino_mount" "$ino_again"
expect "mkdir made a directory on the server" "$([[ -d $D/newdir ]] && echo yes)" yes
finish
