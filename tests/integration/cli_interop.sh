#!/usr/bin/env bash
# cli_interop.sh - the smb3 CLI against a second server implementation (tests/harness/with-impacket:
# impacket's smbserver, SMB 2.0.2, every answer signed) and, for comparison, against Samba with
# signing mandatory (tests/harness/with-smbd). ls, stat, get, put, put --inplace, cat, mv, cp, rm,
# mkdir, rmdir, each checked by its effect in the share's directory on disk; ls of the shares.
#
# impacket signs each answer of a compound before it sets NextCommand and the padding (see
# lib/client/connect.c, compound_probe): the connection must notice at connect (--stats
# "compound_fallback": 1), send every operation one request at a time, and still verify every
# answer. Against Samba the probe must find nothing wrong (compound_fallback 0) and operations
# stay compounded. Run with SMB3_TEST_SERVER=impacket (with-impacket sets it) or under with-smbd.
set -u
. "$(dirname "$0")/lib.sh"
URL=$SMB3_TEST_URL
DIR=$SMB3_TEST_SHARE_DIR
server=${SMB3_TEST_SERVER:-samba}
if [ "$server" = impacket ]; then want_fallback=1; else want_fallback=0; fi

stat_json() { # KEY: a counter of the last --stats line in $WORK/err
  /usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$WORK/err" "$1"
}
cmd_count() { # COMMAND: per-command count of the last --stats line
  /usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["commands"][sys.argv[2]])' "$WORK/err" "$1"
}

head -c 200000 /dev/urandom >"$WORK/data"
printf 'small file\n' >"$WORK/small"
# files made here as root must be writable by the server's user (Samba's smb3test; impacket runs as us)
own() { [ "$server" = impacket ] || chown "$SMB3_TEST_USER:" "$@"; }

# --- the probe's verdict, and what it costs ---
if $SMB3 --stats ls "$URL/" >"$WORK/out" 2>"$WORK/err"; then
  got=$(stat_json compound_fallback)
  if [ "$got" = "$want_fallback" ]; then ok "compound probe: compound_fallback=$got ($server)"
  else bad "compound probe: compound_fallback=$got, want $want_fallback ($server)"; fi
  # ECHO x2 is the probe: sent only when answers come signed
  expect_echo=2
  [ "$(cmd_count echo)" = "$expect_echo" ] && ok "probe is two ECHOs" || bad "echo count $(cmd_count echo), want $expect_echo"
  # ls: CREATE + QUERY_DIRECTORY (+ QUERY_DIRECTORY + CLOSE): compounded unless the fallback
  rt=$(stat_json round_trips)
  req=$(stat_json requests)
  if [ "$want_fallback" = 1 ]; then
    # one request per round trip, except the probe's two ECHOs
    [ "$rt" = $((req - 1)) ] && ok "fallback: every request alone ($req requests, $rt round trips)" ||
      bad "fallback: $req requests in $rt round trips"
  else
    [ "$rt" -lt $((req - 1)) ] && ok "no fallback: ls still compounds ($req requests, $rt round trips)" ||
      bad "no fallback: $req requests in $rt round trips"
  fi
else
  bad "ls with --stats: $(cat "$WORK/err")"
fi
# nocompound asked for: no probe at all
if $SMB3 --stats -o nocompound ls "$URL/" >"$WORK/out" 2>"$WORK/err"; then
  [ "$(cmd_count echo)" = 0 ] && ok "nocompound: no probe" || bad "nocompound: $(cmd_count echo) ECHOs sent"
else
  bad "ls -o nocompound: $(cat "$WORK/err")"
fi

# --- the operations ---
check "put" $SMB3 put "$WORK/data" "$URL/data.bin"
cmp -s "$WORK/data" "$DIR/data.bin" && ok "put: bytes on the server" || bad "put: $DIR/data.bin differs"
check "get" $SMB3 get "$URL/data.bin" "$WORK/back"
cmp -s "$WORK/data" "$WORK/back" && ok "get: same bytes" || bad "get: differs"
check "cat" $SMB3 cat "$URL/data.bin"
cmp -s "$WORK/data" "$WORK/out" && ok "cat: same bytes" || bad "cat: differs"
check "stat" $SMB3 stat "$URL/data.bin"
grep -q '^size: 200000$' "$WORK/out" && ok "stat: size" || bad "stat: $(head -c 300 "$WORK/out")"
check "ls" $SMB3 ls "$URL/"
grep -q 'data\.bin' "$WORK/out" && ok "ls: lists data.bin" || bad "ls: $(head -c 300 "$WORK/out")"
check "mkdir" $SMB3 mkdir "$URL/sub"
[ -d "$DIR/sub" ] && ok "mkdir: directory on the server" || bad "mkdir: no $DIR/sub"
check "mv" $SMB3 mv "$URL/data.bin" "sub/moved.bin"
[ -f "$DIR/sub/moved.bin" ] && [ ! -e "$DIR/data.bin" ] && ok "mv: renamed" || bad "mv: not renamed"
check "ls subdir" $SMB3 ls "$URL/sub"
grep -q 'moved\.bin' "$WORK/out" && ok "ls subdir: lists moved.bin" || bad "ls subdir: $(head -c 300 "$WORK/out")"
check "cp" $SMB3 cp "$URL/sub/moved.bin" "copy.bin"
cmp -s "$WORK/data" "$DIR/copy.bin" && ok "cp: same bytes" || bad "cp: differs"
check "put small" $SMB3 put "$WORK/small" "$URL/small.txt"
own "$DIR/small.txt"
check "put --inplace" $SMB3 put --inplace "$WORK/data" "$URL/small.txt"
cmp -s "$WORK/data" "$DIR/small.txt" && ok "put --inplace: bytes" || bad "put --inplace: differs"
check "rm" $SMB3 rm "$URL/sub/moved.bin"
[ ! -e "$DIR/sub/moved.bin" ] && ok "rm: gone" || bad "rm: still there"
check "rmdir" $SMB3 rmdir "$URL/sub"
[ ! -e "$DIR/sub" ] && ok "rmdir: gone" || bad "rmdir: still there"
check "rm copy" $SMB3 rm "$URL/copy.bin"
check "rm small" $SMB3 rm "$URL/small.txt"
# nothing left behind (no temporary names of put/cp)
left=$(ls -A "$DIR")
[ -z "$left" ] && ok "share empty again" || bad "left in the share: $left"
# the server's shares (srvsvc NetrShareEnum over IPC$: CREATE + IOCTL compounded, or one by one)
SRV="smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$SMB3_TEST_HOST:$SMB3_TEST_PORT/"
check "ls shares" $SMB3 ls "$SRV"
grep -q "^$SMB3_TEST_SHARE " "$WORK/out" && ok "ls shares: lists $SMB3_TEST_SHARE" || bad "ls shares: $(head -c 300 "$WORK/out")"
# an error is still one clean line
check_fails "stat of a missing file" "no such file|not found" $SMB3 stat "$URL/missing.txt"
finish
