#!/usr/bin/env bash
# cache=strict: a file at least directio_min bytes large, opened only for reading, of which the
# kernel holds no pages of its current version, is read with direct I/O from the mount's
# read-ahead (cache.c). Checks that the mode is taken when it should be (direct_read_opens) and not
# otherwise, that the bytes are right whatever the reads look like (1 MiB, 4 KiB, random preads),
# that such a file can still be mmap'ed shared and private (the INIT reply's
# FUSE_DIRECT_IO_ALLOW_MMAP, main.c), and that a reader sees writes made through another open
# and another client's change.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
sum_of() { md5sum <"$1" | cut -d' ' -f1; }
owned() { chown "$SMB3_TEST_USER:" "$@"; }
head -c $((3 << 20)) /dev/urandom >"$WORK/big"
head -c $((3 << 20)) /dev/urandom >"$WORK/big2"
head -c $((512 << 10)) /dev/urandom >"$WORK/small"
head -c $((40 << 20)) /dev/urandom >"$WORK/rand" # larger than the read-ahead window (16 MiB)
cp "$WORK/rand" "$D/seq1m"; owned "$D/seq1m"
for f in pc1 pc2 pc3; do cp "$WORK/rand" "$D/$f"; owned "$D/$f"; done # page-cache reads by pipe (below)
cp "$WORK/big" "$D/big"; cp "$WORK/rand" "$D/rand"; cp "$WORK/big" "$D/seq4k"; cp "$WORK/small" "$D/small"; owned "$D/big" "$D/rand" "$D/seq4k" "$D/small"
# kernels before 6.6 do not offer FUSE_DIRECT_IO_ALLOW_MMAP: then no open is direct, all the same bytes
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "${kmin%%[!0-9]*}" -ge 6 ]; }; then per_open=1; else per_open=0; fi
mount_into M "cache=strict,directio_min=1M"

n0=$(stats "$M" direct_read_opens)
expect "cat of a large file: its bytes" "$(sum_of "$M/big")" "$(sum_of "$WORK/big")"
expect "the read-only open of the large file was direct" "$(stats "$M" direct_read_opens)" "$((n0 + per_open))"
n0=$(stats "$M" direct_read_opens)
expect "dd bs=64k of it" "$(dd if="$M/big" bs=64k status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/big")"
expect "dd bs=3M of it" "$(dd if="$M/big" bs=3M status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/big")"
expect "each open direct again (no pages cached meanwhile)" "$(stats "$M" direct_read_opens)" "$((n0 + 2 * per_open))"
# A direct open's read-ahead data goes socket -> pipe -> the reader, never through the daemon's
# memory (readahead.c, smb3_pread_pipe_async); the first READ of a stream may still come through
# memory (its start arrived with the head). Reads that skip ahead within a piped buffer, and reads
# behind what its pipe already gave (asked of the server instead), must get the same bytes.
p0=$(stats "$M" readahead_piped)
expect "dd bs=1M of a 40 MiB file: its bytes" "$(dd if="$M/seq1m" bs=1M status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/rand")"
p1=$(stats "$M" readahead_piped)
if [ "$per_open" = 1 ]; then check "its read-ahead came by pipe ($((p1 - p0)) READs)" test "$p1" -gt "$p0"; fi
cat >"$WORK/skip.py" <<'EOF'
import os, sys
m, ref = sys.argv[1], open(sys.argv[2], "rb").read()
fd = os.open(os.path.join(m, sys.argv[3] if len(sys.argv) > 3 else "seq1m"), os.O_RDONLY)
M = 1 << 20
# in order, ahead by a page inside the stream, back behind it, on again, to the end;
# and small reads (the rest of a piped buffer taken into memory), one behind them, one across
for off, n in [(0, M), (M + 4096, M - 4096), (M // 2, M // 4), (2 * M, M), (3 * M + 65536, 5 * M), (M, 3 * M),
               (8 * M, 4096), (8 * M + 8192, 4096), (8 * M, 4096), (8 * M + 65536, M)]:
    got = os.pread(fd, n, off)
    if got != ref[off:off + n]:
        sys.exit("bytes differ at %d+%d" % (off, n))
pos = 8 * M + 65536
while pos < len(ref):
    got = os.pread(fd, M, pos)
    if got != ref[pos:pos + M]:
        sys.exit("bytes differ at %d" % pos)
    pos += M
EOF
check "reads that skip ahead and go back in a direct open: same bytes" "$PYTHON" "$WORK/skip.py" "$M" "$WORK/rand"
# read in small pieces through a direct open: the file's next read-only opens keep the page cache
n0=$(stats "$M" direct_read_opens)
expect "dd bs=4k of a large file" "$(dd if="$M/seq4k" bs=4k status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/big")"
expect "dd bs=4k again" "$(dd if="$M/seq4k" bs=4k status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/big")"
expect "only the first bs=4k reader was direct" "$(stats "$M" direct_read_opens)" "$((n0 + per_open))"
n0=$(stats "$M" direct_read_opens)
expect "a small file: its bytes" "$(sum_of "$M/small")" "$(sum_of "$WORK/small")"
expect "a file below directio_min is not direct" "$(stats "$M" direct_read_opens)" "$n0"

