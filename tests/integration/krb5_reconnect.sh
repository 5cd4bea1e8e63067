#!/usr/bin/env bash
# Kerberos across a reconnect and against a skewed clock, on a throwaway Samba AD DC
# (tests/harness/with-dc). A sec=krb5 mount (in the foreground, so that the daemon's log lines
# come on its standard error) loses its connection (the smbd child serving it is killed) after
# the credential cache was replaced:
#  (a) by a fresh ticket-granting ticket only (kdestroy, kinit): the service ticket is gone, the
#      reconnect gets a new cifs/ ticket from the TGT and the mount goes on reading and writing;
#  (b) by nothing (kdestroy): the next operation fails with EACCES at once (no 15 s wait for a
#      connection that cannot come), the daemon logs one line that says to run kinit, and after a
#      kinit the mount comes back by itself.
# The CLI: a clock one hour ahead (libfaketime, the machine's clock untouched) gets one line
# naming the clock skew; so does a mount.
source "$(dirname "$0")/lib.sh"
SMB3FS=${SMB3FS:-smb3fs}
O="ip=$SMB3_TEST_IP"
URL=$SMB3_TEST_URL
D=$SMB3_TEST_SHARE_DIR
M=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX)
FSPID=""
cleanup() {
  fusermount3 -uz "$M" 2>/dev/null || true
  if [ -n "$FSPID" ]; then
    for _ in $(seq 100); do kill -0 "$FSPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$FSPID" 2>/dev/null || true
  fi
  rmdir "$M" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
command -v ss >/dev/null || { echo "ss (iproute2) missing"; exit 77; }
kinit_user() { echo "$SMB3_TEST_PASS" | kinit "$@" "$SMB3_TEST_PRINCIPAL" >/dev/null; }
has_service_ticket() { klist 2>/dev/null | grep -q "cifs/$SMB3_TEST_HOST@"; }
# The smbd children serving an established connection on the DC's address (the mount's only:
# nothing else connects to this DC's SMB port while the mount is up).
conn_pids() {
  ss -Htnp state established "( sport = :445 )" src "$SMB3_TEST_IP" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
}
kill_conn() {
  local pids
  pids=$(conn_pids)
  [ -n "$pids" ] || { echo "no smbd connection found"; return 1; }
  # shellcheck disable=SC2086
  kill -9 $pids
}
stat_of() { "$SMB3" stats "$M" | "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
PYTHON=${PYTHON:-python3}
# wait_reconnects N: until the mount has reconnected N times (bounded; the thread retries every
# 1..10 s, ctest's timeout guards the rest)
wait_reconnects() {
  for _ in $(seq 600); do
    [ "$(stat_of reconnects)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
# wait_outage N: until the mount has seen its Nth loss
wait_outage() {
  for _ in $(seq 300); do
    [ "$(stat_of outages)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

kinit_user
head -c 200000 /dev/urandom >"$WORK/data"
cp "$WORK/data" "$D/r.bin" && chmod 666 "$D/r.bin"

# ---- the mount ------------------------------------------------------------------------------
if [ ! -e /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  bad "no /dev/fuse or fusermount3: the mount cases cannot run"
  finish
  exit
fi
"$SMB3FS" "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$M" -f -o "$O,sec=krb5" 2>"$WORK/daemon.log" &
FSPID=$!
for _ in $(seq 300); do mountpoint -q "$M" && break; kill -0 $FSPID 2>/dev/null || break; sleep 0.1; done
if ! mountpoint -q "$M"; then
  bad "mount sec=krb5 -f: $(cat "$WORK/daemon.log")"
  finish
  exit
fi
if cmp -s "$WORK/data" "$M/r.bin"; then ok "mount: read before the loss"; else bad "mount: read"; fi
if has_service_ticket; then ok "the cache holds the cifs/ service ticket"; else bad "no service ticket after the mount: $(klist 2>&1)"; fi

# (a) a fresh TGT only: the service ticket the mount logged on with is gone
kdestroy
kinit_user
if has_service_ticket; then bad "(a) kinit left a service ticket in the cache"; else ok "(a) the cache holds a TGT only"; fi
check "(a) connection killed" kill_conn
check "(a) the mount reconnects" wait_reconnects 1
if has_service_ticket; then ok "(a) the reconnect got a new cifs/ service ticket from the TGT"
else bad "(a) no new service ticket: $(klist 2>&1)"; fi
if cmp -s "$WORK/data" "$M/r.bin"; then ok "(a) read after the reconnect"; else bad "(a) read after the reconnect"; fi
echo "after reconnect a" >"$M/a.txt"
if [ "$(cat "$D/a.txt" 2>/dev/null)" = "after reconnect a" ]; then ok "(a) write after the reconnect reached the server"
else bad "(a) write after the reconnect"; fi

# (b) no ticket at all: the reconnect cannot log on
kdestroy
: >"$WORK/daemon.log.mark"
lines_before=$(wc -l <"$WORK/daemon.log")
check "(b) connection killed" kill_conn
check "(b) the loss is seen" wait_outage 2
# The first operation after the loss: fails (never hangs, never succeeds) with EACCES once the
# logon has failed; stat of a new name, which the kernel cannot answer from its cache.
"$PYTHON" - "$M" <<'PY' >"$WORK/b.out" 2>&1 && ok "(b) $(tail -1 "$WORK/b.out")" || bad "(b) operations: $(cat "$WORK/b.out")"
import errno, os, sys, time
m = sys.argv[1]
seen = []
for i in range(200):        # each attempt returns (bounded by the park deadline), no hang
    try:
        os.stat("%s/nosuch-%d" % (m, i))
        raise SystemExit("stat succeeded without a ticket")
    except FileNotFoundError:
        raise SystemExit("stat answered ENOENT: the mount logged on without a ticket")
    except OSError as e:
        seen.append(e.errno)
        if e.errno == errno.EACCES:
            break
if seen[-1] != errno.EACCES:
    raise SystemExit("errors %s, never EACCES" % sorted(set(seen)))
t0 = time.monotonic()
try:
    open(m + "/r.bin", "rb").read()
    raise SystemExit("read succeeded without a ticket")
except OSError as e:
    if e.errno != errno.EACCES:
        raise SystemExit("read: %s, not EACCES" % e)
if time.monotonic() - t0 > 5:   # not a timed assertion of speed: 15 s is the park deadline
    raise SystemExit("the read waited for the park deadline instead of failing at once")
print("operations fail with EACCES at once while the logon fails (%d before the first)" % (len(seen) - 1))
PY
tail -n +"$((lines_before + 1))" "$WORK/daemon.log" >"$WORK/b.log"
n=$(grep -c "run kinit" "$WORK/b.log" || true)
if [ "$n" = 1 ]; then ok "(b) the daemon logs one line that says to run kinit: $(grep "run kinit" "$WORK/b.log")"
else bad "(b) lines saying run kinit: $n, log: $(cat "$WORK/b.log")"; fi
# kinit again: the mount comes back by itself (the reconnect keeps trying with back-off)
kinit_user
check "(b) after kinit the mount reconnects" wait_reconnects 2
if cmp -s "$WORK/data" "$M/r.bin"; then ok "(b) read after kinit"; else bad "(b) read after kinit"; fi
echo "after kinit" >"$M/b.txt"
if [ "$(cat "$D/b.txt" 2>/dev/null)" = "after kinit" ]; then ok "(b) write after kinit"; else bad "(b) write after kinit"; fi
fusermount3 -u "$M" || bad "umount"
for _ in $(seq 100); do kill -0 $FSPID 2>/dev/null || break; sleep 0.1; done
wait $FSPID 2>/dev/null
FSPID=""

# ---- clock skew: the client's clock one hour ahead (the machine's clock untouched) ---------
FT_LIB=""
for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
  [ -e "$f" ] && FT_LIB=$f && break
done
if [ -z "$FT_LIB" ]; then
  bad "libfaketime not installed (apt-get install faketime): the clock skew cases cannot run"
else
  # the service ticket in the cache would let the client skip the KDC: a TGT only
  kdestroy
  kinit_user
  skewed=(env LD_PRELOAD="$FT_LIB" FAKETIME="+1h" FAKETIME_DONT_RESET=1)
  if [ "$("${skewed[@]}" date +%s)" -gt $(($(date +%s) + 3000)) ]; then ok "libfaketime puts the clock an hour ahead"
  else bad "libfaketime did not change the clock"; fi
  check_fails "clock skew (CLI, clock +1 h)" "clock skew too great.*check the time" \
    "${skewed[@]}" "$SMB3" -k -o "$O" ls "$URL/"
  check_fails "clock skew (mount, clock +1 h)" "clock skew too great.*check the time" \
    "${skewed[@]}" "$SMB3FS" "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$M" -o "$O,sec=krb5"
  check "without the skew the same works" "$SMB3" -k -o "$O" ls "$URL/"
fi
finish
