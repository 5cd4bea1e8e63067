#!/usr/bin/env bash
# Small files: times set while the data is still gathered go to the server with it (one round
# trip at close: WRITE + SET_INFO), and a small file's data comes with its open (CREATE + READ);
# both checked on the server's disk, with a second client's change in between, compounded and
# with nocompound; and a tar round trip keeps contents and mtimes. Checks in fs_smallfiles.py.
source "$(dirname "$0")/lib.sh"
for opts in "" nocompound; do
  label=${opts:-compound}
  rm -rf "$SMB3_TEST_SHARE_DIR/small"
  mount_into M "$opts"
  if "$PYTHON" "$(dirname "$0")/fs_smallfiles.py" "$M" "$SMB3_TEST_SHARE_DIR" "$label" >"$WORK/py" 2>&1; then
    ok "$label: small-file checks: $(grep -c '^ok' "$WORK/py") passed"
  else
    bad "$label: small-file checks:"
  fi
  cat "$WORK/py"
done
# creates put off until the data goes (fs_deferred.py), compounded, one by one, and with lazyexcl
for opts in "" nocompound lazyexcl; do
  label=${opts:-compound}
  rm -rf "$SMB3_TEST_SHARE_DIR/deferred"
  mount_into D "$opts"
  if "$PYTHON" "$(dirname "$0")/fs_deferred.py" "$D" "$SMB3_TEST_SHARE_DIR" "$label" >"$WORK/py" 2>&1; then
    ok "$label: put-off creates: $(grep -c '^ok' "$WORK/py") passed"
  else
    bad "$label: put-off creates:"
  fi
  cat "$WORK/py"
done
# tar onto the mount and back: the same names, bytes and mtimes as the source
mkdir -p "$WORK/src/t/d1" "$WORK/src/t/d2"
for i in $(seq 1 30); do head -c $((i * 97)) /dev/urandom >"$WORK/src/t/d$((i % 2 + 1))/f$i"; touch -d "@$((1400000000 + i))" "$WORK/src/t/d$((i % 2 + 1))/f$i"; done
tar cf "$WORK/t.tar" -C "$WORK/src" t
mount_into T
tar xf "$WORK/t.tar" --no-same-owner -C "$T"
listing() { (cd "$1" && find t -type f -printf '%p %s %T@\n' | sort); }
expect "tar xf: names, sizes and mtimes on the server" "$(listing "$SMB3_TEST_SHARE_DIR")" "$(listing "$WORK/src")"
check "tar xf: contents on the server" diff -r "$WORK/src/t" "$SMB3_TEST_SHARE_DIR/t"
expect "tar cf through the mount reads the same bytes" "$(tar cf - -C "$T" t | tar tvf - | awk '{print $3, $6}' | sort)" \
  "$(tar cf - -C "$WORK/src" t | tar tvf - | awk '{print $3, $6}' | sort)"
finish
