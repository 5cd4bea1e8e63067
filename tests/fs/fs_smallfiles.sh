#!/usr/bin/env bash
# Small files: times set while the data is still gathered go to the server with it (one round
# trip at close: WRITE + SET_INFO), and a small file's data comes with its open (CREATE + READ);
# both checked on the server's disk, with a second client's change in between, compounded and
# with nocompound; creates put off until the data goes (fs_deferred.py); and a tar round trip keeps
# contents and mtimes. Checks in fs_smallfiles.py.
source "$(dirname "$0")/lib.sh"
# run_py SCRIPT SHARE_SUBDIR WHAT OPTS...: the Python checks on a fresh mount per option set
run_py() {
  local script=$1 sub=$2 what=$3 opts label
  shift 3
  for opts in "$@"; do
    label=${opts:-compound}
    rm -rf "${SMB3_TEST_SHARE_DIR:?}/$sub"
    mount_into M "$opts"
    if PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$(dirname "$0")/$script" "$M" "$SMB3_TEST_SHARE_DIR" "$label" >"$WORK/py" 2>&1; then
      ok "$label: $what: $(grep -c '^ok' "$WORK/py") passed"
    else
      bad "$label: $what:"
    fi
    cat "$WORK/py"
  done
}
run_py fs_smallfiles.py small "small-file checks" "" nocompound
# creates put off until the data goes (fs_deferred.py), compounded, one by one, and with lazyexcl
run_py fs_deferred.py deferred "put-off creates" "" nocompound lazyexcl
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
# Removals while batches of CLOSEs are answered: the I/O thread gives back an answered batch's handles
# (the last reference to each) while an unlink on a FUSE worker looks for its file's CLOSE on its way
# (closeq_take). A daemon whose I/O thread pauses after giving back each batch's handles (a test hook,
# SMB3FS_TEST_CLOSE_DELAY_US) reads 60 files (their CLOSEs go in batches a moment later) and removes
# 60 others meanwhile; under ASan a read of a handle already given back kills it (closeq_take read the
# handles of every batch still listed as on its way, which batch_done gave back before unlisting it).
SMB3FS_TEST_CLOSE_DELAY_US=3000 mount_into R
mkdir "$R/rm" && for i in $(seq 60); do echo "$i" >"$R/rm/f$i" && echo "$i" >"$R/rm/g$i"; done
check "60 files read while 60 others are removed" "$PYTHON" -c '
import os, sys, threading
d = sys.argv[1]
def rd():
    for i in range(1, 61):
        with open("%s/f%d" % (d, i), "rb") as f:
            f.read()
t = threading.Thread(target=rd)
t.start()
for i in range(1, 61):
    os.unlink("%s/g%d" % (d, i))
t.join()' "$R/rm"
expect "... the 60 read are left on the server, the others gone" "$(ls "$SMB3_TEST_SHARE_DIR/rm" | grep -c '^f')/$(ls "$SMB3_TEST_SHARE_DIR/rm" | grep -c '^g')" "60/0"
expect "... and the daemon serves on" "$(cat "$R/rm/f60")" "60"
finish
