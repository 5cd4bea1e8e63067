#!/usr/bin/env bash
# Mounting: failures are reported before daemonizing (cause on stderr, non-zero exit, nothing
# mounted, no process left); credentials= and PASSWD; unknown options refused; fstab noise
# ignored; uid/gid/file_mode/dir_mode decide what another user may do (root mounts are visible
# to every user); ro; the mount(8) helper convention and what `make install` puts in place.
source "$(dirname "$0")/lib.sh"
D=$SMB3_TEST_SHARE_DIR
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
# mount_fails NAME PATTERN OPTIONS [SOURCE]
mount_fails() {
  local name=$1 pat=$2 opts=$3 src=${4:-$SRC} m rc=0
  m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX)
  MOUNTS+=("$m")
  timeout 120 "$SMB3FS" "$src" "$m" -o "$opts" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [ "$rc" -eq 0 ]; then bad "$name: mount succeeded"
  elif [ "$rc" -eq 124 ]; then bad "$name: hung"
  elif ! grep -qiE "$pat" "$WORK/err"; then bad "$name: stderr '$(cat "$WORK/err")' does not match /$pat/"
  elif grep -q " $m " /proc/mounts; then bad "$name: mounted anyway"
  elif [ -n "$(daemon_pids "$m")" ]; then bad "$name: a daemon is left"
  else ok "$name: exit $rc: $(head -1 "$WORK/err")"; fi
}
mount_fails "wrong password" "logon" "port=$SMB3_TEST_PORT,username=$SMB3_TEST_USER,password=wrong"
mount_fails "connection refused" "connect|refused" "port=1,username=$SMB3_TEST_USER,password=x"
mount_fails "no such share" "share|network name|not found" "$BASEOPTS" "//$SMB3_TEST_HOST/nosuchshare"
mount_fails "unknown option" "unknown option 'bogus'" "$BASEOPTS,bogus=1"
mount_fails "bad option value" "bad value" "$BASEOPTS,cache=sometimes"
mount_fails "not a directory" "directory" "$BASEOPTS" "$SRC/plainfile" 2>/dev/null
: >"$D/plainfile"

# credentials file and PASSWD
printf 'username=%s\npassword=%s\n' "$SMB3_TEST_USER" "$SMB3_TEST_PASS" >"$WORK/cred"
m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX); MOUNTS+=("$m")
check "credentials=FILE" "$SMB3FS" "$SRC" "$m" -o "port=$SMB3_TEST_PORT,credentials=$WORK/cred"
check "mounted (credentials)" ls "$m"
fs_umount "$m"
m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX); MOUNTS+=("$m")
check "PASSWD from the environment" env PASSWD="$SMB3_TEST_PASS" "$SMB3FS" "$SRC" "$m" -o "port=$SMB3_TEST_PORT,username=$SMB3_TEST_USER"
fs_umount "$m"
# a password on the command line (in -o and in the source) is not in the daemon's command line,
# which ps shows to every local user for the life of the mount
secret_cmdline() { # NAME MOUNTPOINT
  local pid
  pid=$(daemon_pids "$2")
  if [ -z "$pid" ]; then bad "$1: no daemon found"; return; fi
  if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$SMB3_TEST_PASS"; then
    bad "$1: the password is in /proc/$pid/cmdline: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  else ok "$1: /proc/PID/cmdline is '$(tr '\0' ' ' <"/proc/$pid/cmdline" | tr -s ' ')'"; fi
}
mount_into M
secret_cmdline "password= hidden from ps" "$M"
check "mounted (password= on the command line)" ls "$M"
fs_umount "$M"
m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX); MOUNTS+=("$m")
check "USER:PASSWORD@ in the source" "$SMB3FS" "//$SMB3_TEST_USER:$SMB3_TEST_PASS@$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$m" -o "port=$SMB3_TEST_PORT"
secret_cmdline "source's password hidden from ps" "$m"
check "mounted (password in the source)" ls "$m"
fs_umount "$m"
# The daemon holding a password is not dumpable: started by an unprivileged user (nobody; /dev/fuse
# is not needed before the connection is made) against a server that accepts and never answers,
# it waits in the connection with the password in memory: its /proc files must then belong to
# root, not to nobody (they belong to the process's own uid while it is dumpable).
"$PYTHON" - "$WORK/silent.port" 9>&- <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
conns = []
s.settimeout(1)
end = time.time() + 30
while time.time() < end:
    try: conns.append(s.accept()[0])
    except socket.timeout: pass
PY
silent=$!
for _ in $(seq 50); do [ -s "$WORK/silent.port" ] && break; sleep 0.1; done
m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX); MOUNTS+=("$m"); chown 65534 "$m"
$AS_NOBODY -- "$SMB3FS" "//127.0.0.1/share" "$m" -o "port=$(cat "$WORK/silent.port"),username=u,password=$SMB3_TEST_PASS,timeout=20" 9>&- >/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do [ -n "$(daemon_pids "$m")" ] && ss -tn 2>/dev/null | grep -q ":$(cat "$WORK/silent.port") " && break; sleep 0.1; done
for pid in $(daemon_pids "$m"); do
  uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  owner=$(stat -c %u "/proc/$pid/status" 2>/dev/null)
  if [ "$uid" = 65534 ] && [ "$owner" = 0 ]; then ok "daemon $pid holding a password is not dumpable (uid $uid, /proc/PID owned by root)"
  else bad "daemon $pid: uid '$uid', /proc/PID/status owned by '$owner' (dumpable?)"; fi
