#!/usr/bin/env bash
# Directory listing of 8000 entries (more than one 1 MiB QUERY_DIRECTORY answer holds: several rounds), mkdir/rmdir/rm/mv,
# get into a directory, put into a directory, cp (a server-side copy), ln (a hard link).
source "$(dirname "$0")/lib.sh"
U=$SMB3_TEST_URL
D=$SMB3_TEST_SHARE_DIR
mkdir -p "$D/many"
for i in $(seq 1 8000); do : >"$D/many/entry-with-a-fairly-long-name-$i.txt"; done
chmod -R a+rwX "$D/many"
$SMB3 --stats ls "$U/many" >"$WORK/ls" 2>"$WORK/stats"
n=$(grep -c 'entry-with-a-fairly-long-name-' "$WORK/ls")
if [ "$n" -eq 8000 ]; then ok "ls of 8000 entries"; else bad "ls of 8000 entries: got $n"; fi
qd=$(grep -o '"query_directory":[0-9]*' "$WORK/stats" | cut -d: -f2)
if [ "${qd:-0}" -ge 3 ]; then ok "listing took $qd QUERY_DIRECTORY rounds"; else bad "expected several QUERY_DIRECTORY rounds, got ${qd:-none}"; fi
names=$(sed 's/.*  //' "$WORK/ls" | sort | uniq | wc -l)
if [ "$names" -eq 8000 ]; then ok "8000 distinct names"; else bad "distinct names: $names"; fi

check "mkdir" $SMB3 mkdir "$U/newdir"
if [ -d "$D/newdir" ]; then ok "mkdir visible on server"; else bad "mkdir not visible"; fi
check_fails "mkdir existing" "exist" $SMB3 mkdir "$U/newdir"
echo data >"$WORK/x"
check "put into directory" $SMB3 -q put "$WORK/x" "$U/newdir/"
if [ -f "$D/newdir/x" ]; then ok "put into dir made newdir/x"; else bad "newdir/x missing"; fi
check_fails "rmdir non-empty" "not empty" $SMB3 rmdir "$U/newdir"
check "mv file" $SMB3 mv "$U/newdir/x" newdir/y
if [ -f "$D/newdir/y" ] && [ ! -e "$D/newdir/x" ]; then ok "mv visible"; else bad "mv not visible"; fi
check "mv with URL target" $SMB3 mv "$U/newdir/y" "$U/newdir/z"
echo other >"$D/newdir/w"
check_fails "mv onto existing" "exist" $SMB3 mv "$U/newdir/z" newdir/w
check "rm" $SMB3 rm "$U/newdir/z"
check "rm 2" $SMB3 rm "$U/newdir/w"
check_fails "rm missing" "no such file" $SMB3 rm "$U/newdir/z"
# A read-only file (the attribute, as Windows and a chmod a-w on a non-POSIX share set it) is
# removed like any other: the server's refusal (STATUS_CANNOT_DELETE) makes the client clear it.
echo ro >"$D/newdir/ro" && chown "$SMB3_TEST_USER" "$D/newdir/ro"
smbclient "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" -p "$SMB3_TEST_PORT" -U "$SMB3_TEST_USER%$SMB3_TEST_PASS" \
  -c "setmode newdir/ro +r" >/dev/null 2>&1
