#!/usr/bin/env bash
# Small files opened ahead of a program that reads a directory's files in the listing's order
# (find -exec cat, tar cf, grep -r) or by name (git add, rsync, cat *): the next files' CREATE + READ
# go at once, and the program's opens take them. What it reads must still be what its own open would have read:
# - the bytes and sizes are the files', and the round trips are no more than one open each;
# - a tree read in tar's and find's order has its files opened ahead across its directories, the first
#   file of each directory too;
# - another client's write, removal or rename of a file opened ahead shows to the next open of it
#   (its open breaks the read lease, and the break closes the handle held here);
# - this mount's own write to such a file shows;
# - a rename or removal of the directory by this mount is not refused for the handles held;
# - handles nobody takes are closed on the server within a moment (another client can then rename
#   the directory: Samba refuses to rename a directory with files open below it).
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
for d in oa oa3 oa4 oa7 oa9 oa10 oa11 oa12; do
  mkdir "$D/$d" && for i in $(seq -w 0 29); do printf "%s:%s:%${i}s\n" "$d" "$i" "" >"$D/$d/f$i"; done
  mkdir "$D/$d/sub" && echo sub >"$D/$d/sub/s"
done
# a tree walked as find and tar walk it: files and directories in turn
mkdir "$D/oaw" && for i in 0 1 2 3; do
  for j in 0 1 2; do printf "oaw:%s%s:%${i}${j}s\n" "$i" "$j" "" >"$D/oaw/a$i$j"; done
  mkdir "$D/oaw/d$i" && for j in $(seq -w 0 7); do printf "d%s:%s:%${j}s\n" "$i" "$j" "" >"$D/oaw/d$i/b$j"; done
done
chown -R "$(stat -c %u "$D")" "$D/oa" "$D/oa3" "$D/oa4" "$D/oa7" "$D/oa9" "$D/oa10" "$D/oa11" "$D/oa12" "$D/oaw"
# (handles opened ahead wait actimeo to be taken: 10 s here, so that a slow machine keeps them for
# the checks; the last checks use a mount with 1 s)
mount_into M "actimeo=10"
mount_into M2 "actimeo=0"
mount_into M3 "actimeo=1"
mount_into M4 "actimeo=10"
# a daemon whose worker pauses 2 ms before it looks at each file of a plan and again between putting
# the open ahead in its slot and sending it, and whose I/O thread pauses as long after it put an
# answer in its slot (a test hook, SMB3FS_TEST_AHEAD_DELAY_US): plans go out late and the program's
# opens take jobs not yet sent; each must still read its own bytes (before 5d45ec3 such an open got
# EINVAL: the job was sent with the buffer the open had taken), and nothing is opened for nothing;
# and they take answered jobs while the I/O thread is still at them (under ASan: before the fix
# that came with this check, the I/O thread read the job after the open had freed it)
SMB3FS_TEST_AHEAD_DELAY_US=2000 mount_into M5 "actimeo=10"
"$PYTHON" - "$M" "$M2" "$M3" "$D" "$M4" "$M5" <<'PY' >"$WORK/py" 2>&1 && cat "$WORK/py" || { bad "opens ahead: $(cat "$WORK/py")"; }
import os, sys, time
sys.path.insert(0, os.environ["FSCHECK_DIR"])
from fscheck import check, mount_stats
m, m2, m3, d, m4, m5 = sys.argv[1:]
def st(k):
    return mount_stats(m)[k]
def read(p):
    with open(p, "rb") as f:
        return f.read()
def want(dname, n):
    return open(d + "/" + dname + "/" + n, "rb").read()
def until(what, cond):  # what the daemon does on its own threads: wait for it, with a bound
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > 30:
            return False
        time.sleep(0.02)
    return True

# the listing's order, as the program sees it
order = [n for n in os.listdir(m + "/oa") if n.startswith("f")]
check("the directory lists its 30 files", len(order) == 30, str(order))
rt, used0, br0 = st("round_trips"), st("opens_ahead_used"), st("lease_breaks")
first = [read(m + "/oa/" + n) for n in order[:3]]
check("the first files read as they are", first == [want("oa", n) for n in order[:3]])
check("the 8 files after them were opened ahead (4, then 8 once the program took one)",
      until("held", lambda: st("opens_ahead_held") >= 8), str(st("opens_ahead_held")))
