#!/usr/bin/env bash
# DFS (MS-DFSC) through the smb3 CLI against two real smbds: the harness's server A (127.0.0.1, its
# [test] share a DFS root: `msdfs root = yes`) and a second server B started here with the same
# harness on 127.0.0.3, the same port and the same password (WITH_SMBD_ADDR/PASS/FIRST_PORT), since a
# referral names a server, not a port. Links in A's share (Samba's form: a symlink to
# "msdfs:SERVER\SHARE[\PATH][,SERVER\SHARE...]"):
#   other  -> 127.0.0.1\public          another share of the same server
#   remote -> 127.0.0.3\test            another server
#   fo     -> 127.0.0.9\x,127.0.0.1\public  a first target that does not answer (nothing listens there)
#   loop   -> 127.0.0.1\test\loop       a link to itself
# Checked: ls/stat/get/put across each, get -r of the root naming each link it does not enter, mv/cp of two paths under one link (and refused across), a plain directory of the DFS root, one-line errors for the
# loop, and exact --stats: a referral is one IOCTL round trip, the target's connection its own.
set -u
source "$(dirname "$0")/../harness/dfs-pair.sh"
dfs_more_links() {
  ln -s 'msdfs:127.0.0.9\x,127.0.0.1\public' fo &&
    mkdir plain && echo 'plain file on the DFS root' >plain/f &&
    head -c 300000 /dev/urandom >"$A_PUB/pubfile" && chown "$SMB3_TEST_USER:" "$A_PUB/pubfile"
}
[ "${1:-}" = --inner ] || dfs_pair "$0"
source "$(dirname "$0")/lib.sh"
dfs_pair "$0" --inner
head -c 1000000 /dev/urandom >"$B_DIR/bfile"
chown "$SMB3_TEST_USER:" "$B_DIR/bfile"
A="smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$A_HOST:$A_PORT/test"
PUB="smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$A_HOST:$A_PORT/public"
head -c 200000 /dev/urandom >"$WORK/up"

check "ls of the DFS root lists the links" $SMB3 ls "$A/"
for l in other remote fo loop plain; do
  grep -q " $l/\$" "$WORK/out" && ok "ls shows $l as a directory" || bad "ls: no '$l/' in: $(cat "$WORK/out")"
done

# another share of the same server
check "ls across a link to another share" $SMB3 ls "$A/other"
grep -q ' pubfile$' "$WORK/out" && ok "ls other/ lists pubfile" || bad "ls other/: $(cat "$WORK/out")"
check "stat across a link to another share" $SMB3 stat "$A/other/pubfile"
grep -q 300000 "$WORK/out" && ok "stat other/pubfile: size 300000" || bad "stat other/pubfile: $(cat "$WORK/out")"
check "get across a link to another share" $SMB3 get "$A/other/pubfile" "$WORK/pubfile"
same_file "$WORK/pubfile" "$A_PUB/pubfile" && ok "other/pubfile arrived intact" || bad "other/pubfile differs"
check "put across a link to another share" $SMB3 put "$WORK/up" "$A/other/up1"
same_file "$WORK/up" "$A_PUB/up1" && ok "other/up1 is in the public share" || bad "public/up1 missing or differs"

# another server
check "ls across a link to another server" $SMB3 ls "$A/remote"
grep -q ' bfile$' "$WORK/out" && ok "ls remote/ lists bfile" || bad "ls remote/: $(cat "$WORK/out")"
check "get across a link to another server" $SMB3 get "$A/remote/bfile" "$WORK/bfile"
same_file "$WORK/bfile" "$B_DIR/bfile" && ok "remote/bfile arrived intact" || bad "remote/bfile differs"
check "put across a link to another server" $SMB3 put "$WORK/up" "$A/remote/up2"
same_file "$WORK/up" "$B_DIR/up2" && ok "remote/up2 is on server B" || bad "B's up2 missing or differs"
[ ! -e "$A_DIR/up2" ] && ok "nothing written on server A" || bad "up2 landed on server A"

