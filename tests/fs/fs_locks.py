# fs_locks.py - the checks of fs_locks.sh: fcntl(2) and flock(2) locks on smb3fs mounts.
# argv: M1 M2 (two mounts of one share: two clients), N1 N2 (the same with nobrl), SHARE_DIR, the
# server's PORT, the smb3 binary (stats).
import errno, fcntl, json, os, re, select, signal, struct, subprocess, sys, time

m1, m2, n1, n2, share, port, smb3 = sys.argv[1:]
failed = 0
FL = "hhqqi4x"  # struct flock on x86-64/aarch64 Linux: type, whence, start, len, pid


def report(name, got, want):
    global failed
    if got == want:
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL %s: got %r, want %r" % (name, got, want))


def setlk(fd, t, start, ln, wait=False):
    try:
        fcntl.fcntl(fd, fcntl.F_SETLKW if wait else fcntl.F_SETLK, struct.pack(FL, t, 0, start, ln, 0))
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]


def getlk(fd, t, start, ln):
    ty, _, s, l, pid = struct.unpack(FL, fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(FL, t, 0, start, ln, 0)))
    return ty if ty == fcntl.F_UNLCK else (ty, s, l, pid)


def flock(fd, op):
    try:
        fcntl.flock(fd, op)
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]


def in_child(fn):
    """Run fn() in a child process (another lock owner); return what it returned (a str)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = str(fn())
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = "exception %r" % (e,)
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return data.decode()


def soon(fn, want):
    """fn() until it returns want, for at most 10 s (what follows an asynchronous RELEASE)."""
    for _ in range(100):
        got = fn()
        if got == want:
            return got
        time.sleep(0.1)
    return got


name = "locked"
with open(os.path.join(share, name), "wb") as f:
    f.write(os.urandom(100000))
os.chown(os.path.join(share, name), int(os.environ["LOCK_UID"]), -1)  # the server's user must own it
p1, p2 = os.path.join(m1, name), os.path.join(m2, name)
W, R, U = fcntl.F_WRLCK, fcntl.F_RDLCK, fcntl.F_UNLCK

# ---- two clients ----
a = os.open(p1, os.O_RDWR)
b = os.open(p2, os.O_RDWR)
report("client 1 locks [0,100) exclusive", setlk(a, W, 0, 100), "ok")
report("client 2: exclusive inside it refused", setlk(b, W, 50, 10), "EAGAIN")
report("client 2: shared on its last byte refused", setlk(b, R, 99, 1), "EAGAIN")
report("client 2: exclusive right after it granted", setlk(b, W, 100, 10), "ok")
t = getlk(b, R, 0, 10)
report("client 2: F_GETLK reports the other client's lock", t if t == U else t[0], W)
report("client 2: F_GETLK over its own lock: free", getlk(b, W, 100, 10), U)
report("client 1: F_GETLK elsewhere: free", getlk(a, W, 200, 10), U)
report("client 1: F_GETLK over client 2's lock: taken", (getlk(a, R, 105, 1) or (0,))[0], W)
# a POSIX unlock of the middle splits client 1's lock in two
report("client 1 unlocks [40,60)", setlk(a, U, 40, 20), "ok")
report("client 2: the hole is free", setlk(b, W, 40, 20), "ok")
report("client 2: the left piece is still held", setlk(b, W, 30, 5), "EAGAIN")
report("client 2: the right piece is still held", setlk(b, W, 60, 5), "EAGAIN")
report("client 2 unlocks everything (len 0)", setlk(b, U, 0, 0), "ok")
# conversion in place: exclusive -> shared for part of it
report("client 1 downgrades [0,40) to shared", setlk(a, R, 0, 40), "ok")
report("client 2: shared inside the shared part granted", setlk(b, R, 10, 5), "ok")
report("client 2: upgrading that to exclusive refused", setlk(b, W, 10, 5), "EAGAIN")
report("client 1: upgrading over client 2's shared lock refused (client 2 kept it)", setlk(a, W, 10, 5), "EAGAIN")
report("client 1 kept its shared lock through the refused upgrade", setlk(b, W, 0, 5), "EAGAIN")
report("client 2: exclusive in client 1's right piece refused", setlk(b, W, 70, 5), "EAGAIN")
setlk(b, U, 0, 0)
report("client 1 unlocks all, locks the whole file (len 0)", (setlk(a, U, 0, 0), setlk(a, W, 0, 0)), ("ok", "ok"))
report("client 2: a byte at 1 TiB is covered", setlk(b, W, 1 << 40, 1), "EAGAIN")
# written under a lock: on the server when the lock goes, before any close
os.pwrite(a, b"HELLO-LOCKED", 5000)
report("client 1 unlocks", setlk(a, U, 0, 0), "ok")
with open(os.path.join(share, name), "rb") as f:
    f.seek(5000)
    report("data written under the lock is on the server at the unlock", f.read(12), b"HELLO-LOCKED")
# close(2) of any descriptor of the owner releases all its POSIX locks on the file
report("client 1 locks [0,10)", setlk(a, W, 0, 10), "ok")
a2 = os.open(p1, os.O_RDONLY)
report("same process, second descriptor: its own lock does not conflict", setlk(a2, R, 500, 10), "ok")
os.close(a2)
report("close of the second descriptor released the owner's locks", setlk(b, W, 0, 10), "ok")
setlk(b, U, 0, 0)

# Writes through two opens, one holding an exclusive lock: each open's data goes through its own
# handle (through the other, the server would refuse the locked bytes)
x1 = os.open(p1, os.O_RDWR)
x2 = os.open(p1, os.O_RDWR)
report("open 1 locks [3000,3100) exclusive", setlk(x1, W, 3000, 100), "ok")
os.pwrite(x2, b"B" * 100, 2900)  # right before the locked range, through open 2
os.pwrite(x1, b"A" * 100, 3000)  # the locked range, through open 1, adjacent to open 2's bytes
try:
    os.fsync(x1)
    os.fsync(x2)
    synced = "ok"
except OSError as e:
    synced = errno.errorcode[e.errno]
report("both opens' writes reach the server", synced, "ok")
with open(os.path.join(share, name), "rb") as f:
    f.seek(2900)
    report("the bytes of both writes are there", f.read(200), b"B" * 100 + b"A" * 100)
os.close(x2)
os.close(x1)

# ---- two processes on one mount: decided here, whatever the server sees ----
report("parent locks [0,10) exclusive", setlk(a, W, 0, 10), "ok")
report("another process on the same mount: refused",
       in_child(lambda: setlk(os.open(p1, os.O_RDWR), W, 5, 1)), "EAGAIN")
report("another process: F_GETLK names the parent",
       in_child(lambda: str(getlk(os.open(p1, os.O_RDONLY), R, 0, 1))), str((W, 0, 10, os.getpid())))
report("another process: shared elsewhere granted", in_child(lambda: setlk(os.open(p1, os.O_RDONLY), R, 20, 5)), "ok")

def closes_sent(m):
    """CLOSE requests the mount's connection has sent (`smb3 stats`: an opendir of the root costs none)."""
    out = subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout
    return json.loads(out)["commands"]["close"]


