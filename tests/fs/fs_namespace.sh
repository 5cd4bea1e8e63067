#!/usr/bin/env bash
# Every namespace and attribute operation on a real mount: create, read, write, mkdir, rmdir,
# unlink (also of an open file), rename (also over an existing and over an open file), hard links,
# fallocate (reserve, punch a hole, zero a range), SEEK_DATA/SEEK_HOLE, user.* xattrs,
# truncate/ftruncate, utimens, statfs, chmod as the read-only attribute, stable inode numbers,
# readdir of 2000 entries with attributes, names the server cannot take.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mount_into M
ro_attr() { "$SMB3" stat "$(smb_url "$1")" | "$PYTHON" -c "import sys
for l in sys.stdin:
    if l.startswith('attributes:'): print(int(l.split()[1], 16) & 1)"; }
expect "mounted as fuse.smb3fs" "$(awk -v m="$M" '$2 == m {print $3}' /proc/mounts)" "fuse.smb3fs"
expect "source in /proc/mounts" "$(awk -v m="$M" '$2 == m {print $1}' /proc/mounts)" "$SRC"

# ---- files ----
echo hello >"$M/a.txt"
expect "create + write + read" "$(cat "$M/a.txt")" "hello"
expect "visible on the server" "$(cat "$D/a.txt")" "hello"
printf 'more' >>"$M/a.txt"
expect "append" "$(cat "$D/a.txt")" "$(printf 'hello\nmore')"
echo server-side >"$D/b.txt"; chown "$SMB3_TEST_USER:" "$D/b.txt"
expect "server-made file readable" "$(cat "$M/b.txt")" "server-side"
check_fails "O_EXCL on an existing file" "$PYTHON" -c "import os; os.open('$M/a.txt', os.O_CREAT | os.O_EXCL | os.O_WRONLY)"
check_fails "open of a missing file" cat "$M/nope"

# ---- directories ----
check "mkdir" mkdir "$M/dir"
[ -d "$D/dir" ] && ok "mkdir visible on the server" || bad "mkdir not on the server"
check_fails "mkdir existing" mkdir "$M/dir"
check "mkdir -p nested" mkdir -p "$M/dir/x/y/z"
echo deep >"$M/dir/x/y/z/f"
expect "nested file" "$(cat "$D/dir/x/y/z/f")" "deep"
check_fails "rmdir non-empty" rmdir "$M/dir/x/y/z"
check "rm nested file" rm "$M/dir/x/y/z/f"
check "rmdir" rmdir "$M/dir/x/y/z"
[ ! -e "$D/dir/x/y/z" ] && ok "rmdir visible on the server" || bad "rmdir not on the server"

# ---- readdir with attributes ----
mkdir -p "$D/many"
for i in $(seq 1 2000); do printf '%d' "$i" >"$D/many/entry-$i"; done
chown -R "$SMB3_TEST_USER:" "$D/many"
expect "readdir of 2000 entries" "$(ls "$M/many" | wc -l)" 2000
expect "readdir names" "$(ls "$M/many" | sort | md5sum)" "$(ls "$D/many" | sort | md5sum)"
expect "sizes from the listing" "$(cd "$M/many" && stat -c '%n %s' entry-1 entry-10 entry-100 entry-1000)" \
  "entry-1 1
entry-10 2
entry-100 3
entry-1000 4"
expect "ls -a shows . and .." "$(ls -a "$M/dir" | head -2 | tr '\n' ' ')" ". .. "

# ---- stable inode numbers: the server's file ids ----
ino1=$(stat -c %i "$M/a.txt")
lsino=$(ls -i "$M" | awk '$2 == "a.txt" {print $1}')
expect "st_ino equals readdir's d_ino" "$lsino" "$ino1"
expect "st_ino is the server's file id" "$ino1" "$("$SMB3" stat "$(smb_url a.txt)" | awk '/^file id:/ {print $3}')"
mv "$M/a.txt" "$M/dir/a2.txt"
expect "inode number survives a rename" "$(stat -c %i "$M/dir/a2.txt")" "$ino1"
mv "$M/dir/a2.txt" "$M/a.txt"

# ---- rename ----
echo one >"$M/r1"; echo two >"$M/r2"
check "rename" mv "$M/r1" "$M/r3"
[ -e "$D/r3" ] && [ ! -e "$D/r1" ] && ok "rename visible on the server" || bad "rename not on the server"
check "rename over an existing file" mv -f "$M/r3" "$M/r2"
expect "replaced content" "$(cat "$M/r2")" "one"
[ ! -e "$M/r3" ] && ok "old name gone" || bad "old name still there"
check "rename into a directory" mv "$M/r2" "$M/dir/"
expect "moved content" "$(cat "$M/dir/r2")" "one"
check "rename a directory" mv "$M/dir" "$M/dir2"
expect "file under a renamed directory" "$(cat "$M/dir2/r2")" "one"
check_fails "rename with RENAME_NOREPLACE onto an existing file" \
  "$PYTHON" -c "
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, b'$M/b.txt', -100, b'$M/a.txt', 1)
sys.exit(0 if r == 0 else 1)"
# rename over a file that is open (Samba refuses to replace an open file: moved aside first)
echo target >"$M/open-target"; echo source >"$M/src"
exec 7<"$M/open-target"
check "rename over an open file" mv -f "$M/src" "$M/open-target"
expect "renamed-over content" "$(cat "$M/open-target")" "source"
expect "the open descriptor still reads the old file" "$(cat <&7)" "target"
exec 7<&-
hidden_count() { ls -a "$D" | grep -c smb3fs-unlinked; }
expect_soon "no hidden file left after close" 0 hidden_count

