#!/usr/bin/env bash
# POSIX semantics through the mount, each result checked through the mount, on a second mount (another
# client) and on the server's disk (SMB3_TEST_SHARE_DIR). What is expected follows the server's
# configuration: with 'smb3 unix extensions = yes' (fs422.posix: Samba 4.22) the SMB3 POSIX
# extensions' behaviour (the server's modes, owners and file types; chmod and chown on the server;
# mkfifo, mknod and ln -s as the server's special files; case-sensitive names); without (fs.posix:
# Samba 4.17, where they are compiled out) today's: file_mode/dir_mode, the mount's uid/gid, chmod
# only as the read-only attribute, no-op chown only, no mkfifo, ln -s refused, case-insensitive names.
# Both: hard link counts, O_EXCL, rename over, and a git clone (an executable script and a symlink)
# into the mount with git status clean.
#   fs_posix.sh [admin]   admin: the share has 'admin users = $SMB3_TEST_USER' (fs*.posix_admin):
#                         chown/chgrp as root to any ids
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
MODE=${1:-}
POSIX=0
grep -qiE '^\s*smb3 unix extensions\s*=\s*yes' "$SMB3_TEST_CONF" && POSIX=1
echo "server: Samba $SMB3_TEST_SAMBA_VERSION, POSIX extensions expected: $POSIX${MODE:+, $MODE}"
perm() { stat -c %a "$1" 2>&1; }
own() { stat -c %u:%g "$1" 2>&1; }
type_of() { stat -c %F "$1" 2>&1; }
xattr_of() { "$PYTHON" -c 'import os,sys; print(len(os.getxattr(sys.argv[1], "user.SmbReparse")) > 0)' "$1" 2>&1; }
umask 022

