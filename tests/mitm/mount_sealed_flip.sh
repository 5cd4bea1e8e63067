#!/usr/bin/env bash
# mount_sealed_flip.sh: smb3fs mounted with -o seal through netsim, which flips one bit in the
# ciphertext of every sealed READ response of 1 MB or more: reading the file through the mount fails
# (EBADMSG, libsmb3's errno for a failed signature or decryption; EIO accepted; cat exits non-zero), and what cat wrote is a prefix of the file (no byte of a response
# that failed authentication). Then the rule is gone (a new relay): the same mount must read the file
# whole again. Runs under tests/harness/with-smbd; exit 77 without FUSE.
source "$(dirname "$0")/../fs/lib.sh"
NETSIM=${NETSIM:?NETSIM=path to netsim}
[ -e /dev/fuse ] || { echo "no /dev/fuse"; exit 77; }
NS_PID=
stop_relay() {
  if [ -n "$NS_PID" ]; then
    kill "$NS_PID" 2>/dev/null
    wait "$NS_PID" 2>/dev/null
    NS_PID=
  fi
  return 0
}
trap 'st=$?; stop_relay; (exit $st); cleanup' EXIT # cleanup (fs/lib.sh) exits with the status it sees
start_relay() { # PORT RULE...: sets RPORT
  local port=$1 args=() r i
  shift
  for r in "$@"; do args+=(--rule "$r"); done
  rm -f "$WORK/relay.out"
  "$NETSIM" --listen "127.0.0.1:$port" --to "127.0.0.1:$SMB3_TEST_PORT" --trace "${args[@]}" \
    >"$WORK/relay.out" 2>"$WORK/relay.log" &
  NS_PID=$!
  RPORT=
  for i in $(seq 200); do
    RPORT=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$WORK/relay.out" 2>/dev/null)
    [ -n "$RPORT" ] && return 0
    kill -0 "$NS_PID" 2>/dev/null || break
    sleep 0.05
  done
  bad "netsim did not start: $(cat "$WORK/relay.log")"
  finish
  exit 1
}

SIZE=$((4 << 20))
head -c $SIZE /dev/urandom >"$SMB3_TEST_SHARE_DIR/big.bin"
chown "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR/big.bin"
start_relay 0 "dir=s2c,cmd=transform,minlen=1000000,flip=msg+500000:3"
BASEOPTS="port=$RPORT,username=$SMB3_TEST_USER,password=$SMB3_TEST_PASS"
mount_into M "seal,rsize=1M,cache=none"
rc=0
timeout 120 cat "$M/big.bin" >"$WORK/read.bin" 2>"$WORK/cat.err" || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qE "Bad message|Input/output error" "$WORK/cat.err"; then
  ok "read through the mount fails: $(head -1 "$WORK/cat.err")"
else
  bad "read through the mount: exit $rc, '$(head -c 300 "$WORK/cat.err")' (wanted EBADMSG or EIO)"
fi
if grep -q "rule 1 action 1 fired" "$WORK/relay.log"; then ok "rule fired"; else bad "rule never fired"; fi
n=$(stat -c %s "$WORK/read.bin")
if [ "$n" -lt "$SIZE" ] && cmp -s -n "$n" "$WORK/read.bin" "$SMB3_TEST_SHARE_DIR/big.bin"; then
  ok "cat wrote $n bytes, a prefix of the file"
else
  bad "cat wrote $n bytes that are not a short prefix of the file"
fi
# The same port without the rule: the mount reconnects and reads the whole file.
stop_relay
start_relay "$RPORT"
# The old connection died with the relay; the mount's reconnect thread looks once a second and
# backs off up to 10 s, so the file is read again until it comes whole (30 s at most).
recovered=0
for i in $(seq 60); do
  if timeout 60 cat "$M/big.bin" 2>"$WORK/cat2.err" | cmp -s - "$SMB3_TEST_SHARE_DIR/big.bin"; then
    recovered=1
    break
  fi
  sleep 0.5
done
if [ "$recovered" = 1 ]; then
  ok "without the attack the mount reads the file whole again (try $i)"
else
  bad "the mount did not recover once the attack stopped: $(head -1 "$WORK/cat2.err")"
fi
stop_relay
finish
