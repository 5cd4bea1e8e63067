#!/usr/bin/env bash
# run_case.sh CASE: starts hostile_server.py CASE on 127.0.0.1 at a free port, runs one smb3 command
# (or, for the fs_* cases, an operation on an smb3fs mount) against it, and checks the answer.
# The fs_* cases: the affected operation fails with EIO or EPROTO, and the mount still reads a file.
# A refused case: non-zero exit within the command's timeout, exactly one line on stderr matching
# the case's pattern, no signal (ASan/UBSan abort the process, which counts as a crash).
# Environment: SMB3, SMB3FS (binaries), PYTHON; HOSTILE_CORPUS=DIR also writes each hostile message
# into DIR/<fuzz target>/ (tests/fuzz/corpus got them so). Exit 0 pass, 1 fail, 77 not run (no FUSE here).
set -u
CASE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
SMB3=${SMB3:-smb3}
SMB3FS=${SMB3FS:-smb3fs}
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
WORK=$(mktemp -d /tmp/smb3-hostile.XXXXXX)
SRV=
MNT=
source "$HERE/../harness/proc.sh"
cleanup() {
  local rc=$?
  if [ -n "$MNT" ]; then
    fusermount3 -uz "$MNT" 2>/dev/null || true
    for pid in $(pgrep -f -- "smb3fs .*$MNT( |\$)"); do
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    done
    rmdir "$MNT" 2>/dev/null || true
  fi
  if [ -n "$SRV" ]; then kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; fi
  san_reports "$WORK/san" || rc=1 # the daemon's (its standard error is /dev/null once mounted)
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL $CASE: $*"; exit 1; }

start_server() {
  "$PYTHON" "$HERE/hostile_server.py" "$CASE" "$WORK/port" ${HOSTILE_CORPUS:+"$HOSTILE_CORPUS"} 9>&- &
  SRV=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; kill -0 "$SRV" 2>/dev/null || break; sleep 0.05; done
  [ -s "$WORK/port" ] || fail "the hostile server did not start"
  PORT=$(cat "$WORK/port")
  URL="smb://127.0.0.1:$PORT/share"
}

# refused LIMIT PATTERN COMMAND...: COMMAND must fail within LIMIT seconds with one stderr line
refused() {
  local limit=$1 pat=$2 rc=0 t0 t1
  shift 2
  t0=$(date +%s)
  timeout "$limit" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  t1=$(date +%s)
  local lines; lines=$(wc -l <"$WORK/err")
  if [ "$rc" -eq 0 ]; then fail "accepted (exit 0): $(head -c 300 "$WORK/out")"
  elif [ "$rc" -eq 124 ]; then fail "hung (killed after $limit s)"
  elif [ "$rc" -ge 128 ]; then fail "crashed (exit $rc): $(head -c 2000 "$WORK/err")"
  elif [ "$lines" -ne 1 ]; then fail "expected one error line, got $lines: $(head -c 2000 "$WORK/err")"
  elif ! grep -qiE "$pat" "$WORK/err"; then fail "error '$(cat "$WORK/err")' does not match /$pat/"
  fi
  echo "ok   $CASE ($((t1 - t0)) s, exit $rc): $(cat "$WORK/err")"
}

# accepted LIMIT COMMAND...: a harmless oddity: COMMAND succeeds, stdout in $WORK/out
accepted() {
  local limit=$1 rc=0
  shift
  timeout "$limit" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(head -c 2000 "$WORK/err")"
}

G=(-o guest,timeout=5)
case $CASE in
fs_*)
  command -v fusermount3 >/dev/null && [ -c /dev/fuse ] || { echo "SKIP: no FUSE"; exit 77; } ;;
esac
start_server

case $CASE in
negotiate_offset_oob) refused 20 "malformed|protocol" "$SMB3" "${G[@]}" ls "$URL/" ;;
nbss_4g) refused 20 "not a valid SMB2 message" "$SMB3" "${G[@]}" ls "$URL/" ;;
zero_credits) refused 20 "credit|protocol|range" "$SMB3" "${G[@]}" ls "$URL/" ;;
structsize) refused 20 "malformed|protocol" "$SMB3" "${G[@]}" ls "$URL/" ;;
unsolicited_mid) refused 20 "malformed or unexpected" "$SMB3" "${G[@]}" ls "$URL/" ;;
duplicate_mid) refused 20 "malformed or unexpected" "$SMB3" "${G[@]}" ls "$URL/" ;;
pending_forever) refused 30 "timed out" "$SMB3" -o guest,timeout=2 ls "$URL/" ;;
next_command_loop | next_command_underflow | next_command_misaligned)
  refused 20 "malformed or unexpected" "$SMB3" "${G[@]}" ls "$URL/" ;;
