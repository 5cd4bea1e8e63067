#!/usr/bin/env bash
# tshark_sealed.sh session|share [SMB3 OPTIONS]: on an encrypted session (the server's
# `smb encrypt = required`, or -o seal), a capture of the loopback port shows no plaintext SMB2
# message after SESSION_SETUP: from the final SESSION_SETUP response on, every SMB2 PDU of every
# connection is a transform frame. With "share" (encryption required by the share only) the same
# holds from the TREE_CONNECT response on, which is where the client learns it. Runs under
# tests/harness/with-smbd; exit 77 (skipped) without tshark/dumpcap.
source "$(dirname "$0")/../integration/lib.sh"
MODE=${1:?usage: tshark_sealed.sh session|share [OPTIONS]}
OPTS=${2:-}
command -v dumpcap >/dev/null && command -v tshark >/dev/null || { echo "tshark/dumpcap not installed"; exit 77; }
CAP=$WORK/cap.pcapng
dumpcap -q -i lo -f "tcp port $SMB3_TEST_PORT" -w "$CAP" 2>"$WORK/dumpcap.err" &
DC=$!
trap 'kill "$DC" 2>/dev/null; wait "$DC" 2>/dev/null; rm -rf "$WORK"' EXIT
for i in $(seq 200); do # dumpcap says so once the capture is live
  grep -q "^File:" "$WORK/dumpcap.err" && break
  kill -0 "$DC" 2>/dev/null || break
  sleep 0.05
done
grep -q "^File:" "$WORK/dumpcap.err" || { bad "dumpcap did not start: $(cat "$WORK/dumpcap.err")"; finish; exit 1; }

U=$SMB3_TEST_URL
O=${OPTS:+-o $OPTS}
head -c 300000 /dev/urandom >"$WORK/up.bin"
echo "secret words" >"$SMB3_TEST_SHARE_DIR/plain.txt"
chown "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR/plain.txt"
check "ls" $SMB3 $O ls "$U/"
check "put" $SMB3 $O put "$WORK/up.bin" "$U/up.bin"
check "cat" $SMB3 $O cat "$U/plain.txt"
check "get" $SMB3 $O get "$U/up.bin" "$WORK/down.bin"
check "same bytes" cmp "$WORK/up.bin" "$WORK/down.bin"
check "stat" $SMB3 $O stat "$U/up.bin"
check "mkdir" $SMB3 $O mkdir "$U/dir"
check "mv" $SMB3 $O mv "$U/up.bin" "$U/dir/moved.bin"
check "rm" $SMB3 $O rm "$U/dir/moved.bin"
CONNS=8

# Wait until the capture holds the FIN of both sides of every connection (dumpcap writes as it goes),
# then stop it.
fields() { tshark -r "$CAP" -d "tcp.port==$SMB3_TEST_PORT,nbss" -T fields -E separator=";" "$@" 2>/dev/null; }
for i in $(seq 100); do
  fins=$(fields -Y "tcp.flags.fin==1" -e frame.number | wc -l)
  [ "$fins" -ge $((2 * CONNS)) ] && break
  sleep 0.05
done
kill -INT "$DC"
wait "$DC" 2>/dev/null
[ "$fins" -ge $((2 * CONNS)) ] && ok "capture holds all $CONNS connections" || bad "only $fins FINs captured"

# Per PDU: stream, protocol id, command, status, response flag (several PDUs of a segment are
# comma-separated, in order).
fields -Y smb2 -e tcp.stream -e smb2.protocol_id -e smb2.cmd -e smb2.nt_status -e smb2.flags.response \
  >"$WORK/pdus.txt"
AFTER=1 # SESSION_SETUP; TREE_CONNECT (3) for a share that requires encryption
[ "$MODE" = share ] && AFTER=3
python3 - "$WORK/pdus.txt" "$CONNS" "$AFTER" <<'PY' && ok "no plaintext SMB2 after command $AFTER" || bad "plaintext after command $AFTER"
import sys
sealed = {}  # stream -> True once its final SESSION_SETUP response went by
transform = plain_after = 0
for line in open(sys.argv[1]):
    stream, proto, cmd, status, rsp = (line.rstrip("\n").split(";") + [""] * 5)[:5]
    protos, cmds, stats, rsps = proto.split(","), cmd.split(","), status.split(","), rsp.split(",")
    ci = 0  # commands, statuses and response flags exist for plaintext PDUs only
    for p in protos:
        if p == "0xfd534d42":
            transform += 1
            continue
        c, s, r = (cmds[ci] if ci < len(cmds) else ""), (stats[ci] if ci < len(stats) else ""), \
                  (rsps[ci] if ci < len(rsps) else "")
        ci += 1
        # tshark may take 0xFE 'SMB' inside ciphertext for a header (a command past the last
        # one, no status): not a PDU anyone sent. A real plaintext message names a real command.
        if sealed.get(stream) and not (c.isdigit() and int(c) <= 0x12):
            print(f"ignored: not an SMB2 header (command {c!r}) on stream {stream}")
        elif sealed.get(stream):
            plain_after += 1
            print(f"plaintext SMB2 command {c} (status {s}) on stream {stream} after command {sys.argv[3]}")
        if c == sys.argv[3] and s == "0x00000000" and r in ("1", "True"):
            sealed[stream] = True
print(f"{len(sealed)} sessions, {transform} transform frames, {plain_after} plaintext PDUs after command {sys.argv[3]}")
sys.exit(0 if plain_after == 0 and transform > 0 and len(sealed) == int(sys.argv[2]) else 1)
PY
finish