# another client writes one of them (its open breaks our lease: the break closes the handles held),
# then removes one and renames one (a removal breaks no read lease on Samba: a handle held then
# would keep the file's old name for at most actimeo, as the names this mount keeps do); this mount
# writes one
c = order
with open(m2 + "/oa/" + c[4], "wb") as f:
    f.write(b"written by another client\n")
check("the other client's write broke the lease of the handle held for it (%d breaks), and every handle held was closed (%d held)"
      % (st("lease_breaks") - br0, st("opens_ahead_held")), st("lease_breaks") - br0 >= 1 and st("opens_ahead_held") == 0)
os.unlink(m2 + "/oa/" + c[5])
os.rename(m2 + "/oa/" + c[6], m2 + "/oa/renamed")
with open(m + "/oa/" + c[7], "wb") as f:
    f.write(b"written here\n")
got3 = read(m + "/oa/" + c[3])
got4 = read(m + "/oa/" + c[4])
try:
    read(m + "/oa/" + c[5]); got5 = "read"
except FileNotFoundError:
    got5 = "ENOENT"
try:
    read(m + "/oa/" + c[6]); got6 = "read"
except FileNotFoundError:
    got6 = "ENOENT"
got7 = read(m + "/oa/" + c[7])
rest = [read(m + "/oa/" + n) for n in c[8:]]
check("a file opened ahead reads as it is", got3 == want("oa", c[3]))
check("another client's write shows", got4 == b"written by another client\n", repr(got4))
check("another client's removal and rename show", got5 == "ENOENT" and got6 == "ENOENT", got5 + " " + got6)
check("this mount's own write shows", got7 == b"written here\n", repr(got7))
check("the rest read as they are", rest == [want("oa", n) for n in c[8:]])
check("the renamed one reads as it is", read(m + "/oa/renamed") == want("oa", "renamed"))
used = st("opens_ahead_used") - used0
check("the program's opens took files opened ahead (%d)" % used, used >= 15)

# a fresh directory, read in order, then another by name (git add, rsync, cat *): each file is opened
# once, with its data (an open ahead the program takes is that open), none opened ahead for nothing
# (the round trips: those opens, and the CLOSEs' batches when one goes on its own)
def walk(dname, names):
    c0 = {k: st(k) for k in ("round_trips", "open_reads", "opens_ahead", "opens_ahead_used")}
    ok = all(read(m + "/" + dname + "/" + n) == want(dname, n) for n in names)
    return ok, {k: st(k) - v for k, v in c0.items()}
ok3, n3 = walk("oa3", [n for n in os.listdir(m + "/oa3") if n.startswith("f")])
check("30 files read in the listing's order: %s" % n3, ok3 and n3["open_reads"] == 30 and n3["opens_ahead_used"] >= 25
      and n3["opens_ahead"] == n3["opens_ahead_used"])
ok9, n9 = walk("oa9", sorted(n for n in os.listdir(m + "/oa9") if n.startswith("f")))
check("30 files read by name: %s" % n9, ok9 and n9["open_reads"] == 30 and n9["opens_ahead_used"] >= 25
      and n9["opens_ahead"] == n9["opens_ahead_used"])

# the slowed daemon: every file read as it is, with its open (opens ahead count in open_reads when
# taken), each open ahead taken by the program (the round trips depend on the timing here: not checked)
def walk_slow(dname, names):
    s0 = mount_stats(m5)
    ok = all(read(m5 + "/" + dname + "/" + n) == want(dname, n) for n in names)
    s1 = mount_stats(m5)
    return ok, {k: s1[k] - s0[k] for k in ("round_trips", "open_reads", "opens_ahead", "opens_ahead_used")}
for dname, names in (("oa11", [n for n in os.listdir(m5 + "/oa11") if n.startswith("f")]),
                     ("oa12", sorted(n for n in os.listdir(m5 + "/oa12") if n.startswith("f")))):
    okS, nS = walk_slow(dname, names)
    check("%d files read with opens ahead sent late (%s): %s" % (len(names), dname, nS),
          okS and nS["open_reads"] == len(names) and nS["opens_ahead"] == nS["opens_ahead_used"])

