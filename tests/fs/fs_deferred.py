# fs_deferred.py - creates put off until the data goes (fs/pending.h), checked on the server's disk:
# a new file in a directory the mount made is answered at once and its CREATE travels with its
# data (CREATE + WRITE + SET_INFO in one round trip); anything else that needs it on the server
# (a listing, a rename, an unlink, a time set on its directory) first makes it; an error the server gives the late
# CREATE reaches close(2); O_EXCL stays exact unless the mount says lazyexcl.
# argv: MOUNT, SHARE_DIR, LABEL (compound, nocompound or lazyexcl: the mount's options).
import errno, os, sys

from fscheck import Report, mount_stats

mnt, share, label = sys.argv[1:]
report = Report(label)
MTIME = 1500000000
TRUNC = os.O_WRONLY | os.O_CREAT | os.O_TRUNC  # the shell's >, cc -o, python's open("w")
EXCL = os.O_WRONLY | os.O_CREAT | os.O_EXCL    # tar, cp, git


def stats():
    return mount_stats(mnt)


def delta(a, b, *keys):
    return tuple(b["commands"].get(k, 0) - a["commands"].get(k, 0) for k in keys)


def srv(*names):
    return os.path.join(share, "deferred", *names)


def errname(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]


top = os.path.join(mnt, "deferred")
os.mkdir(top)
data = b"put off\n" * 300

# 1. create, write, futimens, close: the CREATE goes with the data and the time, one round trip
# (three requests one by one with nocompound); the CLOSE waits to go with others
p = os.path.join(top, "one")
s0 = stats()
fd = os.open(p, TRUNC, 0o644)
s1 = stats()
report("create answered without the server", (delta(s0, s1, "create"), os.path.exists(srv("one"))), ((0,), False))
os.write(fd, data)
os.utime(fd, (MTIME, MTIME))
st = os.fstat(fd)
report("fstat while it is put off: size and time", (st.st_size, int(st.st_mtime)), (len(data), MTIME))
os.close(fd)
s2 = stats()
report("at close: one CREATE, one WRITE, one SET_INFO", delta(s1, s2, "create", "write", "set_info"), (1, 1, 1))
report("... in round trips", s2["round_trips"] - s1["round_trips"], 3 if label == "nocompound" else 1)
report("counted as creates_deferred", s2["creates_deferred"] - s0["creates_deferred"], 1)
report("on the server's disk: content and mtime", (open(srv("one"), "rb").read() == data,
                                                   int(os.stat(srv("one")).st_mtime)), (True, MTIME))
report("the mount shows the server's inode number and mtime", (os.stat(p).st_ino, int(os.stat(p).st_mtime)),
       (os.stat(srv("one")).st_ino, MTIME))

# 2. an empty file: made at close
p = os.path.join(top, "empty")
os.close(os.open(p, TRUNC, 0o644))
report("an empty file is made at close", (os.path.exists(srv("empty")), os.path.getsize(srv("empty"))), (True, 0))

# 3. a listing while a file is still put off: the file is made first, and listed
p = os.path.join(top, "listed")
fd = os.open(p, TRUNC, 0o644)
os.write(fd, b"a" * 100)
names = sorted(os.listdir(top))
report("a listing while a create is put off: it is on the server and listed",
       (os.path.exists(srv("listed")), "listed" in names), (True, True))
os.write(fd, b"b" * 100)
os.close(fd)
report("... and all its data reaches it", open(srv("listed"), "rb").read(), b"a" * 100 + b"b" * 100)

# 4. renamed and unlinked while open: made first, then renamed / removed
p = os.path.join(top, "moving")
fd = os.open(p, TRUNC, 0o644)
os.write(fd, data)
os.rename(p, p + ".moved")
os.write(fd, b"tail\n")
os.close(fd)
report("renamed while put off: the data under the new name, none under the old",
       (open(srv("moving.moved"), "rb").read() == data + b"tail\n", os.path.exists(srv("moving"))), (True, False))
p = os.path.join(top, "gone")
fd = os.open(p, TRUNC, 0o644)
os.write(fd, data)
os.unlink(p)
os.write(fd, b"more")
os.close(fd)
report("unlinked while put off: nothing left", (os.path.exists(srv("gone")), os.path.exists(p)), (False, False))

# 5. fstat while put off shows a provisional inode number; the server's from close(2) on (in 1)
p = os.path.join(top, "statted")
fd = os.open(p, TRUNC, 0o644)
os.write(fd, data)
os.fstat(fd)
os.close(fd)
report("after close: the server's inode number", os.stat(p).st_ino, os.stat(srv("statted")).st_ino)

# 6. the server refuses the late CREATE (the directory made read-only on the server after the mount
# made it): open(2) succeeded, close(2) reports it, the name is gone from the mount and the server
ro = os.path.join(top, "ro")
os.mkdir(ro)
os.chmod(srv("ro"), 0o555)
fd = os.open(os.path.join(ro, "refused"), TRUNC, 0o644)
os.write(fd, data)
got = errname(lambda: os.close(fd))
report("late CREATE refused: close(2) says so", got, "EACCES")
report("... nothing on the server, and the mount agrees",
       (os.path.exists(srv("ro", "refused")), os.path.exists(os.path.join(ro, "refused"))), (False, False))
os.chmod(srv("ro"), 0o755)

# 7. O_EXCL: a second client made the name after the mount made the directory. Without lazyexcl
# the open fails at once (the server decides, as ever); with it the open succeeds and close(2)
# fails, the other client's file untouched.
ex = os.path.join(top, "excl")
os.mkdir(ex)
with open(srv("excl", "theirs"), "w") as f:
    f.write("theirs\n")
s0 = stats()
try:
    fd = os.open(os.path.join(ex, "theirs"), EXCL, 0o644)
    opened = "ok"
except OSError as e:
    fd, opened = -1, errno.errorcode[e.errno]
if fd >= 0:
    os.write(fd, b"mine\n")
    closed = errname(lambda: os.close(fd))
else:
    closed = "-"
report("O_EXCL create of a name another client made: open, close",
       (opened, closed), ("ok", "EEXIST") if label == "lazyexcl" else ("EEXIST", "-"))
report("... their file untouched", open(srv("excl", "theirs")).read(), "theirs\n")
p = os.path.join(ex, "mine")
fd = os.open(p, EXCL, 0o644)
os.write(fd, data)
os.close(fd)
report("O_EXCL of a free name: put off only with lazyexcl",
       stats()["creates_deferred"] - s0["creates_deferred"], 1 if label == "lazyexcl" else 0)
report("... its data on the server", open(srv("excl", "mine"), "rb").read() == data, True)

# 8. a time set on the directory while a file in it is put off: the late CREATE must not move it
dd = os.path.join(top, "dtime")
os.mkdir(dd)
fd = os.open(os.path.join(dd, "f"), TRUNC, 0o644)
os.write(fd, data)
os.utime(dd, (MTIME, MTIME))
os.close(fd)
report("a directory's time set while a file in it is put off stays",
       (int(os.stat(srv("dtime")).st_mtime), open(srv("dtime", "f"), "rb").read() == data), (MTIME, True))
sys.exit(1 if report.failed else 0)
