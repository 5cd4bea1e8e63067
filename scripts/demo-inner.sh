#!/usr/bin/env bash
# Runs inside with-smbd (SMB3_TEST_* set). See demo.sh.
#
# Every row is the median of DEMO_RUNS runs (default 3), shown with its range. The runs are interleaved:
# each round runs every workload once (the order rotated from round to round), so a row and the peer it
# is compared with are measured alternately (A B A B A B) and share the machine's state; the ratio
# columns divide the medians of the same rounds. The mount rows are measured as the mount section of
# tools/bench/smb3-bench.py does (mount_one): a fresh mount for every run, the page cache dropped
# before it, reads of a file created on the server side (never one just written through the mount),
# writes with conv=fsync, and the daemon waited for after the unmount. A run that fails makes its row
# say "failed"; nothing in the table is computed from anything but the runs of this invocation.
set -uo pipefail
SMB3=$BUILD/cli/smb3
OPS=$BUILD/tools/smb3-ops
SMB3FS=$BUILD/fs/smb3fs
MEMFUSE=$BUILD/tools/smb3-memfuse
U=$SMB3_TEST_URL
SHARE_DIR=$SMB3_TEST_SHARE_DIR
SIZE_MB=${DEMO_SIZE_MB:-512}
RUNS=${DEMO_RUNS:-3}
LIMIT=${DEMO_TIMEOUT:-300} # seconds per command: a hung transfer makes its row "failed", not the demo hang
for v in SIZE_MB:DEMO_SIZE_MB RUNS:DEMO_RUNS LIMIT:DEMO_TIMEOUT; do
  name=${v%%:*}
  val=${!name}
  [[ $val =~ ^[1-9][0-9]*$ ]] || { echo "demo: ${v#*:} must be a positive integer (got '$val')" >&2; exit 2; }
done
W=$(mktemp -d /dev/shm/smb3demo.XXXXXX)
MNT=$(mktemp -d /tmp/smb3demo-mnt.XXXXXX)
FS_PID=
cleanup() {
  mountpoint -q "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
  [ -n "$FS_PID" ] && kill "$FS_PID" 2>/dev/null
  rm -rf "$W"
  rmdir "$MNT" 2>/dev/null
}
trap cleanup EXIT
bytes=$((SIZE_MB * 1048576))
echo "[global]" >"$W/smbclient.conf" # no /etc/samba/smb.conf settings leak into smbclient
SC=(smbclient "//127.0.0.1/$SMB3_TEST_SHARE" -s "$W/smbclient.conf" -p "$SMB3_TEST_PORT"
  -U "$SMB3_TEST_USER%$SMB3_TEST_PASS")
FS_OPTS="username=$SMB3_TEST_USER,password=$SMB3_TEST_PASS,port=$SMB3_TEST_PORT"

declare -A VALS ERRS WIRE
DROP_FAILED=0
WRITES_CHECKED=0

jget() { grep -o "\"$1\":[0-9]*" "$2" | head -1 | cut -d: -f2; }
human() { # bytes -> 64K, 1M, 4M
  local b=${1:-0}
  if ((b >= 1048576 && b % 1048576 == 0)); then echo "$((b / 1048576))M"
  elif ((b >= 1024 && b % 1024 == 0)); then echo "$((b / 1024))K"
  else echo "$b"; fi
}
wire_of() { # FILE FIELD: "4M x64" = largest READ or WRITE, most credits in flight (smb3 --stats / smb3 stats)
  local s c
  s=$(jget "$2" "$1")
  c=$(jget credits_max_in_flight "$1")
  [ -n "$s" ] && [ "$s" != 0 ] && echo "$(human "$s") x${c:-?}"
}
last_line() { cat "$@" 2>/dev/null | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-120; } # of FILE...

# alive PID: true while PID runs (kill -0 also succeeds on a zombie, which an exited child of ours is).
alive() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# timed OUT ERR CMD...: runs CMD (at most LIMIT s), stdout to OUT, stderr to ERR; NS = wall time in ns.
timed() {
  local out=$1 err=$2 t0 t1 rc
  shift 2
  t0=$(date +%s%N)
  timeout -k 10 "$LIMIT" "$@" >"$out" 2>"$err"
  rc=$?
  t1=$(date +%s%N)
  NS=$((t1 - t0))
  ((rc == 124 || rc == 137)) && echo "timed out after $LIMIT s" >>"$err"
  return $rc
}
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.3f", b * 1000 / ns }'; } # 10^6 bytes per second
ok() { VALS[$1]+="$2 "; }
fail() { ERRS[$1]+="${ERRS[$1]:+; }run $2: ${3:-failed}"; }

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || DROP_FAILED=1; }