# ---- unlink, also of an open file ----
echo gone >"$M/del"
check "unlink" rm "$M/del"
[ ! -e "$D/del" ] && ok "unlink visible on the server" || bad "unlink not on the server"
echo still-here >"$M/open-del"
"$PYTHON" - "$M" <<'PY' >"$WORK/py" 2>&1 && ok "unlink of an open file" || bad "unlink of an open file: $(cat "$WORK/py")"
import os, sys
m = sys.argv[1]
fd = os.open(m + "/open-del", os.O_RDWR)
os.unlink(m + "/open-del")
assert not os.path.exists(m + "/open-del"), "name still there"
assert "open-del" not in os.listdir(m), "still listed"
assert os.fstat(fd).st_nlink == 0, "fstat after unlink: %d links, not 0" % os.fstat(fd).st_nlink
os.lseek(fd, 0, 0)
assert os.read(fd, 100) == b"still-here\n", "cannot read through the descriptor"
os.pwrite(fd, b"XX", 0)
os.fsync(fd)
assert os.pread(fd, 100, 0) == b"XXill-here\n", "cannot write through the descriptor"
open(m + "/open-del", "w").write("new file\n")  # the name is free again
os.close(fd)
assert open(m + "/open-del").read() == "new file\n"
PY
expect_soon "no hidden file left" 0 hidden_count
echo two-names >"$M/hl1" && ln "$M/hl1" "$M/hl2"
"$PYTHON" - "$M" <<'PY' >"$WORK/py" 2>&1 && ok "unlink of one name of an open file: one link left" || bad "unlink, hard link: $(cat "$WORK/py")"
import os, sys
m = sys.argv[1]
fd = os.open(m + "/hl1", os.O_RDONLY)
os.unlink(m + "/hl1")
assert os.fstat(fd).st_nlink == 1, "fstat: %d links" % os.fstat(fd).st_nlink
assert os.stat(m + "/hl2").st_nlink == 1, "the other name: %d links" % os.stat(m + "/hl2").st_nlink
os.close(fd)
PY
rm -f "$M/hl2"
expect_soon "no hidden file left after it" 0 hidden_count
expect "server sees the new file" "$(cat "$D/open-del")" "new file"

