#!/usr/bin/env bash
# fuzz-corpus-from-traffic.sh [BUILD]: grow the fuzz corpora from real traffic. Runs smb3 CLI
# commands (ls, put, get, cat, stat, cp, ln, chmod, df, mkdir, mv, rm, rmdir; SMB 3.1.1 with and
# without the POSIX extensions, 3.0.2, 2.1, and without compounding) against a throwaway smbd
# (tests/harness/with-smbd, signing and encryption off so the payloads are plain) while dumpcap
# captures the loopback port, then tests/fuzz/corpus_from_traffic.py cuts every SMB2 response out
# of the capture and writes it, per command, into tests/fuzz/corpus/<target>/ (names "traffic-*",
# deduplicated, capped per target). Re-run after a change of what the client sends; commit the
# new files. Needs root (smbd), dumpcap and tshark (scripts/install-deps.sh check).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
[ -x "$BUILD/cli/smb3" ] || { echo "fuzz-corpus-from-traffic: no $BUILD/cli/smb3 (build first)" >&2; exit 1; }
command -v dumpcap >/dev/null && command -v tshark >/dev/null ||
  { echo "fuzz-corpus-from-traffic: dumpcap/tshark not installed (scripts/install-deps.sh check)" >&2; exit 1; }
if [ -z "${SMB3_TEST_PORT:-}" ]; then
  exec "$ROOT/tests/harness/with-smbd" --global "server signing = auto" --global "smb encrypt = off" \
    --share "ea support = yes" -- "$ROOT/scripts/$(basename "$0")" "$BUILD"
fi

WORK=$(mktemp -d)
CAP=$WORK/cap.pcapng
: >"$WORK/dumpcap.err"
dumpcap -q -i lo -f "tcp port $SMB3_TEST_PORT" -w "$CAP" 2>"$WORK/dumpcap.err" &
DC=$!
trap 'kill "$DC" 2>/dev/null; wait "$DC" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 200); do # dumpcap says so once the capture is live
  grep -q "^File:" "$WORK/dumpcap.err" && break
  kill -0 "$DC" 2>/dev/null || break
  sleep 0.05
done
grep -q "^File:" "$WORK/dumpcap.err" || { echo "dumpcap did not start: $(cat "$WORK/dumpcap.err")" >&2; exit 1; }

SMB3=$BUILD/cli/smb3
U=$SMB3_TEST_URL
head -c 20000 /dev/urandom >"$WORK/up.bin"
echo "some words" >"$SMB3_TEST_SHARE_DIR/plain.txt"
mkdir -p "$SMB3_TEST_SHARE_DIR/tree/sub"
for i in 1 2 3; do echo "$i" >"$SMB3_TEST_SHARE_DIR/tree/f$i"; done
chown -R "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR"
conns=0
run() { # OPTIONS COMMAND ARGS: one smb3 run (one connection); failures are fine, answers count
  local o=$1
  shift
  "$SMB3" ${o:+-o "$o"} "$@" >/dev/null 2>&1 || true
  conns=$((conns + 1))
}
for o in "" "posix" "vers=3.0.2" "vers=2.1" "nocompound"; do
  d=d${conns}
  run "$o" ls "$U/"
  run "$o" ls -l "$U/tree"
  run "$o" put "$WORK/up.bin" "$U/up.bin"
  run "$o" cat "$U/plain.txt"
  run "$o" get "$U/up.bin" "$WORK/down.bin"
  run "$o" stat "$U/up.bin"
  run "$o" stat "$U/missing"
  run "$o" df "$U/"
  run "$o" cp "$U/up.bin" "$U/copy.bin"
  run "$o" ln -s "plain.txt" "$U/link"
  run "$o" stat "$U/link"
  run "$o" chmod 600 "$U/copy.bin"
  run "$o" mkdir "$U/$d"
  run "$o" mv "$U/copy.bin" "$U/$d/moved.bin"
  run "$o" rm "$U/$d/moved.bin" "$U/link" "$U/up.bin"
  run "$o" rmdir "$U/$d"
done
run "" ls "$U/tree" "$U/tree/sub" "$U/nosuchdir"

# Wait for the FIN of both sides of every connection (dumpcap writes as it goes), then stop it.
for _ in $(seq 100); do
  fins=$(tshark -r "$CAP" -Y "tcp.flags.fin==1" -T fields -e frame.number 2>/dev/null | wc -l || true)
  [ "$fins" -ge $((2 * conns)) ] && break
  sleep 0.05
done
kill -INT "$DC"
wait "$DC" 2>/dev/null || true
echo "captured $conns connections ($fins FINs)"
python3 "$ROOT/tests/fuzz/corpus_from_traffic.py" "$CAP" "$SMB3_TEST_PORT" "$ROOT/tests/fuzz/corpus"
