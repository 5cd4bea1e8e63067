#!/usr/bin/env bash
# Secrets: a password on smb3's command line is not in /proc/PID/cmdline (what ps shows every local
# user) while a long transfer runs; a process holding a password is not dumpable (its /proc files
# then belong to root, so another process of the same user cannot ptrace it or read its memory);
# a credentials file readable by group or others gets a one-line warning.
# Needs NETSIM (tools/netsim): a slow link keeps the transfer running long enough to look.
source "$(dirname "$0")/lib.sh"
H=$SMB3_TEST_HOST P=$SMB3_TEST_PORT S=$SMB3_TEST_SHARE
PW=$SMB3_TEST_PASS
[ -n "${NETSIM:-}" ] || { bad "NETSIM not set"; finish; exit 1; }
head -c 8M /dev/urandom >"$SMB3_TEST_SHARE_DIR/big"
chmod 644 "$SMB3_TEST_SHARE_DIR/big"
"$NETSIM" --listen 127.0.0.1:0 --to "127.0.0.1:$P" --rate 8mbit --quiet >"$WORK/ns.out" 9>&- &
ns=$!
trap 'kill $ns 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do grep -q listening "$WORK/ns.out" 2>/dev/null && break; sleep 0.1; done
np=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/ns.out" | head -1)
chmod 777 "$WORK"

# watch NAME PID: the password is not in its command line; the process is not dumpable
watch_secret() {
  local name=$1 pid=$2 i args owner uid
  for i in $(seq 100); do # until it is past start-up (the scrub is the first thing main does)
    [ -s "$WORK/dl.part" ] || ls "$WORK"/.dl.* >/dev/null 2>&1 && break
    sleep 0.05
  done
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
  [ -n "$args" ] || { bad "$name: process gone before it could be looked at"; return; }
  case $args in *smb3*get*) ;; *) bad "$name: pid $pid is not smb3 get: $args"; return ;; esac
  if grep -qF -- "$PW" <<<"$args"; then bad "$name: password in /proc/$pid/cmdline: $args"
  else ok "$name: /proc/PID/cmdline is '$args'"; fi
  uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
  owner=$(stat -c %u "/proc/$pid/status")
  # a dumpable process's /proc files belong to its own uid; a non-dumpable one's to root
  if [ "$uid" != 0 ] && [ "$owner" = 0 ]; then ok "$name: not dumpable (uid $uid, /proc/PID owned by root)"
  else bad "$name: dumpable (uid $uid, /proc/PID/status owned by $owner)"; fi
}

# setpriv execs smb3: $! is smb3's own pid (a shell function would put a subshell there)
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)

"${NOBODY[@]}" "$SMB3" get "smb://$SMB3_TEST_USER:$PW@127.0.0.1:$np/$S/big" "$WORK/dl" 9>&- 2>"$WORK/get.err" &
g=$!
watch_secret "get with USER:PASSWORD@ in the URL" "$g"
wait $g && ok "the download finished" || bad "download failed: $(cat "$WORK/get.err")"
cmp -s "$WORK/dl" "$SMB3_TEST_SHARE_DIR/big" && ok "downloaded intact" || bad "download differs"
rm -f "$WORK/dl"

"${NOBODY[@]}" "$SMB3" -o "password=$PW,timeout=60" get "smb://$SMB3_TEST_USER@127.0.0.1:$np/$S/big" "$WORK/dl" 9>&- 2>"$WORK/get.err" &
g=$!
watch_secret "get with -o password=" "$g"
wait $g && ok "the download finished" || bad "download failed: $(cat "$WORK/get.err")"
rm -f "$WORK/dl"

# A credentials file: mode 600 is read silently, 640 and 604 with one warning line; the command works.
printf 'username=%s\npassword=%s\n' "$SMB3_TEST_USER" "$PW" >"$WORK/cred"
chmod 600 "$WORK/cred"
check "-A FILE (mode 600)" "$SMB3" -A "$WORK/cred" ls "smb://$H:$P/$S/"
[ -s "$WORK/err" ] && bad "mode 600: stderr not empty: $(cat "$WORK/err")" || ok "mode 600: no warning"
for mode in 640 604; do
  chmod "$mode" "$WORK/cred"
  check "-A FILE (mode $mode)" "$SMB3" -A "$WORK/cred" ls "smb://$H:$P/$S/"
  if [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "warning: credentials file '$WORK/cred' is readable by group or others" "$WORK/err"
  then ok "mode $mode: $(cat "$WORK/err")"; else bad "mode $mode: expected one warning line, got: $(cat "$WORK/err")"; fi
  check "-o credentials=FILE (mode $mode)" "$SMB3" -o "credentials=$WORK/cred" ls "smb://$H:$P/$S/"
  if [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "readable by group or others" "$WORK/err"
  then ok "credentials= mode $mode: $(cat "$WORK/err")"; else bad "credentials= mode $mode: got: $(cat "$WORK/err")"; fi
done
finish