# ---- a read-only file (chmod a-w: git's objects are 0444) is removed like any other: POSIX asks
# for write permission on the directory only (a share without the POSIX extensions keeps it as
# the read-only attribute, which the server's delete refuses: the mount clears it first) ----
mkdir -p "$M/ro/.git/objects/ab"
echo obj >"$M/ro/.git/objects/ab/cdef" && chmod 0444 "$M/ro/.git/objects/ab/cdef"
echo x >"$M/ro/f" && chmod a-w "$M/ro/f"
# (the CLOSEs of the two files just written wait in the close queue, sent by a timer in one batch
# or two; an rmdir sends whatever waits there before it goes: none is left to fall in what is counted)
mkdir "$M/ro/q" && rmdir "$M/ro/q"
R0=$(stats "$M" round_trips)
check "rm of a read-only file" rm "$M/ro/f"
[ ! -e "$D/ro/f" ] && ok "... gone on the server" || bad "read-only file still on the server"
R1=$(stats "$M" round_trips)
[ $((R1 - R0)) -le 3 ] && ok "... in $((R1 - R0)) round trips" || bad "rm of a read-only file: $((R1 - R0)) round trips"
check "rm -rf of a tree with read-only files" rm -rf "$M/ro"
[ ! -e "$D/ro" ] && ok "... gone on the server" || bad "tree still on the server: $(find "$D/ro" | head -3)"

# ---- a directory listed again at once (rm -rf reads each directory twice) is served from the last
# listing, but never one older than a change this mount made, nor older than actimeo ----
# (lc sits in a directory never read: a readdir of lc is no tree walk, so nothing is listed ahead
# of it, which would cost round trips while the two listings are counted)
mkdir -p "$M/lcp/lc/sub" && echo a >"$M/lcp/lc/a" && echo b >"$M/lcp/lc/sub/b"
"$PYTHON" - "$M" "$D" "$SMB3" <<'PY' >"$WORK/py" 2>&1 && ok "listings served again: $(tail -1 "$WORK/py")" || bad "listing cache: $(cat "$WORK/py")"
import json, os, subprocess, sys, time
m, d, smb3 = sys.argv[1:]
def stats():
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)
def st(k):
    return stats()[k]
def listing_sent():  # what a listing sends (CREATE, QUERY_DIRECTORY), and the kept ones served; not
    s = stats()      # round_trips: the batched CLOSEs of the files just written may go out meanwhile
    return s["commands"]["create"], s["commands"]["query_directory"], s["listings_kept"]
lc = m + "/lcp/lc"
for attempt in range(5):  # a listing is served again only within actimeo (1 s) of being asked for
    t0 = time.monotonic()
    assert sorted(os.listdir(lc)) == ["a", "sub"]
    cr, qd, kept = listing_sent()
    assert sorted(os.listdir(lc)) == ["a", "sub"]
    cr2, qd2, kept2 = listing_sent()
    if time.monotonic() - t0 < 0.8:
        break
    time.sleep(1.1)  # a machine too loaded to ask twice within actimeo: the first listing is too old
else:
    raise AssertionError("never two listings within 0.8 s")
assert (cr2, qd2) == (cr, qd), "the second listing sent %d CREATEs, %d QUERY_DIRECTORYs" % (cr2 - cr, qd2 - qd)
assert kept2 == kept + 1
# what this mount changes is seen by the next listing at once
open(lc + "/new", "w").write("x")
assert sorted(os.listdir(lc)) == ["a", "new", "sub"], os.listdir(lc)
os.unlink(lc + "/a")
assert sorted(os.listdir(lc)) == ["new", "sub"], os.listdir(lc)
os.rename(lc + "/new", lc + "/sub/moved")
assert sorted(os.listdir(lc)) == ["sub"] and sorted(os.listdir(lc + "/sub")) == ["b", "moved"]
os.mkdir(lc + "/d2")
assert sorted(os.listdir(lc)) == ["d2", "sub"]
# a file's size and mode in a listing served again are its inode's, not the old listing's
os.listdir(lc + "/sub")
with open(lc + "/sub/b", "a") as f:
    f.write("more bytes")
kept = st("listings_kept")
with os.scandir(lc + "/sub") as it:
    sizes = {e.name: e.stat(follow_symlinks=False).st_size for e in it}
