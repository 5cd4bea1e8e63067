#!/usr/bin/env bash
# copy_file_range(2) on the mount is a server-side copy (FSCTL_SRV_COPYCHUNK_WRITE): cp and cat
# use it, so a copy inside the share moves no data over the network. Checked under cache=strict,
# cache=loose (the kernel's write-back cache) and SMB 2.0.2 (oplocks):
#  - cp of a 40 MiB + 5 byte file: every byte on the server, no WRITE sent (bytes_written does
#    not move) and bytes_copied counts the file;
#  - ranges at odd offsets into the middle of an existing file, past the source's end (short),
#    from the end (0), extending the destination (its size at once, through stat);
#  - data written through the mount and not yet on the server is what gets copied;
#  - a destination whose pages the kernel has cached reads the copied bytes afterwards;
#  - a destination open read-only: EBADF from the kernel, nothing changed.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
sum_of() { md5sum <"$1" | cut -d' ' -f1; }
head -c $(((40 << 20) + 5)) /dev/urandom >"$WORK/big"
cp "$WORK/big" "$D/big"; chown "$SMB3_TEST_USER:" "$D/big"

run() { # NAME OPTIONS
  local name=$1 M
  mount_into M "$2"
  mkdir "$M/$name"
  local w0 c0
  w0=$(stats "$M" bytes_written)
  c0=$(stats "$M" bytes_copied)
  check "$name: cp" cp "$M/big" "$M/$name/copy"
  expect "$name: the copy on the server" "$(sum_of "$D/$name/copy")" "$(sum_of "$WORK/big")"
  expect "$name: no data sent to the server" "$(stats "$M" bytes_written)" "$w0"
  expect "$name: copied by the server" "$(($(stats "$M" bytes_copied) - c0))" "$(((40 << 20) + 5))"
  check "$name: cat > file" sh -c "cat '$M/big' > '$M/$name/cat'"
  expect "$name: cat's copy" "$(sum_of "$D/$name/cat")" "$(sum_of "$WORK/big")"
  if "$PYTHON" - "$M/$name" "$M/big" "$WORK/big" >"$WORK/py" 2>&1 <<'PY'; then
import os, sys
d, big, local = sys.argv[1], sys.argv[2], sys.argv[3]
src = open(local, "rb").read()
def cfr(a, b, n, oa, ob):
    return os.copy_file_range(a, b, n, oa, ob)
# ranges into the middle of an existing file
dst = os.urandom(30 << 20)
with open(d + "/ranges", "wb") as f:
    f.write(dst)
want = bytearray(dst)
s = os.open(big, os.O_RDONLY)
t = os.open(d + "/ranges", os.O_RDWR)
n = cfr(s, t, (17 << 20) + 3, (5 << 20) + 7, (3 << 20) + 1)
assert n == (17 << 20) + 3, f"middle: copied {n}"
want[(3 << 20) + 1:(3 << 20) + 1 + n] = src[(5 << 20) + 7:(5 << 20) + 7 + n]
# past the source's end: short; from the end: 0; extending the destination
n = cfr(s, t, 1 << 20, len(src) - 1000, len(want) - 10)
assert n == 1000, f"past the end: copied {n}"
want[len(want) - 10:] = src[len(src) - 1000:]
assert os.fstat(t).st_size == len(want), f"size after extending: {os.fstat(t).st_size} != {len(want)}"
assert os.stat(d + "/ranges").st_size == len(want), "stat size after extending"
assert cfr(s, t, 4096, len(src), 0) == 0, "copy from the end"
os.close(t)
assert open(d + "/ranges", "rb").read() == bytes(want), "ranges: content through the mount"
# data written through the mount and not flushed yet is what is copied
w = os.open(d + "/fresh", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
fresh = os.urandom((3 << 20) + 77)
os.write(w, fresh)
t = os.open(d + "/fresh-copy", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
n = cfr(w, t, len(fresh), 0, 0)
assert n == len(fresh), f"fresh: copied {n}"
os.close(t)
os.close(w)
assert open(d + "/fresh-copy", "rb").read() == fresh, "fresh: content"
# a destination with cached pages reads the copied bytes
with open(d + "/cached", "wb") as f:
    f.write(b"x" * (2 << 20))
r = os.open(d + "/cached", os.O_RDONLY)
assert os.read(r, 2 << 20) == b"x" * (2 << 20)
t = os.open(d + "/cached", os.O_WRONLY)
assert cfr(s, t, 1 << 20, 0, 4096) == 1 << 20
os.close(t)
os.lseek(r, 0, 0)
got = os.read(r, 2 << 20)
assert got == b"x" * 4096 + src[:1 << 20] + b"x" * ((1 << 20) - 4096), "cached: stale pages after the copy"
os.close(r)
# a read-only destination
t = os.open(d + "/cached", os.O_RDONLY)
try:
    cfr(s, t, 100, 0, 0)
    raise SystemExit("copy into a read-only descriptor succeeded")
except OSError as e:
    assert e.errno == 9, f"read-only destination: {e}"
os.close(t)
os.close(s)
print("ranges, fresh data, cached pages, read-only")
PY
    ok "$name: $(tail -1 "$WORK/py")"
  else
    bad "$name: $(cat "$WORK/py")"
  fi
  expect "$name: ranges on the server" "$(sum_of "$D/$name/ranges")" "$(sum_of "$M/$name/ranges")"
  expect "$name: fresh copy on the server" "$(sum_of "$D/$name/fresh-copy")" "$(sum_of "$D/$name/fresh")"
  fs_umount "$M"
}
run strict ""
run loose "cache=loose"
run oplocks "vers=2.0"
finish