# ---- admin users: chown/chgrp by root (the session acts as root on the server) ----
if [ "$MODE" = admin ]; then
  mount_into M ""
  echo x >"$M/o.txt"
  if [ "$POSIX" = 1 ]; then
    # the server makes it root's (admin users) in the user's group; POSIX: the creator's group
    expect "a file made by root: root's, in root's group, on disk" "$(own "$D/o.txt")" "0:0"
    expect "... and so through the mount (Unix SIDs)" "$(own "$M/o.txt")" "0:0"
    mkdir -m 777 "$M/pub"
    as4321() { setpriv --reuid 4321 --regid 4321 --clear-groups "$@"; }
    check "a file made by uid 4321" as4321 sh -c "echo x >'$M/pub/f'"
    expect "... is 4321's on disk" "$(own "$D/pub/f")" "4321:4321"
    expect "... and through the mount" "$(own "$M/pub/f")" "4321:4321"
    check "mkdir by uid 4321" as4321 mkdir "$M/pub/d"
    expect "... 4321's on disk" "$(own "$D/pub/d")" "4321:4321"
    check "mkfifo by uid 4321" as4321 mkfifo "$M/pub/p"
    expect "... 4321's on disk" "$(own "$D/pub/p")" "4321:4321"
    check "ln -s by uid 4321" as4321 ln -s f "$M/pub/l"
    expect "... 4321's on disk" "$(stat -c %u:%g "$D/pub/l")" "4321:4321"
    check "its own file: chmod by uid 4321" as4321 chmod 600 "$M/pub/f"
    expect "... on disk" "$(perm "$D/pub/f")" "600"
    check_fails "another's: chmod by uid 4321" as4321 chmod 600 "$M/o.txt"
    echo y >"$M/pub/f2" && chown 4321:4321 "$M/pub/f2"
    check "an existing file opened with O_CREAT keeps its owner" sh -c "echo z >>'$M/pub/f2'"
    expect "... on disk" "$(own "$D/pub/f2")" "4321:4321"
    check "chown 4321:8765" chown 4321:8765 "$M/o.txt"
    expect "on disk" "$(own "$D/o.txt")" "4321:8765"
    expect "through the mount" "$(own "$M/o.txt")" "4321:8765"
    check "chgrp 0" chgrp 0 "$M/o.txt"
    expect "on disk after chgrp" "$(own "$D/o.txt")" "4321:0"
    check "chown 1234 (owner only)" chown 1234 "$M/o.txt"
    expect "on disk after chown" "$(own "$D/o.txt")" "1234:0"
    mount_into M2 ""
    expect "a second mount sees the owner" "$(own "$M2/o.txt")" "1234:0"
    mount_into F "uid=4444,gid=5555,forceuid,forcegid"
    expect "forceuid,forcegid: the mount's ids" "$(own "$F/o.txt")" "4444:5555"
    mount_into G "uid=4444,gid=5555"
    expect "uid=/gid= without force: the server's ids" "$(own "$G/o.txt")" "1234:0"
    mkdir "$M/dd" && check "chown of a directory" chown 77:88 "$M/dd"
    expect "directory owner on disk" "$(own "$D/dd")" "77:88"
    # tar xf as root of real headers (linux/: names that differ only in case; ncursesw/: '..'
    # symlinks, which tar makes as placeholders first and replaces at the end): every entry's type,
    # mode, owner, size, mtime and link target, and every byte, as in the source. pax keeps
    # nanoseconds; the server keeps microseconds (Samba), so times are compared to the microsecond.
    inc=()
    for x in include/linux include/ncursesw include/krb5.h include/gssapi.h; do [ -e "/usr/$x" ] && inc+=("$x"); done
    if [ "${#inc[@]}" -ge 2 ]; then
      mkdir "$M/inc"
      check "tar xf of /usr/include parts (${inc[*]})" sh -c "tar -C /usr --format=posix -cf - ${inc[*]} | tar -C '$M/inc' -xf -"
      tree_of() { (cd "$1" && find "${inc[@]}" -printf '%y %m %U %G %s %T@ %l %p\n' |
        sed -E 's/^(d [0-9]+ [0-9]+ [0-9]+) [0-9]+/\1 -/; s/ ([0-9]+\.[0-9]{6})[0-9]* / \1 /' | sort); }
      tree_of /usr >"$WORK/inc.src"
      tree_of "$M/inc" >"$WORK/inc.mnt"
      # On disk Samba keeps a symlink made over SMB as a regular file with the reparse point in an
      # xattr (checked above): the disk's tree is compared without them.
      tree_of "$D/inc" | awk 'NR==FNR { if ($1 == "l") L[$NF] = 1; next } !($NF in L)' "$WORK/inc.src" - >"$WORK/inc.disk"
      grep -v '^l ' "$WORK/inc.src" >"$WORK/inc.srcnl"
      if cmp -s "$WORK/inc.src" "$WORK/inc.mnt"; then ok "tar xf: $(wc -l <"$WORK/inc.src") entries as in the source (type, mode, owner, size, mtime, link)"
      else bad "tar xf: through the mount: $(diff "$WORK/inc.src" "$WORK/inc.mnt" | head -6 | tr '\n' ' ')"; fi
      if cmp -s "$WORK/inc.srcnl" "$WORK/inc.disk"; then ok "tar xf: the same on the server's disk (but for symlinks)"
      else bad "tar xf: on disk: $(diff "$WORK/inc.srcnl" "$WORK/inc.disk" | grep '^>' | head -3 | tr '\n' ' ')"; fi
      same_bytes() { local x; for x in "${inc[@]}"; do diff -r --no-dereference "/usr/$x" "$M/inc/$x" || return 1; done; }
      check "tar xf: every byte (diff -r)" same_bytes
      expect "tar xf: the case-only pair (xt_CONNMARK.h, xt_connmark.h) is two files" \
        "$(ls "$M/inc/include/linux/netfilter" | grep -ic '^xt_connmark.h$')" 2
    else
      bad "no /usr/include/linux (linux-libc-dev): the tar xf case cannot run"
    fi
  else
    expect "owner: the mount's" "$(own "$M/o.txt")" "0:0"
    check_fails "chown to another uid: EPERM without the extensions" chown 4321 "$M/o.txt"
    expect "... nothing changed on disk" "$(stat -c %U "$D/o.txt")" "root"
    check "a no-op chown succeeds" chown 0:0 "$M/o.txt"
  fi
  finish
  exit