assert sizes["b"] == 12, sizes
assert st("listings_kept") == kept + 1, "not served again"
# another client's new name (on the server's disk): seen once actimeo has passed
os.listdir(lc)
open(d + "/lcp/lc/theirs", "w").write("y")
t0 = time.monotonic()
while "theirs" not in os.listdir(lc):
    assert time.monotonic() - t0 < 10, "another client's name not seen after 10 s"
    time.sleep(0.05)
print("%d kept listings" % st("listings_kept"))
PY

# ---- a change in one directory leaves another directory's kept listing served; a tree walk's next
# directories are listed ahead (relist.h), and the first ones below those, and served, but never one
# older than a change of ours ----
mkdir -p "$D/wk/t/a/a1" "$D/wk/t/b" "$D/wk/t/c" "$D/wk/t/d" "$D/wk/o" "$D/wk2/v/u/s"
echo f >"$D/wk2/v/u/s/f"
for x in a b c d; do echo "$x" >"$D/wk/t/$x/f"; done
chown -R "$(stat -c %u "$D")" "$D/wk" "$D/wk2"
mount_into MW "actimeo=5" # (its own mount: room for a loaded machine between the steps)
"$PYTHON" - "$MW" "$D" "$SMB3" <<'PY' >"$WORK/py" 2>&1 && ok "listings per directory, and ahead of a walk: $(tail -1 "$WORK/py")" || bad "listings per directory / ahead: $(cat "$WORK/py")"
import json, os, subprocess, sys, time
m, d, smb3 = sys.argv[1:]
def stats():
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)
def st(k):
    return stats()[k]
def settle(want):  # listings ahead start after the readdir's reply; wait until they are done
    t0 = time.monotonic()
    while st("listings_ahead") < want:
        assert time.monotonic() - t0 < 5, "listed ahead: %d, want %d" % (st("listings_ahead"), want)
        time.sleep(0.02)
wk = m + "/wk"
# names changed elsewhere: o's listing is served again
assert os.listdir(wk + "/o") == []
kept = st("listings_kept")
open(wk + "/new", "w").write("x")
os.rename(wk + "/new", wk + "/new2")
os.unlink(wk + "/new2")
os.mkdir(wk + "/o2")
assert os.listdir(wk + "/o") == []
assert st("listings_kept") == kept + 1, "o's listing not served after changes elsewhere"
# ... and names changed in it are seen at once, also by a rename into it or out of it
open(wk + "/o/mine", "w").write("x")
assert os.listdir(wk + "/o") == ["mine"], os.listdir(wk + "/o")
assert "mine" not in os.listdir(wk + "/t")
os.rename(wk + "/o/mine", wk + "/t/mine")
assert os.listdir(wk + "/o") == []
assert "mine" in os.listdir(wk + "/t"), os.listdir(wk + "/t")
os.rename(wk + "/t/mine", wk + "/o/mine")
assert "mine" not in os.listdir(wk + "/t") and os.listdir(wk + "/o") == ["mine"]
# a directory renamed while kept listings of it and of its parent exist: both follow
os.mkdir(wk + "/o/dd")
open(wk + "/o/dd/in", "w").write("x")
assert os.listdir(wk + "/o/dd") == ["in"]
os.rename(wk + "/o/dd", wk + "/o/ee")
assert sorted(os.listdir(wk + "/o")) == ["ee", "mine"] and os.listdir(wk + "/o/ee") == ["in"]
os.mkdir(wk + "/o/dd")
assert os.listdir(wk + "/o/dd") == [] and os.listdir(wk + "/o/ee") == ["in"]
os.unlink(wk + "/o/ee/in")
os.rmdir(wk + "/o/ee")
os.rmdir(wk + "/o/dd")
# a walk: wk, then t; t's subdirectories are listed ahead
ahead = st("listings_ahead")
assert sorted(os.listdir(wk)) == ["o", "o2", "t"]
assert sorted(os.listdir(wk + "/t")) == ["a", "b", "c", "d"]
settle(ahead + 4)  # (a..d; a sibling of t never read may be listed ahead too)
# a name made here after the listing ahead: seen
os.mkdir(wk + "/t/b/made")
kept = st("listings_kept")
assert sorted(os.listdir(wk + "/t/a")) == ["a1", "f"]
assert sorted(os.listdir(wk + "/t/c")) == ["f"]
assert sorted(os.listdir(wk + "/t/d")) == ["f"]
assert st("listings_kept") == kept + 3, "served from the listings ahead: %d of 3" % (st("listings_kept") - kept)
assert sorted(os.listdir(wk + "/t/b")) == ["f", "made"], os.listdir(wk + "/t/b")
for x in "abcd":
    assert open(wk + "/t/%s/f" % x).read() == x + "\n"
