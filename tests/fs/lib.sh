# lib.sh - helpers for the smb3fs tests (sourced). Each test runs under tests/harness/with-smbd,
# so SMB3_TEST_* describe a live throwaway Samba server; SMB3FS and SMB3 name the binaries.
# Mounts made with fs_mount are always unmounted on exit (fusermount3 -uz, then the daemon, found
# by its unique mount point, is killed if it is still there), whatever happened.
set -u
PASSED=0
FAILED=0
SMB3FS=${SMB3FS:-smb3fs}
SMB3=${SMB3:-smb3}
# The system interpreter: a version-manager shim in PATH can cost seconds per start.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
WORK=$(mktemp -d /tmp/smb3fs-test.XXXXXX)
FSCHECK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # fscheck.py: the Python parts' helpers
export FSCHECK_DIR
source "$FSCHECK_DIR/../harness/proc.sh" # alive PID
MOUNTS=()

ok() { PASSED=$((PASSED + 1)); printf 'ok   %s\n' "$*"; }
bad() { FAILED=$((FAILED + 1)); printf 'FAIL %s\n' "$*"; }
# check NAME COMMAND...: passes when COMMAND exits 0
check() {
  local name=$1; shift
  if "$@" >"$WORK/out" 2>"$WORK/err"; then ok "$name"; else bad "$name (exit $?): $(head -c 400 "$WORK/err")"; fi
}
# check_fails NAME COMMAND...: passes when COMMAND exits non-zero (and does not crash)
check_fails() {
  local name=$1; shift
  local rc=0
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [ "$rc" -eq 0 ]; then bad "$name: succeeded but should have failed"
  elif [ "$rc" -ge 128 ]; then bad "$name: crashed (exit $rc)"
  else ok "$name: $(head -c 200 "$WORK/err" | tr '\n' ' ')"; fi
}
# expect NAME ACTUAL EXPECTED
expect() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', expected '$3'"; fi; }
# expect_soon NAME EXPECTED CMD...: for what follows a close (the kernel sends RELEASE in the
# background): CMD's output must become EXPECTED within 10 s.
expect_soon() {
  local name=$1 want=$2 got i
  shift 2
  for i in $(seq 100); do
    got=$("$@")
    [ "$got" = "$want" ] && break
    sleep 0.1
  done
  expect "$name" "$got" "$want"
}

daemon_pids() { # the smb3fs process serving mount point $1 (a unique temp path on its command line)
  pgrep -f -- "smb3fs .*$1( |\$)" || true
}

fs_umount() {
  local m=$1 pid
  fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  for pid in $(daemon_pids "$m"); do
    # let it exit by itself after the unmount; only then force it
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rmdir "$m" 2>/dev/null || true
}

