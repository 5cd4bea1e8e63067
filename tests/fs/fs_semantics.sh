#!/usr/bin/env bash
# What programs see (issue 50), each checked on a default mount: names Windows reserves (created,
# listed, looked up, renamed to; an unmatched glob is ENOENT), link counts through link, unlink and
# rename over a hard link (after a listing too, which carries no counts), ctime moved by futimens,
# chmod, truncate, write, link and rename, mtime moved by writes through mmap (at msync), st_blocks
# covering data still in write-back, and symlink(2) working without options.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mount_into M


# ---- names ----
check "rm -f of an unmatched glob" rm -f "$M/nothing*.o"
check_fails "stat of a wildcard name: fails" stat "$M/q*r"
expect "... with ENOENT" "$("$PYTHON" -c "
import errno, os
try: os.stat('$M/q*r')
except OSError as e: print(errno.errorcode[e.errno])")" ENOENT
mkdir "$M/names"
# Each character Windows reserves, in a file's and a directory's name, and a control character.
for c in '*' '?' '<' '>' '|' '"' ':' $'\x01'; do
  check "create a file named a${c}b" touch "$M/names/a${c}b"
  check "mkdir d${c}e" mkdir "$M/names/d${c}e"
  check "write and read back in d${c}e" sh -c "echo '$c' >'$M/names/d${c}e/f' && [ \"\$(cat '$M/names/d${c}e/f')\" = '$c' ]"
done
check "rename to a name with ':' and '?'" mv "$M/names/a*b" "$M/names/x:y?z"
fresh_list=$(ls -A "$M/names" | LC_ALL=C sort | tr '\n' ' ')
expect "listed as made" "$fresh_list" "$(printf '%s\n' 'a"b' 'a:b' 'a<b' 'a>b' 'a?b' 'a|b' $'a\x01b' 'd"e' 'd*e' 'd:e' 'd<e' 'd>e' 'd?e' 'd|e' $'d\x01e' 'x:y?z' | LC_ALL=C sort | tr '\n' ' ')"
# the private-use code points of Services for Macintosh, as macOS and the kernel client store them
expect "stored as SFM's code points" "$(ls "$D/names" | grep -c $'\xef\x80\xa1')" 1
expect "'*' in no name on the server's disk" "$(ls "$D/names" | grep -c '\*')" 0
check_fails "a name with a backslash is refused" touch "$M/names/back\\slash"
mount_into M2
expect "another mount lists them the same" "$(ls -A "$M2/names" | LC_ALL=C sort | tr '\n' ' ')" "$fresh_list"
expect "... and reads through them" "$(cat "$M2/names/d|e/f")" "|"

# ---- link counts ----
# What the mount itself keeps (a long actimeo: nothing asked of the server again in between, so the
# counts seen are the mount's bookkeeping), then a new mount asks the server.
mkdir "$D/links"; echo x >"$D/links/f"
for i in $(seq 19); do ln "$D/links/f" "$D/links/l$i"; done
chown -R "$SMB3_TEST_USER:" "$D/links"
mount_into L "actimeo=30"
expect "a file with 20 names" "$(stat -c %h "$L/links/l5")" 20
# A listing carries no link counts (but on a POSIX share): what the mount knows of the file stays.
expect "... listed" "$(ls -l "$L/links/" | awk '$NF == "l6" {print $2}')" 20
check "rm of one name" rm "$L/links/l1"
expect "links of another name after rm" "$(stat -c %h "$L/links/l5")" 19
expect "... and of the first" "$(stat -c %h "$L/links/f")" 19
expect "... in a listing" "$(ls -l "$L/links/l7" | awk '{print $2}')" 19
check "ln" ln "$L/links/f" "$L/links/new"
expect "links after ln" "$(stat -c %h "$L/links/l9")" 20
echo other >"$L/links/other"
check "rename over a hard link" mv "$L/links/other" "$L/links/l2"
expect "links of the replaced file's other names" "$(stat -c %h "$L/links/f")" 19
mount_into L2
expect "a new mount: the server's count" "$(stat -c %h "$L2/links/l9")" 19
expect "... as on the server's disk" "$(stat -c %h "$D/links/l9")" 19
check "rm of a name on the first mount" rm "$L/links/l3"
expect "... the first mount's count" "$(stat -c %h "$L/links/l4")" 18
expect "an open file whose last name is gone: 0 links" "$("$PYTHON" -c "
import os
fd = os.open('$M/links/solo', os.O_CREAT | os.O_RDWR)
os.unlink('$M/links/solo')
print(os.fstat(fd).st_nlink)")" 0

# ---- times ----
"$PYTHON" - "$M" >"$WORK/times" 2>&1 <<'EOF'
import mmap, os, sys, time
m = sys.argv[1]
def after(t, x): return x >= t - 0.005   # the mount's clock is this machine's
def step(name, f):
    time.sleep(0.05)
    t = time.time()
    ok = f(t)
    print(('ok   ' if ok else 'FAIL ') + name)