done
[ -n "$(daemon_pids "$m")" ] || bad "no daemon found waiting on the silent server"
for pid in $(daemon_pids "$m"); do kill -9 "$pid" 2>/dev/null; done
wait "$holder" 2>/dev/null
kill "$silent" 2>/dev/null; wait "$silent" 2>/dev/null
rmdir "$m" 2>/dev/null
mount_into M "_netdev,nofail,noauto,x-systemd.automount,defaults,noatime,nosuid,nodev"
check "fstab options accepted" ls "$M"
fs_umount "$M"
mount_into M "$BASEOPTS,vers=3.1.1,sign,nocompound,echo_interval=30,actimeo=0"
check "vers/sign/nocompound/echo_interval/actimeo" ls "$M"
fs_umount "$M"
mount_into M "seal"
echo sealed >"$M/sealed"
expect "seal" "$(cat "$D/sealed")" sealed
fs_umount "$M"

# root mounts: every user sees the share; uid/gid/modes decide
echo secret >"$D/owned"; chown "$SMB3_TEST_USER:" "$D/owned"
mount_into M
expect "root mount: allow_other" "$(grep " $M " /proc/mounts | grep -c allow_other)" 1
expect "default owner" "$(stat -c '%u %g %a' "$M/owned")" "0 0 644"
expect "default dir mode" "$(stat -c '%a' "$M")" 755
expect "another user may read (0644)" "$($AS_NOBODY cat "$M/owned" 2>&1)" "secret"
check_fails "another user may not write (0644, owner root)" $AS_NOBODY sh -c "echo x >>'$M/owned'"
check_fails "another user may not create (0755 dir)" $AS_NOBODY touch "$M/nobody-file"
fs_umount "$M"
mount_into M "uid=65534,gid=65534,file_mode=0600,dir_mode=0700"
expect "uid/gid/file_mode" "$(stat -c '%u %g %a' "$M/owned")" "65534 65534 600"
expect "dir_mode" "$(stat -c '%a' "$M")" 700
check "the owner may write" $AS_NOBODY sh -c "echo more >>'$M/owned'"
check "the owner may create" $AS_NOBODY sh -c "echo new >'$M/by-nobody'"
expect "written by the owner" "$(cat "$D/by-nobody")" new
fs_umount "$M"
mount_into M "file_mode=0600,dir_mode=0700"
check_fails "others may not read (0600)" $AS_NOBODY cat "$M/owned"
fs_umount "$M"

# ro
mount_into M "ro"
expect "ro: reads" "$(head -1 "$M/owned")" secret
check_fails "ro: writes refused" sh -c "echo x >'$M/ro-file'"
expect "ro: mount flag" "$(grep " $M " /proc/mounts | awk '{print $4}' | cut -d, -f1)" ro
fs_umount "$M"
# ro then rw: the last one counts, for the mount flag as for smb3fs itself
mount_into M "ro,rw"
check "ro,rw: writes" sh -c "echo rw >'$M/rw-file'"
expect "ro,rw: written" "$(cat "$D/rw-file")" rw
expect "ro,rw: mount flag" "$(grep " $M " /proc/mounts | awk '{print $4}' | cut -d, -f1)" rw
fs_umount "$M"

# SMB3FS_STDERR: the daemon in the background says there why it ended (here: SIGTERM)
: >"$WORK/term.log"
m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX); MOUNTS+=("$m")
SMB3FS_STDERR=$WORK/term.log "$SMB3FS" "$SRC" "$m" -o "$BASEOPTS" || bad "mount with SMB3FS_STDERR"
pid=$(daemon_pids "$m")
kill -TERM $pid
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then bad "SIGTERM: the daemon is still there after 10 s"
elif grep -q "stopped by signal 15" "$WORK/term.log"; then ok "SIGTERM: the daemon says so in SMB3FS_STDERR: $(cat "$WORK/term.log")"
else bad "SIGTERM: SMB3FS_STDERR has '$(cat "$WORK/term.log")', no 'stopped by signal 15'"; fi
fs_umount "$m"

# the mount(8) helper convention: mount.fuse.smb3fs SOURCE DIR [-n] [-s] -o rw,OPTIONS
ln -s "$SMB3FS" "$WORK/mount.fuse.smb3fs"
m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX); MOUNTS+=("$m")
check "mount helper invocation" "$WORK/mount.fuse.smb3fs" "$SRC" "$m" -n -s -o "rw,$BASEOPTS"
expect "helper mount is fuse.smb3fs" "$(awk -v m="$m" '$2 == m {print $3}' /proc/mounts)" fuse.smb3fs
fs_umount "$m"
# what `make install` installs (into a DESTDIR)
if [ -n "${BUILD_DIR:-}" ]; then
  # only fs/'s install rules (the rest of the tree may not be built for this test)
  check "install rules of fs/" env DESTDIR="$WORK/dest" cmake -DCMAKE_INSTALL_PREFIX=/usr/local \
    -P "$BUILD_DIR/fs/cmake_install.cmake"
  [ -x "$WORK/dest/usr/local/bin/smb3fs" ] && ok "installs bin/smb3fs" || bad "no bin/smb3fs"
  expect "installs the mount(8) helper" "$(readlink "$WORK/dest/sbin/mount.fuse.smb3fs")" /usr/local/bin/smb3fs
fi
finish