cat >"$WORK/io.py" <<'EOF'
import mmap, os, random, sys
m, ref = sys.argv[1], open(sys.argv[2], "rb").read()
p = os.path.join(m, "rand")
fails = []
def want(name, got, exp):
    if got != exp: fails.append(name)
f = open(p, "rb")
s = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
want("mmap MAP_SHARED of a direct read-only open", s[:], ref)
s.close()
v = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
want("mmap MAP_PRIVATE of it", v[1000:2000000], ref[1000:2000000])
v.close()
rnd = random.Random(18)
for i in range(300):
    off, n = rnd.randrange(0, len(ref) + 4096), rnd.choice([1, 511, 4096, 65536, 300000, 1 << 20])
    if os.pread(f.fileno(), n, off) != ref[off:off + n]:
        fails.append(f"pread {n} at {off}")
        break
f.close()
print("\n".join(fails))
sys.exit(1 if fails else 0)
EOF
n0=$(stats "$M" direct_read_opens)
if out=$("$PYTHON" "$WORK/io.py" "$M" "$WORK/rand" 2>&1); then ok "mmap shared and private, random preads of a direct open"
else bad "mmap / preads of a direct open: $out"; fi
expect "that open was direct" "$(stats "$M" direct_read_opens)" "$((n0 + per_open))"
# a file read at random through a direct open: its next read-only opens keep the page cache
n0=$(stats "$M" direct_read_opens)
expect "the randomly read file again" "$(sum_of "$M/rand")" "$(sum_of "$WORK/rand")"
expect "... through the page cache (read at random before)" "$(stats "$M" direct_read_opens)" "$n0"

# a reader open while another open of this mount writes: it sees every write
cat >"$WORK/mix.py" <<'EOF'
import os, sys
p = os.path.join(sys.argv[1], "big")
fails = []
r = os.open(p, os.O_RDONLY)
first = os.pread(r, 1 << 20, 0)
w = os.open(p, os.O_WRONLY)
os.pwrite(w, b"W" * 8192, 4096)
if os.pread(r, 16384, 0) != first[:4096] + b"W" * 8192 + first[12288:16384]: fails.append("overwrite")
os.pwrite(w, b"E" * 1000, (3 << 20))
if os.fstat(r).st_size != (3 << 20) + 1000: fails.append("size after extend")
if os.pread(r, 1000, 3 << 20) != b"E" * 1000: fails.append("extended bytes")
os.close(w)
os.close(r)
print("\n".join(fails))
sys.exit(1 if fails else 0)
EOF
if out=$("$PYTHON" "$WORK/mix.py" "$M" 2>&1); then ok "a direct reader sees writes through another open"
else bad "direct reader and writer: $out"; fi
expect "the writes reached the server" "$(head -c 12288 "$D/big" | tail -c 8192)" "$(printf 'W%.0s' $(seq 8192))"

