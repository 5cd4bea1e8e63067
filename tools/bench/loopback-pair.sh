#!/bin/bash
# Quick side-by-side on loopback: smb3 cat/put vs smbclient get/put, 1 GiB, interleaved, 3 reps.
# Run under the harness with the share on tmpfs:
#   tests/harness/with-smbd --tmpfs -- tools/bench/loopback-pair.sh [BUILD_DIR]
# (smb3-bench is the full benchmark; this is the few-minute check used in closing notes.)
B=${1:-$(dirname "$0")/../../build}
head -c 1024M /dev/urandom >"$SMB3_TEST_SHARE_DIR/f"; chmod 666 "$SMB3_TEST_SHARE_DIR/f"
cp "$SMB3_TEST_SHARE_DIR/f" /dev/shm/smb3-pair-src
SC=(smbclient "//127.0.0.1/$SMB3_TEST_SHARE" -p "$SMB3_TEST_PORT" -U "$SMB3_TEST_USER%$SMB3_TEST_PASS")
for i in 1 2 3; do
  /usr/bin/time -f "smb3-cat %e s cpu %U+%S" "$B/cli/smb3" -q cat "$SMB3_TEST_URL/f" >/dev/null
  /usr/bin/time -f "smbclient-get %e s cpu %U+%S" "${SC[@]}" -c "get f /dev/null" >/dev/null 2>/tmp/smb3-pair.err; tail -1 /tmp/smb3-pair.err
  /usr/bin/time -f "smb3-put %e s cpu %U+%S" "$B/cli/smb3" -q put /dev/shm/smb3-pair-src "$SMB3_TEST_URL/g"
  /usr/bin/time -f "smbclient-put %e s cpu %U+%S" "${SC[@]}" -c "put /dev/shm/smb3-pair-src h" >/dev/null 2>/tmp/smb3-pair.err; tail -1 /tmp/smb3-pair.err
done
rm -f /dev/shm/smb3-pair-src /tmp/smb3-pair.err