# Sanitizer reports of every process (the daemon's stderr is /dev/null once it is mounted) go to
# files in $WORK, which fail the test at exit.
san_to_files "$WORK"
# The daemons' standard error and syslog messages (a daemon that ends by itself says why there),
# shown when the test fails.
export SMB3FS_STDERR=$WORK/daemon.log
# A daemon that dies by a signal no sanitizer reports (SIGKILL; SIGABRT, SIGILL unless ASan is told
# to handle them) leaves no message. So, as root, the kernel keeps every signal sent on the machine
# while the test runs (but the routine ones: SIGCHLD, SIGCONT, SIGSTOP/SIGTSTP, SIGURG, SIGWINCH,
# glibc's thread signals) and every exit_group(2) of an smb3fs process with its status, in a tracefs
# instance of its own, shown when the test fails: which process sent what to whom, and which daemon
# ended by itself. Diagnosis only: without tracefs the test runs the same.
export ASAN_OPTIONS="$ASAN_OPTIONS:handle_abort=1:handle_sigill=1"
SIGTRACE=/sys/kernel/tracing/instances/smb3fs-test-$$
{
  [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing
  mkdir "$SIGTRACE" && echo 64 >"$SIGTRACE/buffer_size_kb" &&
    echo 'sig != 17 && sig != 18 && sig != 19 && sig != 20 && sig != 23 && sig != 28 && sig != 32 && sig != 33' \
      >"$SIGTRACE/events/signal/signal_generate/filter" &&
    echo 1 >"$SIGTRACE/events/signal/signal_generate/enable" && {
    # (a kernel without syscall events keeps the signals alone; record-tgid: the process of the
    # thread that called it, shown in parentheses)
    echo 1 >"$SIGTRACE/options/record-tgid" &&
      echo 'comm == "smb3fs"' >"$SIGTRACE/events/syscalls/sys_enter_exit_group/filter" &&
      echo 1 >"$SIGTRACE/events/syscalls/sys_enter_exit_group/enable" || true
  }
} 2>/dev/null || { rmdir "$SIGTRACE"; SIGTRACE=; } 2>/dev/null
declare -A DAEMON=() # mount point -> the pid of the daemon serving it, taken when mounted
cleanup() {
  local m rc=$? ended=
  # only the test's own shell: bash runs the EXIT trap in a subshell killed by a signal before it
  # has reset its traps (a background job signalled as soon as it is forked), which would unmount
  # the test's mounts under it
  [ "$BASHPID" = "$$" ] || return "$rc"
  # before the unmount: which daemons had ended already, and the kernel's record
  for m in "${MOUNTS[@]}"; do
    [ -n "${DAEMON[$m]:-}" ] && ! alive "${DAEMON[$m]}" &&
      ended+="the daemon of $m (pid ${DAEMON[$m]}) had ended before the unmount"$'\n'
  done
  if [ -n "$SIGTRACE" ]; then
    # (every mount's first process exits once the daemon it forked has mounted: of the exits, only
    # this test's daemons' and the failures)
    awk -v pids=" ${DAEMON[*]} " '/^#/ { next } !/sys_exit_group/ { print; next }
      { t = $0; sub(/^[^(]*\( */, "", t); sub(/\).*/, "", t) }
      index(pids, " " t " ") || !/error_code: 0\)/' "$SIGTRACE/trace" >"$WORK/sigtrace"
    echo 0 >"$SIGTRACE/events/signal/signal_generate/enable"
    echo 0 >"$SIGTRACE/events/syscalls/sys_enter_exit_group/enable"
    rmdir "$SIGTRACE"
  fi 2>/dev/null
  for m in "${MOUNTS[@]}"; do fs_umount "$m"; done
  # What explains a failure comes first (CI shows a failing test's output cut short): a sanitizer
  # report (it fails the test by itself), then the daemons that had ended, their messages, and last
  # the signals, the longest part.
  san_reports "$WORK" || rc=1
  if [ "$rc" -ne 0 ]; then
    printf '%s' "$ended"
    if [ -s "$WORK/daemon.log" ]; then echo "the smb3fs daemons' messages:"; cat "$WORK/daemon.log"; fi
    if [ -s "$WORK/sigtrace" ]; then
      echo "signals sent, and exit_group(2) by this test's daemons or with a status not 0, while the test ran (tracefs):"
      cat "$WORK/sigtrace"
    fi
  fi
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

SRC="//$SMB3_TEST_HOST/$SMB3_TEST_SHARE"
BASEOPTS="port=$SMB3_TEST_PORT,username=$SMB3_TEST_USER,password=$SMB3_TEST_PASS"
# mount_into VAR [EXTRA_OPTIONS]: mount the share on a new directory and store its path in VAR
# (not $(...): the subshell would lose the MOUNTS entry that guarantees the unmount).
mount_into() {
  local var=$1; shift
  local m opts=$BASEOPTS
  m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX)
  MOUNTS+=("$m")
  [ -n "${1:-}" ] && opts="$opts,$1"
  if ! "$SMB3FS" "$SRC" "$m" -o "$opts"; then
    echo "FATAL: mount of $SRC on $m failed" >&2
    exit 1
  fi
  DAEMON[$m]=$(daemon_pids "$m")
  printf -v "$var" '%s' "$m"
}
# stats MOUNT KEY: one counter of `smb3 stats MOUNT`
stats() { "$SMB3" stats "$1" | "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
smb_url() { echo "$SMB3_TEST_URL/$1"; }
finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
