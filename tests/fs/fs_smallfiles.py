# fs_smallfiles.py - the checks of fs_smallfiles.sh: what a tree of small files costs on the wire,
# counted with the stats ioctl (no fork between the steps: an exec would close inherited
# descriptors, which flushes them), and what it leaves on the server's disk.
# argv: MOUNT, SHARE_DIR (the same share on the server's disk), LABEL.
import os, sys

from fscheck import Report, mount_stats

mnt, share, label = sys.argv[1:]
report = Report(label)
N = 20
MTIME = 1500000000


def stats():
    return mount_stats(mnt)


def drain_closes(d):
    # an rmdir waits for every queued CLOSE (closeq_drain): after it no handle of ours is open
    p = os.path.join(d, "drain")
    os.mkdir(p)
    os.rmdir(p)


def content(i):
    return (b"file %d\n" % i) * (50 + 37 * i)


top = os.path.join(mnt, "small")
os.mkdir(top)
# tar's order for each file: create, write, futimens, close
quiet_setattr = 0
for i in range(N):
    fd = os.open(os.path.join(top, "f%d" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, content(i))
    s0 = stats()
    os.utime(fd, (MTIME + i, MTIME + i))
    st = os.fstat(fd)
    s1 = stats()
    # (SET_INFO and WRITE: the CLOSE of the file before may still be leaving, the kernel does not wait)
    quiet_setattr += all(s1["commands"][k] == s0["commands"][k] for k in ("set_info", "write", "create"))
    report("f%d: fstat after futimens shows the time set" % i, (int(st.st_mtime), st.st_size),
           (MTIME + i, len(content(i))))
    os.close(fd)
report("futimens with the data still gathered sent nothing (times go with the data at close)", quiet_setattr, N)
for i in range(N):
    p = os.path.join(share, "small", "f%d" % i)
    with open(p, "rb") as f:
        data = f.read()
    report("f%d on the server's disk: content and mtime" % i, (data == content(i), int(os.stat(p).st_mtime)),
           (True, MTIME + i))
d = stats()
report("times deferred to the write-back", d["times_deferred"] >= N, True)

# tar as root: create, write, futimens, then fchown to the ids the file shows and fchmod to its mode.
# Neither changes anything on the server: nothing is sent for them, the data and times still wait
# for the close, and what fstat shows meanwhile is what the server then has.
quiet_owner = 0
for i in range(N):
    fd = os.open(os.path.join(top, "r%d" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, content(i))
    os.utime(fd, (MTIME + i, MTIME + i))
    st = os.fstat(fd)
    s0 = stats()
    os.fchown(fd, st.st_uid, st.st_gid)
    os.fchmod(fd, st.st_mode & 0o7777)
    st2 = os.fstat(fd)
    s1 = stats()
    quiet_owner += all(s1["commands"][k] == s0["commands"][k] for k in ("set_info", "write", "create", "query_info"))
    report("r%d: fstat after fchown and fchmod: size, mtime, mode, owner" % i,
           (st2.st_size, int(st2.st_mtime), st2.st_mode, st2.st_uid, st2.st_gid),
           (len(content(i)), MTIME + i, st.st_mode, st.st_uid, st.st_gid))
    os.close(fd)
report("fchown and fchmod that change nothing sent nothing (data and times still wait for the close)",
       quiet_owner, N)
report("counted as setattrs_unchanged", stats()["setattrs_unchanged"] - d["setattrs_unchanged"] >= 2 * N, True)
for i in range(N):
    p = os.path.join(share, "small", "r%d" % i)
    with open(p, "rb") as f:
        data = f.read()
    report("r%d on the server's disk: content and mtime" % i, (data == content(i), int(os.stat(p).st_mtime)),
           (True, MTIME + i))
# Their CLOSEs went together, after close(2) returned (closeq: the mtime was set, so closing moves
# no time). An rmdir waits for the queue (drain_closes): after it every handle is closed on the
# server, and the times on its disk must still be the ones set.
drain_closes(top)

# An unlink of a file whose own handle waits in the close queue closes it in the unlink's compound
# (closeq_take): right after unlink(2) the name is gone on the server's disk, not left
# delete-pending behind our handle, and the name can be made again at once.
for name in ("u1", "u2"):
    fd = os.open(os.path.join(top, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"unlinked\n")
    os.utime(fd, (MTIME, MTIME))  # (its CLOSE moves no time: it waits in the queue)
    os.close(fd)
s0 = stats()
os.unlink(os.path.join(top, "u1"))
s1 = stats()
report("unlink of a file whose CLOSE waits: gone on the server at once",
       os.path.exists(os.path.join(share, "small", "u1")), False)
# One round trip (nocompound: the CLOSE, the CREATE, its CLOSE), not the hidden rename + delete of
# a file still open. (One more when the queue's timer sent the waiting CLOSEs in between: then a
# batch was answered meanwhile.)
one = 3 if label == "nocompound" else 1
rts, batched = s1["round_trips"] - s0["round_trips"], s1["closes_batched"] - s0["closes_batched"]
report("... in one round trip (or a batch of CLOSEs went in between)",
       rts == one or (rts == one + 1 and batched > 0), True)
fd = os.open(os.path.join(top, "u1"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"again\n")
os.close(fd)
report("... and its name made again at once", open(os.path.join(share, "small", "u1"), "rb").read(), b"again\n")
report("... the other file untouched", open(os.path.join(share, "small", "u2"), "rb").read(), b"unlinked\n")
os.unlink(os.path.join(top, "u1"))
os.unlink(os.path.join(top, "u2"))
report("writers' CLOSEs batched", stats()["closes_batched"] - d["closes_batched"] > 0, True)  # (counted when done)
report("after every CLOSE: mtimes on the server's disk", [int(os.stat(os.path.join(share, "small", "r%d" % i)).st_mtime)
                                                          for i in range(N)], [MTIME + i for i in range(N)])

# a second client (the server's own disk here) changes files between our closes and opens
with open(os.path.join(share, "small", "f0"), "wb") as f:
    f.write(b"changed behind the mount's back\n")
os.utime(os.path.join(share, "small", "f0"), (MTIME + 100, MTIME + 100))

# reading: the open brings the data of a small file (CREATE + READ), the read sends nothing
quiet_reads = 0
for i in range(1, N):
    p = os.path.join(top, "f%d" % i)
    os.stat(p)  # attributes known, as after a listing or lookup
    fd = os.open(p, os.O_RDONLY)
    s0 = stats()
    data = os.read(fd, 1 << 20)
    more = os.read(fd, 1 << 20)
    s1 = stats()
    os.close(fd)
    quiet_reads += s1["reads"] == s0["reads"]
    report("f%d read back through the mount" % i, (data, more), (content(i), b""))
report("reads of small files answered from the data read with the open", quiet_reads, N - 1)
with open(os.path.join(top, "f0"), "rb") as f:
    report("a file changed on the server since our close reads as changed", f.read(),
           b"changed behind the mount's back\n")
report("opens that read with the CREATE", stats()["open_reads"] >= N - 1, True)

# a write after futimens on the same open: the data still reaches the server
p = os.path.join(top, "late")
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"a" * 100)
os.utime(fd, (MTIME, MTIME))
os.write(fd, b"b" * 100)
os.close(fd)
with open(os.path.join(share, "small", "late"), "rb") as f:
    report("write after futimens: all the data on the server", f.read(), b"a" * 100 + b"b" * 100)

# an empty file (no data to carry the times): set at once, by path
p = os.path.join(top, "empty")
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.utime(fd, (MTIME, MTIME))
os.close(fd)
report("empty file's mtime on the server", int(os.stat(os.path.join(share, "small", "empty")).st_mtime), MTIME)

# negative lookups in a directory we just made: answered here, and never against the server's word
import errno, time
d2 = os.path.join(top, "fresh")
os.mkdir(d2)
s0 = stats()
missing = 0
for i in range(10):
    try:
        os.stat(os.path.join(d2, "nope%d" % i))
    except FileNotFoundError:
        missing += 1
s1 = stats()
report("lookups of absent names in a directory we made: ENOENT", missing, 10)
# (CREATEs: a lookup is one; the round trip count would also see CLOSEs of earlier reads, closeq.c)
report("... without asking the server", (s1["commands"]["create"] - s0["commands"]["create"],
                                         s1["lookups_known_absent"] - s0["lookups_known_absent"]), (0, 10))
# a second client creates a name there: an O_EXCL create of it fails (the server decides), and the
# name is seen at once afterwards
with open(os.path.join(share, "small", "fresh", "theirs"), "w") as f:
    f.write("theirs\n")
try:
    os.close(os.open(os.path.join(d2, "theirs"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    got = "created"
except OSError as e:
    got = errno.errorcode[e.errno]
report("O_EXCL create of a name another client made meanwhile", got, "EEXIST")
with open(os.path.join(d2, "theirs")) as f:
    report("... and that name is seen right after", f.read(), "theirs\n")
# another name made by the other client: seen within actimeo (1 s by default; 10 s allowed here)
with open(os.path.join(share, "small", "fresh", "later"), "w") as f:
    f.write("later\n")
seen, t0 = False, time.monotonic()
while not seen and time.monotonic() - t0 < 10:
    seen = os.path.exists(os.path.join(d2, "later"))
    if not seen:
        time.sleep(0.1)
report("a name another client made is seen once the cached listing expired", seen, True)

# read-only handles are closed several to a compound, a moment later: a rename of their directory
# and an rm -rf right after reading must still find nothing open on the server
import shutil
d3 = os.path.join(top, "readme")
os.mkdir(d3)
for i in range(12):
    with open(os.path.join(d3, "r%d" % i), "wb") as f:
        f.write(content(i))
b0 = stats()["closes_batched"]
for i in range(12):
    with open(os.path.join(d3, "r%d" % i), "rb") as f:
        f.read()
try:
    os.rename(d3, d3 + ".moved")
    got = "ok"
except OSError as e:
    got = errno.errorcode[e.errno]
report("rename of a directory right after reading its files", got, "ok")
for i in range(12):
    with open(os.path.join(d3 + ".moved", "r%d" % i), "rb") as f:
        f.read()
try:
    shutil.rmtree(d3 + ".moved")
    got = "ok"
except OSError as e:
    got = errno.errorcode[e.errno]
report("rm -rf right after reading every file", got, "ok")
report("... and nothing is left on the server", os.path.exists(os.path.join(share, "small", "readme.moved")), False)
report("read-only handles closed in batches", stats()["closes_batched"] - b0 >= 12, True)

# cp: files created, written in one go and closed, no time set. The closing flush sets the write
# time the server would give (its clock, as its CREATE answer showed it, plus the time since) in
# the compound of the WRITE, so the CLOSE moves nothing and waits to go with others: the time on
# the server lies within the program's write and close, stays when the CLOSEs are sent, and is
# what the mount shows.
cpd = os.path.join(top, "cp")
os.mkdir(cpd)
b0 = stats()["closes_batched"]
spans = []
for i in range(N):
    t0 = time.time()
    with open(os.path.join(cpd, "c%d" % i), "wb") as f:
        f.write(content(i))
    spans.append((t0, time.time()))
def srv_mtime(name):
    return os.stat(os.path.join(share, "small", "cp", name)).st_mtime_ns
first = [srv_mtime("c%d" % i) for i in range(N)]
# 30 ms either side: the server's file times are coarse (the kernel's clock tick, up to 10 ms)
report("cp: each file's mtime on the server lies within its write and close",
       [spans[i][0] - 0.03 <= first[i] / 1e9 <= spans[i][1] + 0.03 for i in range(N)], [True] * N)
report("cp: the mount shows the server's mtime", [os.stat(os.path.join(cpd, "c%d" % i)).st_mtime_ns for i in range(N)], first)
drain_closes(cpd)
report("cp: writers' CLOSEs batched", stats()["closes_batched"] - b0 >= N, True)
report("cp: after every CLOSE the mtimes are unchanged", [srv_mtime("c%d" % i) for i in range(N)], first)
report("cp: contents on the server", all(open(os.path.join(share, "small", "cp", "c%d" % i), "rb").read() == content(i)
                                          for i in range(N)), True)
# A handle whose write time was set keeps it for its later writes on the server, and the server
# gives the file that time again when the handle closes. So a write after it -- through the same
# open after a close(2) of a duplicate (a FLUSH that set the time), or through another open while
# that handle stays open -- must still leave a time after that write once all are closed. The
# sleep only puts the second write measurably later than the first.
def later_write(name, other):
    fa = os.open(os.path.join(cpd, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fa, b"a\n")
    os.close(os.dup(fa))
    m1 = srv_mtime(name)
    time.sleep(0.2)
    t1 = time.time()
    fb = os.open(os.path.join(cpd, name), os.O_WRONLY | os.O_APPEND) if other else fa
    os.write(fb, b"b\n")
    if other:
        os.close(fb)
    os.close(fa)
    drain_closes(cpd)
    m2 = srv_mtime(name)
    what = "another open while the timed handle stays open" if other else "the same open"
    report("a write through %s: the time moves past it (%.3f s later, written %.3f s later)"
           % (what, (m2 - m1) / 1e9, t1 - m1 / 1e9), (m2 > m1, m2 / 1e9 >= t1 - 0.03), (True, True))
    report("... the content", open(os.path.join(share, "small", "cp", name), "rb").read(), b"a\nb\n")
later_write("two", False)
later_write("three", True)
# Times set by path (tar's utimensat of each directory at the end, touch, rsync): the SET_INFO and
# the attributes the reply needs in one compound (CREATE + SET_INFO + QUERY_INFO + CLOSE). On a
# directory made just before, named relative to an open directory: the kernel then looks up no
# name whose cached entry may expire meanwhile (its LOOKUP would cost round trips of its own).
cfd = os.open(cpd, os.O_RDONLY | os.O_DIRECTORY)
os.mkdir("ud", dir_fd=cfd)
r0 = stats()["round_trips"]
r1 = stats()["round_trips"]  # what asking costs by itself
os.utime("ud", ns=(MTIME * 10**9, (MTIME + 7) * 10**9), dir_fd=cfd)
spent = stats()["round_trips"] - r1 - (r1 - r0)
report("utime of a directory by path: round trips", spent, 4 if label == "nocompound" else 1)
report("... the time through the mount and on the server's disk",
       (int(os.stat("ud", dir_fd=cfd).st_mtime), int(os.stat(os.path.join(share, "small", "cp", "ud")).st_mtime)),
       (MTIME + 7, MTIME + 7))
os.close(cfd)
sys.exit(1 if report.failed else 0)