p = os.path.join(m, 't')
open(p, 'w').write('abc')
os.utime(p, (1577836800, 1577836800))
step('futimens moves ctime, mtime is the one set', lambda t: after(t - 1, os.stat(p).st_ctime) and os.stat(p).st_mtime == 1577836800)
time.sleep(1.1)
step('chmod moves ctime', lambda t: (os.chmod(p, 0o600), after(t, os.stat(p).st_ctime))[1])
step('truncate moves ctime and mtime', lambda t: (os.truncate(p, 1), after(t, os.stat(p).st_ctime) and after(t, os.stat(p).st_mtime))[1])
step('link moves ctime', lambda t: (os.link(p, p + '2'), after(t, os.stat(p).st_ctime))[1])
step('rename moves ctime', lambda t: (os.rename(p + '2', p + '3'), after(t, os.stat(p + '3').st_ctime))[1])
step('setxattr moves ctime', lambda t: (os.setxattr(p, 'user.k', b'v'), after(t, os.stat(p).st_ctime))[1])
def wr(t):
    with open(p, 'r+') as f:
        f.write('zz')
        f.flush()
        return after(t, os.fstat(f.fileno()).st_mtime) and after(t, os.fstat(f.fileno()).st_ctime)
step('write moves mtime and ctime', wr)
q = os.path.join(m, 'mm')
open(q, 'wb').write(os.urandom(100000))
os.utime(q, (1577836800, 1577836800))
fd = os.open(q, os.O_RDWR)
mp = mmap.mmap(fd, 100000)
def mm(t):
    mp[10:20] = b'x' * 10
    mp.flush()   # msync
    return after(t, os.stat(q).st_mtime) and after(t, os.stat(q).st_ctime)
step('a write through mmap moves mtime and ctime at msync', mm)
mp.close(); os.close(fd)
step('... and they stay after the close', lambda t: after(t - 2, os.stat(q).st_mtime))
time.sleep(1.5)
step('... and after the attribute cache expired', lambda t: after(t - 3, os.stat(q).st_mtime))
w = os.path.join(m, 'dirty')
fd = os.open(w, os.O_CREAT | os.O_WRONLY)
os.write(fd, b'a' * 100000)
st = os.fstat(fd)
print(('ok   ' if st.st_blocks * 512 >= st.st_size else 'FAIL ') + 'blocks cover data in write-back: %d x 512 for %d' % (st.st_blocks, st.st_size))
os.close(fd)
EOF
while read -r l; do case $l in "ok   "*) ok "${l#ok   }" ;; *) bad "$l" ;; esac; done <"$WORK/times"

# ---- what SMB cannot store without POSIX extensions: the error mknod(2) names ----
expect "mkfifo: EPERM" "$("$PYTHON" -c "
import errno, os
try: os.mkfifo('$M/fifo')
except OSError as e: print(errno.errorcode[e.errno])")" EPERM

# ---- symbolic links without options ----
check "symlink(2) on a default mount" ln -s target-of-link "$M/sl"
expect "readlink" "$(readlink "$M/sl")" target-of-link
expect "another mount sees a link" "$(readlink "$M2/sl")" target-of-link

# ---- remount (what mount -o remount runs through mount.fuse.smb3fs) ----
opt_of() { awk -v m="$1" '$2 == m {print $4}' /proc/mounts | tr ',' '\n' | grep -cx "$2"; }
stat_of() { "$SMB3" stats "$1" | "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
check "remount ro" "$SMB3FS" "$SRC" "$M2" -o remount,ro
expect "... ro in /proc/mounts" "$(opt_of "$M2" ro)" 1
expect "... and in the mount's own settings" "$(stat_of "$M2" ro)" 1
check_fails "a write on the read-only mount" sh -c "echo x >'$M2/after-ro'"
check "remount rw,noexec,actimeo=7 with what /proc/mounts shows (as mount(8) passes it)" \
  "$SMB3FS" "$SRC" "$M2" -o "remount,rw,noexec,actimeo=7,user_id=0,group_id=0,default_permissions,allow_other"
expect "... rw in /proc/mounts" "$(opt_of "$M2" rw)" 1
expect "... noexec in /proc/mounts" "$(opt_of "$M2" noexec)" 1
expect "... actimeo in the mount's settings" "$(stat_of "$M2" actimeo)" 7
check "a write after remount rw" sh -c "echo x >'$M2/after-rw'"
check "remount exec" "$SMB3FS" "$SRC" "$M2" -o remount,exec
expect "... noexec gone, rw kept" "$(opt_of "$M2" noexec) $(opt_of "$M2" rw)" "0 1"
"$SMB3FS" "$SRC" "$M2" -o remount,cache=none,actimeo=2 >"$WORK/out" 2>&1
expect "an option a running mount cannot change: said" "$(grep -c 'cache cannot change' "$WORK/out")" 1
expect "... and the rest changed" "$(stat_of "$M2" actimeo)" 2
check_fails "remount of a directory that is no smb3fs mount" "$SMB3FS" "$SRC" "$WORK" -o remount,ro
check_fails "remount with a bad actimeo" "$SMB3FS" "$SRC" "$M2" -o remount,actimeo=x
finish