$SMB3 stat "$U/newdir/ro" >"$WORK/ro.st" 2>&1
if grep -qE "attributes: 0x[0-9a-f]*[13579bdf]\b" "$WORK/ro.st"; then ok "read-only attribute set (smbclient setmode +r)"
else bad "setmode +r did not set the attribute: $(grep attributes "$WORK/ro.st")"; fi
check "rm of a read-only file" $SMB3 rm "$U/newdir/ro"
[ ! -e "$D/newdir/ro" ] && ok "... gone on the server" || bad "read-only file still on the server"
check "rmdir" $SMB3 rmdir "$U/newdir"
if [ ! -e "$D/newdir" ]; then ok "rmdir visible"; else bad "rmdir not visible"; fi
check_fails "rmdir missing" "no such file" $SMB3 rmdir "$U/newdir"
check_fails "rm directory" "directory" $SMB3 rm "$U/many"
mkdir -p "$WORK/dl"
check "get into local directory" $SMB3 -q get "$U/many/entry-with-a-fairly-long-name-7.txt" "$WORK/dl"
if [ -f "$WORK/dl/entry-with-a-fairly-long-name-7.txt" ]; then ok "get into dir"; else bad "get into dir"; fi
# cp: by the server (no READ or WRITE on the wire), into a path, a URL and a directory
head -c $(((20 << 20) + 3)) /dev/urandom >"$D/cpsrc"; chmod a+rw "$D/cpsrc"
mkdir -p "$D/cpdir"; chmod a+rwx "$D/cpdir"
$SMB3 --stats -q cp "$U/cpsrc" cpdst >"$WORK/out" 2>"$WORK/stats" && ok "cp" || bad "cp: $(cat "$WORK/stats")"
if cmp -s "$D/cpsrc" "$D/cpdst"; then ok "cp: the copy on the server"; else bad "cp: the copy differs"; fi
copied=$(grep -o '"bytes_copied":[0-9]*' "$WORK/stats" | cut -d: -f2)
wr=$(grep -o '"bytes_written":[0-9]*' "$WORK/stats" | cut -d: -f2)
rd=$(grep -o '"bytes_read":[0-9]*' "$WORK/stats" | cut -d: -f2)
if [ "${copied:-0}" -eq $(((20 << 20) + 3)) ] && [ "${wr:-1}" -eq 0 ] && [ "${rd:-1}" -eq 0 ]; then
  ok "cp: copied by the server ($copied bytes, none read or written by the client)"
else bad "cp: bytes_copied ${copied:-?}, bytes_read ${rd:-?}, bytes_written ${wr:-?}"; fi
check "cp with URL target" $SMB3 -q cp "$U/cpsrc" "$U/cpdst2"
check "cp into a directory" $SMB3 -q cp "$U/cpsrc" cpdir/
if cmp -s "$D/cpsrc" "$D/cpdir/cpsrc"; then ok "cp into a directory: the copy"; else bad "cp into a directory"; fi
check "cp over an existing file" $SMB3 -q cp "$U/cpdst2" cpdst
if cmp -s "$D/cpsrc" "$D/cpdst"; then ok "cp over an existing file: the copy"; else bad "cp over an existing file"; fi
check_fails "cp of a missing file" "no such file" $SMB3 cp "$U/nothing-here" cpx
check_fails "cp onto itself" "same file" $SMB3 cp "$U/cpsrc" cpsrc
check_fails "cp across shares" "across" $SMB3 cp "$U/cpsrc" "smb://u@127.0.0.1/other/x"
check_fails "cp into a missing directory" "cannot create 'nodir/x': no such file" $SMB3 cp "$U/cpsrc" nodir/x
if ! ls -a "$D" "$D/cpdir" | grep -q smb3-; then ok "cp leaves no temporary file"; else bad "temporary files left: $(ls -a "$D" | grep smb3-)"; fi
# ln: a hard link
echo linked >"$D/lnsrc"; chmod a+rw "$D/lnsrc"
check "ln" $SMB3 ln "$U/lnsrc" lndst
if [ "$(stat -c %i "$D/lnsrc")" = "$(stat -c %i "$D/lndst")" ] && [ "$(stat -c %h "$D/lnsrc")" = 2 ]; then
  ok "ln: one file, two names"; else bad "ln: not a hard link"; fi
check_fails "ln onto an existing name" "exists" $SMB3 ln "$U/lnsrc" lndst
check_fails "ln of a missing file" "no such file" $SMB3 ln "$U/nothing-here" lnx
check "df" $SMB3 df "$U/"
if grep -q "//127.0.0.1/$SMB3_TEST_SHARE" "$WORK/out"; then ok "df output"; else bad "df output: $(cat "$WORK/out")"; fi
finish
