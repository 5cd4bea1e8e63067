#!/usr/bin/env bash
# smb3fs on a directory under a DFS link: the mount follows the referrals at mount time and serves
# the target (another share of the same server, or another server: a second smbd started here on
# 127.0.0.3 with the same port and password, as tests/integration/cli_dfs.sh does); reads and writes
# land on the target; a mount under a link to itself fails with one line. Server A's [test] share is
# the DFS root (with-smbd --share "msdfs root = yes").
set -u
if [ "${1:-}" != --inner ]; then
  A_HOST=$SMB3_TEST_HOST A_PORT=$SMB3_TEST_PORT A_DIR=$SMB3_TEST_SHARE_DIR A_PUB=$SMB3_TEST_GUEST_DIR
  export A_HOST A_PORT A_DIR A_PUB
  cd "$A_DIR" || exit 1
  ln -s 'msdfs:127.0.0.1\public' other
  ln -s 'msdfs:127.0.0.3\test' remote
  ln -s 'msdfs:127.0.0.1\test\loop' loop
  mkdir -p "$A_PUB/sub" && head -c 500000 /dev/urandom >"$A_PUB/sub/pubfile"
  chown -R "$SMB3_TEST_USER:" "$A_DIR" "$A_PUB/sub"
  WITH_SMBD_ADDR=127.0.0.3 WITH_SMBD_PASS=$SMB3_TEST_PASS WITH_SMBD_FIRST_PORT=$A_PORT \
    exec "$(dirname "$0")/../harness/with-smbd" -- "$0" --inner
fi
source "$(dirname "$0")/lib.sh"
if [ "$SMB3_TEST_PORT" != "$A_PORT" ] || [ "$SMB3_TEST_HOST" != 127.0.0.3 ]; then
  echo "server B is on $SMB3_TEST_HOST:$SMB3_TEST_PORT, not 127.0.0.3:$A_PORT (port taken?)"
  exit 1
fi
B_DIR=$SMB3_TEST_SHARE_DIR
head -c 700000 /dev/urandom >"$B_DIR/bfile" && chown "$SMB3_TEST_USER:" "$B_DIR/bfile"
SRC="//$A_HOST/test"
head -c 300000 /dev/urandom >"$WORK/up"

m1=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m1")
check "mount under a link to another share" "$SMB3FS" "$SRC/other/sub" "$m1" -o "$BASEOPTS"
cmp -s "$m1/pubfile" "$A_PUB/sub/pubfile" && ok "read through the link" || bad "pubfile differs"
cp "$WORK/up" "$m1/up1" && sync -f "$m1" && ok "write through the link" || bad "cp to $m1 failed"
expect_soon "the written file is in the public share" ok sh -c "cmp -s '$WORK/up' '$A_PUB/sub/up1' && echo ok"

m2=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m2")
check "mount of a link to another server" "$SMB3FS" "$SRC/remote" "$m2" -o "$BASEOPTS"
cmp -s "$m2/bfile" "$B_DIR/bfile" && ok "read from server B" || bad "bfile differs"
cp "$WORK/up" "$m2/up2" && sync -f "$m2" && ok "write to server B" || bad "cp to $m2 failed"
expect_soon "the written file is on server B" ok sh -c "cmp -s '$WORK/up' '$B_DIR/up2' && echo ok"
[ ! -e "$A_DIR/up2" ] && ok "nothing written on server A" || bad "up2 landed on server A"

m3=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX) && MOUNTS+=("$m3")
rc=0
timeout 60 "$SMB3FS" "$SRC/loop" "$m3" -o "$BASEOPTS" 2>"$WORK/err" || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "refers back to itself" "$WORK/err"; then
  ok "mount under a self-referencing link fails: $(cat "$WORK/err")"
else
  bad "mount under the self link: exit $rc, $(cat "$WORK/err")"
fi
finish
