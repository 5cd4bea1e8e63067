#!/usr/bin/env bash
# smb3 get -r / put -r / cp -r on a generated tree (nested and empty directories, an empty file, a
# file larger than wsize, names with spaces and non-ASCII characters): each copy identical to the
# source (diff -r), no temporary name left on either side; a local file that cannot be read makes
# put -r fail naming it while the rest lands; a missing remote directory is one clean error line;
# symbolic links are skipped with a warning; --stats counts exactly one round trip per small
# file for get -r and put -r (a new file), two for put -r over an existing file; a name found taken
# in a directory put -r made is replaced safely. Run under with-smbd.
source "$(dirname "$0")/lib.sh"
U=$SMB3_TEST_URL
S=$SMB3_TEST_SHARE_DIR

# ---- the tree ----
T=$WORK/src
mkdir -p "$T/a/b/c" "$T/empty dir" "$T/with space" "$T/many" "$T/naïve"
: >"$T/a/empty.txt"
echo top >"$T/top.txt"
head -c 1 /dev/urandom >"$T/a/b/one"
head -c 200000 /dev/urandom >"$T/a/b/c/200k.bin"   # a small file of several credits
head -c 9M /dev/urandom >"$T/a/big.bin"           # larger than Samba's 8 MiB wsize: the bulk engine
echo "spaces" >"$T/with space/file with spaces.txt"
echo "accents" >"$T/naïve/café crème.txt"
echo "cjk" >"$T/日本語.txt"
for i in $(seq 1 60); do echo "file $i" >"$T/many/f$i.txt"; done

# no temporary names left anywhere below a directory
no_temps() { ! find "$1" -name '*.smb3-*' | grep -q .; }
# the "round_trips" of the --stats JSON in file $1
round_trips() { grep -o '"round_trips":[0-9]*' "$1" | cut -d: -f2; }

# ---- put -r into a new name, then get -r of it ----
if $SMB3 -q put -r "$T" "$U/up" 2>"$WORK/err"; then ok "put -r exit 0"; else bad "put -r: $(cat "$WORK/err")"; fi
if diff -r "$T" "$S/up" >"$WORK/diff" 2>&1; then ok "put -r: share copy identical (diff -r)"; else bad "put -r differs: $(head -5 "$WORK/diff")"; fi
no_temps "$S" && ok "put -r: no temporary names on the share" || bad "put -r left temporary names: $(find "$S" -name '*.smb3-*')"
if $SMB3 -q get -r "$U/up" "$WORK/got" 2>"$WORK/err"; then ok "get -r exit 0"; else bad "get -r: $(cat "$WORK/err")"; fi
if diff -r "$T" "$WORK/got" >"$WORK/diff" 2>&1; then ok "put -r then get -r: identical to the source"; else bad "get -r differs: $(head -5 "$WORK/diff")"; fi
no_temps "$WORK/got" && ok "get -r: no temporary names locally" || bad "get -r left temporary names"
[ -d "$WORK/got/empty dir" ] && ok "get -r: the empty directory" || bad "get -r: no empty directory"

# into an existing directory: under the source's own name (as cp -r)
mkdir "$WORK/into"
$SMB3 -q get -r "$U/up/a" "$WORK/into" 2>"$WORK/err" && diff -r "$T/a" "$WORK/into/a" >/dev/null 2>&1 &&
  ok "get -r into an existing directory: DIR/NAME" || bad "get -r into a directory: $(cat "$WORK/err")"
$SMB3 -q put -r "$T/with space" "$U/" 2>"$WORK/err" && diff -r "$T/with space" "$S/with space" >/dev/null 2>&1 &&
  ok "put -r to the share's root: under its own name" || bad "put -r to the root: $(cat "$WORK/err")"

# the summary line names files, bytes and seconds
$SMB3 get -r "$U/up/many" "$WORK/many2" 2>"$WORK/err" >/dev/null
if grep -qE '^smb3: get -r: 60 files, 1 directories, [0-9]+ bytes \(.*\) in [0-9.]+ s$' "$WORK/err"; then ok "summary line: $(cat "$WORK/err")"
else bad "summary line: $(cat "$WORK/err")"; fi

# ---- cp -r inside the share ----
if $SMB3 -q cp -r "$U/up" "$U/copy" 2>"$WORK/err"; then ok "cp -r exit 0"; else bad "cp -r: $(cat "$WORK/err")"; fi
if diff -r "$T" "$S/copy" >"$WORK/diff" 2>&1; then ok "cp -r: identical (diff -r)"; else bad "cp -r differs: $(head -5 "$WORK/diff")"; fi
no_temps "$S" && ok "cp -r: no temporary names" || bad "cp -r left temporary names"
check_fails "cp -r into itself" "into itself" $SMB3 -q cp -r "$U/up" "$U/up/a/inside"

# ---- a missing remote directory: one clean line, nothing made locally ----
check_fails "get -r of a missing directory" "nodir" $SMB3 -q get -r "$U/nodir" "$WORK/nodir-local"
[ ! -e "$WORK/nodir-local" ] && ok "get -r of a missing directory made nothing" || bad "get -r of a missing directory created $WORK/nodir-local"
check_fails "cp -r of a missing directory" "nodir" $SMB3 -q cp -r "$U/nodir" "$U/x"

# ---- a file that cannot be read: named, exit 1, the rest lands ----
B=$WORK/bad
mkdir -p "$B/sub"
for i in 1 2 3 4 5; do echo "ok $i" >"$B/sub/ok$i"; done
echo secret >"$B/sub/secret"
chmod 000 "$B/sub/secret"
run_as=()
if [ "$(id -u)" = 0 ]; then # root reads any file: run smb3 as nobody, for whom it is unreadable
  chmod 755 "$WORK"
  chmod -R a+rX "$B" && chmod 000 "$B/sub/secret"
  run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
