#!/usr/bin/env bash
# Kerberos against a throwaway Samba AD DC (tests/harness/with-dc), many cases on one DC (its
# provisioning costs ~10 s): smb3 -k ls/get/put, the default choosing Kerberos when a ticket is
# there, signing (the DC requires it) and encryption (seal, and a share that requires it), a
# sec=krb5 mount read + write + lease break and on the encrypted share, a keytab mount and CLI logon, and each
# error case's one line: no ticket, destroyed and expired tickets, unknown service principal,
# wrong realm, KDC unreachable, principal not in the keytab.
# With NTLM_DISABLED=1 (the DC runs with "ntlm auth = disabled"): Kerberos still works, NTLM is
# refused with a message that says so.
# The DC's name smb3dc.smb3test.lan resolves nowhere: every connection is given ip=.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../harness/proc.sh"
SMB3FS=${SMB3FS:-smb3fs}
PYTHON=${PYTHON:-python3}
O="ip=$SMB3_TEST_IP"
URL=$SMB3_TEST_URL
ENC="smb://$SMB3_TEST_HOST/$SMB3_TEST_ENC_SHARE"
D=$SMB3_TEST_SHARE_DIR
MOUNTS=()
cleanup() {
  local m rc=$?
  for m in "${MOUNTS[@]}"; do
    fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    for _ in $(seq 100); do [ -z "$(pgrep -f -- "smb3fs .*$m( |\$)")" ] && break; sleep 0.1; done
    pkill -KILL -f -- "smb3fs .*$m( |\$)" 2>/dev/null || true
    rmdir "$m" 2>/dev/null || true
  done
  san_reports "$WORK/san" || rc=1 # the daemons' (their standard error is /dev/null)
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT
kinit_user() { echo "$SMB3_TEST_PASS" | kinit "$@" "$SMB3_TEST_PRINCIPAL" >/dev/null; }
# mount_krb VAR SOURCE OPTIONS: mount on a new directory (path in VAR; no $(): MOUNTS must keep it)
mount_krb() {
  local var=$1 src=$2 opts=$3 m
  m=$(mktemp -d /tmp/smb3fs-mnt.XXXXXX)
  MOUNTS+=("$m")
  mkdir -p "$WORK/san"
  if (san_to_files "$WORK/san" && exec "$SMB3FS" "$src" "$m" -o "$opts") 2>"$WORK/mount.err"; then
    printf -v "$var" '%s' "$m"
    return 0
  fi
  bad "mount $src -o $opts: $(cat "$WORK/mount.err")"
  printf -v "$var" '%s' ""
  return 1
}
umount_krb() { fusermount3 -u "$1" && rmdir "$1"; }

# ---- no ticket: the cache is empty -------------------------------------------------------
check_fails "no ticket (empty cache): one line that says kinit" "no Kerberos ticket for SMB3TEST.LAN: run kinit" \
  "$SMB3" -k -o "$O" ls "$URL/"

kinit_user
head -c 300000 /dev/urandom >"$WORK/data"

# ---- CLI -k -----------------------------------------------------------------------------
check "smb3 -k put" "$SMB3" -k -o "$O" put "$WORK/data" "$URL/k.bin"
if cmp -s "$WORK/data" "$D/k.bin"; then ok "put arrived on the server intact"; else bad "put: server copy differs"; fi
check "smb3 -k get" "$SMB3" -k -o "$O" get "$URL/k.bin" "$WORK/back"
if cmp -s "$WORK/data" "$WORK/back"; then ok "get intact"; else bad "get: differs"; fi
check "smb3 -k ls" "$SMB3" -k -o "$O" ls "$URL/"
if grep -q "k.bin" "$WORK/out"; then ok "ls lists k.bin"; else bad "ls: $(cat "$WORK/out")"; fi
check "smb3 -k -o seal get (encrypted session)" "$SMB3" -k -o "$O,seal" get "$URL/k.bin" "$WORK/back2"
if cmp -s "$WORK/data" "$WORK/back2"; then ok "sealed get intact"; else bad "sealed get: differs"; fi
check "smb3 -k put to the share that requires encryption" "$SMB3" -k -o "$O" put "$WORK/data" "$ENC/e.bin"
check "smb3 -k get from it" "$SMB3" -k -o "$O" get "$ENC/e.bin" "$WORK/back3"
if cmp -s "$WORK/data" "$WORK/back3"; then ok "encrypted share: intact"; else bad "encrypted share: differs"; fi
for v in 3.1.1 3.0 2.1; do
  check "smb3 -k vers=$v (signed: the DC requires signing)" "$SMB3" -k -o "$O,vers=$v,sign" cat "$URL/k.bin"
done
# No user, no password: NTLM could only be anonymous, which the DC's share refuses; the default
# must pick Kerberos because the cache holds a ticket and the DC offers it.
check "default (no -k) uses the ticket" "$SMB3" -o "$O" ls "$URL/"
check_fails "no ip=: the DC's name resolves nowhere" "resolve|connect|name" "$SMB3" -k ls "$URL/"

# ---- mount sec=krb5 ----------------------------------------------------------------------
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
  M=""
  if mount_krb M "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$O,sec=krb5"; then
    if cmp -s "$WORK/data" "$M/k.bin"; then ok "mount sec=krb5: read"; else bad "mount: read differs"; fi
    cp "$WORK/data" "$M/w.bin" && sync
    if cmp -s "$WORK/data" "$D/w.bin"; then ok "mount sec=krb5: write reached the server"; else bad "mount: write"; fi
    echo appended >>"$M/w.bin"
    if [ "$(tail -c 9 "$D/w.bin")" = "appended" ]; then ok "mount: append"; else bad "mount: append"; fi
    # Lease break on the Kerberos session: the mount holds lb.txt open and in the page cache
    # (read lease), a second client (smb3 -k, its own Kerberos session) writes into it; the
    # server breaks the lease, the mount drops its pages, the open file reads the new bytes.
    printf 'AAAAAAAAAAAAAAAA' >"$WORK/lb.old"; printf 'CCCCCCCCCCCCCCCC' >"$WORK/lb.new"
    check "smb3 -k put lb.txt" "$SMB3" -k -o "$O" put "$WORK/lb.old" "$URL/lb.txt"
    "$PYTHON" - "$M/lb.txt" "$WORK/lb.new" "$SMB3" "$O" "$URL/lb.txt" <<'PY' >"$WORK/py" 2>&1 \
      && ok "mount sec=krb5: lease break, the open file reads the other client's bytes" \
      || bad "mount sec=krb5: lease break: $(cat "$WORK/py")"
import json, os, subprocess, sys, time
path, newfile, smb3, opts, url = sys.argv[1:]
m = os.path.dirname(path)
def counter(k):
    return json.loads(subprocess.run([smb3, "stats", m], capture_output=True, check=True).stdout)[k]
fd = os.open(path, os.O_RDONLY)
assert os.pread(fd, 100, 0) == b"A" * 16
reads = counter("reads")
assert os.pread(fd, 100, 0) == b"A" * 16
assert counter("reads") == reads, "the second read was not served from the page cache"
before = counter("lease_breaks")
p = subprocess.run([smb3, "-k", "-o", opts, "put", "--inplace", newfile, url], capture_output=True, text=True)
assert p.returncode == 0, p.stderr.strip()
while counter("lease_breaks") == before:  # the break need not be acknowledged: wait until it is seen
    time.sleep(0.05)
got = os.pread(fd, 100, 0)
assert got == b"C" * 16, got
os.close(fd)
PY
    check "umount" umount_krb "$M"
  fi
  if mount_krb M "//$SMB3_TEST_HOST/$SMB3_TEST_ENC_SHARE" "$O,sec=krb5"; then
    if cmp -s "$WORK/data" "$M/e.bin"; then ok "mount on the encrypted share: read"; else bad "enc mount: read"; fi
    echo sealed >"$M/s.txt"
    if [ "$(cat "$D/s.txt")" = "sealed" ]; then ok "encrypted mount: write"; else bad "enc mount: write"; fi
    check "umount (enc)" umount_krb "$M"
  fi
else
  bad "no /dev/fuse or fusermount3: the mount cases cannot run"
fi

if [ "${NTLM_DISABLED:-0}" = 1 ]; then
  check_fails "NTLM refused by the DC: says so" "refuses NTLM" \
    "$SMB3" -o "$O,sec=ntlmssp" ls "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$SMB3_TEST_HOST/test/"
else
  check "NTLM still works on this DC (sec=ntlmssp)" \
    "$SMB3" -o "$O,sec=ntlmssp" ls "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$SMB3_TEST_HOST/test/"
fi

# ---- error cases ------------------------------------------------------------------------
check_fails "unknown service principal" "does not know the service principal cifs/nosuch.smb3test.lan" \
  "$SMB3" -k -o "$O" ls "smb://nosuch.smb3test.lan/test/"
# A host that krb5.conf maps to another realm, for which our KDC has no trust.
sed -e 's/^\[realms\]/[realms]\n\tWRONG.LAN = {\n\t\tkdc = 127.0.0.1:9\n\t}/' \
  -e 's/^\[domain_realm\]/[domain_realm]\n\t.wrong.lan = WRONG.LAN/' "$KRB5_CONFIG" >"$WORK/wrong.conf"
check_fails "wrong realm" "wrong realm" env KRB5_CONFIG="$WORK/wrong.conf" \
  "$SMB3" -k -o "$O" ls "smb://smb3dc.wrong.lan/test/"
# A ticket-granting ticket, but no KDC to get the service ticket from.
sed -e "s/kdc = $SMB3_TEST_IP/kdc = 127.0.0.1:9/" "$KRB5_CONFIG" >"$WORK/unreach.conf"
KRB5CCNAME=FILE:$WORK/cc.tgt kinit_user
check_fails "KDC unreachable" "cannot reach a KDC for realm SMB3TEST.LAN" \
  env KRB5CCNAME="FILE:$WORK/cc.tgt" KRB5_CONFIG="$WORK/unreach.conf" "$SMB3" -k -o "$O" ls "$URL/"
# An expired ticket: 3 s of life, then wait (bounded) until klist says it is no longer valid.
KRB5CCNAME=FILE:$WORK/cc.short kinit_user -l 3s
for _ in $(seq 150); do KRB5CCNAME=FILE:$WORK/cc.short klist -s || break; sleep 0.1; done
check_fails "expired ticket" "expired: run kinit" env KRB5CCNAME="FILE:$WORK/cc.short" \
  "$SMB3" -k -o "$O" ls "$URL/"
kdestroy
check_fails "destroyed ticket (kdestroy)" "no Kerberos ticket for SMB3TEST.LAN: run kinit" \
  "$SMB3" -k -o "$O" ls "$URL/"

# ---- cruid=UID: that user's default cache (/tmp/krb5cc_UID), not the caller's -------------
CRUID=$((3999900 + ${SMB3_TEST_IP##*.})) # one per DC: parallel runs must not share the file
CRCC=/tmp/krb5cc_$CRUID
if [ -e "$CRCC" ]; then
  bad "cruid: $CRCC exists already (not ours): cruid cases not run"
elif [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
  trap 'st=$?; rm -f "$CRCC"; (exit $st); cleanup' EXIT # (cleanup exits with the status it sees)
  KRB5CCNAME=FILE:$CRCC kinit_user
  chown "$CRUID" "$CRCC"
  kdestroy 2>/dev/null # the caller's own cache is empty: only cruid's can work
  if mount_krb M "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" "$O,sec=krb5,cruid=$CRUID"; then
    if cmp -s "$WORK/data" "$M/k.bin"; then ok "cruid mount: read with uid $CRUID's ticket"; else bad "cruid: read"; fi
    check "umount (cruid)" umount_krb "$M"
  fi
  if KRB5CCNAME=FILE:$CRCC klist 2>/dev/null | grep -q "cifs/$SMB3_TEST_HOST"; then
    ok "cruid: the service ticket went into uid $CRUID's cache"
  else bad "cruid: no service ticket in $CRCC"; fi
  chown 0 "$CRCC"
  check_fails "cruid: a cache that is not the uid's is refused" "not a file of uid $CRUID" \
    "$SMB3" -o "$O,sec=krb5,cruid=$CRUID" ls "$URL/"
  rm -f "$CRCC"
  check_fails "cruid: no cache for the uid" "cruid=$CRUID: no Kerberos ticket" \
    "$SMB3" -o "$O,sec=krb5,cruid=$CRUID" ls "$URL/"
fi

# ---- keytab (no ticket in any cache) ------------------------------------------------------
check "smb3 with krb5_keytab= and username=" \
  "$SMB3" -o "$O,krb5_keytab=$SMB3_TEST_KEYTAB,username=$SMB3_TEST_PRINCIPAL" cat "$URL/k.bin"
if cmp -s "$WORK/data" "$WORK/out"; then ok "keytab logon: data intact"; else bad "keytab: data"; fi
check_fails "principal not in the keytab" "principal nosuch@SMB3TEST.LAN not found in keytab" \
  "$SMB3" -o "$O,krb5_keytab=$SMB3_TEST_KEYTAB,username=nosuch@SMB3TEST.LAN" ls "$URL/"
check_fails "unreadable keytab" "cannot read keytab" \
  "$SMB3" -o "$O,krb5_keytab=$WORK/nonexistent.keytab,username=$SMB3_TEST_PRINCIPAL" ls "$URL/"
if klist -s 2>/dev/null; then bad "the keytab logon wrote the user's cache"; else ok "the user's cache stayed empty"; fi
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
  if mount_krb M "//$SMB3_TEST_HOST/$SMB3_TEST_SHARE" \
    "$O,sec=krb5,krb5_keytab=$SMB3_TEST_KEYTAB,username=$SMB3_TEST_PRINCIPAL"; then
    if cmp -s "$WORK/data" "$M/k.bin"; then ok "keytab mount: read"; else bad "keytab mount: read"; fi
    echo kt >"$M/kt.txt"
    if [ "$(cat "$D/kt.txt")" = "kt" ]; then ok "keytab mount: write"; else bad "keytab mount: write"; fi
    check "umount (keytab)" umount_krb "$M"
  fi
fi
finish