def child_gone(pid, fds, name, ln):
    """The child exits; client 2 then gets [0, ln); client 1 takes [0,10) back."""
    os.waitpid(pid, 0)
    for fd in fds:
        os.close(fd)
    report(name, soon(lambda: setlk(b, W, 0, ln), "ok"), "ok")
    setlk(b, U, 0, 0)
    setlk(a, W, 0, 10)


# Shared locks of two processes over the same bytes, one lets go, the other upgrades. (Samba
# keeps a stale lock when one handle of a connection unlocks bytes another handle of it also
# holds; the mount never lets two handles hold the same bytes.)
setlk(a, U, 0, 10)
q = os.open(p1, os.O_RDWR)
report("parent shared [0,100)", setlk(q, R, 0, 100), "ok")
r, w = os.pipe()
r2, w2 = os.pipe()  # the parent -> the child: "I have let go"
pid = os.fork()
if pid == 0:
    os.close(r)
    os.close(w2)
    fd = os.open(p1, os.O_RDWR)
    res = [setlk(fd, R, 50, 100)]
    os.write(w, b"x")
    os.read(r2, 1)  # the parent's unlock has been answered
    res.append(setlk(fd, W, 50, 100))
    res.append(setlk(fd, W, 0, 50))  # the parent's old part, free too
    os.write(w, repr(res).encode())
    os._exit(0)
os.close(w)
os.close(r2)
os.read(r, 1)
report("parent unlocks", setlk(q, U, 0, 0), "ok")
os.write(w2, b"x")
report("the other process upgrades over the bytes both held", os.read(r, 200).decode(), repr(["ok", "ok", "ok"]))
os.close(q)
child_gone(pid, [r, w2], "client 2 gets those bytes once that process is gone", 150)