# another client (smb3 put --inplace: an SMB open, so the mount's lease is broken) writes the file back
check "another client rewrites the file" "$SMB3" put --inplace "$WORK/big" "$(smb_url big)"
expect "its bytes through a read-only open" "$(sum_of "$M/big")" "$(sum_of "$WORK/big")"
# pages cached by a read-write open: a read-only open of the same version keeps them (not direct)
"$PYTHON" -c "import os,sys; f=os.open(sys.argv[1], os.O_RDWR); d=b''; exec('while True:\n c=os.read(f,1<<20)\n if not c: break\n d+=c'); os.close(f); sys.exit(0 if len(d)==3<<20 else 1)" "$M/big" \
  && ok "read through a read-write open (page cache)" || bad "read-write open read"
n0=$(stats "$M" direct_read_opens)
expect "read-only open after the page cache holds the file" "$(sum_of "$M/big")" "$(sum_of "$WORK/big")"
expect "... is not direct (the kernel's pages are kept)" "$(stats "$M" direct_read_opens)" "$n0"
# another client rewrites it: the lease break drops the pages; the next read-only open is direct again
check "another client rewrites it again" "$SMB3" put --inplace "$WORK/big2" "$(smb_url big)"
n0=$(stats "$M" direct_read_opens)
expect "its new bytes" "$(sum_of "$M/big")" "$(sum_of "$WORK/big2")"
expect "read direct again (the pages went with the lease)" "$(stats "$M" direct_read_opens)" "$((n0 + per_open))"
fs_umount "$M"

# A session that signs or seals has no read-ahead pipes (the bytes must be verified or decrypted
# here): direct reads of 64 KiB and more go through memory, with the right bytes (the daemon died of
# a division by the mount's pipe size, 0 there, in the first version of the pipes per buffer)
for o in seal sign; do
  mount_into S "cache=strict,directio_min=1M,$o"
  expect "$o: dd bs=1M of a 40 MiB file" "$(dd if="$S/seq1m" bs=1M status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/rand")"
  expect "$o: read direct" "$(stats "$S" direct_read_opens)" "$per_open"
  expect "$o: no READ by pipe" "$(stats "$S" readahead_piped)" 0
  fs_umount "$S"
done

# directio_min=0: never direct
mount_into N "cache=strict,directio_min=0"
expect "directio_min=0: bytes" "$(sum_of "$N/big")" "$(sum_of "$WORK/big2")"
expect "directio_min=0: no direct open" "$(stats "$N" direct_read_opens)" "0"
# The page cache's read-ahead data goes socket -> pipe -> the page cache as well (readahead.c). The
# kernel sends its 1 MiB READs on several workers, so one may come before the one in front of it: the
# skipped bytes go to memory (pipe_to_mem), not to the server again. Same bytes whatever the order:
# in sequence, skipping ahead and back, and four readers of one file at once.
p0=$(stats "$N" readahead_piped)
r0=$(stats "$N" direct_reads)
expect "page cache: dd bs=1M of a 40 MiB file" "$(dd if="$N/pc1" bs=1M status=none | md5sum | cut -d' ' -f1)" "$(sum_of "$WORK/rand")"
p1=$(stats "$N" readahead_piped)
check "page cache: its read-ahead came by pipe ($((p1 - p0)) READs)" test "$p1" -gt "$p0"
# (a READ that came first and dropped what it skipped sent the one in front of it to the server)
expect "page cache: no READ asked of the server again" "$(stats "$N" direct_reads)" "$r0"
check "page cache: reads that skip ahead and go back: same bytes" "$PYTHON" "$WORK/skip.py" "$N" "$WORK/rand" pc2
for i in 1 2 3 4; do (dd if="$N/pc3" bs=$((i * 4))k status=none | md5sum | cut -d' ' -f1 >"$WORK/pc3.$i") & done
wait
for i in 1 2 3 4; do expect "page cache: reader $i of 4 at once" "$(cat "$WORK/pc3.$i")" "$(sum_of "$WORK/rand")"; done
fs_umount "$N"
# cache=loose: the page cache, as before
mount_into L "cache=loose,directio_min=1M"
expect "loose: bytes" "$(sum_of "$L/big")" "$(sum_of "$WORK/big2")"
expect "loose: no direct open" "$(stats "$L" direct_read_opens)" "0"
fs_umount "$L"
finish