query_dir_oob | dirent_next_oob | dirent_slash | dirent_nul)
  refused 20 "protocol|malformed|invalid" "$SMB3" "${G[@]}" ls "$URL/" ;;
dirent_dotdot) # '.' and '..' (even twice) are the directory's own entries: never listed
  accepted 20 "$SMB3" "${G[@]}" ls "$URL/"
  [ "$(wc -l <"$WORK/out")" -eq 1 ] && grep -q ' file$' "$WORK/out" ||
    fail "listing: '$(tr '\n' '|' <"$WORK/out")', expected only 'file'"
  echo "ok   $CASE: listed '$(cat "$WORK/out")' ('.' and both '..' dropped)" ;;
ntlm_empty_targetinfo) # a real logon: the client must still build a well-formed AUTHENTICATE
  refused 20 "logon failure" "$SMB3" -o timeout=5 ls "smb://user:pass@127.0.0.1:$PORT/share/" ;;
create_context_truncated | create_context_oob)
  refused 20 "protocol|malformed" "$SMB3" "${G[@]}" get "$URL/file" "$WORK/got" ;;
read_length_oob | read_offset_oob)
  refused 20 "protocol|malformed" "$SMB3" "${G[@]}" get "$URL/file" "$WORK/got"
  [ -e "$WORK/got" ] && fail "a local file was left behind" ;;
query_info_oob) refused 20 "protocol|malformed" "$SMB3" "${G[@]}" stat "$URL/file" ;;
lease_break_unknown) # a break for a key we never held is ignored (MS-SMB2 3.2.5.19.2), the read goes on
  accepted 20 "$SMB3" "${G[@]}" get "$URL/file" "$WORK/got"
  [ "$(cat "$WORK/got")" = hello ] || fail "got '$(cat "$WORK/got")'"
  echo "ok   $CASE: break for an unknown lease ignored, file read" ;;
fs_*)
  MNT=$(mktemp -d /tmp/smb3-hostile-mnt.XXXXXX)
  mkdir "$WORK/san"
  (san_to_files "$WORK/san" && exec timeout 20 "$SMB3FS" "//127.0.0.1/share" "$MNT" -o "port=$PORT,guest,timeout=5") 9>&- >"$WORK/mount.log" 2>&1 ||
    fail "mount failed: $(cat "$WORK/mount.log")"
  op_rc=0
  case $CASE in
  fs_ea_overrun) # getxattr on a file whose EA list overruns its buffer
    timeout 20 "$PYTHON" -c 'import os,sys; os.getxattr(sys.argv[1], "user.x")' "$MNT/file" 2>"$WORK/err" || op_rc=$? ;;
  fs_allocated_ranges_overrun) # SEEK_DATA on a file whose allocated ranges overrun the answer
    timeout 20 "$PYTHON" -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.lseek(fd, 0, os.SEEK_DATA)' "$MNT/file" 2>"$WORK/err" || op_rc=$? ;;
  fs_dirent_slash) # a directory entry named 'a/b'
    timeout 20 ls "$MNT" >/dev/null 2>"$WORK/err" || op_rc=$? ;;
  esac
  [ "$op_rc" -eq 124 ] && fail "the operation hung"
  [ "$op_rc" -eq 0 ] && fail "the operation succeeded"
  # EIO, or EPROTO: the mount's errno for a malformed answer (smb3_errno(SMB3_EPROTO), lib/util/errors.c)
  grep -qE "Errno (5|71)\]|Input/output error|Protocol error" "$WORK/err" ||
    fail "expected EIO or EPROTO, got: $(cat "$WORK/err")"
  # the mount stays usable: an unaffected operation still works
  timeout 20 cat "$MNT/file" >"$WORK/out" 2>"$WORK/err2" || fail "mount unusable after the error: $(cat "$WORK/err2")"
  [ "$(cat "$WORK/out")" = hello ] || fail "read after the error: '$(cat "$WORK/out")'"
  echo "ok   $CASE: $(tail -n1 "$WORK/err"); the mount still reads 'file'" ;;
*) fail "unknown case" ;;
esac
exit 0
