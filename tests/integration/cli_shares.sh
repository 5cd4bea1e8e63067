#!/usr/bin/env bash
# smb3 ls smb://HOST:PORT/ lists the server's shares (srvsvc NetrShareEnum over IPC$): the same
# shares, types and comments as smbclient -L of the same server, hidden ones ($) only with -a,
# exact --stats counts for the requests it makes, one-line errors for a bad host or port.
# With EXPECT_MANY=N the server also has N shares from shares_many.conf: the answer then spans
# several DCE/RPC fragments and pipe READs, and the list must still match smbclient's.
source "$(dirname "$0")/lib.sh"
H=$SMB3_TEST_HOST P=$SMB3_TEST_PORT
SRV="smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@$H:$P"

# smbclient -L -g prints "Type|Name|Comment" lines; ours is "Name Type Comment" in columns whose
# widths the header gives. Both become sorted "Type|Name|Comment" lines.
smbclient -L "$H" -p "$P" -U "$SMB3_TEST_USER%$SMB3_TEST_PASS" -g 2>/dev/null |
  grep -E '^(Disk|IPC|Printer|Device)\|' | sort >"$WORK/smbclient.all"
[ -s "$WORK/smbclient.all" ] || { echo "smbclient -L listed nothing"; exit 77; }
grep -v '^[^|]*|[^|]*\$|' "$WORK/smbclient.all" >"$WORK/smbclient.visible"
to_g() {
  python3 -c '
import sys
lines = sys.stdin.read().splitlines()
assert lines[0].startswith("Sharename ") and set(lines[1]) <= set("- "), lines[:2]
t = lines[0].index("Type"); c = lines[0].index("Comment")
out = []
for l in lines[2:]:
    out.append("%s|%s|%s" % (l[t:c].strip(), l[:t].rstrip(), l[c:] if len(l) > c else ""))
print("\n".join(sorted(out)))'
}

check "ls smb://HOST:PORT/" $SMB3 ls "$SRV/"
to_g <"$WORK/out" >"$WORK/smb3.visible"
if diff -u "$WORK/smbclient.visible" "$WORK/smb3.visible" >"$WORK/diff"; then
  ok "the same shares, types and comments as smbclient -L (hidden ones left out)"
else bad "ls differs from smbclient -L: $(cat "$WORK/diff")"; fi
for s in "$SMB3_TEST_SHARE" "$SMB3_TEST_GUEST_SHARE" "$SMB3_TEST_RO_SHARE"; do
  grep -q "^Disk|$s|" "$WORK/smb3.visible" && ok "lists $s" || bad "does not list $s: $(cat "$WORK/out")"
done
grep -q "^Disk|$SMB3_TEST_SHARE|the test share, for smb3 ls\$" "$WORK/smb3.visible" &&
  ok "with its comment" || bad "the test share's comment is missing: $(cat "$WORK/out")"
grep -q 'IPC\$' "$WORK/out" && bad "IPC\$ listed without -a" || ok "no IPC\$ without -a"

check "ls -a smb://HOST:PORT" $SMB3 ls -a "$SRV"
to_g <"$WORK/out" >"$WORK/smb3.all"
if diff -u "$WORK/smbclient.all" "$WORK/smb3.all" >"$WORK/diff"; then ok "-a: the same list as smbclient -L"
else bad "ls -a differs from smbclient -L: $(cat "$WORK/diff")"; fi
grep -q '^IPC|IPC\$|IPC Service' "$WORK/smb3.all" && ok "-a lists IPC\$ as IPC" || bad "-a: no IPC\$: $(cat "$WORK/out")"
check "ls --all" $SMB3 ls --all "$SRV/"
grep -q 'IPC\$' "$WORK/out" && ok "--all lists IPC\$" || bad "--all: no IPC\$"
check "ls -a as guest (no user)" $SMB3 ls -a "smb://$H:$P/"
grep -q "$SMB3_TEST_GUEST_SHARE" "$WORK/out" && ok "guest session lists shares" || bad "guest: $(cat "$WORK/out")"
check "a share URL still lists the share's root" $SMB3 ls "$SRV/$SMB3_TEST_SHARE/"
grep -q 'Sharename' "$WORK/out" && bad "smb3 ls of a share listed shares" || ok "share root is a directory listing"

# --stats: what the listing sent, counted exactly. 3.1.1 needs no VALIDATE_NEGOTIATE_INFO.
# NEGOTIATE, SESSION_SETUP x2, TREE_CONNECT IPC$, CREATE srvsvc + IOCTL bind (one compound),
# IOCTL NetrShareEnum, READs for the rest of a long answer, CLOSE. (The goodbye TREE_DISCONNECT
# and LOGOFF come after the counters are printed.)
stats_check() {
  local name=$1 compound=$2; shift 2
  if ! $SMB3 --stats "$@" >"$WORK/out" 2>"$WORK/err"; then bad "$name: $(cat "$WORK/err")"; return; fi
  python3 - "$WORK/err" "$compound" <<'PY' && ok "$name: $(tail -1 "$WORK/err" | head -c 160)" || bad "$name: $(cat "$WORK/err")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
compound = sys.argv[2] == "1"
c = s["commands"]
reads = c["read"]
want = {"negotiate": 1, "session_setup": 2, "tree_connect": 1, "create": 1, "ioctl": 2, "close": 1,
        "tree_disconnect": 0, "query_directory": 0, "query_info": 0, "write": 0}
bad = {k: (c[k], v) for k, v in want.items() if c[k] != v}
if bad: sys.exit("commands %s" % bad)
if s["requests"] != 8 + reads: sys.exit("requests %d, want %d" % (s["requests"], 8 + reads))
rt = s["requests"] - (1 if compound else 0)
if s["round_trips"] != rt: sys.exit("round_trips %d, want %d" % (s["round_trips"], rt))
if s["reads"] != reads: sys.exit("reads %d, READ commands %d" % (s["reads"], reads))
PY
}
stats_check "--stats counts (compound)" 1 ls -a "$SRV/"
reads_seen=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["commands"]["read"])' "$WORK/err")
stats_check "--stats counts (nocompound)" 0 -o nocompound ls -a "$SRV/"
stats_check "--stats counts (SMB 2.1)" 1 -o vers=2.1 ls "$SRV/"

if [ -n "${EXPECT_MANY:-}" ]; then
  n=$(grep -c '^Disk|many[0-9]*|share number' "$WORK/smb3.all")
  [ "$n" -eq "$EXPECT_MANY" ] && ok "all $EXPECT_MANY extra shares listed" || bad "$n of $EXPECT_MANY extra shares"
  [ "$reads_seen" -ge 1 ] && ok "the long answer took $reads_seen pipe READs after the IOCTL" ||
    bad "no READ for a long answer (the test no longer covers it)"
else
  [ "$reads_seen" -eq 0 ] && ok "a short answer fits the IOCTL: no READ" || bad "$reads_seen READs for a short answer"
fi

# Errors: one line, non-zero exit.
freeport=$(( (P + 7919) % 40000 + 20000 ))
check_fails "refused port" "cannot connect|refused" $SMB3 ls "smb://u:p@127.0.0.1:$freeport/"
check_fails "unknown host" "cannot connect|resolve|name" $SMB3 -o connect_timeout=5 ls "smb://nosuchhost.invalid/"
check_fails "wrong password" "logon failure" $SMB3 ls "smb://$SMB3_TEST_USER:wrong@$H:$P/"
check_fails "unknown option of ls" "unknown option" $SMB3 ls --nosuch "$SRV/"
finish
