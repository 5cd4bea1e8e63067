#!/usr/bin/env python3
"""A model checker for one file, in the spirit of fsx: seeded random operations on a file of the mount
and on a model of its bytes (a bytearray), the file's size and the bytes read checked after every
step, its mtime and ctime after every step that changes the data, and the whole file now and then
and at the end (also through a new descriptor after a close).

Operations: write, read, truncate (grow and shrink), read and write through a shared mapping (msync
after the write), fallocate (reserve, reserve keeping the size), punch a hole, zero a range,
copy_file_range from a second file, fsync, and close + reopen.

usage: fs_fsx.py FILE [--ops N] [--seed S] [--max-size BYTES] [--max-len BYTES] [--report N]
Exit status 0 when every step agreed with the model, 1 at the first disagreement (the last steps
and the first differing offset are printed), 2 on a bad argument.
"""
import argparse
import ctypes
import ctypes.util
import errno
import mmap
import os
import random
import sys
import time

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10
TIME_SLACK = 0.05  # seconds: the mount moves times by this machine's clock (the server is on it too)

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]


def fallocate(fd, mode, off, length):
    if _libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Mismatch(Exception):
    pass


class Fsx:
    def __init__(self, path, seed, max_size, max_len, loose=False):
        self.loose = loose
        self.path = path
        self.src = path + ".src"
        self.rng = random.Random(seed)
        self.max_size = max_size
        self.max_len = max_len
        self.model = bytearray()
        self.log = []
        self.counts = {}
        self.step = 0
        with open(self.src, "wb") as f:  # the source of copy_file_range: known bytes
            f.write(random.Random(seed ^ 0x5A5A).randbytes(max_size))
        self.src_bytes = open(self.src, "rb").read()
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.sfd = os.open(self.src, os.O_RDONLY)
        self.can = {"mmap": self.probe_mmap(), "falloc": True, "punch": True, "zero": True, "copy": True}

    def probe_mmap(self):
        os.pwrite(self.fd, b"x", 0)
        try:
            m = mmap.mmap(self.fd, 1)
            m.close()
            ok = True
        except OSError:
            ok = False  # (a direct-I/O open the kernel will not map shared)
        os.ftruncate(self.fd, 0)
        return ok

    # ---- checks ----
    def fail(self, what):
        raise Mismatch("step %d: %s" % (self.step, what))

    def check_bytes(self, got, off, what):
        want = bytes(self.model[off:off + len(got)]) if off < len(self.model) else b""
        if len(got) != len(want) or got != want:
            at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
            self.fail("%s: %d bytes at %d, expected %d; first difference at offset %d (got %r, expected %r)" %
                      (what, len(got), off, len(want), off + at, got[at:at + 8], want[at:at + 8]))

    def check_size(self, synced=False):
        st = os.fstat(self.fd)
        if st.st_size != len(self.model):
            self.fail("size %d, expected %d" % (st.st_size, len(self.model)))
        # (--loose: the kernel's own write-back cache holds pages the file system has not seen yet)
        if (synced or not self.loose) and st.st_size > 0 and st.st_blocks == 0 and any(self.model):
            self.fail("%d bytes of data, 0 blocks" % st.st_size)
        return st

    def check_times(self, t0, what):
        st = os.fstat(self.fd)
        for name, v in (("mtime", st.st_mtime), ("ctime", st.st_ctime)):
            if v < t0 - TIME_SLACK:
                self.fail("%s did not move %s: %.6f, the step began at %.6f" % (what, name, v, t0))

    def verify_all(self, fd=None):
        fd = self.fd if fd is None else fd
        got = bytearray()
        while len(got) < len(self.model) + 1:
            b = os.pread(fd, 1 << 20, len(got))
            if not b:
                break
            got += b
        self.check_bytes(bytes(got), 0, "whole file")

    # ---- operations ----
    def rand_range(self, within=False):
        limit = len(self.model) if within else self.max_size
        if limit <= 0:
            return 0, 0
        off = self.rng.randrange(limit)
        n = self.rng.randrange(1, min(self.max_len, limit - off) + 1)
        return off, n

    def grow_model(self, end):
        if end > len(self.model):
            self.model.extend(bytes(end - len(self.model)))

    def op_write(self):
        off, n = self.rand_range()
        buf = self.rng.randbytes(n)
        self.log.append("write %d+%d" % (off, n))
        t0 = time.time()
        if os.pwrite(self.fd, buf, off) != n:
            self.fail("short write")
        self.grow_model(off + n)
        self.model[off:off + n] = buf
        self.check_times(t0, "write")

    def op_read(self):
        off, n = self.rand_range(within=self.rng.random() < 0.9)
        self.log.append("read %d+%d" % (off, n))
        self.check_bytes(os.pread(self.fd, n, off), off, "read")

    def op_truncate(self):
        size = self.rng.randrange(self.max_size + 1)
        self.log.append("truncate %d (from %d)" % (size, len(self.model)))
        t0 = time.time()
        os.ftruncate(self.fd, size)
        changed = size != len(self.model)
        if size < len(self.model):
            del self.model[size:]
        else:
            self.grow_model(size)
        if changed:
            self.check_times(t0, "truncate")

    def op_mapread(self):
        if not self.model:
            return self.op_read()
        off, n = self.rand_range(within=True)
        self.log.append("mapread %d+%d" % (off, n))
        with mmap.mmap(self.fd, len(self.model), prot=mmap.PROT_READ) as m:
            self.check_bytes(m[off:off + n], off, "mapread")

    def op_mapwrite(self):
        if not self.model:
            return self.op_write()
        off, n = self.rand_range(within=True)
        buf = self.rng.randbytes(n)
        self.log.append("mapwrite %d+%d" % (off, n))
        t0 = time.time()
        with mmap.mmap(self.fd, len(self.model)) as m:
            m[off:off + n] = buf
            m.flush()  # msync(MS_SYNC): the pages go to the file system
        self.model[off:off + n] = buf
        self.check_times(t0, "a write through mmap, at msync")

    def falloc(self, key, mode, off, n):
        try:
            fallocate(self.fd, mode, off, n)
            return True
        except OSError as e:
            if e.errno in (errno.EOPNOTSUPP, errno.ENOSYS):
                self.can[key] = False  # said once in the summary
                return False
            raise

    def op_falloc(self):
        off, n = self.rand_range()
        keep = self.rng.random() < 0.5
        self.log.append("fallocate%s %d+%d" % (" keep_size" if keep else "", off, n))
        if self.falloc("falloc", FALLOC_FL_KEEP_SIZE if keep else 0, off, n) and not keep:
            self.grow_model(off + n)

    def op_punch(self):
        off, n = self.rand_range(within=True)
        if n == 0:
            return
        self.log.append("punch %d+%d" % (off, n))
        t0 = time.time()
        if self.falloc("punch", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n):
            self.model[off:off + n] = bytes(n)
            self.check_times(t0, "punch hole")

    def op_zero(self):
        off, n = self.rand_range()
        keep = self.rng.random() < 0.5
        self.log.append("zero%s %d+%d" % (" keep_size" if keep else "", off, n))
        t0 = time.time()
        if not self.falloc("zero", FALLOC_FL_ZERO_RANGE | (FALLOC_FL_KEEP_SIZE if keep else 0), off, n):
            return
        end = min(off + n, len(self.model)) if keep else off + n
        if not keep:
            self.grow_model(end)
        if end > off:
            self.model[off:end] = bytes(end - off)
            self.check_times(t0, "zero range")

    def op_copy(self):
        soff = self.rng.randrange(self.max_size)
        off, n = self.rand_range()
        n = min(n, self.max_size - soff)
        self.log.append("copy_file_range src %d -> %d+%d" % (soff, off, n))
        t0 = time.time()
        try:
            done = 0
            while done < n:
                k = os.copy_file_range(self.sfd, self.fd, n - done, soff + done, off + done)
                if k <= 0:
                    break
                done += k
        except OSError as e:
            if e.errno in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV):
                self.can["copy"] = False
                return
            raise
        if done != n:
            self.fail("copy_file_range copied %d of %d" % (done, n))
        self.grow_model(off + n)
        self.model[off:off + n] = self.src_bytes[soff:soff + n]
        self.check_times(t0, "copy_file_range")

    def op_fsync(self):
        self.log.append("fsync")
        os.fsync(self.fd)
        self.check_size(synced=True)

    def op_reopen(self):
        self.log.append("close + reopen")
        os.close(self.fd)
        self.fd = os.open(self.path, os.O_RDWR)
        self.verify_all()

    def run(self, nops, report):
        ops = [(self.op_write, 20), (self.op_read, 20), (self.op_truncate, 6), (self.op_mapread, 8),
               (self.op_mapwrite, 8), (self.op_falloc, 4), (self.op_punch, 4), (self.op_zero, 4),
               (self.op_copy, 6), (self.op_fsync, 2), (self.op_reopen, 2)]
        started = time.time()
        for self.step in range(1, nops + 1):
            while True:
                fn = self.rng.choices([o for o, _ in ops], [w for _, w in ops])[0]
                name = fn.__name__[3:]
                if name in ("mapread", "mapwrite") and not self.can["mmap"]:
                    continue
                if name in ("falloc", "punch", "zero", "copy") and not self.can[name]:
                    continue
                break
            fn()
            self.counts[name] = self.counts.get(name, 0) + 1
            if len(self.log) > 30:
                del self.log[:-30]
            self.check_size()
            if self.step % 200 == 0:
                self.verify_all()
            if report and self.step % report == 0:
                print("%d steps, %.0f/s" % (self.step, self.step / (time.time() - started)), file=sys.stderr)
        os.close(self.fd)
        fd = os.open(self.path, os.O_RDONLY)
        self.verify_all(fd)
        os.close(fd)
        os.close(self.sfd)
        off = sorted(k for k, v in self.can.items() if not v)
        return "%d steps in %.1f s, no miscompare (%s)%s" % (
            nops, time.time() - started, ", ".join("%s %d" % kv for kv in sorted(self.counts.items())),
            "; not supported: " + ", ".join(off) if off else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-size", type=int, default=256 * 1024)
    ap.add_argument("--max-len", type=int, default=64 * 1024)
    ap.add_argument("--report", type=int, default=0, help="print progress every N steps")
    ap.add_argument("--loose", action="store_true",
                    help="blocks checked only after fsync (cache=loose: the kernel holds unsent pages)")
    a = ap.parse_args()
    if a.ops < 1 or a.max_size < 1 or a.max_len < 1:
        ap.error("--ops, --max-size and --max-len must be positive")
    f = Fsx(a.file, a.seed, a.max_size, a.max_len, a.loose)
    try:
        print(f.run(a.ops, a.report))
    except (Mismatch, OSError) as e:
        print("FSX FAILED (seed %d): %s" % (a.seed, e))
        print("last steps:\n  " + "\n  ".join(f.log))
        sys.exit(1)


if __name__ == "__main__":
    main()