# A fresh smb3fs mount in the foreground (-f) in the background of this shell, so that its exit can be
# waited for: the bench's mount_one does the same.
fs_mount() {
  local i
  "$SMB3FS" "//127.0.0.1/$SMB3_TEST_SHARE" "$MNT" -f -o "$FS_OPTS$1" >>"$W/mount.err" 2>&1 &
  FS_PID=$!
  for ((i = 0; i < 400; i++)); do
    mountpoint -q "$MNT" && return 0
    alive "$FS_PID" || { wait "$FS_PID"; FS_PID=; return 1; }
    sleep 0.05
  done
  fs_umount
  return 1
}
# Unmount and wait until the daemon has exited (its last WRITEs, CLOSEs and LOGOFF done), at most 15 s.
fs_umount() {
  local i
  mountpoint -q "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
  for ((i = 0; i < 300; i++)); do alive "$FS_PID" || break; sleep 0.05; done
  if alive "$FS_PID"; then
    echo "demo: smb3fs still running 15 s after the unmount; sent SIGTERM" >>"$W/mount.err"
    kill "$FS_PID" 2>/dev/null
  fi
  wait "$FS_PID" 2>/dev/null
  FS_PID=
}
fs_mount_error() { echo "mount failed: $(last_line "$W/mount.err")"; }

# ---- the workloads: each takes ROW-ID RUN [ARG] and records one sample (ok) or a failure (fail) ----

check_written() { # ROW RUN NAME: the file on the server is the source, byte for byte
  if cmp -s "$W/src" "$SHARE_DIR/$3"; then
    WRITES_CHECKED=$((WRITES_CHECKED + 1))
    return 0
  fi
  fail "$1" "$2" "the file written on the server differs from the source"
  return 1
}