fi

mount_into M ""
mount_into M2 ""

# ---- modes ----
echo hi >"$M/f"
mkdir "$M/d"
(umask 077 && echo p >"$M/private" && mkdir "$M/privd")
if [ "$POSIX" = 1 ]; then
  expect "new file (umask 022): mode" "$(perm "$M/f")" "644"
  expect "... on disk" "$(perm "$D/f")" "644"
  expect "new directory: mode" "$(perm "$M/d")" "755"
  expect "... on disk" "$(perm "$D/d")" "755"
  expect "umask 077 file on disk" "$(perm "$D/private")" "600"
  expect "umask 077 directory on disk" "$(perm "$D/privd")" "700"
  for m in 755 600 640 444 700 711 644; do
    check "chmod $m" chmod "$m" "$M/f"
    expect "chmod $m through the mount" "$(perm "$M/f")" "$m"
    expect "chmod $m on disk" "$(perm "$D/f")" "$m"
  done
  check "chmod 700 of a directory" chmod 700 "$M/d"
  expect "... on disk" "$(perm "$D/d")" "700"
  chmod 755 "$M/d"
  check_fails "chmod u+s (Samba takes only 0777 over SMB: refused, not dropped)" chmod u+s "$M/f"
  expect "... the mode unchanged" "$(perm "$D/f")" "644"
  chmod 600 "$D/f" && sleep 1.2
  expect "a chmod on the server seen after actimeo" "$(perm "$M/f")" "600"
  chmod 644 "$M/f"
  printf '#!/bin/sh\necho run\n' >"$M/script.sh"
  check "chmod +x" chmod +x "$M/script.sh"
  expect "exec bits on disk" "$(perm "$D/script.sh")" "755"
  expect "exec bits on the second mount" "$(perm "$M2/script.sh")" "755"
  expect "runs" "$("$M/script.sh")" "run"
else
  expect "new file: file_mode" "$(perm "$M/f")" "644"
  expect "new directory: dir_mode" "$(perm "$M/d")" "755"
  expect "umask does not matter: file_mode" "$(perm "$M/private")" "644"
  disk=$(perm "$D/f")
  check "chmod 600 succeeds" chmod 600 "$M/f"
  expect "... but the mount shows file_mode" "$(perm "$M/f")" "644"
  expect "... and nothing changed on disk" "$(perm "$D/f")" "$disk"
  check "chmod a-w (the read-only attribute)" chmod a-w "$M/f"
  expect "read-only: the write bits go" "$(perm "$M/f")" "444"
  expect "... on the second mount too" "$(perm "$M2/f")" "444"
  check "chmod u+w clears it" chmod u+w "$M/f"
  expect "writable again" "$(perm "$M/f")" "644"
  check "chmod +x succeeds" chmod +x "$M/f"
  expect "... without exec bits (file_mode)" "$(perm "$M/f")" "644"
fi

# ---- owners (a plain user's session: the server refuses chown, WRITE_OWNER) ----
srv_gid=$(stat -c %g "$D/f")
if [ "$POSIX" = 1 ]; then
  expect "on disk the session's user owns it" "$(stat -c %U "$D/f")" "$SMB3_TEST_USER"
  # the session's user comes as its passdb domain SID, not a Unix id: the mount's uid
  expect "owner: the mount's uid, group: the server's" "$(own "$M/f")" "0:$srv_gid"
  check_fails "chown to another uid: EPERM from the server" chown 4321 "$M/f"
  check_fails "chgrp to root: EPERM from the server" chgrp 0 "$M/f"
  expect "... nothing changed on disk" "$(own "$D/f")" "$(id -u "$SMB3_TEST_USER"):$srv_gid"
  check "a no-op chown succeeds" chown "0:$srv_gid" "$M/f"
  echo x >"$M/o2"
  chown 1234:2345 "$D/o2"
  sleep 1.2
  expect "owners set on the server show as they are" "$(own "$M/o2")" "1234:2345"
  mount_into F "uid=4444,gid=5555,forceuid,forcegid"
  expect "forceuid,forcegid" "$(own "$F/o2")" "4444:5555"
  fs_umount "$F"
  mount_into F "uid=4444,forcegid,gid=5555"
  expect "uid= for what the server cannot name, forcegid" "$(own "$F/f")" "4444:5555"
  expect "uid= does not override a Unix owner" "$(own "$F/o2")" "1234:5555"
  fs_umount "$F"
