#!/usr/bin/env bash
# Command-line conventions of smb3 and smb3fs (needs no server): --version prints the program's
# and the library's version and exits 0; --help and `help COMMAND` exit 0 on stdout; a usage error
# exits 2 with one line on stderr (no arguments: the usage, on stderr); a failed operation exits 1
# with one "smb3: CMD: cause" line. SMB3 and SMB3FS are the binaries, VERSION the project's version.
source "$(dirname "$0")/lib.sh"
SMB3FS=${SMB3FS:-}
VERSION=${VERSION:?VERSION (the project version) must be set}

# check_exit NAME WANT PATTERN COMMAND...: COMMAND exits WANT; when WANT is not 0 it prints exactly
# one line on stderr matching PATTERN (grep -E); when WANT is 0, stdout matches PATTERN.
check_exit() {
  local name=$1 want=$2 pat=$3; shift 3
  local rc=0
  timeout 60 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  local lines; lines=$(wc -l <"$WORK/err")
  if [ "$rc" -ne "$want" ]; then bad "$name: exit $rc, want $want: $(head -c 300 "$WORK/err")"
  elif [ "$want" -ne 0 ] && [ "$lines" -ne 1 ]; then bad "$name: expected one error line, got $lines: $(cat "$WORK/err")"
  elif [ "$want" -ne 0 ] && ! grep -qE "$pat" "$WORK/err"; then bad "$name: '$(cat "$WORK/err")' does not match /$pat/"
  elif [ "$want" -eq 0 ] && ! grep -qE "$pat" "$WORK/out"; then bad "$name: stdout does not match /$pat/: $(head -c 300 "$WORK/out")"
  else ok "$name: exit $rc"; fi
}

# A loopback port that refuses connections: bound by this helper, never listening (the kernel
# answers a SYN to it with a reset), and held until the end so nobody else can take it.
python3 - "$WORK/closed.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0))
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
PY
holder=$!
for _ in $(seq 100); do [ -s "$WORK/closed.port" ] && break; sleep 0.1; done
closed=$(cat "$WORK/closed.port")
U="smb://u:p@127.0.0.1:$closed/share"

# ---- smb3 ----
check_exit "smb3 --version" 0 "^smb3 $VERSION\$" $SMB3 --version
grep -qx "libsmb3 $VERSION" "$WORK/out" && ok "smb3 --version names the library's version" ||
  bad "smb3 --version: no 'libsmb3 $VERSION' line: $(cat "$WORK/out")"
