#!/usr/bin/env bash
# Reconnect: the smbd process serving the mount is killed (as when a server restarts or a
# connection resets). Operations during the outage do not hang: those that can be asked twice
# (stat, listing, statfs, open) wait for the new connection, the others fail with an error; the mount
# connects again by itself and later operations work; nothing cached over the old connection is
# trusted (a file changed on the server meanwhile is read anew); a file open across the loss is
# reopened and reads the server's new data (errors until then, never stale bytes), and write-back
# data that had not reached the server goes out through the reopened handle. A long outage fails
# operations after 15 s, then at once, until the server is back.
source "$(dirname "$0")/lib.sh"
command -v ss >/dev/null || { echo "ss (iproute2) missing"; exit 77; }
D=$SMB3_TEST_SHARE_DIR
mount_into M
# kill_conn: kill the smbd processes holding a connection to the test server (only the mount's).
conn_pids() { ss -Htnp state established "( sport = :$SMB3_TEST_PORT )" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u; }
kill_conn() {
  local pids
  pids=$(conn_pids)
  [ -n "$pids" ] || { echo "no smbd connection found"; return 1; }
  kill -9 $pids
}
# wait_reconnect N: until the mount has reconnected N times (the loop only guards against a hang;
# the thread retries every second).
wait_reconnect() {
  local i
  for i in $(seq 300); do
    [ "$(stats "$M" reconnects)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
printf 'version one\n' >"$M/f"
expect "read before the loss" "$(cat "$M/f")" "version one"
"$PYTHON" - "$M" "$D" "$SMB3_TEST_PORT" <<'PY' >"$WORK/py" 2>&1 && ok "$(tail -1 "$WORK/py")" || bad "handles across the loss: $(cat "$WORK/py")"
import os, re, signal, subprocess, sys, time
m, d, port = sys.argv[1:]
# No process may be started while the files below are open: a child's copy of a descriptor is
# closed at its exec or exit, and every close flushes the write-back data this test must lose.
ss = subprocess.run(["ss", "-Htnp", "state", "established", "( sport = :%s )" % port],
                    capture_output=True, text=True, check=True).stdout
pids = {int(p) for p in re.findall(r"pid=(\d+)", ss)}
assert pids, "no smbd connection found: " + ss
r = os.open(m + "/f", os.O_RDONLY)                  # opened over the first connection, data cached
assert os.pread(r, 100, 0) == b"version one\n"
k = os.open(m + "/kept", os.O_RDWR | os.O_CREAT | os.O_TRUNC)  # open across the loss, written after
w = os.open(m + "/dirty", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(w, b"held in write-back")                  # stays in write-back (not on the wire yet)
for p in pids:
    os.kill(p, signal.SIGKILL)
t0 = time.monotonic()
try:                                                 # during the outage: an answer, not a hang
    os.stat(m + "/f")
except OSError:
    pass
assert time.monotonic() - t0 < 30, "stat during the outage took %.1f s" % (time.monotonic() - t0)
open(d + "/f", "w").write("version two, longer\n")  # changed on the server while we were away
i = 0
while True:        # until the server answers again (a new name: a lookup the kernel cannot answer)
    i += 1         # (ctest's timeout guards this loop)
    try:
        os.stat(m + "/absent-%d" % i)
    except FileNotFoundError:
        break
    except OSError:
        time.sleep(0.1)
# The file open across the loss is opened again on the new connection: its reads fail until then
# (never the old cached bytes), then return what the server has now.
while True:
    try:
        got = os.pread(r, 100, 0)
        break
    except OSError:
        time.sleep(0.1)
assert got == b"version two, longer\n", "read through the file open across the loss: %r" % got
os.close(r)
os.pwrite(k, b"written through a reopened handle", 0)
os.close(k)                                          # flushed: must succeed
assert open(d + "/kept").read() == "written through a reopened handle"
os.close(w)            # its write-back data goes out through the reopened handle: no error
got = open(d + "/dirty").read()
assert got == "held in write-back", "write-back data held across the loss, on the server: %r" % got
print("files open across the loss read the new data and write; write-back data held across it reaches the server")
PY
expect "one reconnect counted" "$(stats "$M" reconnects)" 1
expect "the three open files reopened" "$(stats "$M" reopens)" 3
expect "read after the reconnect sees the server's new data" "$(cat "$M/f")" "version two, longer"
expect "size after the reconnect" "$(stat -c %s "$M/f")" 20
printf 'written after\n' >"$M/g"
expect "a write after the reconnect reaches the server" "$(cat "$D/g")" "written after"
check "listing after the reconnect" ls "$M"

# Losses in the middle of a sequential read: the reads that failed wait for the new connection
# and the reopened handle and are done again, so dd gets the whole file; never an early end of
# file (a short READ reply makes the kernel shrink the file's size: it did, 4 times in 12, before).
# Each round kills the connection once dd has read round * 32 MiB, and counts only if dd was
# still reading then (its offset in the file, dd's standard input, short of the end just after
# the kill; dd writes into a paced reader so that it is); otherwise the round is tried again, at
# most 3 times.
head -c 256M /dev/urandom >"$D/big"; chmod 666 "$D/big"
dd_pos() { # PID: its offset in its standard input (fails once it has exited)
  local k v
  while read -r k v; do [ "$k" = pos: ] && { echo "$v"; return 0; }; done 2>/dev/null <"/proc/$1/fdinfo/0"
  return 1
}
n=$(stats "$M" reconnects)
for round in 1 2 3 4; do
  for try in 1 2 3; do
    pids=$(conn_pids) # looked up before: the kill must not wait for ss
    [ -n "$pids" ] || bad "round $round: no smbd connection found"
    # dd writes into a reader that takes 1 MiB every 2 ms, so that dd is surely still reading
    # when the loss comes (unpaced it read the 256 MiB in under 0.1 s and could end first 3 times)
    dd if="$M/big" of=>("$PYTHON" -c 'import sys, time
while sys.stdin.buffer.read(1 << 20): time.sleep(0.002)') bs=1M 2>"$WORK/dd.err" &
    ddpid=$!
    for _ in $(seq 6000); do # at most ~60 s
      pos=$(dd_pos $ddpid) || break
      [ "$pos" -ge $((round * 32 << 20)) ] && break
      sleep 0.01
    done
    kill -9 $pids
    mid=$(pos=$(dd_pos $ddpid) && [ "$pos" -lt 268435456 ] && echo "at $pos")
    rc=0; wait $ddpid || rc=$?
    got=$(grep -o '^[0-9]* bytes' "$WORK/dd.err" | cut -d' ' -f1)
    expect "read through a loss, round $round: dd" "$rc ${got:-?}" "0 268435456"
    n=$((n + 1)); check "reconnected after round $round" wait_reconnect $n
    expect "size through the mount after round $round" "$(stat -c %s "$M/big")" 268435456
    [ -n "$mid" ] && break
  done
  if [ -n "$mid" ]; then ok "round $round: the loss fell while dd was reading (try $try, dd $mid)"
  else bad "round $round: dd had finished before the loss, 3 times"; fi
done
# The same with a reader that paces itself (1 MiB every 3 ms) and a loss once it has 32 MiB, so
# that the loss surely falls in the middle; the bytes it got are checked.
want=$(sha1sum <"$D/big")
for round in 1 2 3; do
  rm -f "$WORK/rd.half"
  "$PYTHON" - "$M/big" "$WORK/rd.half" <<'PY' >"$WORK/rd.out" 2>&1 &
import hashlib, os, sys, time
src, flag = sys.argv[1:]
h, got = hashlib.sha1(), 0
with open(src, "rb", buffering=0) as f:
    while True:
        b = f.read(1 << 20)
        if not b:
            break
        h.update(b)
        got += len(b)
        if got == 32 << 20:
            open(flag, "w").close()
        time.sleep(0.003)
print(h.hexdigest() + "  -")
PY
  rpid=$!
  for _ in $(seq 1000); do [ -e "$WORK/rd.half" ] && break; sleep 0.01; done
  kill_conn >/dev/null
  rc=0; wait $rpid || rc=$?
  expect "paced read through a loss, round $round: the bytes read" "$rc $(tail -1 "$WORK/rd.out")" "0 $want"
  n=$((n + 1)); check "reconnected after paced round $round" wait_reconnect $n
done

# Losses in the middle of a sequential write: WRITEs on the wire and data still held in write-back
# go out again through the reopened handle, so dd succeeds and the server has every byte.
# The writer paces itself (1 MiB every 5 ms) and the connection is killed once the server has
# 32 MiB of the 128, so that the loss falls in the middle of the stream.
head -c 128M /dev/urandom >"$WORK/wsrc"
for round in 1 2 3; do
  "$PYTHON" - "$WORK/wsrc" "$M/wbig$round" <<'PY' >"$WORK/wr.out" 2>&1 &
import os, sys, time
src, dst = sys.argv[1:]
fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
with open(src, "rb") as f:
    while True:
        b = f.read(1 << 20)
        if not b:
            break
        os.write(fd, b)
        time.sleep(0.005)
os.close(fd)
PY
  wpid=$!
  for _ in $(seq 600); do [ "$(stat -c %s "$D/wbig$round" 2>/dev/null || echo 0)" -ge $((32 << 20)) ] && break; sleep 0.01; done
  kill_conn >/dev/null
  rc=0; wait $wpid || rc=$?
  expect "write through a loss, round $round: the writer" "$rc $(tail -1 "$WORK/wr.out")" "0 "
  expect "write through a loss, round $round: every byte on the server" "$(cmp "$WORK/wsrc" "$D/wbig$round" 2>&1)" ""
  n=$((n + 1)); check "reconnected after write round $round" wait_reconnect $n
  rm -f "$D/wbig$round"
done

# Operations that can be asked twice, sent just after a loss: they wait for the new connection
# and succeed (the server is back at once), as on the kernel's cifs client. Fresh names, so that
# nothing is answered from a cache.
mkdir "$D/dir5"; printf 'in dir5\n' >"$D/dir5/x"; printf 'five\n' >"$D/p5"; printf 'seven\n' >"$D/p7"
chmod -R a+rwX "$D/dir5" "$D/p5" "$D/p7"
op_after_loss() { # NAME EXPECTED COMMAND...
  local name=$1 want=$2; shift 2
  kill_conn >/dev/null || { bad "$name: no connection to kill"; return; }
  local got rc=0
  got=$("$@" 2>"$WORK/op.err") || rc=$?
  if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then ok "$name just after a loss"
  else bad "$name just after a loss: exit $rc, got '$got' ($(head -c 200 "$WORK/op.err")), expected '$want'"; fi
  n=$((n + 1)); check "reconnected after: $name" wait_reconnect $n
}
op_after_loss "stat" 5 stat -c %s "$M/p5"
stat "$M/dir5" >/dev/null # the directory's entry stays cached (actimeo): the listing itself is asked after the loss
op_after_loss "listing" x ls "$M/dir5"
op_after_loss "statfs" ok sh -c "stat -f '$M' >/dev/null && echo ok"
op_after_loss "open and read" seven cat "$M/p7"

# A create put off until its data goes (a directory the mount made), the connection lost between the
# write and the close: the CREATE + WRITE sent at close waits for the next connection and goes again
# there; close(2) succeeds and the server has every byte.
c0=$(stats "$M" creates_deferred)
"$PYTHON" - "$M" "$D" "$SMB3_TEST_PORT" <<'PY' >"$WORK/py" 2>&1 && ok "$(tail -1 "$WORK/py")" || bad "put-off create across a loss: $(cat "$WORK/py")"
import os, re, signal, subprocess, sys
m, d, port = sys.argv[1:]
ss = subprocess.run(["ss", "-Htnp", "state", "established", "( sport = :%s )" % port],
                    capture_output=True, text=True, check=True).stdout
pids = {int(p) for p in re.findall(r"pid=(\d+)", ss)}
assert pids, "no smbd connection found: " + ss
# (the mkdir right before the create: the mount knows the new directory empty for actimeo after
# making it, and only then puts the create off; a process started in between, under load, took
# longer than that once in CI)
os.mkdir(m + "/made")
fd = os.open(m + "/made/new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)  # (no process started from here on)
os.write(fd, b"across the loss\n")
for p in pids:
    os.kill(p, signal.SIGKILL)
os.close(fd)
got = open(d + "/made/new", "rb").read()
assert got == b"across the loss\n", "on the server: %r" % got
print("put-off create, connection lost before its close: close succeeds, the data is on the server")
PY
expect "... that create was put off" "$(($(stats "$M" creates_deferred) - c0))" 1
n=$((n + 1)); check "reconnected after the put-off create" wait_reconnect $n

# A second loss, while idle: found by the thread's own look, without an operation failing first.
check "the connection is killed again" kill_conn
n=$((n + 1)); check "the mount reconnects again" wait_reconnect $n
expect "read after the second reconnect" "$(cat "$M/g")" "written after"
fs_umount "$M"

# A long outage: the mount reaches the server through netsim, which is stopped. An operation
# waits for a new connection at most 15 s from the outage's start and then fails; the next one
# fails at once (no wait per operation while the server stays away); once the server is reachable
# again the mount reconnects by itself.
NETSIM=${BUILD_DIR:-}/tools/netsim
start_netsim() { # PORT: 0 = any; sets NS_PID and NS_PORT
  : >"$WORK/ns.out"
  "$NETSIM" --quiet --listen "127.0.0.1:$1" --to "127.0.0.1:$SMB3_TEST_PORT" >"$WORK/ns.out" 2>&1 &
  NS_PID=$!
  for _ in $(seq 100); do grep -q listening "$WORK/ns.out" && break; sleep 0.05; done
  NS_PORT=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$WORK/ns.out")
  [ -n "$NS_PORT" ]
}
elapsed() { "$PYTHON" - "$@" <<'PY'
import subprocess, sys, time
t = time.monotonic()
rc = subprocess.run(sys.argv[1:], capture_output=True).returncode
print("%d %.1f" % (rc, time.monotonic() - t))
PY
}
if [ -x "$NETSIM" ] && start_netsim 0; then
  # actimeo=30: names looked up before the outage stay known to the kernel, so that unlink and
  # rmdir go to the server without a lookup first.
  mount_into N "port=$NS_PORT,actimeo=30"
  # A short outage (the server unreachable for 3 s): operations issued once the loss is known
  # wait for the server and then succeed, including mkdir, rmdir and unlink (refused before they
  # left, so they cannot have been done twice).
  # (each in its own directory: the kernel holds a directory's lock while it waits for an
  # operation in it, so operations in one directory would run one after the other)
  mkdir "$D/ua" "$D/ub" "$D/uc" "$D/sd" "$D/ub/sd2"
  printf 'short\n' >"$D/s1"; printf 'x\n' >"$D/ua/s2"; printf 'y\n' >"$D/sd/f"
  chmod -R a+rwX "$D/s1" "$D/ua" "$D/ub" "$D/uc" "$D/sd"
  stat "$N/ua/s2" "$N/ub/sd2" "$N/uc" "$N/sd" >/dev/null
  outages=$(stats "$N" outages)
  kill "$NS_PID"; wait "$NS_PID" 2>/dev/null
  # the operations start once the mount knows the connection is lost (its reconnect thread looks
  # once a second and counts the outage)
  outage_seen() { for _ in $(seq 100); do [ "$(stats "$N" outages)" -gt "$1" ] && return 0; sleep 0.1; done; return 1; }
  check "the loss is noticed" outage_seen "$outages"
  "$PYTHON" - "$N" <<'PY' >"$WORK/short.out" 2>&1 &
import os, sys, threading
m = sys.argv[1]
ops = {
    "stat": lambda: os.stat(m + "/s1").st_size == 6,
    "listing": lambda: os.listdir(m + "/sd") == ["f"],
    "read": lambda: open(m + "/s1").read() == "short\n",
    "mkdir": lambda: os.mkdir(m + "/uc/made") or True,
    "unlink": lambda: os.unlink(m + "/ua/s2") or True,
    "rmdir": lambda: os.rmdir(m + "/ub/sd2") or True,
}
res = {}
def run(k, f):
    try:
        res[k] = "ok" if f() else "wrong answer"
    except OSError as e:
        res[k] = "error: %s" % e
ts = [threading.Thread(target=run, args=kv) for kv in ops.items()]
for t in ts: t.start()
for t in ts: t.join()
print(" ".join("%s=%s" % kv for kv in sorted(res.items())))
PY
  spid=$!
  sleep 3 # the outage's length
  expect "the operations are still waiting when the server comes back" "$(cat "$WORK/short.out")" ""
  check "netsim back after a short outage" start_netsim "$NS_PORT"
  wait $spid
  expect "operations during a short outage" "$(tail -1 "$WORK/short.out")" \
    "listing=ok mkdir=ok read=ok rmdir=ok stat=ok unlink=ok"
  expect "their effects on the server" "$([ -d "$D/uc/made" ] && [ ! -e "$D/ua/s2" ] && [ ! -e "$D/ub/sd2" ] && echo yes)" yes
  reconnected() { for _ in $(seq 300); do [ "$(stats "$N" reconnects)" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }
  check "reconnected after the short outage" reconnected 1

  printf 'q\n' >"$D/q1"
  kill "$NS_PID"; wait "$NS_PID" 2>/dev/null
  read -r rc secs <<<"$(elapsed stat "$N/q1")"
  if [ "$rc" -ne 0 ] && "$PYTHON" -c "import sys; sys.exit(not 10 <= $secs <= 30)"; then
    ok "server away: the first operation waits for it, then fails ($secs s)"
  else bad "server away: first operation: exit $rc after $secs s (expected a failure after 10-30 s)"; fi
  read -r rc secs <<<"$(elapsed stat "$N/q2")"
  if [ "$rc" -ne 0 ] && "$PYTHON" -c "import sys; sys.exit(not $secs < 5)"; then
    ok "server still away: the next operation fails at once ($secs s)"
  else bad "server still away: next operation: exit $rc after $secs s (expected a failure within 5 s)"; fi
  check "netsim back on the same port" start_netsim "$NS_PORT"
  check "the mount reconnects once the server is reachable" reconnected 2
  expect "stat after the long outage" "$(stat -c %s "$N/q1")" 2
  kill "$NS_PID" 2>/dev/null
  fs_umount "$N"
else
  bad "netsim could not be started ($NETSIM): $(cat "$WORK/ns.out" 2>/dev/null)"
fi
finish