else
  expect "owner and group: the mount's" "$(own "$M/f")" "0:0"
  check_fails "chown to another uid: EPERM" chown 4321 "$M/f"
  check "a no-op chown succeeds" chown 0:0 "$M/f"
fi

# ---- special files ----
if [ "$POSIX" = 1 ]; then
  check "mkfifo" mkfifo "$M/fifo"
  expect "a FIFO through the mount" "$(type_of "$M/fifo")" "fifo"
  expect "a FIFO on the second mount" "$(type_of "$M2/fifo")" "fifo"
  expect "its mode" "$(perm "$M2/fifo")" "644"
  expect "on disk: Samba 4.22 keeps a regular file" "$(type_of "$D/fifo")" "regular empty file"
  expect "... with the reparse point in user.SmbReparse" "$(xattr_of "$D/fifo")" "True"
  check "a socket (bind)" "$PYTHON" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$M/sock"
  expect "a socket on the second mount" "$(type_of "$M2/sock")" "socket"
  check "mknod c 1 3" mknod "$M/cdev" c 1 3
  expect "a character device on the second mount" "$(type_of "$M2/cdev")" "character special file"
  check "mknod b 7 0" mknod "$M/bdev" b 7 0
  expect "a block device on the second mount" "$(type_of "$M2/bdev")" "block special file"
  expect "the device's numbers through the mount" "$(stat -c %t:%T "$M/cdev")" "1:3"
  expect "... on the second mount (read from the reparse point)" "$(stat -c %t:%T "$M2/bdev")" "7:0"
  expect "... on disk: the NFS reparse point's major and minor" "$("$PYTHON" -c 'import os,struct,sys
b = os.getxattr(sys.argv[1], "user.SmbReparse"); print("%d:%d" % struct.unpack_from("<II", b, 16))' "$D/cdev" 2>&1)" "1:3"
  # rename(2) (no RENAME_NOREPLACE, unlike mv): Samba 4.22 drops the reparse attribute; we set it again
  check "rename(2) of a FIFO" "$PYTHON" -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' "$M/fifo" "$M/fifo2"
  check "... and back" "$PYTHON" -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' "$M/fifo2" "$M/fifo"
  expect "a renamed FIFO is a FIFO through the mount" "$(type_of "$M/fifo")" "fifo"
  expect "... on the second mount" "$(type_of "$M2/fifo")" "fifo"
  check "rename(2) of a device" "$PYTHON" -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' "$M/cdev" "$M/cdev2"
  expect "a renamed device on the second mount, its numbers kept" "$(stat -c %F:%t:%T "$M2/cdev2")" \
    "character special file:1:3"
  mkfifo "$D/disk_fifo"
  expect "a FIFO made on disk" "$(type_of "$M/disk_fifo")" "fifo"
  check "rm of the FIFO" rm "$M/fifo"
  [ -e "$D/fifo" ] && bad "the FIFO is still on disk" || ok "the FIFO is gone from disk"
else
  check_fails "mkfifo without the extensions" mkfifo "$M/fifo"
  [ -e "$D/fifo" ] && bad "a FIFO attempt left a file" || ok "nothing left on disk"
fi

