#!/usr/bin/env bash
# smb3fs on a share of a second server implementation (tests/harness/with-impacket: impacket's
# smbserver, SMB 2.0.2): read, write, readdir (with and without attributes), mkdir, rename, unlink,
# rmdir, overwrite and extending truncate, stable inode numbers. The connection falls back to one request at
# a time (impacket's compounded answers do not verify; `smb3 stats` says compound_fallback 1), and
# impacket lists files with FileId 0: the mount must still list them and give each one st_ino.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mount_into M
expect "mounted as fuse.smb3fs" "$(awk -v m="$M" '$2 == m {print $3}' /proc/mounts)" "fuse.smb3fs"
expect "compound fallback at connect" "$(stats "$M" compound_fallback)" "1"

# ---- files made on the server, read through the mount ----
mkdir "$D/pre"
echo from-server >"$D/pre/a.txt"
head -c 3000000 /dev/urandom >"$WORK/big"
cp "$WORK/big" "$D/pre/big.bin"
expect "readdir lists server files" "$(ls "$M/pre" | tr '\n' ' ')" "a.txt big.bin "
expect "ls -l sizes" "$(ls -l "$M/pre" | awk 'NR > 1 {print $5, $9}' | tr '\n' ' ')" "12 a.txt 3000000 big.bin "
expect "read small" "$(cat "$M/pre/a.txt")" "from-server"
cmp -s "$WORK/big" "$M/pre/big.bin" && ok "read 3 MB (64 KiB READs)" || bad "read 3 MB: differs"
ino1=$(stat -c %i "$M/pre/a.txt")
[ "$ino1" != 0 ] && ok "st_ino not 0 ($ino1)" || bad "st_ino 0"
expect "st_ino is the server's file id" "$ino1" "$(stat -c %i "$D/pre/a.txt")"
expect "st_ino from readdir matches stat" "$(ls -i "$M/pre" | awk '$2 == "a.txt" {print $1}')" "$ino1"

# ---- written through the mount ----
echo hello >"$M/new.txt"
expect "create + write, on the server" "$(cat "$D/new.txt")" "hello"
printf 'more' >>"$M/new.txt"
expect "append" "$(cat "$D/new.txt")" "$(printf 'hello\nmore')"
dd if="$WORK/big" of="$M/copy.bin" bs=1M status=none && ok "dd 3 MB in" || bad "dd failed"
cmp -s "$WORK/big" "$D/copy.bin" && ok "written bytes on the server" || bad "written bytes differ"
# impacket's SET_INFO FileEndOfFileInformation only ever extends (it writes a zero byte at the new
# end): growing works, shrinking is silently ignored by the server (README, interop table).
check "truncate up" truncate -s 5000000 "$M/copy.bin"
expect "extended on the server" "$(stat -c %s "$D/copy.bin")" "5000000"
echo overwritten >"$M/new.txt"
expect "overwrite (O_TRUNC)" "$(cat "$D/new.txt")" "overwritten"

# ---- namespace ----
check "mkdir" mkdir "$M/dir"
[ -d "$D/dir" ] && ok "mkdir on the server" || bad "mkdir not on the server"
check "mkdir -p nested" mkdir -p "$M/dir/x/y"
check "rename into a directory" mv "$M/new.txt" "$M/dir/x/y/moved.txt"
[ -f "$D/dir/x/y/moved.txt" ] && [ ! -e "$D/new.txt" ] && ok "rename on the server" || bad "rename not on the server"
expect "readdir after rename" "$(ls "$M/dir/x/y")" "moved.txt"
# (no "rmdir of a non-empty directory fails": impacket deletes the whole tree, see the README)
check "unlink" rm "$M/dir/x/y/moved.txt"
[ ! -e "$D/dir/x/y/moved.txt" ] && ok "unlink on the server" || bad "unlink not on the server"
check "rm -r" rm -r "$M/dir"
[ ! -e "$D/dir" ] && ok "rm -r on the server" || bad "rm -r left $D/dir"
check "rm the rest" rm -r "$M/pre" "$M/copy.bin"
expect "share empty" "$(ls -A "$M")" ""
expect "share empty on the server" "$(ls -A "$D")" ""
check_fails "open of a missing file" cat "$M/nope"
finish
