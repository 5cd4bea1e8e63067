#!/usr/bin/env bash
# cache=strict: a write-only open that is a file's only open writes with direct I/O (no page cache
# copy), and every open of the file made while such a writer is open is direct too. Checks that
# the mode is taken when it should be (the direct_write_opens counter) and not otherwise, and that
# no reader ever sees stale bytes: pages cached before the writer, a reader opened while the
# writer writes (same bytes overwritten, file extended), and a reader that was open first.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
sum_of() { md5sum <"$1" | cut -d' ' -f1; }
head -c $((3 << 20)) /dev/urandom >"$WORK/a"
head -c $((3 << 20)) /dev/urandom >"$WORK/b"
mount_into M "cache=strict"

# 1. pages cached by a reader, then a write-only overwrite in place: the next reader sees the new bytes
cp "$WORK/a" "$D/f"; chown "$SMB3_TEST_USER:" "$D/f"
expect "cached read of the server's file" "$(sum_of "$M/f")" "$(sum_of "$WORK/a")"
check "write-only overwrite (dd conv=notrunc)" dd if="$WORK/b" of="$M/f" bs=1M conv=notrunc status=none
expect "on the server after close" "$(sum_of "$D/f")" "$(sum_of "$WORK/b")"
expect "read through the mount after the direct writer: new bytes" "$(sum_of "$M/f")" "$(sum_of "$WORK/b")"
expect "bs=4k read after the direct writer: new bytes" "$(dd if="$M/f" bs=4k status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/b")"

# the same overwrite of a file nothing here has open (the reader's release above goes to the
# daemon in the background, and a writer that finds it still open joins it: not counted here)
cp "$WORK/a" "$D/f2"; chown "$SMB3_TEST_USER:" "$D/f2"
n0=$(stats "$M" direct_write_opens)
check "write-only overwrite of a file not open here" dd if="$WORK/b" of="$M/f2" bs=1M conv=notrunc status=none
expect "the write-only open was direct" "$(stats "$M" direct_write_opens)" "$((n0 + 1))"
expect "its bytes on the server" "$(sum_of "$D/f2")" "$(sum_of "$WORK/b")"

# 2. a new file written by dd (create + write-only): direct, every byte there
n0=$(stats "$M" direct_write_opens)
check "dd bs=4k into a new file" dd if="$WORK/a" of="$M/new" bs=4k status=none
expect "the creating write-only open was direct" "$(stats "$M" direct_write_opens)" "$((n0 + 1))"
expect "new file: size through the mount" "$(stat -c %s "$M/new")" "$((3 << 20))"
expect "new file: bytes through the mount" "$(sum_of "$M/new")" "$(sum_of "$WORK/a")"
expect "new file: bytes on the server" "$(sum_of "$D/new")" "$(sum_of "$WORK/a")"

# appends through write-only opens (O_APPEND: the kernel's size, kept by the direct writes, places them)
n0=$(stats "$M" direct_write_opens)
printf 'one\n' >"$M/log"; printf 'two\n' >>"$M/log"; printf 'three\n' >>"$M/log"
expect "appends through write-only opens" "$(cat "$M/log")" "$(printf 'one\ntwo\nthree')"
expect "appends on the server" "$(cat "$D/log")" "$(printf 'one\ntwo\nthree')"
expect "each append was a direct writer" "$(stats "$M" direct_write_opens)" "$((n0 + 3))"
exec 7>>"$M/log"; printf 'four\n' >&7; printf 'five\n' >&7
expect "size while an appender is open" "$(stat -c %s "$M/log")" "24"
exec 7>&-
expect "appends from one open" "$(tail -n 2 "$M/log" | tr '\n' ' ')" "four five "

# 3. readers opened while the direct writer is open, and one open before it
cat >"$WORK/mix.py" <<'EOF'
import os, sys
m = sys.argv[1]
p = os.path.join(m, "mix")
fails = []
def want(name, got, exp):
    if got != exp: fails.append(name)
A, B, C = b"A" * 65536, b"B" * 65536, b"C" * 100000
w = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.pwrite(w, A, 0)
r = os.open(p, os.O_RDONLY)              # opened while the direct writer is open
want("reader sees the writer's first bytes", os.pread(r, 65536, 0), A)
os.pwrite(w, B, 0)                       # the same bytes again, overwritten
want("reader sees them overwritten", os.pread(r, 65536, 0), B)
os.pwrite(w, C, 65536)                   # the file grows
want("reader sees the new size", os.fstat(r).st_size, 65536 + len(C))
want("reader sees the appended bytes", os.pread(r, len(C), 65536), C)
os.close(w)
w2 = os.open(p, os.O_WRONLY)             # a second writer while that reader is still open
os.pwrite(w2, A, 4096)
want("old reader sees the second writer", os.pread(r, 8192, 0), B[:4096] + A[:4096])
os.close(w2)
os.close(r)
# a reader open first (page cache), then a writer: the writer must not bypass that cache
r = os.open(p, os.O_RDONLY)
want("cached reader, first read", os.pread(r, 4096, 0), B[:4096])
w = os.open(p, os.O_WRONLY)
os.pwrite(w, C[:4096], 0)
want("cached reader sees a later writer's bytes", os.pread(r, 4096, 0), C[:4096])
os.close(w)
os.close(r)
print("\n".join(fails))
sys.exit(1 if fails else 0)
EOF
n0=$(stats "$M" direct_write_opens)
if out=$("$PYTHON" "$WORK/mix.py" "$M" 2>&1); then ok "readers and writers together see every write"
else bad "readers and writers together: $out"; fi
# the first writer was the file's only open (the others may find the release of an earlier open
# still in flight, which the kernel sends in the background, and be direct too: that is safe)
n1=$(stats "$M" direct_write_opens)
[ "$n1" -ge $((n0 + 1)) ] && ok "the first writer of a new file was direct" || bad "no direct writer counted ($n0 -> $n1)"
# a writer that joins a file a reader has open (nothing else ever opened it) keeps the page cache
head -c 70000 /dev/urandom >"$D/join"; chown "$SMB3_TEST_USER:" "$D/join"
cat >"$WORK/join.py" <<'EOF'
import os, sys
p = os.path.join(sys.argv[1], "join")
r = os.open(p, os.O_RDONLY)
first = os.pread(r, 4096, 0)
w = os.open(p, os.O_WRONLY)
os.pwrite(w, b"J" * 4096, 0)
seen = os.pread(r, 4096, 0)
os.close(w)
os.close(r)
sys.exit(0 if seen == b"J" * 4096 and first != seen else 1)
EOF
n1=$(stats "$M" direct_write_opens)
check "a reader sees the writer that joined it" "$PYTHON" "$WORK/join.py" "$M"
expect "a writer joining an open file is not direct" "$(stats "$M" direct_write_opens)" "$n1"
fs_umount "$M"

# cache=loose keeps write-only opens in the kernel's write-back cache
mount_into L "cache=loose"
check "loose: dd into a new file" dd if="$WORK/a" of="$L/loose" bs=64k status=none
expect "loose: no direct writer" "$(stats "$L" direct_write_opens)" "0"
expect "loose: bytes on the server" "$(sum_of "$D/loose")" "$(sum_of "$WORK/a")"
fs_umount "$L"
finish
