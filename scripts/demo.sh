#!/usr/bin/env bash
# make demo: start a throwaway Samba share (tmpfs), run the workloads (large reads and writes,
# compounded statfs, dd through the mount) with smb3 (and the smb3fs mount when it is built),
# next to smbclient, and print what was done as a table: every row the median of DEMO_RUNS (default 3)
# interleaved runs with its range and its ratio to the peer measured in the same runs (demo-inner.sh).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
export BUILD ROOT
exec "$ROOT/tests/harness/with-smbd" --tmpfs -- "$ROOT/scripts/demo-inner.sh"
