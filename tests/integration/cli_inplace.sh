#!/usr/bin/env bash
# smb3 put --inplace against a real smbd: the content is right whether the new file is longer,
# shorter or as long as the old one (and from a pipe, whose length is not known in advance); the
# file keeps its identity (same inode, a hard link made on the server sees the new bytes), where the
# default put (temporary name + rename) makes a new file and leaves the link on the old bytes; an
# upload cut off mid-way (the smbd serving it killed) exits 1 with one line saying the file is
# partly written. Run under with-smbd; NETSIM slows the upload down enough to cut it.
source "$(dirname "$0")/lib.sh"
U=$SMB3_TEST_URL
D=$SMB3_TEST_SHARE_DIR
P=$SMB3_TEST_PORT
S=$SMB3_TEST_SHARE

# check_put NAME WANT_RC COMMAND...: COMMAND exits WANT_RC; when WANT_RC is not 0, with exactly one
# line on stderr (left in $WORK/err)
check_put() {
  local name=$1 want=$2 rc=0; shift 2
  timeout 120 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$name: exit $rc, want $want: $(head -c 400 "$WORK/err")"; return 1; fi
  if [ "$want" -ne 0 ] && [ "$(wc -l <"$WORK/err")" -ne 1 ]; then bad "$name: want one error line: $(cat "$WORK/err")"; return 1; fi
  return 0
}
ino() { stat -c %i "$1"; }

head -c 3000000 /dev/urandom >"$WORK/old"
head -c 5000000 /dev/urandom >"$WORK/longer"
head -c 100000 /dev/urandom >"$WORK/shorter"
head -c 100000 /dev/urandom >"$WORK/same"
head -c 77777 /dev/urandom >"$WORK/piped"
: >"$WORK/empty"

check "old file put (default)" $SMB3 -q put "$WORK/old" "$U/f"
ln "$D/f" "$D/f.link"
i0=$(ino "$D/f")
for new in longer shorter same empty; do
  if check_put "--inplace $new" 0 $SMB3 -q put --inplace "$WORK/$new" "$U/f"; then
    if same_file "$WORK/$new" "$D/f"; then ok "--inplace $new: content"; else bad "--inplace $new: content differs ($(stat -c %s "$D/f") bytes)"; fi
    if same_file "$WORK/$new" "$D/f.link"; then ok "--inplace $new: the hard link sees the new bytes"; else bad "--inplace $new: the hard link does not see them"; fi
    [ "$(ino "$D/f")" = "$i0" ] && ok "--inplace $new: same inode" || bad "--inplace $new: inode $i0 became $(ino "$D/f")"
  fi
done
# a pipe (length unknown before the end) over a longer file: cut to what was written
check "old file again" $SMB3 -q put --inplace "$WORK/old" "$U/f"
if cat "$WORK/piped" | check_put "--inplace from a pipe" 0 $SMB3 -q put --inplace /dev/stdin "$U/f"; then
  if same_file "$WORK/piped" "$D/f"; then ok "--inplace from a pipe: content, cut to 77777 bytes"; else bad "--inplace from a pipe: content differs ($(stat -c %s "$D/f") bytes)"; fi
  [ "$(ino "$D/f")" = "$i0" ] && same_file "$WORK/piped" "$D/f.link" && ok "--inplace from a pipe: same file" || bad "--inplace from a pipe: not the same file"
fi
# the option may also follow the operands; the file's id seen by the client stays the same
id0=$($SMB3 stat "$U/f" | sed -n 's/^file id: //p')
check "--inplace after the operands" $SMB3 -q put "$WORK/longer" "$U/f" --inplace
same_file "$WORK/longer" "$D/f" && ok "--inplace after the operands: content" || bad "--inplace after the operands: content differs"
id1=$($SMB3 stat "$U/f" | sed -n 's/^file id: //p')
[ -n "$id0" ] && [ "$id0" = "$id1" ] && ok "smb3 stat: file id $id0 unchanged" || bad "smb3 stat: file id '$id0' became '$id1'"
# a missing target is created; a directory URL receives the file under its own name
if check_put "--inplace to a new name" 0 $SMB3 -q put --inplace "$WORK/shorter" "$U/new"; then
  same_file "$WORK/shorter" "$D/new" && ok "--inplace to a new name: created" || bad "--inplace to a new name: content differs"
fi
mkdir "$D/dir" && chown "$SMB3_TEST_USER:" "$D/dir"
if check_put "--inplace into a directory" 0 $SMB3 -q put --inplace "$WORK/same" "$U/dir/"; then
  same_file "$WORK/same" "$D/dir/same" && ok "--inplace into a directory: dir/same" || bad "--inplace into a directory: no dir/same"
fi
if ls -a "$D" "$D/dir" | grep -q smb3-; then bad "--inplace left a temporary file"; else ok "--inplace: no temporary file"; fi

