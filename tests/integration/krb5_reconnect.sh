#!/usr/bin/env bash
# Kerberos across a reconnect and against a skewed clock, on a throwaway Samba AD DC
# (tests/harness/with-dc). A sec=krb5 mount (in the foreground, so that the daemon's log lines
# come on its standard error) loses its connection (the smbd child serving it is killed) after
# the credential cache was replaced:
#  (a) by a fresh ticket-granting ticket only (kdestroy, kinit): the service ticket is gone, the
#      reconnect gets a new cifs/ ticket from the TGT and the mount goes on reading and writing;
#  (b) by nothing (kdestroy): the next operation fails with EACCES at once (no 15 s wait for a
#      connection that cannot come), the daemon logs one line that says to run kinit, and after a
#      kinit the mount comes back by itself;
#  (c) by a ticket that has expired meanwhile: the same, the line says the ticket expired.
# The CLI: a clock one hour ahead (libfaketime, the machine's clock untouched) gets one line
# naming the clock skew; so does a mount. And the error cases krb5_dc.sh leaves out: a client
# principal the KDC does not know, a mount without a ticket.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../harness/proc.sh"
SMB3FS=${SMB3FS:-smb3fs}
O="ip=$SMB3_TEST_IP"
URL=$SMB3_TEST_URL
D=$SMB3_TEST_SHARE_DIR
M=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX)
FSPID=""
cleanup() {
  local rc=$?
  fusermount3 -uz "$M" 2>/dev/null || true
  if [ -n "$FSPID" ]; then
    for _ in $(seq 100); do kill -0 "$FSPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$FSPID" 2>/dev/null || true
  fi
  rmdir "$M" 2>/dev/null || true
  san_reports "$WORK/san" || rc=1 # (the daemon's, LeakSanitizer's at its exit included)
  rm -rf "$WORK"
  exit $rc
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

kinit_user
head -c 200000 /dev/urandom >"$WORK/data"
cp "$WORK/data" "$D/r.bin" && chmod 666 "$D/r.bin"

# ---- the mount ------------------------------------------------------------------------------
if [ ! -e /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  bad "no /dev/fuse or fusermount3: the mount cases cannot run"
  finish
  exit
fi
mkdir "$WORK/san"
(san_to_files "$WORK/san" && exec "$SMB3FS" "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$M" -f -o "$O,sec=krb5") 2>"$WORK/daemon.log" &
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

# no_logon CASE PATTERN N: the cache was just made useless (by the caller); kill the connection
# (the mount's Nth loss; `smb3 stats` needs the mount's root, which fails too): the operations fail (never hang, never succeed) with EACCES once
# the logon has failed (the stat of new names, which the kernel cannot answer from its cache, and
# a read), the daemon logs one line matching PATTERN, and after a kinit the mount comes back.
no_logon() {
  local c=$1 pat=$2 n=$3 lines_before
  lines_before=$(wc -l <"$WORK/daemon.log")
  check "$c connection killed" kill_conn
  if "$PYTHON" - "$M" <<'PY' >"$WORK/op.out" 2>&1; then ok "$c $(tail -1 "$WORK/op.out")"; else bad "$c operations: $(cat "$WORK/op.out")"; fi
import errno, os, sys, time
m = sys.argv[1]
seen = []
for i in range(200):        # each attempt returns (bounded by the park deadline), no hang
    try:
        os.stat("%s/nosuch-%d" % (m, i))
        raise SystemExit("stat succeeded without a ticket")
    except FileNotFoundError:   # the killed smbd's socket not closed yet: still the old session
        seen.append(errno.ENOENT)
        time.sleep(0.05)
    except OSError as e:
        seen.append(e.errno)
        if e.errno == errno.EACCES:
            break
if seen[-1] != errno.EACCES:
    raise SystemExit("errors %s, never EACCES" % sorted(set(seen)))
try:        # from now on at once with EACCES too (the connection's ECONNRESET before)
    open(m + "/r.bin", "rb").read()
    raise SystemExit("read succeeded without a ticket")
except OSError as e:
    if e.errno != errno.EACCES:
        raise SystemExit("read: %s, not EACCES" % e)
print("operations fail with EACCES while the logon fails (before the first: %s)" % seen[:-1])
PY
  tail -n +"$((lines_before + 1))" "$WORK/daemon.log" >"$WORK/op.log"
  local k
  k=$(grep -c "run kinit" "$WORK/op.log" || true)
  if [ "$k" = 1 ] && grep -qE "$pat" "$WORK/op.log"; then ok "$c the daemon logs one line that says to run kinit: $(grep "run kinit" "$WORK/op.log")"
  else bad "$c lines saying run kinit: $k (want 1 matching /$pat/), log: $(cat "$WORK/op.log")"; fi
  # kinit again: the mount comes back by itself (the reconnect keeps trying with back-off)
  kinit_user
  check "$c after kinit the mount reconnects" wait_reconnects "$n"
  if cmp -s "$WORK/data" "$M/r.bin"; then ok "$c read after kinit"; else bad "$c read after kinit"; fi
  echo "after kinit $n" >"$M/b$n.txt"
  if [ "$(cat "$D/b$n.txt" 2>/dev/null)" = "after kinit $n" ]; then ok "$c write after kinit"; else bad "$c write after kinit"; fi
}
# (b) no ticket at all (kdestroy)
kdestroy
no_logon "(b)" "no Kerberos ticket for $SMB3_TEST_REALM: run kinit" 2
# (c) the ticket expired: a TGT of 3 s (no service ticket), then wait (bounded) until klist says
# it is no longer valid
kdestroy
kinit_user -l 3s
for _ in $(seq 150); do klist -s || break; sleep 0.1; done
if klist -s; then bad "(c) the 3 s ticket is still valid after 15 s"; fi
no_logon "(c)" "ticket for $SMB3_TEST_PRINCIPAL has expired: run kinit" 3
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
  # (under ASan the sanitizer's runtime must come first among the preloaded libraries; with
  # libfaketime preloaded it cannot, which ASan refuses unless told the order is fine)
  skewed=(env LD_PRELOAD="$FT_LIB" FAKETIME="+1h" FAKETIME_DONT_RESET=1
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
  if [ "$("${skewed[@]}" date +%s)" -gt $(($(date +%s) + 3000)) ]; then ok "libfaketime puts the clock an hour ahead"
  else bad "libfaketime did not change the clock"; fi
  check_fails "clock skew (CLI, clock +1 h)" "clock skew too great.*check the time" \
    "${skewed[@]}" "$SMB3" -k -o "$O" ls "$URL/"
  check_fails "clock skew (mount, clock +1 h)" "clock skew too great.*check the time" \
    "${skewed[@]}" "$SMB3FS" "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$M" -o "$O,sec=krb5"
  check "without the skew the same works" "$SMB3" -k -o "$O" ls "$URL/"
fi

# ---- the error cases krb5_dc.sh does not cover -----------------------------------------------
# A client principal the KDC does not know: a keytab of our own for a made-up name (ktutil
# derives its key from a password; the KDC refuses the name before any key matters).
KT=$WORK/ghost.keytab
printf 'addent -password -p ghost@%s -k 1 -e aes256-cts-hmac-sha1-96\n%s\nwkt %s\n' \
  "$SMB3_TEST_REALM" "Ghost1$RANDOM$RANDOM" "$KT" | ktutil >/dev/null 2>&1
if [ -s "$KT" ]; then
  check_fails "client principal unknown to the KDC (keytab)" "KDC does not know the client principal ghost@SMB3TEST.LAN" \
    "$SMB3" -o "$O,krb5_keytab=$KT,username=ghost@$SMB3_TEST_REALM" ls "$URL/"
else
  bad "ktutil wrote no keytab: the unknown client principal case cannot run"
fi
# The mount with no ticket: one line, exit non-zero, nothing mounted.
kdestroy
check_fails "mount sec=krb5 without a ticket" "no Kerberos ticket for SMB3TEST.LAN: run kinit" \
  "$SMB3FS" "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$M" -o "$O,sec=krb5"
if mountpoint -q "$M"; then bad "mounted without a ticket"; else ok "nothing mounted without a ticket"; fi
finish
