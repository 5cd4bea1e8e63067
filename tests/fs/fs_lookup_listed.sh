#!/usr/bin/env bash
# Lookups of names a fresh mount has never seen (git status, stat of every file of a tree): after
# the second miss in a directory, one listing answers the rest, for as long as a listing may be
# served (actimeo, nothing changed by this mount). What the server would answer otherwise must still be what the program sees:
# - every answer (size, file id, type) is the server's;
# - a name the listing lacks is asked of the server: another client's new name shows at once, and
#   so does one differing from a listed one only in case (the server compares names without case);
# - a name the server said is not there is not asked again for actimeo (the kernel keeps that), but
#   this mount's own new name shows at once, and an exclusive create or mkdir asks the server;
# - names this mount makes or removes show at once; another client's removal once actimeo passed.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mkdir "$D/ll" && for i in $(seq -w 0 19); do printf "%${i}s" "" >"$D/ll/f$i"; done
mkdir "$D/ll/sub" && echo g >"$D/ll/sub/g1" && echo gg >"$D/ll/sub/g2"
mkdir "$D/ll2" && echo a >"$D/ll2/f0" && echo b >"$D/ll2/f1"
for i in 0 1 2 3; do mkdir "$D/ll2/d$i" && printf "%${i}s" "" >"$D/ll2/d$i/g0" && echo "$i" >"$D/ll2/d$i/g1"; done
chown -R "$(stat -c %u "$D")" "$D/ll2"
chown -R "$(stat -c %u "$D")" "$D/ll"
mount_into M "actimeo=3"
"$PYTHON" - "$M" "$D" "$SMB3" "$SMB3_TEST_URL" <<'PY' >"$WORK/py" 2>&1 && cat "$WORK/py" || { bad "lookups from a listing: $(cat "$WORK/py")"; }
import errno, os, sys, time
sys.path.insert(0, os.environ["FSCHECK_DIR"])
from fscheck import check, lstat, mount_stats
m, d, smb3, url = sys.argv[1:]
url = url.rstrip("/")
def st(k):
    return mount_stats(m)[k]
ll, names = m + "/ll", ["f%02d" % i for i in range(20)]
lstat(ll)  # the directory itself: one lookup in the share's root
rt, rel, lis = st("round_trips"), st("relists"), st("lookups_listed")
got = {n: lstat(ll + "/" + n) for n in names}
sub = lstat(ll + "/sub")
srv = {n: os.lstat(d + "/ll/" + n) for n in names}
check("every name found, with the server's size and file id",
      all(got[n] and got[n].st_size == i and got[n].st_ino == srv[n].st_ino for i, n in enumerate(names)),
      str({n: (g.st_size, g.st_ino) if g else None for n, g in got.items()}))
check("a directory among them is one", sub is not None and (sub.st_mode & 0o170000) == 0o040000)
spent, relisted, listed = st("round_trips") - rt, st("relists") - rel, st("lookups_listed") - lis
check("21 lookups of unknown names: one stat, then one listing (%d round trips, %d listings, %d answered from it)"
      % (spent, relisted, listed), spent == 2 and relisted == 1 and listed == 20)
# the walk goes on in a subdirectory (git status, git add): its parent was just listed for lookups,
# so its first unknown name is answered by a listing of it, with no stat first
rt, rel, lis = st("round_trips"), st("relists"), st("lookups_listed")
g1, g2 = lstat(ll + "/sub/g1"), lstat(ll + "/sub/g2")
spent, relisted, listed = st("round_trips") - rt, st("relists") - rel, st("lookups_listed") - lis
check("in its subdirectory: one listing answers the first name (%d round trips, %d listings, %d answered)"
      % (spent, relisted, listed), g1 is not None and g1.st_size == 2 and g2 is not None and g2.st_size == 3
      and g1.st_ino == os.lstat(d + "/ll/sub/g1").st_ino and spent == 1 and relisted == 1 and listed == 2)
# names the listing does not have, and one like a listed one but for case: the server decides (a
# name another client made after the listing shows at once)
rt = st("round_trips")
missing = [lstat(ll + "/nothere%d" % i) for i in range(3)]
check("names not in the listing: ENOENT, asked of the server (%d round trips)" % (st("round_trips") - rt),
      all(x is None for x in missing) and st("round_trips") - rt == 3)