rc=0
"${run_as[@]}" $SMB3 -q put -r "$B" "$U/bad" 2>"$WORK/err" || rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "^smb3: put -r: .*/bad/sub/secret: cannot open: Permission denied$" "$WORK/err"; then
  ok "put -r with an unreadable file: exit 1, one line naming it: $(cat "$WORK/err")"
else bad "put -r with an unreadable file: exit $rc: $(cat "$WORK/err")"; fi
landed=0
for i in 1 2 3 4 5; do same_file "$B/sub/ok$i" "$S/bad/sub/ok$i" && landed=$((landed + 1)); done
[ "$landed" = 5 ] && [ ! -e "$S/bad/sub/secret" ] && ok "the other files landed" || bad "landed $landed of 5"

# ---- symbolic links are skipped, with a warning ----
L=$WORK/links
mkdir -p "$L"
echo real >"$L/real"
ln -s real "$L/link"
rc=0
$SMB3 -q put -r "$L" "$U/links" 2>"$WORK/err" || rc=$?
if [ "$rc" = 0 ] && grep -q "skipping symbolic link '.*/link'" "$WORK/err" && [ -f "$S/links/real" ] && [ ! -e "$S/links/link" ]; then
  ok "put -r skips a symbolic link with a warning"
else bad "put -r and a symbolic link: exit $rc: $(cat "$WORK/err")"; fi

# ---- round trips: exactly one per small file (get -r, put -r of new files) ----
# the same directories, once without and once with N small files: the difference is N
N=40
R0=$WORK/rt0 R1=$WORK/rt1
mkdir -p "$R0/d1/d2" "$R1/d1/d2"
for i in $(seq 1 $N); do d=$R1; [ $((i % 2)) = 0 ] && d=$R1/d1; [ $((i % 4)) = 0 ] && d=$R1/d1/d2; echo "rt $i" >"$d/f$i"; done
# (to the share's root, each under its own name: the second put of rt1 writes over the first)
$SMB3 -q --stats put -r "$R0" "$U/" 2>"$WORK/s0" && $SMB3 -q --stats put -r "$R1" "$U/" 2>"$WORK/s1"
p0=$(round_trips "$WORK/s0") p1=$(round_trips "$WORK/s1")
if [ -n "$p0" ] && [ -n "$p1" ] && [ $((p1 - p0)) = $N ]; then ok "put -r: $N new files cost $((p1 - p0)) round trips ($p0 for the directories and the connection)"
else bad "put -r: $N files cost $((p1 - p0)) round trips (with $p1, without $p0)"; fi
echo changed >"$R1/f1"
$SMB3 -q --stats put -r "$R1" "$U/" 2>"$WORK/s2"
p2=$(round_trips "$WORK/s2")
if [ -n "$p2" ] && [ $((p2 - p0)) = $((2 * N)) ]; then ok "put -r over existing files: 2 round trips each"
else bad "put -r over existing files: $((p2 - p0)) round trips for $N"; fi
same_file "$R1/f1" "$S/rt1/f1" && ok "put -r over an existing file replaces it" || bad "put -r did not replace rt1/f1"
$SMB3 -q --stats get -r "$U/rt0" "$WORK/g0" 2>"$WORK/s0" && $SMB3 -q --stats get -r "$U/rt1" "$WORK/g1" 2>"$WORK/s1"
g0=$(round_trips "$WORK/s0") g1=$(round_trips "$WORK/s1")
if [ -n "$g0" ] && [ -n "$g1" ] && [ $((g1 - g0)) = $N ]; then ok "get -r: $N files cost $((g1 - g0)) round trips ($g0 for the listings and the connection)"
else bad "get -r: $N files cost $((g1 - g0)) round trips (with $g1, without $g0)"; fi
diff -r "$R1" "$WORK/g1" >/dev/null 2>&1 && ok "get -r of the counted tree: identical" || bad "get -r of the counted tree differs"

# ---- a new directory's file under its own name, and a name made meanwhile ----
# put -r writes a small file of a directory it has just made under its own name (CREATE only if
# new); the server compares names without case, so of two local files that differ only in case one
# finds the name taken (as if another client had made it since) and must replace it the safe way,
# through a temporary name: exit 0, one file holding one of the two, no temporary name left.
C=$WORK/case
mkdir -p "$C"
echo "lower case" >"$C/name.txt"
echo "upper case" >"$C/NAME.TXT"
rc=0; $SMB3 -q put -r "$C" "$U/case" 2>"$WORK/err" || rc=$?
got=$(find "$S/case" -type f | wc -l)
body=$(cat "$S"/case/* 2>/dev/null)
if [ "$rc" = 0 ] && [ "$got" = 1 ] && { [ "$body" = "lower case" ] || [ "$body" = "upper case" ]; } && no_temps "$S/case"; then
  ok "put -r: a name taken after the directory was made is replaced through a temporary name"
else bad "put -r with a taken name: exit $rc, $got files ('$body'): $(cat "$WORK/err")"; fi

# ---- usage ----
check_fails "put -r of a file" "not a directory" $SMB3 -q put -r "$T/top.txt" "$U/x"
rc=0; $SMB3 -q put -r --inplace "$T" "$U/x" 2>/dev/null || rc=$?
[ "$rc" = 2 ] && ok "put -r --inplace is a usage error" || bad "put -r --inplace: exit $rc"
finish