# two paths under one link: the second follows the first to the target
check "mv within a link to another server" $SMB3 mv "$A/remote/up2" "$A/remote/up3"
[ -e "$B_DIR/up3" ] && [ ! -e "$B_DIR/up2" ] && ok "renamed on server B" || bad "mv on B: $(ls "$B_DIR")"
check "cp within a link to another share" $SMB3 cp "$A/other/up1" "$A/other/up4"
same_file "$WORK/up" "$A_PUB/up4" && ok "copied in the public share" || bad "public/up4 missing or differs"
check_fails "mv from under a link to outside it" "not under the DFS link" $SMB3 mv "$A/remote/up3" "$A/plain/up3"

# the first target does not answer: the second one is used
check "get across a link whose first target is down" $SMB3 get "$A/fo/pubfile" "$WORK/fo"
same_file "$WORK/fo" "$A_PUB/pubfile" && ok "fo/pubfile from the second target" || bad "fo/pubfile differs"

# a plain directory of the DFS root stays on A
check "get of a file that is no link, on the DFS root" $SMB3 get "$A/plain/f" "$WORK/f"
same_file "$WORK/f" "$A_DIR/plain/f" && ok "plain/f intact" || bad "plain/f differs"

# a link that refers to itself ends with one line, not a loop
check_fails "a self-referencing link" "DFS.*(refers back to itself|loop)" $SMB3 ls "$A/loop/x"
check_fails "a self-referencing link (get)" "DFS.*(refers back to itself|loop)" $SMB3 get "$A/loop" "$WORK/l"

# get -r of the DFS root: one connection walks the tree, so each link met is reported by name (one
# line each, non-zero exit), never silently skipped; the rest of the tree arrives
rc=0
timeout 120 $SMB3 get -r "$A" "$WORK/tree" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && ok "get -r of the DFS root exits non-zero ($rc)" || bad "get -r of the DFS root: exit $rc"
for l in other remote fo loop; do
  grep -q "'[^']*$l' is a DFS link: not followed inside a recursive transfer" "$WORK/err" &&
    ok "get -r names the link $l" || bad "get -r says nothing of $l: $(head -c 600 "$WORK/err")"
done
same_file "$WORK/tree/plain/f" "$A_DIR/plain/f" && ok "get -r fetched the rest of the root" || bad "get -r: no plain/f"

# --stats: the referral is one IOCTL round trip; following it costs the target's own connection.
#   X = stat of plain/f on A (connect A + referral + stat), Y = stat of pubfile on public directly
#   (connect P + stat), Z = stat of other/pubfile: connect A + referral + connect P + stat = X + connect P.
rt() { python3 -c 'import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(d[sys.argv[1]] if sys.argv[1] in d else d["commands"][sys.argv[1]])' "$1" <"$WORK/err"; }
$SMB3 --stats stat "$A/plain/f" >/dev/null 2>"$WORK/err" || bad "stat --stats plain/f: $(cat "$WORK/err")"
X=$(rt round_trips) XI=$(rt ioctl)
$SMB3 --stats stat "$PUB/pubfile" >/dev/null 2>"$WORK/err" || bad "stat --stats public/pubfile: $(cat "$WORK/err")"
Y=$(rt round_trips) YI=$(rt ioctl) CP=$(($(rt negotiate) + $(rt session_setup) + $(rt tree_connect)))
$SMB3 --stats stat "$A/other/pubfile" >/dev/null 2>"$WORK/err" || bad "stat --stats other/pubfile: $(cat "$WORK/err")"
Z=$(rt round_trips) ZI=$(rt ioctl)
[ "$Z" -eq $((X + CP)) ] && ok "--stats: $Z round trips across the link = $X (A, referral included) + $CP (connecting to the target)" ||
  bad "--stats: $Z round trips across the link, expected $X + $CP"
[ "$ZI" -eq $((XI + YI)) ] && ok "--stats: $ZI IOCTLs across the link (one referral)" || bad "--stats: $ZI IOCTLs, expected $XI + $YI"
finish