open(d + "/ll/late", "w").write("late")
late = lstat(ll + "/late")
check("a name another client made after the listing is found at once", late is not None and late.st_size == 4)
# a name the server said is not there: the kernel keeps that answer for actimeo (a negative entry,
# as the kernel's cifs client keeps one for a second), so a program that tries it again and again
# asks once; this mount's own create, mkdir, rename or link of it shows at once, and an exclusive
# create or mkdir of another client's new name asks the server (the kernel looks it up again)
rt = st("round_trips")
again = [lstat(ll + "/nothere%d" % (i % 3)) for i in range(6)]
check("missing names looked up again: ENOENT, no round trip (%d)" % (st("round_trips") - rt),
      all(x is None for x in again) and st("round_trips") == rt)
open(ll + "/nothere0", "w").write("made")
os.mkdir(ll + "/nothere1")
os.rename(ll + "/f19", ll + "/nothere2")
check("this mount's own new names there: found at once",
      lstat(ll + "/nothere0").st_size == 4 and os.path.isdir(ll + "/nothere1") and lstat(ll + "/nothere2").st_size == 19
      and open(d + "/ll/nothere0").read() == "made" and lstat(ll + "/f19") is None)
os.rename(ll + "/nothere2", ll + "/f19")
neg = [lstat(ll + "/gone%d" % i) for i in range(3)]
open(d + "/ll/gone0", "w").write("other")  # another client's, after this mount found no such name
os.mkdir(d + "/ll/gone1")
try:
    os.close(os.open(ll + "/gone0", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    excl = "created"
except OSError as e:
    excl = e.errno
try:
    os.mkdir(ll + "/gone1")
    mk = "made"
except OSError as e:
    mk = e.errno
check("an exclusive create and a mkdir of another client's new names fail with EEXIST (%s, %s)" % (excl, mk),
      all(x is None for x in neg) and excl == errno.EEXIST and mk == errno.EEXIST)
g0 = lstat(ll + "/gone0")
check("... and they are found then", g0 is not None and g0.st_size == 5 and os.path.isdir(ll + "/gone1"))
open(d + "/ll/gone2", "w").write("other2")  # found once actimeo has passed (below)
rt = st("round_trips")
upper = lstat(ll + "/F03")
check("a name differing from a listed one in case is asked of the server (%d round trips)" % (st("round_trips") - rt),
      st("round_trips") > rt)
# names this mount makes and removes: at once
open(ll + "/mine", "w").write("mine")
os.unlink(ll + "/f06")
check("a name this mount made is found", lstat(ll + "/mine") is not None and lstat(ll + "/mine").st_size == 4)
check("a name this mount removed is gone", lstat(ll + "/f06") is None and not os.path.exists(d + "/ll/f06"))
# a directory this mount made: a name it lacks is ENOENT without a round trip, for actimeo
made = ll + "/made"
os.mkdir(made)
os.mkdir(made + "/mine")
rt, ka = st("round_trips"), st("lookups_known_absent")
no0 = lstat(made + "/no0")
check("in a directory this mount made, a name it lacks: ENOENT, no round trip (%d)" % (st("round_trips") - rt),
      no0 is None and st("round_trips") == rt and st("lookups_known_absent") == ka + 1)
open(d + "/ll/made/other", "w").write("other")  # another client's, within actimeo
# another client's: once actimeo has passed
open(d + "/ll/new1", "w").write("other")
os.unlink(d + "/ll/f07")
time.sleep(3.5)
n1, f7 = lstat(ll + "/new1"), lstat(ll + "/f07")
check("another client's new name is found after actimeo", n1 is not None and n1.st_size == 5)
check("another client's removed name is gone after actimeo", f7 is None)
g2 = lstat(ll + "/gone2")
check("another client's new name this mount had found missing: found after actimeo", g2 is not None and g2.st_size == 6)
check("the rest still the server's", all(lstat(ll + "/" + n).st_size == i for i, n in enumerate(names) if n not in ("f06", "f07")))
# the directory this mount made, after actimeo: one listing renews what the mount knew of it, and
# adds what the server has (another client's name); the names it lacks are then answered here again
# the directory this mount made and changed (and another client changed): the kernel revalidates it
# (its entry expired with actimeo); the listing of ll asked for just now (the names above) shows it
# with the times it has now, which the mount's own note of its changes cannot match: that listing
# answers, not a stat of its own
rt = st("round_trips")
ms = lstat(made)
srv_made = os.lstat(d + "/ll/made")
check("a directory this mount changed, its entry expired: a recent listing of its parent answers (%d round trips)"
      % (st("round_trips") - rt), ms is not None and st("round_trips") == rt)
check("... with the server's mtime", ms is not None and ms.st_mtime_ns // 100 == srv_made.st_mtime_ns // 100,
      "%s vs %d" % (ms and ms.st_mtime_ns, srv_made.st_mtime_ns))
rt, rel, ka = st("round_trips"), st("relists"), st("lookups_known_absent")
no1 = lstat(made + "/no1")
check("after actimeo, a name it lacks costs one listing (%d round trips, %d listings, %d answered)"
      % (st("round_trips") - rt, st("relists") - rel, st("lookups_known_absent") - ka),
      no1 is None and st("round_trips") - rt == 1 and st("relists") - rel == 1 and st("lookups_known_absent") - ka == 1)
rt = st("round_trips")
no2 = lstat(made + "/no2")
check("the next name it lacks: ENOENT, no round trip (%d)" % (st("round_trips") - rt), no2 is None and st("round_trips") == rt)
oth = lstat(made + "/other")
check("another client's name there is found after the listing", oth is not None and oth.st_size == 5)
check("this mount's own name there is found", lstat(made + "/mine") is not None)
os.mkdir(made + "/no2")
check("a name made after the listing is found", lstat(made + "/no2") is not None and os.path.isdir(d + "/ll/made/no2"))
PY
PASSED=$((PASSED + $(grep -c '^ok' "$WORK/py" || true)))
FAILED=$((FAILED + $(grep -c '^FAIL' "$WORK/py" || true)))
mount_into M2 "actimeo=3"
"$PYTHON" - "$M2" "$D" <<'PY' >"$WORK/py" 2>&1 && cat "$WORK/py" || { bad "listings ahead of a lookup walk: $(cat "$WORK/py")"; }
import os, sys
sys.path.insert(0, os.environ["FSCHECK_DIR"])
from fscheck import check, lstat, mount_stats
m, d = sys.argv[1:]
def st(k):
    return mount_stats(m)[k]
# a walk of lookups through sibling directories (git status: every file of the index in order):
# once the walk is in the first of them, the next ones are listed ahead, before the kernel has
# looked them up (the mount has no inode of them yet); each one's first lookup waits for that
# listing, or takes it when it is in, instead of listing it then
w = m + "/ll2"
# (a fresh mount: nothing listed yet) a stat of each, then a listing of ll2 for lookups
lstat(w), lstat(w + "/f0"), lstat(w + "/f1")
rt, rel, ahead = st("round_trips"), st("relists"), st("listings_ahead")
got = {(i, g): lstat("%s/d%d/g%d" % (w, i, g)) for i in range(4) for g in range(2)}
check("every name of the four directories found, with the server's size and file id",
      all(got[(i, 0)] and got[(i, 0)].st_size == i and got[(i, 1)] and got[(i, 1)].st_size == 2
          and got[(i, g)].st_ino == os.lstat("%s/ll2/d%d/g%d" % (d, i, g)).st_ino for i in range(4) for g in range(2)),
      str({k: v and (v.st_size, v.st_ino) for k, v in got.items()}))
spent, relisted, listed_ahead = st("round_trips") - rt, st("relists") - rel, st("listings_ahead") - ahead
check("the first directory listed for the lookups, the other three ahead (%d round trips, %d listings, %d ahead)"
      % (spent, relisted, listed_ahead), spent == 4 and relisted == 1 and listed_ahead == 3)
open(d + "/ll2/d3/new", "w").write("x")  # another client's, after the listing ahead
nw = lstat(w + "/d3/new")
check("a name another client made after a listing ahead is found at once", nw is not None and nw.st_size == 1)
PY
PASSED=$((PASSED + $(grep -c '^ok' "$WORK/py" || true)))
FAILED=$((FAILED + $(grep -c '^FAIL' "$WORK/py" || true)))
finish