# a walk down a chain (wk2, then v): v's subdirectory u is listed ahead, and once u's listing is in,
# u's own subdirectory s too (find goes down there next): served before the program read u
ahead = st("listings_ahead")
assert os.listdir(m + "/wk2") == ["v"] and os.listdir(m + "/wk2/v") == ["u"]
settle(ahead + 2)
kept = st("listings_kept")
assert os.listdir(m + "/wk2/v/u/s") == ["f"]
assert st("listings_kept") == kept + 1, "u/s not served from its listing ahead"
assert os.listdir(m + "/wk2/v/u") == ["s"] and st("listings_kept") == kept + 2, "u not served from its listing ahead"
print("%d listed ahead, %d served again" % (st("listings_ahead"), st("listings_kept")))
PY

# ---- names looked up again after the kernel's dentries expired (find -exec, rm -rf on a slow link)
# cost one listing of the directory, not a stat each; another client's changes still show ----
mkdir "$D/rl" && for i in $(seq -w 0 19); do printf "%${i}s" "" >"$D/rl/f$i"; done
chown -R "$(stat -c %u "$D")" "$D/rl"
"$PYTHON" - "$M" "$D" "$SMB3" <<'PY' >"$WORK/py" 2>&1 && ok "lookups answered from a listing: $(tail -1 "$WORK/py")" || bad "lookups from a listing: $(cat "$WORK/py")"
import json, os, shutil, subprocess, sys, time
m, d, smb3 = sys.argv[1:]
def st(k):
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)[k]
rl, names = m + "/rl", ["f%02d" % i for i in range(20)]
assert sorted(os.listdir(rl)) == names
def expire():  # the kernel's dentries and our listing are actimeo (1 s) old; then rl's own lookup
    time.sleep(1.3)
    os.lstat(rl)
def sizes():
    out = {}
    for n in names:
        try:
            out[n] = (os.lstat(rl + "/" + n).st_size, os.lstat(rl + "/" + n).st_ino)
        except FileNotFoundError:
            out[n] = None
    return out
expire()
rt, rel, lis = st("round_trips"), st("relists"), st("lookups_listed")
first = sizes()
assert all(first[n][0] == i for i, n in enumerate(names)), first
assert st("relists") == rel + 1, "relists %d" % (st("relists") - rel)
assert st("lookups_listed") == lis + 20, "answered from the listing: %d of 20" % (st("lookups_listed") - lis)
assert st("round_trips") - rt == 1, "20 lookups cost %d round trips" % (st("round_trips") - rt)
# another client appends to one, removes one, replaces one: each is asked of the server
with open(d + "/rl/f03", "a") as f:
    f.write("appended")
os.unlink(d + "/rl/f04")
os.unlink(d + "/rl/f05")
open(d + "/rl/f05", "w").write("new file")
shutil.chown(d + "/rl/f05", os.stat(d).st_uid)
expire()
rt = st("round_trips")
second = sizes()
assert second["f03"][0] == 3 + 8, second["f03"]
assert second["f04"] is None, second["f04"]
assert second["f05"][0] == 8, (first["f05"], second["f05"])  # (tmpfs may give it the old inode number)
assert all(second[n] == first[n] for n in names if n not in ("f03", "f04", "f05"))
spent = st("round_trips") - rt
# the listing, one stat each for the three; the removed and the replaced one are looked up twice by
# the kernel (its revalidation fails, then it looks the name up anew)
assert spent <= 1 + 3 + 2, "%d round trips" % spent
# names this mount changes: answered with what it changed, not with the older listing
os.listdir(rl)
with open(rl + "/f06", "a") as f:
    f.write("ours")
