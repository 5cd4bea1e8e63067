#!/usr/bin/env bash
# Runs inside with-smbd (SMB3_TEST_* set). See demo.sh.
set -uo pipefail
SMB3=$BUILD/cli/smb3
OPS=$BUILD/tools/smb3-ops
SMB3FS=$BUILD/fs/smb3fs
U=$SMB3_TEST_URL
SIZE_MB=${DEMO_SIZE_MB:-512}
W=$(mktemp -d /dev/shm/smb3demo.XXXXXX)
MNT=$(mktemp -d /tmp/smb3demo-mnt.XXXXXX)
cleanup() { mountpoint -q "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }; rm -rf "$W"; rmdir "$MNT" 2>/dev/null; }
trap cleanup EXIT
rows=()
row() { rows+=("$(printf '| %-34s | %-22s | %12s | %-28s |' "$1" "$2" "$3" "$4")"); }
now() { date +%s.%N; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f MB/s", b / t / 1e6 }'; }
jget() { grep -o "\"$1\":[0-9]*" "$2" | head -1 | cut -d: -f2; }

echo "demo: Samba $(smbd --version | cut -d' ' -f2) on 127.0.0.1:$SMB3_TEST_PORT, share on tmpfs; file of $SIZE_MB MiB"
head -c "${SIZE_MB}M" /dev/urandom >"$W/src"
bytes=$((SIZE_MB * 1048576))

# Large multi-credit reads and writes, several in flight, vs smbclient.
for rs in 64K 1M 4M; do
  t0=$(now); "$SMB3" -q --stats -o "rsize=$rs,wsize=$rs" put "$W/src" "$U/f" 2>"$W/s.json"; t1=$(now)
  row "put, rsize/wsize=$rs" "smb3 put" "$(mbps $bytes $(echo "$t1 - $t0" | bc))" "WRITE $(jget max_write_size "$W/s.json") B, $(jget credits_max_in_flight "$W/s.json") credits in flight"
  t0=$(now); "$SMB3" -q --stats -o "rsize=$rs,wsize=$rs" cat "$U/f" 2>"$W/s.json" >/dev/null; t1=$(now)
  row "read, rsize=$rs" "smb3 cat >/dev/null" "$(mbps $bytes $(echo "$t1 - $t0" | bc))" "READ $(jget max_read_size "$W/s.json") B, $(jget credits_max_in_flight "$W/s.json") credits in flight"
done
cmp -s "$W/src" "$SMB3_TEST_SHARE_DIR/f" && echo "demo: checksum of the uploaded file matches" || echo "demo: CHECKSUM MISMATCH"
SC=(smbclient "//127.0.0.1/$SMB3_TEST_SHARE" -p "$SMB3_TEST_PORT" -U "$SMB3_TEST_USER%$SMB3_TEST_PASS")
t0=$(now); "${SC[@]}" -c "put $W/src f2" >/dev/null 2>&1; t1=$(now)
row "put (peer)" "smbclient put" "$(mbps $bytes $(echo "$t1 - $t0" | bc))" "-"
t0=$(now); "${SC[@]}" -c "get f2 /dev/null" >/dev/null 2>&1; t1=$(now)
row "read (peer)" "smbclient get" "$(mbps $bytes $(echo "$t1 - $t0" | bc))" "-"

# Compounded statfs: CREATE+QUERY_INFO+CLOSE in one round trip, against three without compounding.
for mode in compound nocompound; do
  opt=""; [ $mode = nocompound ] && opt="-o nocompound"
  out=$("$OPS" $opt -n 1000 statvfs "$U/")
  row "1000 statfs, $mode" "libsmb3" "$(sed 's/.*per_op_ms=\([0-9.]*\).*/\1 ms\/op/' <<<"$out")" "$(sed 's/.*round_trips_per_op=\([0-9.]*\).*/\1 round trips\/op/' <<<"$out")"
done

# The mount (issue 5): dd at bs=1M and bs=4k, and the statfs loop, through smb3fs.
if [ -x "$SMB3FS" ]; then
  if "$SMB3FS" "//127.0.0.1/$SMB3_TEST_SHARE" "$MNT" -o "username=$SMB3_TEST_USER,password=$SMB3_TEST_PASS,port=$SMB3_TEST_PORT" 2>"$W/mount.err"; then
    for bs in 1M 4k; do
      bsb=1048576; [ $bs = 4k ] && bsb=4096
      cnt=$((bytes / bsb))
      t0=$(now); dd if="$W/src" of="$MNT/dd-$bs" bs=$bs count=$cnt conv=fsync status=none; t1=$(now)
      row "dd write bs=$bs" "smb3fs" "$(mbps $bytes $(echo "$t1 - $t0" | bc))" ""
    done
    fusermount3 -u "$MNT"
    "$SMB3FS" "//127.0.0.1/$SMB3_TEST_SHARE" "$MNT" -o "username=$SMB3_TEST_USER,password=$SMB3_TEST_PASS,port=$SMB3_TEST_PORT" 2>>"$W/mount.err"
    for bs in 1M 4k; do
      t0=$(now); dd if="$MNT/dd-$bs" of=/dev/null bs=$bs status=none; t1=$(now)
      row "dd read bs=$bs" "smb3fs" "$(mbps $bytes $(echo "$t1 - $t0" | bc))" ""
    done
    # timed inside the interpreter: its start-up (seconds behind a version-manager shim) is not statfs
    ms=$(/usr/bin/python3 -c "import os,sys,time; t=time.perf_counter(); [os.statvfs(sys.argv[1]) for _ in range(1000)]; print('%.3f' % (time.perf_counter() - t))" "$MNT")
    row "1000 statfs() (compounded)" "smb3fs" "$ms ms/op" ""
    if "$SMB3" stats "$MNT" >"$W/fs.json" 2>/dev/null; then
      echo "demo: smb3fs counters: $(cat "$W/fs.json")"
    fi
  else
    echo "demo: smb3fs mount failed: $(cat "$W/mount.err")"
  fi
else
  echo "demo: smb3fs not built; mount workloads skipped"
fi

echo
printf '| %-34s | %-22s | %12s | %-28s |\n' "workload" "client" "result" "wire"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "$(printf -- '-%.0s' {1..24})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..30})"
printf '%s\n' "${rows[@]}"
