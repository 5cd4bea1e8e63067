#!/usr/bin/env bash
# The model checker (fs_fsx.py) on the mount, once per cache mode: write, read, truncate, mmap read
# and write, fallocate, punch, zero, copy_file_range, fsync, reopen on one file against a model of
# its bytes, sizes and times checked after every step. A short run here (FSX_OPS steps, default
# 3000); long runs: FSX_OPS=1000000 (the closing note of issue 50 says how long).
source "$(dirname "$0")/lib.sh"
PY=$(dirname "$0")/fs_fsx.py
OPS=${FSX_OPS:-3000}
SEED=${FSX_SEED:-50}
for mode in strict none loose; do
  mount_into M "cache=$mode"
  loose=()
  [ "$mode" = loose ] && loose=(--loose)
  if "$PYTHON" "$PY" "$M/fsx-$mode" --ops "$OPS" --seed "$SEED" "${loose[@]}" >"$WORK/fsx.out" 2>&1; then
    ok "cache=$mode: $(tail -1 "$WORK/fsx.out")"
  else
    bad "cache=$mode: $(cat "$WORK/fsx.out")"
  fi
  fs_umount "$M"
  SEED=$((SEED + 1))
done
finish