# a tree read as tar and find read it, on a mount of its own: each directory listed when the walk gets
# there (the listing's order, going down into each directory where the listing has it); once the walk
# began (its first two files), the first file of each directory (the kernel has not seen its name yet:
# its directory's listing ahead has it), and the files after it in its parent, are opened ahead too,
# but for the first file back in a directory above the one the walk began in
def preorder(p):
    for e in os.scandir(p):
        if e.is_dir(follow_symlinks=False):
            yield from preorder(e.path)
        else:
            yield e.path
st4 = lambda k: mount_stats(m4)[k]
os.listdir(m4)  # (a walk from the top: the listings of oaw's directories go ahead of it)
l0 = st4("listings_ahead")
os.listdir(m4 + "/oaw")
check("the tree's 4 directories listed ahead", until("listed", lambda: st4("listings_ahead") - l0 >= 4))
c0 = {k: st4(k) for k in ("opens_ahead", "opens_ahead_used")}
paths = []
okw = True
for p in preorder(m4 + "/oaw"):
    paths.append(p)
    okw = okw and read(p) == open(d + p[len(m4):], "rb").read()
nw = {k: st4(k) - v for k, v in c0.items()}
check("a tree of %d files read in tar's order: %s" % (len(paths), nw), okw and len(paths) == 44 and
      nw["opens_ahead_used"] >= len(paths) - 3 and nw["opens_ahead"] - nw["opens_ahead_used"] <= 2)

# another name of a file opened ahead (a hard link): its open by that name works (a lease key
# belongs to one name on the server: the handle opened ahead is closed first), reads the same bytes
order10 = [n for n in os.listdir(m + "/oa10") if n.startswith("f")]
[read(m + "/oa10/" + n) for n in order10[:3]]
check("handles held before the link", until("held", lambda: st("opens_ahead_held") >= 8))
os.link(d + "/oa10/" + order10[5], d + "/oa10/link")  # on the server's disk: nothing is broken
try:
    viaLink = read(m + "/oa10/link")
except OSError as e:
    viaLink = os.strerror(e.errno)
check("a hard link of a file opened ahead opens and reads", viaLink == want("oa10", order10[5]), repr(viaLink))
check("the file itself too", read(m + "/oa10/" + order10[5]) == want("oa10", order10[5]))

# handles held while this mount renames, then removes, the directory
order4 = [n for n in os.listdir(m + "/oa4") if n.startswith("f")]
[read(m + "/oa4/" + n) for n in order4[:3]]
check("handles held before the rename", until("held", lambda: st("opens_ahead_held") >= 5))
os.rename(m + "/oa4", m + "/oa5")
check("the directory renamed by this mount with handles held below it",
      os.path.isdir(d + "/oa5") and not os.path.exists(d + "/oa4"))
check("its files read as they are after the rename",
      all(read(m + "/oa5/" + n) == want("oa5", n) for n in order4[3:12]))
check("handles held before the removal", until("held", lambda: st("opens_ahead_held") >= 5))
for root, dirs, files in os.walk(m + "/oa5", topdown=False):
    for n in files:
        os.unlink(os.path.join(root, n))
    for n in dirs:
        os.rmdir(os.path.join(root, n))
os.rmdir(m + "/oa5")
check("the directory removed by this mount with handles held", not os.path.exists(d + "/oa5"))

# handles nobody takes are closed within a moment (actimeo): then another client may rename the directory
order7 = [n for n in os.listdir(m3 + "/oa7") if n.startswith("f")]
[read(m3 + "/oa7/" + n) for n in order7[:2]]
st3 = lambda: mount_stats(m3)["opens_ahead_held"]
check("handles held", until("held", lambda: st3() >= 1))
check("handles nobody took closed", until("closed", lambda: st3() == 0))
try:
    os.rename(m2 + "/oa7", m2 + "/oa8")
    mv = "renamed"
except OSError as e:
    mv = os.strerror(e.errno)
check("another client renames the directory then", mv == "renamed" and os.path.isdir(d + "/oa8"), mv)
PY
PASSED=$((PASSED + $(grep -c '^ok' "$WORK/py" || true)))
FAILED=$((FAILED + $(grep -c '^FAIL' "$WORK/py" || true)))
finish