w_smb3_put() {
  rm -f "$SHARE_DIR/put-smb3"
  if ! timed /dev/null "$W/err" "$SMB3" -q --stats -o "rsize=$3,wsize=$3" put "$W/src" "$U/put-smb3"; then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif check_written "$1" "$2" put-smb3; then
    ok "$1" "$(mbps $bytes $NS)"
    WIRE[$1]=$(wire_of "$W/err" max_write_size)
  fi
  rm -f "$SHARE_DIR/put-smb3"
}
w_smbclient_put() {
  rm -f "$SHARE_DIR/put-smbclient"
  if ! timed "$W/out" "$W/err" "${SC[@]}" -c "put $W/src put-smbclient"; then
    fail "$1" "$2" "$(last_line "$W/err" "$W/out")"
  elif check_written "$1" "$2" put-smbclient; then
    ok "$1" "$(mbps $bytes $NS)"
  fi
  rm -f "$SHARE_DIR/put-smbclient"
}
w_smb3_cat() {
  if ! timed /dev/null "$W/err" "$SMB3" -q --stats -o "rsize=$3,wsize=$3" cat "$U/rd"; then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif [ "$(jget bytes_read "$W/err")" != "$bytes" ]; then
    fail "$1" "$2" "read $(jget bytes_read "$W/err") bytes, expected $bytes"
  else
    ok "$1" "$(mbps $bytes $NS)"
    WIRE[$1]=$(wire_of "$W/err" max_read_size)
  fi
}
w_smbclient_get() {
  if ! timed "$W/out" "$W/err" "${SC[@]}" -c "get rd /dev/null"; then
    fail "$1" "$2" "$(last_line "$W/err" "$W/out")"
  elif ! grep -q "of size $bytes as" "$W/out" "$W/err"; then
    fail "$1" "$2" "no 'of size $bytes' in smbclient's output: $(last_line "$W/out")"
  else
    ok "$1" "$(mbps $bytes $NS)"
  fi
}
# dd through a fresh mount (smb3-bench's mount_one): read the file created on the server, or write
# the source with conv=fsync to a new file, checked byte for byte after the daemon has exited.
w_dd() { # ROW RUN read|write 1M|4k [,MOUNT-OPTIONS]
  local dir=$3 bs=$4 bsb=1048576 n ok=1
  [ "$bs" = 4k ] && bsb=4096
  rm -f "$SHARE_DIR/ddw"
  drop_caches
  if ! fs_mount "${5:-}"; then
    fail "$1" "$2" "$(fs_mount_error)"
    return
  fi
  if [ "$dir" = read ]; then
    timed /dev/null "$W/err" dd if="$MNT/rd" of=/dev/null bs="$bs"
  else
    timed /dev/null "$W/err" dd if="$W/src" of="$MNT/ddw" bs="$bs" count=$((bytes / bsb)) conv=fsync
  fi || ok=0
  "$SMB3" stats "$MNT" >"$W/fs-$1.json" 2>/dev/null || rm -f "$W/fs-$1.json"
  fs_umount
  n=$(grep -o '^[0-9]* bytes' "$W/err" | cut -d' ' -f1)
  if ((!ok)); then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif [ "${n:-0}" != "$bytes" ]; then
    fail "$1" "$2" "dd copied ${n:-0} bytes, expected $bytes"
  elif [ "$dir" = read ] || check_written "$1" "$2" ddw; then
    ok "$1" "$(mbps $bytes $NS)"
    [ -f "$W/fs-$1.json" ] && WIRE[$1]=$(wire_of "$W/fs-$1.json" "max_${dir}_size")
  fi
  rm -f "$SHARE_DIR/ddw"
}
# The same dd through smb3-memfuse (the floor): a fresh mount, its kernel read-ahead raised to
# smb3fs's (1 MiB), the page cache dropped before it; what it is written is dropped, so nothing to check.
floor_mount() { # ROW RUN: smb3-memfuse on $MNT with rd, the page cache dropped first
  drop_caches
  if ! "$MEMFUSE" "$MNT" --file "rd=$bytes" 2>"$W/err"; then
    fail "$1" "$2" "smb3-memfuse: $(last_line "$W/err")"
    return 1
  fi
  local dev
  dev=$(stat -c %d "$MNT")
  echo 1024 >"/sys/class/bdi/$((dev >> 8)):$((dev & 255))/read_ahead_kb" 2>/dev/null
}
w_floor() {
  local dir=$3 bs=$4 bsb=1048576 n ok=1
  [ "$bs" = 4k ] && bsb=4096
  floor_mount "$1" "$2" || return
  if [ "$dir" = read ]; then
    timed /dev/null "$W/err" dd if="$MNT/rd" of=/dev/null bs="$bs"
  else
    timed /dev/null "$W/err" dd if="$W/src" of="$MNT/ddw" bs="$bs" count=$((bytes / bsb)) conv=fsync
  fi || ok=0
  fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
  n=$(grep -o '^[0-9]* bytes' "$W/err" | cut -d' ' -f1)
  if ((!ok)); then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif [ "${n:-0}" != "$bytes" ]; then
    fail "$1" "$2" "dd copied ${n:-0} bytes, expected $bytes"
  else
    ok "$1" "$(mbps $bytes $NS)"
  fi
}
# A program that reads the file in small pieces (smb3-bench --section programs has them all), through a
# fresh mount of the share or the floor: tar cf - | wc -c (10 KiB reads) or sha256sum (32 KiB reads),
# checked: tar's byte count, the file's SHA-256 (the floor serves bytes of its own: any hash).
w_prog() {
  local where=$3 prog=$4 got want
  if [ "$where" = floor ]; then
    floor_mount "$1" "$2" || return
  else
    drop_caches
    if ! fs_mount ""; then
      fail "$1" "$2" "$(fs_mount_error)"
      return
    fi
  fi
  if [ "$prog" = tar ]; then
    timed "$W/out" "$W/err" sh -c 'tar cf - -C "$1" rd | wc -c' sh "$MNT"
  else
    timed "$W/out" "$W/err" sha256sum "$MNT/rd"
  fi
  local rc=$?
  if [ "$where" = floor ]; then fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; else fs_umount; fi
  got=$(cut -d' ' -f1 "$W/out")
  if [ "$prog" = tar ]; then want=$bytes; ((${got:-0} > bytes)) && want=$got; else want=$SRC_SHA; fi
  [ "$where" = floor ] && [ "$prog" = sha ] && [ -n "$got" ] && want=$got
  if ((rc)); then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif [ "$got" != "$want" ]; then
    fail "$1" "$2" "$prog printed '${got:0:70}', expected '$want'"
  else
    ok "$1" "$(mbps $bytes $NS)"
  fi
}
# 1000 statfs through libsmb3 (tools/smb3-ops, timed inside the process): compounded CREATE+QUERY_INFO+
# CLOSE in one round trip, or three round trips with -o nocompound.
w_statfs_lib() {
  local opt=()
  [ "$3" = nocompound ] && opt=(-o nocompound)
  if ! timed "$W/out" "$W/err" "$OPS" "${opt[@]}" -n 1000 statvfs "$U/"; then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif ! grep -q 'per_op_ms=[0-9.]* round_trips_per_op=[0-9.]*' "$W/out"; then
    fail "$1" "$2" "unexpected output: $(last_line "$W/out")"
  else
    ok "$1" "$(sed 's/.*per_op_ms=\([0-9.]*\).*/\1/' "$W/out")"
    WIRE[$1]="$(sed 's/.*round_trips_per_op=\([0-9.]*\).*/\1/' "$W/out" | awk '{ printf "%.1f RT", $1 }')"
  fi
}
# 1000 statfs() through a fresh mount with attribute caching off (as the bench), timed inside the
# interpreter: its start-up (seconds behind a version-manager shim) is not statfs.
w_statfs_fs() {
  drop_caches
  if ! fs_mount ",actimeo=0"; then
    fail "$1" "$2" "$(fs_mount_error)"
    return
  fi
  local rt0 rt1
  "$SMB3" stats "$MNT" >"$W/fs.json" 2>/dev/null && rt0=$(jget round_trips "$W/fs.json")
  timed "$W/out" "$W/err" /usr/bin/python3 -c "import os, sys, time
os.statvfs(sys.argv[1])  # warm-up: lookup, connect
t = time.perf_counter()
for _ in range(1000):
    os.statvfs(sys.argv[1])
print('%.6f %d' % ((time.perf_counter() - t), os.statvfs(sys.argv[1]).f_blocks))" "$MNT"
  local rc=$?
  "$SMB3" stats "$MNT" >"$W/fs.json" 2>/dev/null && rt1=$(jget round_trips "$W/fs.json")
  fs_umount
  local secs blocks
  read -r secs blocks <"$W/out"
  if ((rc)); then
    fail "$1" "$2" "$(last_line "$W/err")"
  elif [ "${blocks:-0}" = 0 ]; then
    fail "$1" "$2" "statfs reports 0 blocks"
  else
    ok "$1" "$(awk -v s="$secs" 'BEGIN { printf "%.6f", s * 1000 / 1000 }')" # ms per call
    # the warm-up, the 1000 calls and the one that read f_blocks
    [ -n "${rt0:-}" ] && [ -n "${rt1:-}" ] &&
      WIRE[$1]=$(awk -v a="$rt0" -v b="$rt1" 'BEGIN { printf "%.1f RT", (b - a) / 1002 }')
  fi
}