os.chmod(rl + "/f07", 0o600)
os.rename(rl + "/f08", rl + "/g08")
expire()
assert os.lstat(rl + "/f06").st_size == 6 + 4
assert not os.path.exists(rl + "/f08") and os.lstat(rl + "/g08").st_size == 8
assert os.lstat(rl + "/f07").st_size == 7
print("20 lookups in 1 round trip; then 3 changed names in %d" % spent)
PY

# ---- hard links ----
echo linked >"$M/l1"
check "ln (a hard link)" ln "$M/l1" "$M/l2"
expect "the server has one file under two names" "$(stat -c %i "$D/l2")" "$(stat -c %i "$D/l1")"
expect "link count on the server" "$(stat -c %h "$D/l1")" 2
expect "link count through the mount" "$(stat -c %h "$M/l2")" 2
expect "one inode through the mount" "$(stat -c %i "$M/l2")" "$(stat -c %i "$M/l1")"
echo "through the second name" >>"$M/l2"
expect "a write through one name is read through the other" "$(cat "$M/l1")" "linked
through the second name"
expect "link count after a read through one name (an open's answer has none)" "$(stat -c %h "$M/l1")" 2
mkdir -p "$M/ldir"
check "ln into another directory" ln "$M/l1" "$M/ldir/l3"
expect "link count after the third name" "$(stat -c %h "$M/l1")" 3
ls -l "$M/ldir" "$M" >/dev/null
expect "link count after listings of the names' directories (a listing has none)" "$(stat -c %h "$M/l1")" 3
check_fails "ln onto an existing name" ln "$M/l1" "$M/l2"
check_fails "ln of a directory" ln "$M/ldir" "$M/ldir-link"
check "rm of one name" rm "$M/l2"
expect "the other names still read" "$(cat "$M/l1"; cat "$M/ldir/l3")" "linked
through the second name
linked
through the second name"
expect "link count after rm" "$(stat -c %h "$M/l1")" 2
check "rm of another" rm "$M/ldir/l3"
expect "the last name reads" "$(cat "$M/l1")" "linked
through the second name"
expect "link count on the server at the end" "$(stat -c %h "$D/l1")" 1
[ ! -e "$D/l2" ] && [ ! -e "$D/ldir/l3" ] && ok "removed names gone on the server" || bad "removed names still on the server"

# ---- fallocate: reserve, punch a hole, zero a range ----
head -c $((4 << 20)) /dev/urandom >"$M/fa"
check "fallocate (mode 0) past the end" fallocate -l 8M "$M/fa"
expect "fallocate extends: size through the mount" "$(stat -c %s "$M/fa")" $((8 << 20))
expect "fallocate extends: size on the server" "$(stat -c %s "$D/fa")" $((8 << 20))
check "fallocate --keep-size" fallocate -n -l 16M "$M/fa"
expect "--keep-size keeps the size" "$(stat -c %s "$M/fa")" $((8 << 20))
"$PYTHON" - "$M/fa" <<'PY' >"$WORK/py" 2>&1 && ok "$(tail -1 "$WORK/py")" || bad "punch hole: $(cat "$WORK/py")"
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR)
before = os.pread(fd, 8 << 20, 0)               # the kernel caches these pages
os.pwrite(fd, b"\xff" * 4096, (1 << 20) + 8192)  # and this write is not on the server yet
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 1, 2, 16
def fa(mode, off, ln):
    if libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(ln)):
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
fa(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 << 20, 2 << 20)
got = os.pread(fd, 8 << 20, 0)
assert len(got) == 8 << 20, "punch changed the size"
assert got[:1 << 20] == before[:1 << 20] and got[3 << 20:] == before[3 << 20:], "punch touched bytes outside"
assert got[1 << 20:3 << 20] == bytes(2 << 20), "the hole does not read as zeros (stale page or late write)"
fa(FALLOC_FL_ZERO_RANGE, 7 << 20, 3 << 20)      # zeros, past the end: the file grows
assert os.fstat(fd).st_size == 10 << 20, "zero range did not extend: %d" % os.fstat(fd).st_size
assert os.pread(fd, 3 << 20, 7 << 20) == bytes(3 << 20), "zero range: not zeros"
try:
    fa(8, 0, 1 << 20)                           # FALLOC_FL_COLLAPSE_RANGE: SMB has no such thing
    raise SystemExit("collapse range succeeded")