check_exit "smb3 -V" 0 "^smb3 $VERSION\$" $SMB3 -V
check_exit "smb3 --help" 0 "^usage: smb3 " $SMB3 --help
# every command in the --help list has its own help page
cmds=$(sed -n '/^commands:/,/^$/p' "$WORK/out" | awk 'NF && !/^commands:/ {print $1}')
[ "$(echo "$cmds" | wc -w)" -ge 13 ] && ok "smb3 --help lists $(echo $cmds | wc -w) commands" || bad "smb3 --help lists too few commands: $cmds"
for c in $cmds; do check_exit "smb3 help $c" 0 "^usage: smb3 .* $c( |\$)" $SMB3 help "$c"; done
check_exit "smb3 help" 0 "^usage: smb3 " $SMB3 help
check_exit "smb3 ls --help" 0 "^usage: smb3 .* ls URL" $SMB3 ls --help
# no arguments: the usage on stderr (several lines), exit 2
rc=0; $SMB3 >"$WORK/out" 2>"$WORK/err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q "^usage: smb3 " "$WORK/err" && [ ! -s "$WORK/out" ]; then ok "smb3 without arguments: usage on stderr, exit 2"
else bad "smb3 without arguments: exit $rc, stdout $(wc -c <"$WORK/out") bytes, stderr: $(head -2 "$WORK/err")"; fi
check_exit "unknown long option" 2 "^smb3: unknown option '--frobnicate'" $SMB3 --frobnicate ls "$U/"
check_exit "unknown short option" 2 "^smb3: unknown option '-x'" $SMB3 -x ls "$U/"
check_exit "-o without its value" 2 "^smb3: option '-o' needs a value" $SMB3 -o
check_exit "unknown command" 2 "^smb3: unknown command 'frob'" $SMB3 frob "$U/"
check_exit "help for an unknown command" 2 "^smb3: help: unknown command 'frob'" $SMB3 help frob
check_exit "too few arguments" 2 "^smb3: ls: usage: smb3 ls URL" $SMB3 ls
check_exit "too many arguments" 2 "^smb3: put: usage: smb3 put LOCAL URL" $SMB3 put a b c
check_exit "get with three arguments" 2 "^smb3: get: usage" $SMB3 get "$U/x" a b
check_exit "unknown -o option" 2 "^smb3: ls: unknown option 'nosuchoption'" $SMB3 -o nosuchoption ls "$U/"
check_exit "bad -o value" 2 "^smb3: ls: bad value for option 'vers'" $SMB3 -o vers=9.9 ls "$U/"
check_exit "bad -o option for a command that makes no connection" 2 "^smb3: stats: unknown option" $SMB3 -o nosuchoption stats /
check_exit "missing -A file" 2 "^smb3: ls: cannot read credentials file" $SMB3 -A "$WORK/nocred" ls "$U/"
check_exit "malformed URL" 2 "^smb3: cat: bad URL" $SMB3 cat "http://host/share/x"
check_exit "URL without the file path" 2 "^smb3: rm: no path in URL" $SMB3 rm "smb://u:p@127.0.0.1:$closed/share"
check_exit "mv to another share" 2 "^smb3: mv: " $SMB3 mv "$U/a" "smb://u:p@127.0.0.1:$closed/other/b"
# ... and nothing was sent for any of them: a usage error is found before connecting
check_exit "connection refused" 1 "^smb3: ls: cannot connect.*refused" $SMB3 ls "$U/"
check_exit "failed cat" 1 "^smb3: cat: cannot connect" $SMB3 cat "$U/x"
check_exit "stats of a directory that is no mount" 1 "^smb3: stats: .*not the root of an smb3fs mount" $SMB3 stats "$WORK"
check_exit "put of a missing local file" 1 "^smb3: put: cannot open" $SMB3 put "$WORK/missing" "$U/x"

# ---- smb3fs ----
if [ -n "$SMB3FS" ]; then
  check_exit "smb3fs --version" 0 "^smb3fs $VERSION\$" $SMB3FS --version
  grep -qx "libsmb3 $VERSION" "$WORK/out" && ok "smb3fs --version names the library's version" ||
    bad "smb3fs --version: no 'libsmb3 $VERSION' line: $(cat "$WORK/out")"
  grep -q "^libfuse " "$WORK/out" && ok "smb3fs --version names libfuse's version" || bad "smb3fs --version: no libfuse line"
  check_exit "smb3fs -V" 0 "^smb3fs $VERSION\$" $SMB3FS -V
  check_exit "smb3fs --help" 0 "^usage: smb3fs " $SMB3FS --help
  check_exit "smb3fs without arguments" 2 "^smb3fs: usage" $SMB3FS
  check_exit "smb3fs unknown flag" 2 "^smb3fs: unknown flag '--frobnicate'" $SMB3FS --frobnicate //h/s "$WORK"
  check_exit "smb3fs unknown -o option" 2 "^smb3fs: unknown option 'nosuchoption'" $SMB3FS //h/s "$WORK" -o nosuchoption
  check_exit "smb3fs bad -o value" 2 "^smb3fs: bad value for option 'cache'" $SMB3FS //h/s "$WORK" -o cache=sometimes
  check_exit "smb3fs malformed source" 2 "^smb3fs: source must be" $SMB3FS host:share "$WORK"
  check_exit "smb3fs too many arguments" 2 "^smb3fs: too many arguments" $SMB3FS //h/s "$WORK" extra
  mkdir -p "$WORK/mnt"
  check_exit "smb3fs mount that cannot connect" 1 "^smb3fs: cannot mount //127.0.0.1/share: cannot connect.*refused" \
    $SMB3FS //127.0.0.1/share "$WORK/mnt" -o "port=$closed,username=u,password=p"
  check_exit "smb3fs mount that cannot connect (foreground)" 1 "^smb3fs: cannot mount" \
    $SMB3FS //127.0.0.1/share "$WORK/mnt" -f -o "port=$closed,username=u,password=p"
else
  bad "SMB3FS not set: smb3fs not built (no libfuse3?), its conventions untested"
fi
kill $holder 2>/dev/null; wait $holder 2>/dev/null || true
finish