# ---- the rows: ID|label|unit|vs smbclient (row ID)|vs smb3 (row ID)|vs floor (row ID)|workload ----
ROWS=(
  "put64|smb3 put, wsize=64K|MB/s|scput|||smb3_put 64K"
  "put1m|smb3 put, wsize=1M|MB/s|scput|||smb3_put 1M"
  "put4m|smb3 put, wsize=4M (default)|MB/s|scput|||smb3_put 4M"
  "scput|smbclient put|MB/s||||smbclient_put"
  "cat64|smb3 cat, rsize=64K|MB/s|scget|||smb3_cat 64K"
  "cat1m|smb3 cat, rsize=1M|MB/s|scget|||smb3_cat 1M"
  "cat4m|smb3 cat, rsize=4M (default)|MB/s|scget|||smb3_cat 4M"
  "scget|smbclient get|MB/s||||smbclient_get"
)
MOUNT_ROWS=(
  "ddr1m|smb3fs: dd read bs=1M|MB/s|scget|cat4m|flr1m|dd read 1M"
  "ddr4k|smb3fs: dd read bs=4k|MB/s|scget|cat4m|flr4k|dd read 4k"
  "ddw1m|smb3fs: dd write bs=1M fsync|MB/s|scput|put4m|flw1m|dd write 1M"
  "ddw4k|smb3fs: dd write bs=4k fsync|MB/s|scput|put4m|flw4k|dd write 4k"
  "ddr1d|smb3fs directio_min=8M: dd read bs=1M|MB/s|scget|cat4m||dd read 1M ,directio_min=8M"
  "tarr|smb3fs: tar cf - (10 KiB reads)|MB/s|||fltar|prog fs tar"
  "shar|smb3fs: sha256sum (32 KiB reads)|MB/s|||flsha|prog fs sha"
)
# The floor: the same dd through smb3-memfuse (tools/bench/memfuse.c), a FUSE file system from memory
# with smb3fs's FUSE settings and no network: what any page-cache FUSE mount costs on this machine.
FLOOR_ROWS=(
  "flr1m|floor (FUSE, no network): read bs=1M|MB/s||||floor read 1M"
  "flr4k|floor (FUSE, no network): read bs=4k|MB/s||||floor read 4k"
  "flw1m|floor (FUSE, no network): write bs=1M|MB/s||||floor write 1M"
  "flw4k|floor (FUSE, no network): write bs=4k|MB/s||||floor write 4k"
  "fltar|floor (FUSE, no network): tar cf -|MB/s||||prog floor tar"
  "flsha|floor (FUSE, no network): sha256sum|MB/s||||prog floor sha"
)
ROWS+=(
  "stc|libsmb3: statfs, compounded|ms||||statfs_lib compound"
  "stn|libsmb3: statfs, -o nocompound|ms||stc||statfs_lib nocompound"
)
if [ -x "$SMB3FS" ]; then
  [ -x "$MEMFUSE" ] || FLOOR_ROWS=()
  ROWS=("${ROWS[@]:0:8}" "${MOUNT_ROWS[@]}" "${FLOOR_ROWS[@]}" "${ROWS[@]:8}" "fsst|smb3fs: statfs()|ms||stc||statfs_fs")