# The open whose handle holds shared bytes for another process goes away: the other process
# keeps them (moved to its handle before the CLOSE), and can still upgrade.
setlk(a, U, 0, 10)
q = os.open(p1, os.O_RDWR)
report("parent shared [0,10) through a second open", setlk(q, R, 0, 10), "ok")
r, w = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.close(w2)
    os.close(q)  # the child's copy: the open stays the parent's
    fd = os.open(p1, os.O_RDWR)
    os.write(w, setlk(fd, R, 0, 10).encode())
    os.read(r2, 1)  # the parent's open is gone
    os.write(w, setlk(fd, W, 0, 10).encode())
    os.read(r2, 1)
    os._exit(0)
os.close(w)
os.close(r2)
report("another process shares the same bytes", os.read(r, 10).decode(), "ok")
closes = closes_sent(m1)
os.close(q)  # FLUSH drops the parent's lock, RELEASE the open (in the background)
# The RELEASE moves what the open's handle held for the other process onto that process's
# handle, then sends the CLOSE: once client 1 has sent one more CLOSE, the move is done.
report("the released open's CLOSE went out", soon(lambda: closes_sent(m1) > closes, True), True)
report("client 2 still refused over the other process's shared bytes", setlk(b, W, 0, 5), "EAGAIN")
os.write(w2, b"x")
report("that process upgrades them", os.read(r, 10).decode(), "ok")
report("client 2 refused even a shared lock now", setlk(b, R, 0, 5), "EAGAIN")
os.write(w2, b"x")
child_gone(pid, [r, w2], "client 2 gets them once that process is gone", 10)

# ---- F_SETLKW waits until the lock is free, and can be interrupted ----
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    fd = os.open(p2, os.O_RDWR)
    os.write(w, ("start " + setlk(fd, W, 0, 10, wait=True)).encode())  # the other client
    os._exit(0)
os.close(w)
started = select.select([r], [], [], 1.0)[0]
report("F_SETLKW of a taken range waits", started, [])
setlk(a, U, 0, 10)
report("F_SETLKW returns once the range is unlocked", os.read(r, 100).decode(), "start ok")
os.waitpid(pid, 0)
os.close(r)
setlk(a, W, 0, 10)


class Alarm(Exception):
    pass


def interrupted():
    def on_alarm(sig, frame):
        raise Alarm()

    signal.signal(signal.SIGALRM, on_alarm)
    fd = os.open(p2, os.O_RDWR)
    signal.alarm(1)
    try:
        return setlk(fd, W, 0, 10, wait=True)
    except Alarm:
        return "interrupted"


report("F_SETLKW is interrupted by a signal", in_child(interrupted), "interrupted")

# More waiters than the mount has FUSE workers: waiting takes none, so the holder's unlock gets
# through, and the waiters get the range one after another (each exit releases it).
kids = []
for i in range(8):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        fd = os.open(p1 if i % 2 else p2, os.O_RDWR)  # waiters on both clients
        res = setlk(fd, W, 0, 10, wait=True)
        os.write(w, res.encode())
        time.sleep(0.05)
        os._exit(0)
    os.close(w)
    kids.append((pid, r))
# Every waiter is blocked inside its F_SETLKW (the syscall the kernel shows it in) before the unlock.
fcntl_nr = {"x86_64": 72, "aarch64": 25}[os.uname().machine]


def in_fcntl(pid):
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] == str(fcntl_nr)
    except OSError:
        return False


report("8 waiters blocked in F_SETLKW", soon(lambda: all(in_fcntl(pid) for pid, _ in kids), True), True)
signal.signal(signal.SIGALRM, lambda s, f: (_ for _ in ()).throw(TimeoutError("unlock blocked")))
signal.alarm(30)
report("unlock with 8 waiters queued", setlk(a, U, 0, 10), "ok")
results = []
for pid, r in kids:
    results.append(os.read(r, 100).decode())
    os.waitpid(pid, 0)
    os.close(r)
signal.alarm(0)
report("each of the 8 waiters got the range in turn", results, ["ok"] * 8)
setlk(a, W, 0, 10)
setlk(a, U, 0, 0)
os.close(a)
os.close(b)

