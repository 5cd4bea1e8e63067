#!/usr/bin/env bash
# Randomized differential test (fs_random.py): 20,000 seeded mixed operations on the mount and
# on a local directory side by side (cache=strict), then shorter runs under cache=none and
# cache=loose,actimeo=0, and SMB 2.0.2 (oplocks instead of leases); results and final trees must
# be identical.
source "$(dirname "$0")/lib.sh"
PY=$(dirname "$0")/fs_random.py
SEED=${FS_RANDOM_SEED:-20240611}
run() { # NAME OPTIONS SEED NOPS
  local M
  mount_into M "$2"
  mkdir "$M/$1" "$WORK/$1"
  if "$PYTHON" "$PY" "$M/$1" "$WORK/$1" "$3" "$4" >"$WORK/py.out" 2>&1; then
    ok "$1: $(tail -1 "$WORK/py.out")"
  else
    bad "$1: $(cat "$WORK/py.out")"
  fi
  # the last closes' RELEASEs come in the background: give them a moment
  local i left=1
  for i in $(seq 100); do
    left=$(ls -a "$SMB3_TEST_SHARE_DIR/$1" "$SMB3_TEST_SHARE_DIR/$1"/d* | grep -c smb3fs-unlinked)
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  [ "$left" = 0 ] || bad "$1: $left hidden unlinked files left behind"
  fs_umount "$M"
}
run strict "" "$SEED" 20000
run none "cache=none" $((SEED + 1)) 5000
run loose "cache=loose,actimeo=0" $((SEED + 2)) 5000
run oplocks "vers=2.0" $((SEED + 3)) 5000
finish
