#!/usr/bin/env bash
# Data integrity of large files: written with dd bs=4k and bs=1M (and cp), read back with dd
# bs=4k and bs=1M, checksums compared with the source and with the file on the server, under
# cache=strict (default), cache=none and cache=loose; an odd size exercises partial wire I/O.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
SIZE=$(( (48 << 20) + 12345 ))
head -c "$SIZE" /dev/urandom >"$WORK/src"
SUM=$(md5sum <"$WORK/src" | cut -d' ' -f1)
sum_of() { md5sum <"$1" | cut -d' ' -f1; }
for mode in strict none loose; do
  mount_into M "cache=$mode"
  for bs in 4k 1M; do
    f="$mode-$bs"
    check "$mode: dd bs=$bs write" dd if="$WORK/src" of="$M/$f" bs=$bs status=none
    expect "$mode: bs=$bs size" "$(stat -c %s "$M/$f")" "$SIZE"
    expect "$mode: bs=$bs checksum on the server" "$(sum_of "$D/$f")" "$SUM"
    for rbs in 4k 1M; do
      expect "$mode: written bs=$bs, read bs=$rbs" "$(dd if="$M/$f" bs=$rbs status=none | md5sum | cut -d' ' -f1)" "$SUM"
    done
  done
  check "$mode: cp" cp "$WORK/src" "$M/$mode-cp"
  expect "$mode: cp checksum on the server" "$(sum_of "$D/$mode-cp")" "$SUM"
  # a file written on the server, read through the mount
  cp "$WORK/src" "$D/$mode-srv"; chown "$SMB3_TEST_USER:" "$D/$mode-srv"
  expect "$mode: server-written file read through the mount" "$(sum_of "$M/$mode-srv")" "$SUM"
  # overwrite the middle in place, unaligned, through the mount
  printf 'PATCHED' | dd of="$M/$mode-srv" bs=1 seek=$((SIZE / 2 + 3)) conv=notrunc status=none
  cp "$WORK/src" "$WORK/patched"
  printf 'PATCHED' | dd of="$WORK/patched" bs=1 seek=$((SIZE / 2 + 3)) conv=notrunc status=none
  expect "$mode: in-place patch, read through the mount" "$(sum_of "$M/$mode-srv")" "$(sum_of "$WORK/patched")"
  expect "$mode: in-place patch on the server" "$(sum_of "$D/$mode-srv")" "$(sum_of "$WORK/patched")"
  rm -f "$M/$mode"-*
  fs_umount "$M"
done
finish