# ---- symbolic links ----
if [ "$POSIX" = 1 ]; then
  check "ln -s relative" ln -s f "$M/rel"
  check "ln -s absolute" ln -s /etc/hostname "$M/abs"
  check "ln -s dangling, with directories" ln -s ../some/where "$M/dangling"
  expect "readlink relative on the second mount" "$(readlink "$M2/rel")" "f"
  expect "readlink absolute on the second mount" "$(readlink "$M2/abs")" "/etc/hostname"
  expect "readlink dangling on the second mount" "$(readlink "$M2/dangling")" "../some/where"
  expect "a link on the second mount" "$(type_of "$M2/rel")" "symbolic link"
  expect "lstat size is the target's length" "$(stat -c %s "$M2/abs")" "13"
  expect "read through it" "$(cat "$M2/rel")" "hi"
  expect "ls -l" "$(ls -l "$M2/rel" | cut -c1-10)" "lrwxrwxrwx"
  expect "on disk: a regular file" "$(type_of "$D/rel")" "regular empty file"
  expect "... with the reparse point in user.SmbReparse" "$(xattr_of "$D/rel")" "True"
  check_fails "ln -s over an existing name" ln -s x "$M/rel"
  ln -s f "$D/disk_lnk"
  expect "a link made on disk" "$(readlink "$M/disk_lnk")" "f"
  check "mv a link" mv "$M/rel" "$M/rel2"
  expect "renamed link on the second mount" "$(readlink "$M2/rel2")" "f"
  check "rm a link" rm "$M/rel2"
  [ -e "$D/rel2" ] && bad "the link is still on disk" || ok "the link is gone from disk"
else
  check "ln -s without the extensions: a symlink file (mfsymlinks, the default there)" ln -s f "$M/rel"
  expect "... read back as the link" "$(readlink "$M/rel")" f
fi

# ---- paths in directories: on disk where they are through the mount (a POSIX share parses '/' as
# the separator of a POSIX CREATE's name and keeps '\' as a character: sent as '\' a nested path
# made "sub\x" in the share's root) ----
mkdir -p "$M/sub/deeper"
echo n >"$M/sub/deeper/x"
expect "a file two directories down, on disk" "$(cat "$D/sub/deeper/x" 2>&1)" "n"
check "rename across directories" mv "$M/sub/deeper/x" "$M/sub/y"
expect "... on disk" "$(cat "$D/sub/y" 2>&1)" "n"
check "hard link in a directory" ln "$M/sub/y" "$M/sub/deeper/z"
expect "... on disk" "$(stat -c %h "$D/sub/deeper/z" 2>&1)" "2"
expect "nothing but sub in the root from it" "$(ls "$D" | grep -c '^sub.')" "0"
if [ "$POSIX" = 1 ]; then
  echo b >"$M/sub/back\\slash"
  expect "a name with a backslash: one file in sub on disk" "$(cat "$D/sub/back\\slash" 2>&1)" "b"
  # (listed only as a mangled 8.3 name unless the share has 'mangled names = no': Samba's doing)
  expect "... read by its name on the second mount" "$(cat "$M2/sub/back\\slash" 2>&1)" "b"
fi

# ---- names that differ only in case ----
echo lower >"$M/abc"
echo upper >"$M/Abc"
if [ "$POSIX" = 1 ]; then
  expect "abc and Abc: two files" "$(cat "$M2/abc")/$(cat "$M2/Abc")" "lower/upper"
  expect "two files on disk" "$(ls "$D" | grep -ci '^abc$')" "2"
  check "rm Abc" rm "$M/Abc"
  expect "abc stays" "$(cat "$D/abc")" "lower"
else
  expect "abc and Abc: one file (case-insensitive server)" "$(cat "$M2/abc")" "upper"
  expect "one file on disk" "$(ls "$D" | grep -ci '^abc$')" "1"
