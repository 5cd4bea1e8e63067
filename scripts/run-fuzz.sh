#!/usr/bin/env bash
# make fuzz: run every libFuzzer target of a -DSMB3_FUZZ=ON build for SECONDS each.
# FUZZ_TARGETS="fuzz_a fuzz_b" runs only those (a 2-core machine cannot give 36 targets 10 minutes
# each in one sitting; the runs can be split and each part's log kept).
# New inputs go to BUILD/tests/fuzz-out/<target> (the committed corpus is only read).
# Exits non-zero if any target crashed; crash inputs are left in BUILD/tests/fuzz-crashes.
set -uo pipefail
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
crashes="$BUILD/tests/fuzz-crashes"
mkdir -p "$crashes"
failed=0 passed=0
for bin in "$BUILD"/tests/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $name "* ]]; then continue; fi
  out="$BUILD/tests/fuzz-out/$name"
  mkdir -p "$out"
  if "$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -artifact_prefix="$crashes/$name-" \
      "$out" "$ROOT/tests/fuzz/corpus/$name" >"$BUILD/tests/$name.log" 2>&1; then
    passed=$((passed + 1)); echo "ok   $name ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$BUILD/tests/$name.log" | grep -o '[0-9]*$' || echo '?') runs)"
  else
    failed=$((failed + 1)); echo "FAIL $name: see $BUILD/tests/$name.log"; tail -5 "$BUILD/tests/$name.log"
  fi
done
echo "$passed passed, $failed failed"
if [ $((passed + failed)) -eq 0 ]; then echo "run-fuzz: no target in $BUILD/tests matches${FUZZ_TARGETS:+ FUZZ_TARGETS=$FUZZ_TARGETS}" >&2; exit 2; fi
[ "$failed" -eq 0 ]