except OSError as e:
    assert e.errno == 95, "collapse range: %s" % e
os.close(fd)
print("punch hole and zero range: zeros through the mount, bytes around them kept, size; collapse refused")
PY
"$PYTHON" - "$M/fa" <<'PY' >"$WORK/py" 2>&1 && ok "$(tail -1 "$WORK/py")" || bad "SEEK_DATA/SEEK_HOLE: $(cat "$WORK/py")"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
assert os.lseek(fd, 0, os.SEEK_DATA) == 0, "SEEK_DATA from 0"
assert os.lseek(fd, 0, os.SEEK_HOLE) == 1 << 20, "SEEK_HOLE from 0: %d" % os.lseek(fd, 0, os.SEEK_HOLE)
assert os.lseek(fd, (1 << 20) + 5, os.SEEK_HOLE) == (1 << 20) + 5, "SEEK_HOLE inside the hole"
assert os.lseek(fd, 1 << 20, os.SEEK_DATA) == 3 << 20, "SEEK_DATA from the hole: %d" % os.lseek(fd, 1 << 20, os.SEEK_DATA)
assert os.lseek(fd, 3 << 20, os.SEEK_HOLE) > 3 << 20, "SEEK_HOLE from data"
# the zeroed range at the end may be a hole too (a sparse file): then the last byte is in a hole
assert os.lseek(fd, size - 1, os.SEEK_HOLE) in (size - 1, size), "SEEK_HOLE near the end"
for wh in (os.SEEK_DATA, os.SEEK_HOLE):
    try:
        os.lseek(fd, size, wh)
        raise SystemExit("lseek at the end succeeded")
    except OSError as e:
        assert e.errno == errno.ENXIO, "at the end: %s" % e
os.close(fd)
print("SEEK_DATA/SEEK_HOLE find the punched hole, the end, and ENXIO past it")
PY
expect "after the punch, on the server: the hole is zeros" "$(dd if="$D/fa" bs=1M skip=1 count=2 status=none | tr -d '\0' | wc -c)" 0
expect "after zero range, size on the server" "$(stat -c %s "$D/fa")" $((10 << 20))

# ---- extended attributes: user.* are the file's SMB EAs ----
echo x >"$M/xa"
"$PYTHON" - "$M/xa" "$D/xa" <<'PY' >"$WORK/py" 2>&1 && ok "$(tail -1 "$WORK/py")" || bad "xattrs: $(cat "$WORK/py")"
import errno, os, sys
f, srv = sys.argv[1], sys.argv[2]
def err(fn, *a):
    try:
        fn(*a)
    except OSError as e:
        return e.errno
    return 0
assert os.listxattr(f) == [], "a new file has attributes: %r" % os.listxattr(f)
os.setxattr(f, "user.color", b"blue")
big = os.urandom(3000)
os.setxattr(f, "user.big", big)
assert os.getxattr(f, "user.color") == b"blue" and os.getxattr(f, "user.big") == big, "read back"
assert sorted(os.listxattr(f)) == ["user.big", "user.color"], "list: %r" % os.listxattr(f)
assert os.getxattr(srv, "user.color") == b"blue", "not on the server (Samba keeps EA NAME as user.NAME)"
assert err(os.setxattr, f, "user.color", b"red", os.XATTR_CREATE) == errno.EEXIST, "XATTR_CREATE on an existing one"
assert err(os.setxattr, f, "user.none", b"red", os.XATTR_REPLACE) == errno.ENODATA, "XATTR_REPLACE on a missing one"
os.setxattr(f, "user.color", b"red", os.XATTR_REPLACE)
assert os.getxattr(f, "user.color") == b"red", "replaced"
os.removexattr(f, "user.color")
assert err(os.getxattr, f, "user.color") == errno.ENODATA, "removed"
assert err(os.removexattr, f, "user.color") == errno.ENODATA, "remove a missing one"
assert os.listxattr(f) == ["user.big"], "list after remove"
assert err(os.setxattr, f, "security.x", b"1") == errno.EOPNOTSUPP, "security.* refused"
assert err(os.getxattr, f, "system.posix_acl_access") == errno.EOPNOTSUPP, "no ACLs"
assert err(os.getxattr, f, "user." + "n" * 256) == errno.ERANGE, "a name too long"
print("user.* xattrs as SMB EAs: set, get, list, XATTR_CREATE/REPLACE, remove; other namespaces refused")
PY

