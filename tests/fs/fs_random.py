#!/usr/bin/env python3
"""Randomized differential test: the same seeded sequence of file operations on an smb3fs mount
and on a local directory, side by side.

Operations: write and read at random offsets through open descriptors (several per file, so
write-back and read-ahead of different handles meet), truncate by path and by descriptor,
rename (also over existing and over open files), unlink (also of open files), reopen, close,
fsync, stat and listdir. Every result -- bytes read, sizes, listings, the errno of a failure --
must be identical on both sides; at the end both trees must be byte-identical.

usage: fs_random.py MOUNT_DIR LOCAL_DIR SEED NOPS
"""
import errno
import os
import random
import sys

NAMES = ["f%d" % i for i in range(8)]
DIRS = ["", "d0", "d1"]
MAX_FDS = 6


class Mismatch(Exception):
    pass


def outcome(fn):
    """Run fn, returning ("ok", value) or ("err", errno)."""
    try:
        return ("ok", fn())
    except OSError as e:
        return ("err", errno.errorcode.get(e.errno, e.errno))


class Side:
    def __init__(self, root):
        self.root = root
        self.fds = {}  # slot -> fd

    def p(self, rel):
        return os.path.join(self.root, rel)


def tree(root):
    """{relative path: bytes or None for directories}"""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in dirnames:
            out[os.path.normpath(os.path.join(rel, d))] = None
        for f in filenames:
            with open(os.path.join(dirpath, f), "rb") as fh:
                out[os.path.normpath(os.path.join(rel, f))] = fh.read()
    return out