# the default put makes a new file: the link keeps the old bytes, the name gets a new inode
check "--inplace before the default put" $SMB3 -q put --inplace "$WORK/old" "$U/f"
if check_put "default put over a linked file" 0 $SMB3 -q put "$WORK/shorter" "$U/f"; then
  same_file "$WORK/shorter" "$D/f" && ok "default put: content" || bad "default put: content differs"
  same_file "$WORK/old" "$D/f.link" && ok "default put: the hard link keeps the old bytes" || bad "default put: the hard link changed"
  [ "$(ino "$D/f")" != "$i0" ] && [ "$(stat -c %h "$D/f")" = 1 ] && ok "default put: a new file (inode $(ino "$D/f"), 1 link)" ||
    bad "default put: inode $(ino "$D/f") links $(stat -c %h "$D/f") (old inode $i0)"
fi

# usage
check_put "unknown put option" 2 $SMB3 put --frobnicate "$WORK/old" "$U/f" &&
  { grep -q "^smb3: put: unknown option '--frobnicate'" "$WORK/err" && ok "unknown put option: $(cat "$WORK/err")" || bad "unknown put option: $(cat "$WORK/err")"; }
check_put "--inplace is put's only" 2 $SMB3 get --inplace "$U/f" "$WORK/x" &&
  { grep -q "^smb3: get: unknown option '--inplace'" "$WORK/err" && ok "get --inplace: $(cat "$WORK/err")" || bad "get --inplace: $(cat "$WORK/err")"; }
$SMB3 help put >"$WORK/out" && grep -q "put LOCAL URL \[--inplace\]" "$WORK/out" && grep -q "partly" "$WORK/out" &&
  ok "smb3 help put describes --inplace" || bad "smb3 help put: $(head -3 "$WORK/out")"
# nothing is written when the file cannot be opened for writing
check_put "--inplace to a read-only share" 1 $SMB3 put --inplace "$WORK/old" "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@127.0.0.1:$P/$SMB3_TEST_RO_SHARE/hello.txt" &&
  { grep -q "^smb3: put --inplace: cannot open or create 'hello.txt'" "$WORK/err" && ! grep -q partly "$WORK/err" &&
    ok "--inplace, no write access: $(cat "$WORK/err")" || bad "--inplace, no write access: $(cat "$WORK/err")"; }

# Cut off mid-way: through netsim at 200 Mbit/s (64 MiB take ~3 s), the smbd child serving the
# upload is killed once the start of the new data is in the file and before all of it is.
if [ -z "${NETSIM:-}" ]; then
  bad "NETSIM not set: cannot cut an upload"
  finish
  exit
fi
"$NETSIM" --listen 127.0.0.1:0 --to "127.0.0.1:$P" --rate 200mbit --quiet >"$WORK/ns.out" &
ns=$!
for _ in $(seq 50); do grep -q listening "$WORK/ns.out" 2>/dev/null && break; sleep 0.1; done
np=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/ns.out" | head -1)
head -c 64M /dev/urandom >"$WORK/up"
head -c 64M /dev/zero >"$WORK/zeros"
check "64 MiB of zeros on the share" $SMB3 -q put "$WORK/zeros" "$U/up"
# kill_server: waits (at most ~20 s) for the first 64 KiB of the new data in the file, checks that
# the file does not hold all of it yet and kills the smbd holding the connection; exits 0 only if
# the kill fell mid-upload. What it saw goes to $WORK/kill.at.
kill_server() {
  local pids="" _
  for _ in $(seq 2000); do
    pids=$(ss -Htnp state established "( sport = :$P )" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
    [ -n "$pids" ] && cmp -s -n 65536 "$WORK/up" "$D/up" && break
    pids=""
    sleep 0.01
  done
  [ -n "$pids" ] || { echo "the upload did not start" >"$WORK/kill.at"; return 1; }
  if same_file "$WORK/up" "$D/up"; then echo "all the data was there already" >"$WORK/kill.at"; return 1; fi
  kill -9 $pids
  echo "killed smbd $pids with the upload under way" >"$WORK/kill.at"
}
kill_server & ks=$!
check_put "--inplace cut off" 1 $SMB3 -q put --inplace "$WORK/up" "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@127.0.0.1:$np/$S/up" &&
  { grep -qE "^smb3: put --inplace: .*(connection|lost|closed).*; 'up' on the share is partly written$" "$WORK/err" &&
    ok "--inplace cut off: $(cat "$WORK/err")" || bad "--inplace cut off: message: $(cat "$WORK/err")"; }
if wait $ks; then ok "--inplace cut off: $(cat "$WORK/kill.at")"; else bad "--inplace cut off: $(cat "$WORK/kill.at")"; fi
# what is left: the start of the new data, not all of it (and no temporary file)
cmp -s -n 65536 "$WORK/up" "$D/up" && ! same_file "$WORK/up" "$D/up" && ok "--inplace cut off: the file is partly written" ||
  bad "--inplace cut off: the file is not partly written"
if ls -a "$D" | grep -q smb3-; then bad "--inplace cut off: a temporary file"; else ok "--inplace cut off: no temporary file"; fi
kill $ns 2>/dev/null
wait $ns 2>/dev/null
finish