fi
# ... in a directory this mount made, whose names it knows (a lookup of another name is answered
# without the server while actimeo lasts), renewed once that expired by a listing that showed both
# spellings (another client made them): removing one spelling tells nothing of the other
if [ "$POSIX" = 1 ]; then
  mount_into MC "actimeo=1"
  mkdir "$MC/cs" && echo lower >"$D/cs/abc" && echo upper >"$D/cs/Abc" && chown "$(stat -c %u:%g "$D/cs")" "$D/cs/abc" "$D/cs/Abc"
  sleep 1.2 # (actimeo: what this mount knew of the directory's names expires)
  # (Abc's lookup lists the directory; abc is not looked up before the rm: its first use afterwards
  # is the kernel's lookup, which the mount answers)
  expect "Abc, listed" "$(cat "$MC/cs/Abc")" "upper"
  check "rm Abc in a directory this mount made" rm "$MC/cs/Abc"
  expect "abc stays, at once through this mount" "$(cat "$MC/cs/abc" 2>&1)" "lower"
fi

# ---- hard links ----
echo h >"$M/h1"
check "ln" ln "$M/h1" "$M/h2"
expect "link count through the mount" "$(stat -c %h "$M/h1")" "2"
expect "link count on the second mount" "$(stat -c %h "$M2/h2")" "2"
expect "link count on disk" "$(stat -c %h "$D/h1")" "2"
expect "one inode" "$(stat -c %i "$M/h1")" "$(stat -c %i "$M/h2")"
rm "$M/h2"
expect "after rm, at once: 1" "$(stat -c %h "$M/h1")" "1"
check "three names" sh -c "ln '$M/h1' '$M/h2' && ln '$M/h2' '$M/h3'"
expect "3 links each" "$(stat -c %h "$M/h1" "$M/h2" "$M/h3" | tr '\n' ' ')" "3 3 3 "
# unlink(2) alone (rm would lstat the name first): the name is not the one the mount saw last
check "unlink of the first name" "$PYTHON" -c 'import os,sys; os.unlink(sys.argv[1])' "$M/h1"
expect "the other names: 2 links, at once" "$(stat -c %h "$M/h2" "$M/h3" | tr '\n' ' ')" "2 2 "
expect "... as on disk" "$(stat -c %h "$D/h3")" "2"
rm "$M/h2" "$M/h3"

# ---- a directory's times and link count follow the entries made in it ----
# The mount answers them from what it knows (inode_dir_changed: this machine's clock at the change,
# no round trip); the server's own come with the next refresh. So: the time moved forward past the
# time before the change, and lies within a second of what the server's disk says.
moved() { # LABEL MOUNT_DIR DISK_DIR BEFORE_NS
  "$PYTHON" -c 'import os,sys
m, d, before = os.stat(sys.argv[1]), os.stat(sys.argv[2]), int(sys.argv[3])
ok = all(getattr(m, f) > before and abs(getattr(m, f) - getattr(d, f)) < 10**9 for f in ("st_mtime_ns", "st_ctime_ns"))
print("ok" if ok else "mount %d %d, disk %d %d, before %d" % (m.st_mtime_ns, m.st_ctime_ns, d.st_mtime_ns, d.st_ctime_ns, before))' "$2" "$3" "$4"
}
mkdir "$M/dt" "$M/dt2" "$M/dt/sub"
stat "$M/dt" "$M/dt2" >/dev/null # (cached)
t0=$("$PYTHON" -c 'import os,sys; s=os.stat(sys.argv[1]); print(max(s.st_mtime_ns, s.st_ctime_ns))' "$M/dt")
echo x >"$M/dt/new"
expect "a create: the directory's times moved, near the disk's" "$(moved x "$M/dt" "$D/dt" "$t0")" ok
mkdir "$M/dt/d"
expect "a mkdir: its times moved, near the disk's" "$(moved x "$M/dt" "$D/dt" "$t0")" ok
"$PYTHON" -c 'import os,sys; os.unlink(sys.argv[1])' "$M/dt/new"
expect "an unlink: its times moved, near the disk's" "$(moved x "$M/dt" "$D/dt" "$t0")" ok
check "a directory moved to another" mv "$M/dt/sub" "$M/dt2/sub"
expect "a rename: both directories' times moved, near the disk's" \
  "$(moved x "$M/dt" "$D/dt" "$t0") $(moved x "$M/dt2" "$D/dt2" "$t0")" "ok ok"