# ---- truncate / ftruncate ----
printf '0123456789' >"$M/t"
check "truncate shorter" truncate -s 4 "$M/t"
expect "truncated content" "$(cat "$M/t")" "0123"
check "truncate longer" truncate -s 8 "$M/t"
expect "extended size" "$(stat -c %s "$M/t")" 8
expect "extended with zeros" "$(od -An -c "$M/t" | tr -s ' ')" " 0 1 2 3 \\0 \\0 \\0 \\0"
"$PYTHON" -c "
import os
fd = os.open('$M/t', os.O_RDWR)
os.write(fd, b'abcdefgh')
os.ftruncate(fd, 3)
os.write(fd, b'Z')        # at offset 8: a hole from 3 to 8
os.close(fd)" && ok "ftruncate after write" || bad "ftruncate after write"
expect "ftruncate then write" "$(od -An -c "$D/t" | tr -s ' ')" " a b c \\0 \\0 \\0 \\0 \\0 Z"
: >"$M/t2"; echo abc >"$M/t2"
exec 8>"$M/t2"   # O_TRUNC open
exec 8>&-
expect "O_TRUNC open" "$(stat -c %s "$D/t2")" 0

# ---- times ----
check "utimens" touch -d "2001-02-03 04:05:06 UTC" "$M/b.txt"
expect "mtime on the mount" "$(stat -c %Y "$M/b.txt")" "$(date -d '2001-02-03 04:05:06 UTC' +%s)"
expect "mtime on the server" "$(stat -c %Y "$D/b.txt")" "$(date -d '2001-02-03 04:05:06 UTC' +%s)"

# ---- chmod: the read-only attribute ----
check "chmod a-w" chmod a-w "$M/b.txt"
expect "mode without write bits" "$(stat -c %a "$M/b.txt")" 444
expect "read-only attribute on the server" \
  "$(ro_attr b.txt)" 1
check "chmod u+w" chmod u+w "$M/b.txt"
expect "mode with write bits" "$(stat -c %a "$M/b.txt")" 644
expect "read-only attribute cleared" \
  "$(ro_attr b.txt)" 0
check_fails "chown to another user" chown 12345 "$M/b.txt"

# ---- statfs ----
check "df" df "$M"
expect "statfs total blocks" "$(stat -f -c %b "$M" | awk '{print ($1 > 0)}')" 1

# ---- names ----
check_fails "a name with a backslash" touch "$M/back\\slash"
mkdir "$D/listed"; : >"$D/listed/ok"; chown -R "$SMB3_TEST_USER:" "$D/listed"
expect "listing skips nothing valid" "$(ls -a "$M/listed" | tr '\n' ' ')" ". .. ok "

# ---- the mount survives all of it, and the stats ioctl works ----
check "smb3 stats" "$SMB3" stats "$M"
"$PYTHON" -c "import json,sys; d=json.load(open('$WORK/out')); assert {'requests','reads','writes','max_read_size','max_write_size','readahead_hits','writeback_hits'} <= d.keys()" \
  && ok "stats JSON keys" || bad "stats JSON: $(cat "$WORK/out")"
check_fails "smb3 stats on a non-mount" "$SMB3" stats /tmp
finish