# ---- flock(2) ----
a = os.open(p1, os.O_RDONLY)
b = os.open(p2, os.O_RDONLY)
report("flock exclusive", flock(a, fcntl.LOCK_EX), "ok")
report("flock of the other client refused", flock(b, fcntl.LOCK_SH | fcntl.LOCK_NB), "EAGAIN")
report("flock converted to shared", flock(a, fcntl.LOCK_SH), "ok")
report("the other client's shared flock granted", flock(b, fcntl.LOCK_SH | fcntl.LOCK_NB), "ok")
report("the other client's exclusive flock refused", flock(b, fcntl.LOCK_EX | fcntl.LOCK_NB), "EAGAIN")
flock(b, fcntl.LOCK_UN)
os.close(a)  # the last descriptor: the lock goes with the release
report("flock released by close", soon(lambda: flock(b, fcntl.LOCK_EX | fcntl.LOCK_NB), "ok"), "ok")
os.close(b)

# ---- a lost connection: the reopened handle takes its locks again ----
def stats(m, key):
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)[key]


def conns(filt):
    out = subprocess.run(["ss", "-Htnp", "state", "established", filt], capture_output=True, text=True,
                         check=True).stdout
    return out.splitlines()


a = os.open(p1, os.O_RDWR)
b = os.open(p2, os.O_RDWR)
report("client 1 locks [0,10) and [50,60) before the loss", (setlk(a, W, 0, 10), setlk(a, R, 50, 10)), ("ok", "ok"))
# client 1's daemon's connection (its local port), then the smbd serving it
mine = set(subprocess.run(["pgrep", "-f", "smb3fs .*%s( |$)" % m1], capture_output=True, text=True).stdout.split())
eph = [ln.split()[2].rsplit(":", 1)[1] for ln in conns("( dport = :%s )" % port)
       if any("pid=%s," % p in ln for p in mine)]
srv = {int(x) for e in eph for ln in conns("( sport = :%s and dport = :%s )" % (port, e))
       for x in re.findall(r"pid=(\d+)", ln)}
report("client 1's smbd found", len(srv) >= 1, True)
before = stats(m1, "relocks")
for x in srv:
    os.kill(x, signal.SIGKILL)
# any request brings the new connection; the reopen then asks for the locks again
for _ in range(300):
    try:
        os.stat(os.path.join(m1, "absent-%d" % _))
    except OSError:
        pass
    if stats(m1, "relocks") >= before + 2:
        break
    time.sleep(0.1)
report("both locks taken again on the new connection", stats(m1, "relocks") - before, 2)
report("client 2: the exclusive lock holds after the reconnect", setlk(b, W, 5, 1), "EAGAIN")
report("client 2: the shared one too", (setlk(b, W, 55, 1), setlk(b, R, 55, 1)), ("EAGAIN", "ok"))
setlk(b, U, 0, 0)
os.close(a)
os.close(b)

# ---- SQLite: four writers, two on each client, one database ----
import sqlite3

db1, db2 = os.path.join(m1, "t.db"), os.path.join(m2, "t.db")
c = sqlite3.connect(db1, timeout=60)
c.execute("create table t(k integer primary key, who text)")
c.commit()
c.close()
N = 50
kids = []
for who, dbp in (("a", db1), ("b", db2), ("c", db1), ("d", db2)):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            c = sqlite3.connect(dbp, timeout=60)
            for i in range(N):
                c.execute("begin immediate")
                n = c.execute("select count(*) from t").fetchone()[0]
                c.execute("insert into t(k, who) values (?, ?)", (n + 1, who))  # k taken twice: an error
                c.commit()
            c.close()
        except Exception as e:  # noqa: BLE001
            sys.stderr.write("sqlite writer %s: %r\n" % (who, e))
            code = 1
        os._exit(code)
    kids.append(pid)
report("sqlite: every writer's transactions committed", [os.waitpid(p, 0)[1] for p in kids], [0, 0, 0, 0])
c = sqlite3.connect(db2, timeout=60)
report("sqlite: all rows there, numbered without a gap or a duplicate",
       c.execute("select count(*), max(k), count(distinct who) from t").fetchone(), (4 * N, 4 * N, 4))
report("sqlite: integrity check", c.execute("pragma integrity_check").fetchone(), ("ok",))
c.close()

# ---- nobrl: the kernel keeps the locks, on this machine only ----
q1, q2 = os.path.join(n1, name), os.path.join(n2, name)
a = os.open(q1, os.O_RDWR)
b = os.open(q2, os.O_RDWR)
report("nobrl: client 1 locks", setlk(a, W, 0, 10), "ok")
report("nobrl: the other client is not told", setlk(b, W, 0, 10), "ok")
report("nobrl: another process on the mount is refused (the kernel's lock)",
       in_child(lambda: setlk(os.open(q1, os.O_RDWR), W, 0, 1)), "EAGAIN")
os.close(a)
os.close(b)
sys.exit(1 if failed else 0)
