#!/usr/bin/env bash
# put then get files of 0 B, 1 B, 64 KiB-1, 64 KiB, 64 KiB+1 and 100 MiB with every dialect,
# checksums equal; then the same over ls/stat. Run under with-smbd (with and without
# "server signing = mandatory": see CMakeLists.txt).
source "$(dirname "$0")/lib.sh"
U=$SMB3_TEST_URL
for n in 0 1 65535 65536 65537; do head -c $n /dev/urandom >"$WORK/f$n"; done
head -c 100M /dev/urandom >"$WORK/f100M"
for v in 2.0.2 2.1 3.0 3.0.2 3.1.1; do
  for n in 0 1 65535 65536 65537 100M; do
    name="vers=$v size=$n"
    if ! $SMB3 -q -o vers=$v put "$WORK/f$n" "$U/f$n-$v" 2>"$WORK/err"; then bad "$name put: $(cat "$WORK/err")"; continue; fi
    rm -f "$WORK/g"
    if ! $SMB3 -q -o vers=$v get "$U/f$n-$v" "$WORK/g" 2>"$WORK/err"; then bad "$name get: $(cat "$WORK/err")"; continue; fi
    if same_file "$WORK/f$n" "$WORK/g" && same_file "$WORK/f$n" "$SMB3_TEST_SHARE_DIR/f$n-$v"; then ok "$name"; else bad "$name: content differs"; fi
  done
  # cat streams the same bytes
  if $SMB3 -o vers=$v cat "$U/f100M-$v" | cmp -s - "$WORK/f100M"; then ok "vers=$v cat 100M"; else bad "vers=$v cat 100M"; fi
done
# the server saw what we think we sent: sizes via stat
out=$($SMB3 stat "$U/f65537-3.1.1")
if grep -q "^size: 65537$" <<<"$out"; then ok "stat size"; else bad "stat size: $out"; fi
# no temporary files left behind on either side
if ls -a "$SMB3_TEST_SHARE_DIR" | grep -q smb3-; then bad "temporary files left in the share"; else ok "no temp files on server"; fi
if ls -a "$WORK" | grep -q smb3-; then bad "temporary files left locally"; else ok "no temp files locally"; fi
finish