fi

echo "demo: Samba $(smbd --version | cut -d' ' -f2) on 127.0.0.1:$SMB3_TEST_PORT, share on tmpfs;" \
  "files of $SIZE_MB MiB;" \
  "$RUNS interleaved run$( ((RUNS > 1)) && echo s) of each row"
[ -x "$SMB3FS" ] || echo "demo: smb3fs not built; mount workloads skipped"
head -c "${SIZE_MB}M" /dev/urandom >"$W/src"
SRC_SHA=$(sha256sum "$W/src" | cut -d' ' -f1)
# the file every read row reads, created on the server side (as the bench does): no client has it cached
if ! cp "$W/src" "$SHARE_DIR/rd" || ! chown "$SMB3_TEST_USER" "$SHARE_DIR/rd"; then
  echo "demo: cannot create $SHARE_DIR/rd" >&2
  exit 1
fi

nrows=${#ROWS[@]}
for ((run = 1; run <= RUNS; run++)); do
  # rotate the order: no workload always runs right after the same one, or always first
  start=$(((run - 1) * nrows / RUNS))
  t_round=$(date +%s)
  for ((k = 0; k < nrows; k++)); do
    IFS='|' read -r id _ _ _ _ _ work <<<"${ROWS[(start + k) % nrows]}"
    read -r fn args <<<"$work"
    # shellcheck disable=SC2086 # args: the workload's words
    "w_$fn" "$id" "$run" $args
  done
  echo "demo: round $run/$RUNS done in $(($(date +%s) - t_round)) s"
done

# ---- the table ----
declare -A MED LO HI
summary() { # values... -> "median min max"
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}
for row in "${ROWS[@]}"; do
  IFS='|' read -r id _ _ _ _ _ _ <<<"$row"
  [ -n "${ERRS[$id]:-}" ] && continue
  # shellcheck disable=SC2086 # the samples, one word each
  read -r MED[$id] LO[$id] HI[$id] <<<"$(summary ${VALS[$id]})"
done
# ratio ROW PEER UNIT: how many times faster the row is than its peer (medians of the same rounds)
ratio() {
  [ -n "$2" ] || return 0
  [ -n "${MED[$1]:-}" ] && [ -n "${MED[$2]:-}" ] || { [ -n "${MED[$1]:-}" ] && echo "-"; return 0; }
  awk -v a="${MED[$1]}" -v b="${MED[$2]}" -v u="$3" \
    'BEGIN { r = u == "ms" ? b / a : a / b; printf "%.2fx", r }'
}
line() { printf '| %-38s | %9s | %-11s | %12s | %7s | %8s | %-8s |\n' "$@"; }
echo
line "workload, $SIZE_MB MiB" "median" "range" "vs smbclient" "vs smb3" "vs floor" "wire"
for w in 38 9 11 12 7 8 8; do printf '|%s' "$(printf -- '-%.0s' $(seq $((w + 2))))"; done
echo "|"
for row in "${ROWS[@]}"; do
  IFS='|' read -r id label unit vs_sc vs_smb3 vs_floor _ <<<"$row"
  if [ -n "${ERRS[$id]:-}" ]; then
    line "$label" "failed" "" "" "" "" ""
    continue
  fi
  if [ "$unit" = ms ]; then
    med=$(printf '%.3f ms' "${MED[$id]}")
    rng=$(printf '%.3f-%.3f' "${LO[$id]}" "${HI[$id]}")
  else
    med=$(printf '%.0f MB/s' "${MED[$id]}")
    rng=$(printf '%.0f-%.0f' "${LO[$id]}" "${HI[$id]}")
  fi
  line "$label" "$med" "$rng" "$(ratio "$id" "$vs_sc" "$unit")" "$(ratio "$id" "$vs_smb3" "$unit")" \
    "$(ratio "$id" "$vs_floor" "$unit")" "${WIRE[$id]:--}"
done
cat <<EOF

Every row: the median of $RUNS run$( ((RUNS > 1)) && echo s), range = slowest-fastest of them. The runs are interleaved: each
round ran every workload once. MB/s: 10^6 bytes per second of the whole command (connect, logon,
open, transfer, close). vs X: this row's speed / X's, medians of the same rounds (above 1: faster).
smb3 rows: vs smbclient doing the same; smb3fs dd read: vs smbclient get and smb3 cat rsize=4M, dd
write: vs smbclient put and smb3 put wsize=4M, and both vs the floor: the same dd through a FUSE file
system from memory with smb3fs's settings and no network (smb3-memfuse), the most a page-cache mount
can reach here, whose time is the kernel's copies into and out of newly allocated page-cache memory
(smb3fs's reads go through the page cache as the floor's do, unless -o directio_min=SIZE: then a
read-only open of a file that large reads with direct I/O, faster for 1 MiB reads and much slower for
small ones, see smb3fs(8)); tar cf - | wc -c and sha256sum: two of the programs people run, reading 10
and 32 KiB at a time (smb3-bench --section programs has the others);
statfs (ms per call): vs libsmb3 compounded. Mount
rows as smb3-bench measures them: fresh mount per run, page cache dropped, reads of a file created
on the server, writes with conv=fsync, the daemon's exit waited for. statfs: 1000 calls, ms per
call. wire: largest READ/WRITE x most credits in flight (smb3 --stats, smb3 stats MOUNTPOINT), or
round trips per statfs.
EOF
((WRITES_CHECKED)) &&
  echo "demo: $WRITES_CHECKED files written to the server compared byte for byte with the source: all equal"
for row in "${ROWS[@]}"; do
  IFS='|' read -r id label _ <<<"$row"
  if [ -n "${ERRS[$id]:-}" ]; then
    echo "demo: FAILED $label: ${ERRS[$id]}"
  elif [ -f "$W/fs-$id.json" ] && [ -n "$(jget readahead_hits "$W/fs-$id.json")" ]; then
    f=$W/fs-$id.json
    case $id in
      ddr*) echo "demo: $label, last run: readahead hits $(jget readahead_hits "$f"), misses" \
        "$(jget readahead_misses "$f"), $(jget reads "$f") READs on the wire" ;;
      ddw*) echo "demo: $label, last run: $(jget writes "$f") WRITEs on the wire," \
        "writeback throttled $(jget writeback_throttled "$f")" ;;
    esac
  fi
done
((DROP_FAILED)) &&
  echo "demo: could not write /proc/sys/vm/drop_caches (not root?): the page cache was not dropped"
for id in "${!ERRS[@]}"; do exit 1; done # a failed row fails the demo
exit 0