if [ "$POSIX" = 1 ]; then
  expect "... and their link counts" "$(stat -c %h "$M/dt" "$M/dt2" | tr '\n' ' ')" "3 3 "
  expect "... as on disk" "$(stat -c %h "$D/dt" "$D/dt2" | tr '\n' ' ')" "3 3 "
fi

# ---- O_EXCL, rename over ----
cat >"$WORK/excl.py" <<'EOF'
import errno, os, sys
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
os.close(fd)
try:
    os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    sys.exit("second O_EXCL create succeeded")
except OSError as e:
    sys.exit(0 if e.errno == errno.EEXIST else "errno %d" % e.errno)
EOF
check "O_EXCL: a new file, then EEXIST" "$PYTHON" "$WORK/excl.py" "$M/excl"
[ "$POSIX" = 1 ] && expect "O_EXCL mode 0640 on disk" "$(perm "$D/excl")" "640"
echo one >"$M/r1"
echo two >"$M/r2"
check "rename over" mv -f "$M/r1" "$M/r2"
expect "the target holds the source" "$(cat "$M2/r2")" "one"
expect "on disk" "$(cat "$D/r2")" "one"
[ -e "$D/r1" ] && bad "the source is still on disk" || ok "the source is gone from disk"

# ---- git: a clone with an executable script and a symlink ----
if command -v git >/dev/null; then
  export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK
  git config --global user.email t@example.com
  git config --global user.name test
  git config --global init.defaultBranch main
  git config --global safe.directory '*'
  git init -q "$WORK/src"
  printf '#!/bin/sh\necho built\n' >"$WORK/src/build.sh"
  chmod 755 "$WORK/src/build.sh"
  echo readme >"$WORK/src/README"
  ln -s README "$WORK/src/link"
  (cd "$WORK/src" && git add -A && git commit -qm init)
  git clone -q --bare "$WORK/src" "$WORK/bare.git"
  check "git clone into the mount" git clone -q "$WORK/bare.git" "$M/clone"
  expect "git status clean" "$(git -C "$M/clone" status --porcelain 2>&1)" ""
  if [ "$POSIX" = 1 ]; then
    expect "core.filemode" "$(git -C "$M/clone" config core.filemode)" "true"
    expect "core.symlinks" "$(git -C "$M/clone" config core.symlinks || echo true)" "true"
    expect "the script is executable through the mount" "$("$M/clone/build.sh")" "built"
    expect "... and on disk (owner exec bit)" "$(($(stat -c 0%a "$D/clone/build.sh") & 0100))" "64"
    expect "the symlink on the second mount" "$(readlink "$M2/clone/link")" "README"
    expect "git status clean on the second mount" "$(git -C "$M2/clone" status --porcelain 2>&1)" ""
    # git status there replaced .git/index (a rename over it): this mount's kernel keeps the old
    # inode for that name until actimeo has passed (another client's change, no lease broken)
    expect_soon "this mount sees the index the second one wrote" "$(stat -c %i "$M2/clone/.git/index")" \
      stat -c %i "$M/clone/.git/index"
    check "git checkout after a change" sh -c "cd '$M/clone' && chmod -x build.sh && git checkout -q -- build.sh && test -x build.sh"
    expect "git status clean after it" "$(git -C "$M/clone" status --porcelain 2>&1)" ""
  else
    expect "core.filemode (file_mode decides)" "$(git -C "$M/clone" config core.filemode)" "false"
    # symlinks as mfsymlinks files, the default without the extensions: git finds they work
    expect "core.symlinks (symlink files)" "$(git -C "$M/clone" config core.symlinks || echo true)" "true"
    expect "the symlink through the mount" "$(readlink "$M/clone/link")" "README"
    expect "... a symlink file on the server's disk" "$(head -c 4 "$D/clone/link")" "XSym"
  fi
else
  bad "git is not installed (scripts/install-deps.sh test)"
fi

finish
