#!/usr/bin/env bash
# -o dirleases: a listing asked for under a directory lease answers lookups past actimeo, until the
# server breaks the lease (smb3fs(8), fs/dirlease.h). Samba 4.22 grants directory leases, 4.17 does
# not: on 4.17 the same steps must behave as without the option (one listing per actimeo).
# - names looked up after actimeo: no round trip while the lease is held, nor names it lacks;
# - another SMB client's new, removed and rewritten names break the lease (counted) and show to
#   the next lookup;
# - this mount renames a directory below which it holds leases, and removes a leased directory;
# - this mount's own changes in a leased directory do not break the lease, and show after actimeo
#   (a file rewritten here is not answered from the listing of before);
# - without the option no lease is asked for.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
mkdir -p "$D/dl" "$D/dl2/sub" "$D/dl4" "$D/dl5" "$D/dl6" "$D/dl7" && for i in $(seq -w 0 19); do printf "%${i}s" "" >"$D/dl/f$i"; done
echo x >"$D/dl2/sub/x"
echo a >"$D/dl6/a" && echo b >"$D/dl6/b"
chown -R "$(stat -c %u "$D")" "$D/dl" "$D/dl2" "$D/dl4" "$D/dl5" "$D/dl6" "$D/dl7"
mount_into M "dirleases,actimeo=1"
mount_into N "actimeo=1"
"$PYTHON" - "$M" "$N" "$D" "$SMB3" "$SMB3_TEST_URL" "${SMB3_TEST_SAMBA:-system}" <<'PY' >"$WORK/py" 2>&1 && cat "$WORK/py" || { bad "directory leases: $(cat "$WORK/py")"; }
import os, subprocess, sys, time
sys.path.insert(0, os.environ["FSCHECK_DIR"])
from fscheck import check, lstat, mount_stats
m, n, d, smb3, url, samba = sys.argv[1:]
url = url.rstrip("/")
offered = samba == "4.22"  # Samba 4.22 grants directory leases (smb3 directory leases = auto)
def st(k, mnt=m):
    return mount_stats(mnt)[k]
def other(*args):  # another SMB client: the command-line client, its own connection
    r = subprocess.run([smb3, "-q"] + list(args), capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("smb3 %s: %s" % (" ".join(args), r.stderr.strip()))
def expire():  # the kernel's dentries and any listing not leased are actimeo (1 s) old
    time.sleep(1.3)
dl, names = m + "/dl", ["f%02d" % i for i in range(20)]
granted = st("dir_leases")
check("a listing of the directory", sorted(os.listdir(dl)) == names)
granted = st("dir_leases") - granted
check("a directory lease %s (Samba %s: %d)" % ("granted" if offered else "not offered", samba, granted),
      granted == (1 if offered else 0))
expire()
lstat(dl)
rt, rel, lis = st("round_trips"), st("relists"), st("lookups_listed")
got = {x: lstat(dl + "/" + x) for x in names}
check("every name found after actimeo, the server's size",
      all(got[x] and got[x].st_size == i for i, x in enumerate(names)))
spent, relisted, listed = st("round_trips") - rt, st("relists") - rel, st("lookups_listed") - lis
if offered:
    check("... answered under the lease: %d round trips, %d listings, %d from it" % (spent, relisted, listed),
          spent == 0 and relisted == 0 and listed == 20)
else:
    check("... one listing again, as without the option: %d round trips, %d listings, %d from it"
          % (spent, relisted, listed), spent == 1 and relisted == 1 and listed == 20)
# names it lacks: under the lease, no such file without a round trip; one that differs from a listed
# name in case only is the server's to answer (it compares names without case)
rt, ka = st("round_trips"), st("lookups_known_absent")
gone = [lstat(dl + "/nothere%d" % i) for i in range(3)]
spent, absent = st("round_trips") - rt, st("lookups_known_absent") - ka
if offered:
    check("names the leased listing lacks: ENOENT, %d round trips, %d answered so" % (spent, absent),
          gone == [None] * 3 and spent == 0 and absent == 3)
else:
    check("names the listing lacks: ENOENT, asked of the server (%d round trips)" % spent,
          gone == [None] * 3 and spent == 3 and absent == 0)
rt = st("round_trips")
upper = lstat(dl + "/F05")
check("a name like a listed one but for case: asked of the server (%d round trips)" % (st("round_trips") - rt),
      st("round_trips") > rt and upper is not None and upper.st_size == 5)
# another SMB client makes, removes and rewrites names: the server breaks the lease before it lets
# the change happen (it waits for our acknowledgment)
brk = st("dir_lease_breaks")
with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "dlnew-%d" % os.getpid()), "w") as f:
    f.write("new file")
    local = f.name
