# lib.sh - helpers for the shell integration tests (sourced). Each test runs under
# tests/harness/with-smbd, so SMB3_TEST_* describe a live throwaway Samba server.
# Results: ok/fail lines, and a closing 'N passed, N failed' line (exit 1 if any failed).
set -u
PASSED=0
FAILED=0
SMB3=${SMB3:-smb3}
WORK=$(mktemp -d /tmp/smb3it.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

ok() { PASSED=$((PASSED + 1)); printf 'ok   %s\n' "$*"; }
bad() { FAILED=$((FAILED + 1)); printf 'FAIL %s\n' "$*"; }
# check NAME COMMAND...: passes when COMMAND exits 0
check() {
  local name=$1; shift
  if "$@" >"$WORK/out" 2>"$WORK/err"; then ok "$name"; else bad "$name (exit $?): $(head -c 400 "$WORK/err")"; fi
}
# check_fails NAME PATTERN COMMAND...: passes when COMMAND exits non-zero within 60 s, prints
# exactly one line on stderr, and that line matches PATTERN (grep -E, case-insensitive)
check_fails() {
  local name=$1 pat=$2; shift 2
  local rc=0
  timeout 60 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  local lines; lines=$(wc -l <"$WORK/err")
  if [ "$rc" -eq 0 ]; then bad "$name: succeeded but should have failed"
  elif [ "$rc" -eq 124 ]; then bad "$name: hung (killed after 60 s)"
  elif [ "$rc" -ge 128 ]; then bad "$name: crashed (exit $rc): $(cat "$WORK/err")"
  elif [ "$lines" -ne 1 ]; then bad "$name: expected one error line, got $lines: $(cat "$WORK/err")"
  elif ! grep -qiE "$pat" "$WORK/err"; then bad "$name: error '$(cat "$WORK/err")' does not match /$pat/"
  else ok "$name: $(cat "$WORK/err")"; fi
}
same_file() { cmp -s "$1" "$2"; }
finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
