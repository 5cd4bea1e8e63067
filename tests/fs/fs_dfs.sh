#!/usr/bin/env bash
# smb3fs on a directory under a DFS link: the mount follows the referrals at mount time and serves
# the target (another share of the same server, or another server: a second smbd started here on
# 127.0.0.3 with the same port and password, as tests/integration/cli_dfs.sh does); reads and writes
# land on the target; a mount under a link to itself fails with one line. Server A's [test] share is
# the DFS root (with-smbd --share "msdfs root = yes").
# A mount of the DFS root itself: its links are directories, and entering one gives that subtree to
# a connection to the link's target (fs/dfs.c): ls, stat, read, write, create, mkdir, rename and
# unlink under a link to another share and under a link to another server, checked on the target's
# disk; rename out of a link is EXDEV; the self link gives ELOOP, not a hang; `smb3 stats` counts
# the links' connections (a mkdir under a link: the same 2 round trips as on the share itself).
set -u
source "$(dirname "$0")/../harness/dfs-pair.sh"
dfs_more_links() { mkdir -p "$A_PUB/sub" && head -c 500000 /dev/urandom >"$A_PUB/sub/pubfile" && chown -R "$SMB3_TEST_USER:" "$A_PUB/sub"; }
[ "${1:-}" = --inner ] || dfs_pair "$0"
source "$(dirname "$0")/lib.sh"
dfs_pair "$0" --inner
head -c 700000 /dev/urandom >"$B_DIR/bfile" && chown "$SMB3_TEST_USER:" "$B_DIR/bfile"
SRC="//$A_HOST/test"
head -c 300000 /dev/urandom >"$WORK/up"

m1=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m1")
check "mount under a link to another share" "$SMB3FS" "$SRC/other/sub" "$m1" -o "$BASEOPTS"
cmp -s "$m1/pubfile" "$A_PUB/sub/pubfile" && ok "read through the link" || bad "pubfile differs"
cp "$WORK/up" "$m1/up1" && sync -f "$m1" && ok "write through the link" || bad "cp to $m1 failed"
expect_soon "the written file is in the public share" ok sh -c "cmp -s '$WORK/up' '$A_PUB/sub/up1' && echo ok"

m2=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m2")
check "mount of a link to another server" "$SMB3FS" "$SRC/remote" "$m2" -o "$BASEOPTS"
cmp -s "$m2/bfile" "$B_DIR/bfile" && ok "read from server B" || bad "bfile differs"
cp "$WORK/up" "$m2/up2" && sync -f "$m2" && ok "write to server B" || bad "cp to $m2 failed"
expect_soon "the written file is on server B" ok sh -c "cmp -s '$WORK/up' '$B_DIR/up2' && echo ok"
[ ! -e "$A_DIR/up2" ] && ok "nothing written on server A" || bad "up2 landed on server A"

m0=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m0")
check "mount of the DFS root" "$SMB3FS" "$SRC" "$m0" -o "$BASEOPTS,actimeo=60"
expect "the root lists its links" "$(ls "$m0" | tr '\n' ' ')" "loop other remote "
expect "a link is a directory" "$(stat -c %F "$m0/other" "$m0/remote" | tr '\n' ' ')" "directory directory "
expect "ls across the link to another share" "$(ls "$m0/other/sub" | tr '\n' ' ')" "pubfile up1 "
cmp -s "$m0/other/sub/pubfile" "$A_PUB/sub/pubfile" && ok "read across the link to another share" || bad "other/sub/pubfile differs"
expect "stat across the link" "$(stat -c %s "$m0/other/sub/pubfile")" 500000
cp "$WORK/up" "$m0/other/sub/up0" && sync -f "$m0" && ok "write across the link to another share" || bad "cp to other/sub failed"
expect_soon "the written file is in the public share" ok sh -c "cmp -s '$WORK/up' '$A_PUB/sub/up0' && echo ok"
mv "$m0/other/sub/up0" "$m0/other/up0b" && ok "rename under the link" || bad "mv under other failed"
expect "the rename is on the public share's disk" "$([ -f "$A_PUB/up0b" ] && [ ! -e "$A_PUB/sub/up0" ] && echo yes)" yes
mv "$m0/other/up0b" "$m0/up0c" 2>"$WORK/err" # the server cannot rename across: EXDEV, and mv copies
expect "a move out of the link lands on server A's share, not the public one" \
  "$([ -f "$A_DIR/up0c" ] && [ ! -e "$A_PUB/up0b" ] && echo yes)" yes
rm -f "$m0/other/up0b" "$m0/up0c" && ok "unlink under the link" || bad "rm under other failed"
expect "the unlinked file is gone from the public share" "$([ ! -e "$A_PUB/up0b" ] && echo gone)" gone

expect "ls across the link to another server" "$(ls "$m0/remote" | tr '\n' ' ')" "bfile up2 "
cmp -s "$m0/remote/bfile" "$B_DIR/bfile" && ok "read across the link to server B" || bad "remote/bfile differs"
cp "$WORK/up" "$m0/remote/up3" && sync -f "$m0" && ok "write across the link to server B" || bad "cp to remote failed"
expect_soon "the written file is on server B" ok sh -c "cmp -s '$WORK/up' '$B_DIR/up3' && echo ok"
[ ! -e "$A_DIR/up3" ] && ok "nothing of it on server A" || bad "up3 landed on server A"
# the releases of the files above end in the background (a CLOSE each): wait until the count rests
r0=$(stats "$m0" round_trips)
for _ in $(seq 50); do sleep 0.3; r=$(stats "$m0" round_trips); [ "$r" = "$r0" ] && break; r0=$r; done
mkdir "$m0/remote/newdir" && ok "mkdir across the link to server B" || bad "mkdir under remote failed"
r1=$(stats "$m0" round_trips)
echo "measured mkdir under a DFS link: $((r1 - r0)) round trips"
expect "mkdir under a link: LOOKUP + one compound, counted from the link's connection" "$((r1 - r0))" 2
[ -d "$B_DIR/newdir" ] && ok "the directory is on server B" || bad "no newdir on server B"
rmdir "$m0/remote/newdir" && [ ! -e "$B_DIR/newdir" ] && ok "rmdir across the link" || bad "rmdir under remote failed"
rm "$m0/remote/up3" && [ ! -e "$B_DIR/up3" ] && ok "unlink across the link to server B" || bad "rm under remote failed"

rc=0
timeout 60 ls "$m0/loop" >/dev/null 2>"$WORK/err" || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q "Too many levels\|Input/output error" "$WORK/err"; then
  ok "the self-referencing link gives an error: $(cat "$WORK/err")"
else
  bad "ls of the self link: exit $rc, $(cat "$WORK/err")"
fi
rc=0
timeout 60 cat "$m0/loop/x" >/dev/null 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q "Too many levels\|Input/output error" "$WORK/err" &&
  ok "a path under the self link gives an error too" || bad "cat under the self link: exit $rc, $(cat "$WORK/err")"
fs_umount "$m0"

m3=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m3")
rc=0
timeout 60 "$SMB3FS" "$SRC/loop" "$m3" -o "$BASEOPTS" 2>"$WORK/err" || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "refers back to itself" "$WORK/err"; then
  ok "mount under a self-referencing link fails: $(cat "$WORK/err")"
else
  bad "mount under the self link: exit $rc, $(cat "$WORK/err")"
fi
finish