other("put", local, url + "/dl/new")
os.unlink(local)
other("rm", url + "/dl/f03")
other("mv", url + "/dl/f04", "dl/g04")
breaks = st("dir_lease_breaks") - brk
check("another client's changes broke the lease (%d breaks)" % breaks, breaks >= 1 if offered else breaks == 0)
expire()  # (the kernel's own entries for f03, f04: actimeo)
# (the names the listing had first: a lookup of one it lacks asks the server, which would spoil it)
f03, f04, g04, new = (lstat(dl + "/" + x) for x in ("f03", "f04", "g04", "new"))
check("... and show: the removed name is gone", f03 is None)
check("... the renamed one moved", f04 is None and g04 is not None and g04.st_size == 4)
check("... the new name", new is not None and new.st_size == 8)
check("... the others unchanged", all(lstat(dl + "/" + x).st_size == i for i, x in enumerate(names) if i not in (3, 4)))
# the other client removes the directory: nothing of this mount's keeps it (a lease handle left open
# after a break would leave it delete-pending on the server, there until the unmount)
check("listed again", sorted(os.listdir(dl)) == sorted([x for x in names if x not in ("f03", "f04")] + ["g04", "new"]))
for x in os.listdir(d + "/dl"):
    other("rm", url + "/dl/" + x)
other("rmdir", url + "/dl")
check("another client removed the directory: gone on the server", not os.path.exists(d + "/dl"))
# this mount renames a directory below which it holds a leased listing (Samba refuses to rename a
# directory below which its client holds handles: they are closed first), then removes a leased one
d2 = m + "/dl2"
check("listings of dl2 and dl2/sub", os.listdir(d2) == ["sub"] and os.listdir(d2 + "/sub") == ["x"])
held = st("dir_leases_held")
check("... leased (%d held)" % held, held >= 2 if offered else held == 0)
os.rename(d2, m + "/dl3")
check("a directory renamed below which leases were held",
      os.path.isdir(d + "/dl3/sub") and not os.path.exists(d + "/dl2") and os.listdir(m + "/dl3/sub") == ["x"])
check("an empty leased directory listed", os.listdir(m + "/dl4") == [])
os.rmdir(m + "/dl4")
check("... removed", not os.path.exists(d + "/dl4") and lstat(m + "/dl4") is None)
# another client removes a directory whose lease this mount holds (the server breaks its handle
# caching first: the handle is closed, and the directory goes)
check("another empty directory listed", os.listdir(m + "/dl5") == [])
other("rmdir", url + "/dl5")
check("... removed by another client: gone on the server", not os.path.exists(d + "/dl5"))
expire()
check("... and here", lstat(m + "/dl5") is None)
# this mount's own changes in a leased directory do not break its lease (its CREATEs name the lease
# as their parent's: ParentLeaseKey), and show: a file made, one rewritten longer, one renamed
check("two more directories listed", sorted(os.listdir(m + "/dl6")) == ["a", "b"] and os.listdir(m + "/dl7") == [])
brk, held = st("dir_lease_breaks"), st("dir_leases_held")
with open(m + "/dl6/c", "w") as f:
    f.write("ccc")
with open(m + "/dl6/a", "w") as f:
    f.write("a much longer content")
os.rename(m + "/dl6/b", m + "/dl6/b2")
# another client's change in dl7 breaks that lease; had our own changes broken dl6's, its break
# (sent while they ran) would have come first and been counted too
other("mkdir", url + "/dl7/o")
def breaks_came():
    for _ in range(600):  # (the break comes on our connection after the other client's answer)
        if st("dir_lease_breaks") > brk:
            return True
        time.sleep(0.05)
    return False
if offered:
    check("another client's change broke its lease", breaks_came())
    check("... ours did not break ours (%d breaks, %d held of %d)" % (st("dir_lease_breaks") - brk,
          st("dir_leases_held"), held), st("dir_lease_breaks") - brk == 1 and st("dir_leases_held") == held - 1)
# (not drop_caches to make the kernel forget them: it would reach the other mounts of tests that
# run at the same time, and change what they measure)
expire()
got = {x: lstat(m + "/dl6/" + x) for x in ("a", "b", "b2", "c")}
check("... and our changes show after actimeo: %s" % {x: v and v.st_size for x, v in got.items()},
      got["a"] and got["a"].st_size == 21 and got["b"] is None and got["b2"] and got["b2"].st_size == 2
      and got["c"] and got["c"].st_size == 3)
# a file rewritten here, no name changed: the listing asked for before is not what answers for it
# (the lease is not broken by our own write)
check("dl6 listed again", sorted(os.listdir(m + "/dl6")) == ["a", "b2", "c"])
fd = os.open(m + "/dl6/c", os.O_WRONLY | os.O_APPEND)  # (no O_CREAT: the kernel sends an OPEN, not a CREATE)
os.write(fd, b"+six!!")
os.close(fd)
expire()
c = lstat(m + "/dl6/c")
check("... a file rewritten by this mount, after actimeo: its new size (%s)" % (c and c.st_size),
      c is not None and c.st_size == 9)
# without the option: nothing asked for
os.listdir(n + "/dl3")
os.listdir(n + "/dl3/sub")
check("a mount without -o dirleases asks for none", st("dir_leases", n) == 0 and st("dir_leases_held", n) == 0)
print("Samba %s: %d directory leases, %d breaks" % (samba, st("dir_leases"), st("dir_lease_breaks")))
PY
PASSED=$((PASSED + $(grep -c '^ok' "$WORK/py" || true)))
FAILED=$((FAILED + $(grep -c '^FAIL' "$WORK/py" || true)))
finish