class Runner:
    def __init__(self, mount, local, seed):
        self.rng = random.Random(seed)
        self.sides = [Side(mount), Side(local)]
        self.next_slot = 0
        self.log = []

    def rand_path(self):
        return os.path.join(self.rng.choice(DIRS), self.rng.choice(NAMES))

    def both(self, desc, fn):
        """fn(side) on both sides; the outcomes must match."""
        res = [outcome(lambda s=s: fn(s)) for s in self.sides]
        self.log.append(desc)
        if res[0] != res[1]:
            a, b = (repr(r)[:200] for r in res)
            raise Mismatch("%s: mount %s, local %s" % (desc, a, b))
        return res[0]

    # ---- operations ----
    def op_open(self):
        if len(self.sides[0].fds) >= MAX_FDS:
            return self.op_close()
        path = self.rand_path()
        flags = os.O_RDWR | (os.O_CREAT if self.rng.random() < 0.7 else 0)
        if self.rng.random() < 0.05:
            flags |= os.O_TRUNC
        slot = self.next_slot
        self.next_slot += 1

        def do(s):
            fd = os.open(s.p(path), flags, 0o644)
            s.fds[slot] = fd
            return True

        self.both("open %s flags=%o slot=%d" % (path, flags, slot), do)

    def pick_slot(self):
        slots = sorted(self.sides[0].fds)
        return self.rng.choice(slots) if slots else None

    def op_close(self):
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        self.both("close slot=%d" % slot, lambda s: os.close(s.fds.pop(slot)))

    def op_write(self):
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        off = self.rng.randrange(0, 1 << 19)
        n = self.rng.choice([1, 7, 512, 4096, 5000, 65536, 200000]) if self.rng.random() < 0.9 else self.rng.randrange(1, 1 << 20)
        data = self.rng.randbytes(n)
        self.both("pwrite slot=%d off=%d len=%d" % (slot, off, n), lambda s: os.pwrite(s.fds[slot], data, off))

    def op_seq_write(self):
        """Several contiguous writes: what write-back coalesces."""
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        off = self.rng.randrange(0, 1 << 18)
        chunk = self.rng.choice([100, 4096, 65536])
        count = self.rng.randrange(2, 40)
        data = self.rng.randbytes(chunk * count)

        def do(s):
            for i in range(count):
                os.pwrite(s.fds[slot], data[i * chunk:(i + 1) * chunk], off + i * chunk)
            return True

        self.both("seqwrite slot=%d off=%d %dx%d" % (slot, off, count, chunk), do)

    def op_read(self):
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        off = self.rng.randrange(0, 1 << 19)
        n = self.rng.choice([1, 100, 4096, 65536, 300000])
        self.both("pread slot=%d off=%d len=%d" % (slot, off, n), lambda s: os.pread(s.fds[slot], n, off))

    def op_seq_read(self):
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        chunk = self.rng.choice([4096, 65536, 131072])

        def do(s):
            out, off = [], 0
            while True:
                b = os.pread(s.fds[slot], chunk, off)
                if not b:
                    return b"".join(out)
                out.append(b)
                off += len(b)

        self.both("seqread slot=%d chunk=%d" % (slot, chunk), do)

    def op_truncate(self):
        size = self.rng.choice([0, 1, 4096, self.rng.randrange(0, 1 << 19)])
        if self.rng.random() < 0.5 and self.sides[0].fds:
            slot = self.pick_slot()
            self.both("ftruncate slot=%d %d" % (slot, size), lambda s: os.ftruncate(s.fds[slot], size))
        else:
            path = self.rand_path()
            self.both("truncate %s %d" % (path, size), lambda s: os.truncate(s.p(path), size))

    def op_rename(self):
        a, b = self.rand_path(), self.rand_path()
        self.both("rename %s %s" % (a, b), lambda s: os.rename(s.p(a), s.p(b)))

    def op_unlink(self):
        path = self.rand_path()
        self.both("unlink %s" % path, lambda s: os.unlink(s.p(path)))

    def op_fsync(self):
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        self.both("fsync slot=%d" % slot, lambda s: os.fsync(s.fds[slot]))

    def op_stat(self):
        path = self.rand_path()
        self.both("stat %s" % path, lambda s: os.stat(s.p(path)).st_size)

    def op_fstat(self):
        slot = self.pick_slot()
        if slot is None:
            return self.op_open()
        self.both("fstat slot=%d" % slot, lambda s: os.fstat(s.fds[slot]).st_size)

    def op_listdir(self):
        d = self.rng.choice(DIRS)
        self.both("listdir %s" % (d or "."), lambda s: sorted(os.listdir(s.p(d) if d else s.root)))

    def op_whole_file(self):
        """Open, read everything, close: a reader with its own handle."""
        path = self.rand_path()

        def do(s):
            with open(s.p(path), "rb") as f:
                return f.read()

        self.both("readfile %s" % path, do)

    OPS = [
        (op_open, 10), (op_close, 8), (op_write, 20), (op_seq_write, 6), (op_read, 14), (op_seq_read, 3),
        (op_truncate, 6), (op_rename, 5), (op_unlink, 4), (op_fsync, 3), (op_stat, 8), (op_fstat, 5),
        (op_listdir, 3), (op_whole_file, 5),
    ]

    def run(self, nops):
        for s in self.sides:
            for d in DIRS[1:]:
                os.makedirs(s.p(d), exist_ok=True)
        fns = [f for f, w in self.OPS for _ in range(w)]
        for i in range(nops):
            try:
                self.rng.choice(fns)(self)
            except Mismatch as e:
                raise Mismatch("operation %d: %s" % (i, e))
        for s in self.sides:
            for fd in s.fds.values():
                os.close(fd)
            s.fds.clear()


def main():
    mount, local, seed, nops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    r = Runner(mount, local, seed)
    try:
        r.run(nops)
    except Mismatch as e:
        print("FAIL %s" % e)
        print("last operations:\n  " + "\n  ".join(r.log[-15:]))
        return 1
    tm, tl = tree(mount), tree(local)
    if tm != tl:
        for k in sorted(set(tm) | set(tl)):
            if tm.get(k, "missing") != tl.get(k, "missing"):
                a, b = tm.get(k, "missing"), tl.get(k, "missing")
                la = len(a) if isinstance(a, bytes) else a
                lb = len(b) if isinstance(b, bytes) else b
                print("FAIL final trees differ at %s: mount %s, local %s" % (k, la, lb))
        return 1
    nfiles = sum(1 for v in tm.values() if v is not None)
    print("ok   %d operations (seed %d), final trees identical (%d files, %d bytes)"
          % (nops, seed, nfiles, sum(len(v) for v in tm.values() if v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
