#!/usr/bin/env bash
# Symbolic links under -o mfsymlinks: stored as Minshall+French symlink files (the kernel cifs
# client's format), made with ln -s / cp -a, read back, listed, renamed, removed; files in that
# format written on the server are links; files of the same size that are not in it stay regular
# files; without the option ln -s is refused and such a file is a plain file.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
type_of() { stat -c %F "$1" 2>&1; }
# mfsl TARGET: the file the kernel's cifs client writes for a link to TARGET
mfsl() {
  local t=$1 body
  body=$(printf 'XSym\n%04d\n%s\n%s\n' "${#t}" "$(printf '%s' "$t" | md5sum | cut -d' ' -f1)" "$t")
  printf '%s\n' "$body" | head -c 1067 >"$WORK/mfsl"
  local n; n=$(stat -c %s "$WORK/mfsl")
  { cat "$WORK/mfsl"; head -c $((1067 - n)) /dev/zero | tr '\0' ' '; }
}

mount_into M "mfsymlinks"
echo hello >"$M/file"
check "ln -s to a file" ln -s file "$M/lf"
expect "it is a link" "$(type_of "$M/lf")" "symbolic link"
expect "readlink" "$(readlink "$M/lf")" "file"
expect "reading through it" "$(cat "$M/lf")" "hello"
expect "on the server: a 1067-byte file" "$(stat -c %s "$D/lf")" "1067"
expect "on the server: the cifs format" "$(md5sum <"$D/lf")" "$(mfsl file | md5sum)"
check "ln -s, dangling, relative with directories" ln -s ../some/where/else "$M/dangling"
expect "dangling readlink" "$(readlink "$M/dangling")" "../some/where/else"
check "test -L on a dangling link" test -L "$M/dangling"
check_fails "ln -s over an existing name" ln -s other "$M/lf"
expect "the existing link kept" "$(readlink "$M/lf")" "file"
check_fails "a target longer than 1024 bytes" ln -s "$(head -c 1100 /dev/zero | tr '\0' a)" "$M/long"
check "touch -h on the link" touch -h -d '2021-02-03' "$M/lf"
expect "still a link after touch -h" "$(type_of "$M/lf")" "symbolic link"
expect "its target after touch -h" "$(readlink "$M/lf")" "file"
check "mv a link" mv "$M/lf" "$M/lf2"
expect "renamed link" "$(readlink "$M/lf2")" "file"
check "rm a link" rm "$M/lf2"
[ -e "$D/lf2" ] && bad "the removed link is still on the server" || ok "the removed link is gone from the server"

# a tree with links, copied in with cp -a and listed back
mkdir -p "$WORK/tree/sub"; echo a >"$WORK/tree/sub/a"
ln -s sub/a "$WORK/tree/toa"; ln -s /etc/hostname "$WORK/tree/abs"; ln -s nowhere "$WORK/tree/sub/broken"
check "cp -a of a tree with links" cp -a "$WORK/tree" "$M/tree"
expect "ls -l of the copy" "$(cd "$M/tree" && find . -type l -printf '%p -> %l\n' | sort | tr '\n' ';')" \
  "$(cd "$WORK/tree" && find . -type l -printf '%p -> %l\n' | sort | tr '\n' ';')"
expect "a file through a copied link" "$(cat "$M/tree/toa")" "a"

# written on the server (as another cifs client would), and look-alikes that are not links
mfsl "target/of/server" >"$D/srvlink"
mfsl "x" | sed '1s/XSym/XSyn/' >"$D/notmagic"
mfsl "y" | sed '3s/^./0/' >"$D/badsum" # the digest no longer matches the target
head -c 1067 /dev/urandom >"$D/random1067"
chown "$SMB3_TEST_USER:" "$D"/srvlink "$D"/notmagic "$D"/badsum "$D"/random1067
fs_umount "$M"
mount_into M "mfsymlinks"
# a listing first (readdirplus), then each name
expect "listed: the server's link" "$(ls -l "$M" | grep -c '^l.* srvlink -> target/of/server$')" "1"
expect "listed again (the inode known): the server's link" "$(ls -l "$M" | grep -c '^l.* srvlink -> target/of/server$')" "1"
expect "the server's link" "$(readlink "$M/srvlink")" "target/of/server"
for f in notmagic badsum random1067; do
  expect "$f is a regular file" "$(type_of "$M/$f")" "regular file"
  expect "$f keeps its bytes" "$(md5sum <"$M/$f")" "$(md5sum <"$D/$f")"
done
# another client changes the link: seen once the attributes expire
sleep 0.2; mfsl "moved/elsewhere" >"$D/srvlink"; touch -d '+1 sec' "$D/srvlink"
sleep 1.2
expect "a link changed on the server" "$(readlink "$M/srvlink")" "moved/elsewhere"
# a file the kernel knows as a regular file becomes a link (written through the mount in the
# format), and a link becomes a regular file on the server: each name gets an inode of its new
# type, never an EIO from an inode that changed type
mfsl "made/by/writing" >"$M/written"
sleep 1.2 # the kernel keeps the entry and attributes it has for actimeo
expect "a regular file written in the format becomes a link" "$(type_of "$M/written")" "symbolic link"
expect "its target" "$(readlink "$M/written")" "made/by/writing"
cat >"$WORK/fd.py" <<'EOF'
import os, stat, sys, time
p, content = sys.argv[1], open(sys.argv[2], "rb").read()
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, content)
os.fsync(fd)
time.sleep(1.2)
st = os.fstat(fd)  # the open file is the regular file it was (not EIO from a type change)
ok = stat.S_ISREG(st.st_mode) and st.st_size == len(content)
os.close(fd)
time.sleep(1.2)
ok = ok and stat.S_ISLNK(os.lstat(p).st_mode) and os.readlink(p) == "via/fd"
sys.exit(0 if ok else 1)
EOF
mfsl "via/fd" >"$WORK/viafd"
check "written through an open descriptor: fstat stays regular, then the name is a link" "$PYTHON" "$WORK/fd.py" "$M/viafd" "$WORK/viafd"
ln -s somewhere "$M/becomes_file"
expect "a link before the server rewrites it" "$(type_of "$M/becomes_file")" "symbolic link"
head -c 1067 /dev/urandom >"$D/becomes_file"; touch -d '+2 sec' "$D/becomes_file"
sleep 1.2
expect "a link rewritten on the server as a file" "$(type_of "$M/becomes_file")" "regular file"
check_fails "readlink of what is no longer a link" readlink "$M/becomes_file"
expect "its bytes" "$(md5sum <"$M/becomes_file")" "$(md5sum <"$D/becomes_file")"
fs_umount "$M"

# a default mount: symlink files where the share has no POSIX extensions
mount_into P ""
check "ln -s on a default mount" ln -s file "$P/deflink"
expect "... an mfsymlinks file" "$(head -c 4 "$D/deflink")" "XSym"
expect "... read back as the link" "$(readlink "$P/deflink")" "file"
expect "... and the server's symlink file is a link" "$(readlink "$P/srvlink")" "moved/elsewhere"
fs_umount "$P"
# nomfsymlinks: no symlinks, and the format is just a file
mount_into P "nomfsymlinks"
check_fails "ln -s with nomfsymlinks" ln -s file "$P/nolink"
expect "with nomfsymlinks the server's link is a file" "$(type_of "$P/srvlink")" "regular file"
expect "of 1067 bytes" "$(stat -c %s "$P/srvlink")" "1067"
fs_umount "$P"
finish
