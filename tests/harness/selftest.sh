#!/usr/bin/env bash
# selftest.sh: checks tests/harness/with-smbd against the real smbd with smbclient.
#
#   tests/harness/selftest.sh            run every case, print "N passed, N failed"
#   tests/harness/selftest.sh --samba 4.22   the same against Samba 4.22 (with-smbd --samba 4.22),
#                                        plus the SMB3 POSIX extensions share; a missing 4.22
#                                        tree fails (it is not skipped)
#
# Each case runs in its own throwaway server: the script re-invokes itself as
# `with-smbd [options] -- selftest.sh --inner CASE`. Results from all levels are
# appended to one file and counted at the end. Exit status: 0 if all passed, 1 if
# any failed, 77 (ctest SKIP_RETURN_CODE) if the prerequisites are missing.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF=$HERE/$(basename "${BASH_SOURCE[0]}")
WITH_SMBD=$HERE/with-smbd
source "$HERE/proc.sh" # alive PID

# ---------------------------------------------------------------------------
# Result bookkeeping (shared with the inner invocations through the environment).

ok() {
	printf 'PASS: %s\n' "$1"
	echo pass >>"$SELFTEST_RESULTS"
}
ko() {
	printf 'FAIL: %s%s\n' "$1" "${2:+ -- $2}"
	echo fail >>"$SELFTEST_RESULTS"
}
# check NAME COMMAND...: PASS if COMMAND succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else ko "$name"; fi
}

# ---------------------------------------------------------------------------
# Helpers for the inner cases (run under with-smbd).

# smbc SHARE [smbclient args...]: sets $out (stdout+stderr) and $rc. An empty
# client config, so that /etc/samba/smb.conf cannot change the client defaults.
smbc() {
	local share=$1
	shift
	rc=0
	out=$(smbclient -s /dev/null -p "$SMB3_TEST_PORT" "//$SMB3_TEST_HOST/$share" "$@" 2>&1) || rc=$?
}

# expect_ok NAME SHARE ARGS...: smbclient must succeed without an NT_STATUS error.
expect_ok() {
	local name=$1
	shift
	smbc "$@"
	if ((rc == 0)) && [[ $out != *NT_STATUS_* ]]; then ok "$name"; else ko "$name" "rc=$rc: $out"; fi
}
# expect_fail NAME STATUS SHARE ARGS...: smbclient must report STATUS (a substring).
expect_fail() {
	local name=$1 status=$2
	shift 2
	smbc "$@"
	if [[ $out == *"$status"* ]]; then ok "$name"; else ko "$name" "expected $status, rc=$rc: $out"; fi
}

# session_row SHARE ARGS...: hold a session open and print its `smbstatus -b` row:
# PID USER GROUP IP (ADDR) PROTOCOL ENCRYPTION SIGNING
session_row() {
	local share=$1 fifo fd pid row="" i
	shift
	fifo=$scratch/fifo.$RANDOM
	mkfifo "$fifo"
	smbclient -s /dev/null -p "$SMB3_TEST_PORT" "//$SMB3_TEST_HOST/$share" "$@" <"$fifo" >"$fifo.out" 2>&1 &
	pid=$!
	exec {fd}>"$fifo"
	echo ls >&"$fd"
	# query only once the tree connect shows up: during session setup the session
	# row is incomplete (smbclient's own output is block-buffered, no use here)
	for ((i = 0; i < 100; i++)); do
		smbstatus -s "$SMB3_TEST_CONF" -S 2>/dev/null | grep -q "^$share " && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	row=$(smbstatus -s "$SMB3_TEST_CONF" -b 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF >= 8' | head -n 1)
	echo quit >&"$fd"
	exec {fd}>&-
	wait "$pid" || true
	rm -f "$fifo" "$fifo.out"
	printf '%s\n' "$row"
}
# samba_pids: the Samba server processes of this run (by comm, with a file of
# SMB3_TEST_DIR open), as with-smbd finds them
samba_pids() {
	local d comm fd target
	for d in /proc/[0-9]*; do
		{ read -r comm <"$d/comm"; } 2>/dev/null || continue
		case $comm in
		smbd* | samba-dcerpcd | samba-bgqd | rpcd_* | nmbd* | winbindd*) ;;
		*) continue ;;
		esac
		for fd in "$d"/fd/*; do
			target=$(readlink "$fd" 2>/dev/null) || continue
			if [[ $target == "$SMB3_TEST_DIR"/* ]]; then
				echo "${d#/proc/}"
				break
			fi
		done
	done
}

# maps_of_4_22: while a session is open (so that a per-client smbd has done its
# session setup, gensec modules loaded) and after -L (samba-dcerpcd, rpcd_*), no
# Samba process of this run maps a library or module of the system's Samba 4.17
# or a binary outside the tree: the wrappers' LD_LIBRARY_PATH and samba422-dirs.so
# must cover every process, including those smbd and samba-dcerpcd start.
maps_of_4_22() {
	local fifo fd pid p comms="" bad="" i t
	t=$(command -v smbd)
	t=${t%/bin/smbd}
	fifo=$scratch/maps.fifo
	mkfifo "$fifo"
	smbclient -s /dev/null -p "$SMB3_TEST_PORT" "//$SMB3_TEST_HOST/test" "${AUTH[@]}" <"$fifo" >/dev/null 2>&1 &
	pid=$!
	exec {fd}>"$fifo"
	echo ls >&"$fd"
	for ((i = 0; i < 100; i++)); do
		smbstatus -s "$SMB3_TEST_CONF" -S 2>/dev/null | grep -q "^test " && break
		sleep 0.1
	done
	for p in $(samba_pids); do
		comms+=" $(cat "/proc/$p/comm" 2>/dev/null)"
		if grep -qE " /usr/lib/x86_64-linux-gnu/(samba/|lib(talloc|tdb|tevent|ldb|wbclient|smbclient|samba-|smbconf|ndr|dcerpc))" "/proc/$p/maps" 2>/dev/null; then
			bad+=" $p"
		fi
		[[ $(readlink "/proc/$p/exe") == "$t"/* ]] || bad+=" $p(exe)"
	done
	echo quit >&"$fd"
	exec {fd}>&-
	wait "$pid" || true
	rm -f "$fifo"
	echo "4.22 processes:$comms"
	if [[ $comms == *"smbd["* && $comms == *rpcd_* && $comms == *samba-dcerpcd* && -z $bad ]]; then
		ok "4.22: smbd (parent, client), samba-dcerpcd, rpcd_* map nothing of the system's Samba"
	else
		ko "4.22: smbd (parent, client), samba-dcerpcd, rpcd_* map nothing of the system's Samba" "seen:$comms; bad:$bad"
	fi
}

# field N of a session row: 6 protocol, 7 encryption, 8 signing
field() { awk -v n="$1" '{print $n}' <<<"$2"; }

# still_running DIR: any process whose command line mentions DIR, or a Samba
# server process (Samba 4.22 rewrites its children's command lines) with a file
# under DIR open (the log, even once deleted).
still_running() {
	local d p comm fd target
	local -a argv
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[[ $p == "$$" || $p == "$BASHPID" ]] && continue
		{ mapfile -d '' -t argv <"$d/cmdline"; } 2>/dev/null || continue
		[[ " ${argv[*]} " == *"$1"* ]] && return 0
		{ read -r comm <"$d/comm"; } 2>/dev/null || continue
		case $comm in
		smbd* | samba-dcerpcd | samba-bgqd | rpcd_* | nmbd* | winbindd*) ;;
		*) continue ;;
		esac
		for fd in "$d"/fd/*; do
			target=$(readlink "$fd" 2>/dev/null) || continue
			[[ $target == "$1"/* ]] && return 0
		done
	done
	return 1
}

# ---------------------------------------------------------------------------
# Inner cases.

case_basic() {
	local v missing=""
	for v in HOST PORT USER PASS DOMAIN SHARE SHARE_DIR URL GUEST_SHARE GUEST_DIR RO_SHARE RO_DIR \
		SMBD_PID CONF LOG DIR SAMBA SAMBA_VERSION SMBCLIENT; do
		v=SMB3_TEST_$v
		[[ -n ${!v:-} ]] || missing+=" $v"
	done
	if [[ -z $missing ]]; then ok "env: all SMB3_TEST_* exported"; else ko "env: all SMB3_TEST_* exported" "missing:$missing"; fi
	check "env: URL is smb://USER:PASS@HOST:PORT/SHARE" \
		test "$SMB3_TEST_URL" = "smb://$SMB3_TEST_USER:$SMB3_TEST_PASS@127.0.0.1:$SMB3_TEST_PORT/test"
	check "env: HOST=127.0.0.1, SHARE=test, GUEST_SHARE=public, RO_SHARE=ro" \
		test "$SMB3_TEST_HOST/$SMB3_TEST_SHARE/$SMB3_TEST_GUEST_SHARE/$SMB3_TEST_RO_SHARE" = 127.0.0.1/test/public/ro
	check "env: SMBD_PID is a running smbd" grep -qx smbd "/proc/$SMB3_TEST_SMBD_PID/comm"
	check "env: CONF names the running config" grep -q "smb ports = $SMB3_TEST_PORT" "$SMB3_TEST_CONF"
	check "env: port is not 445" test "$SMB3_TEST_PORT" != 445
	check "env: log file exists" test -f "$SMB3_TEST_LOG"
	local smbd_path v
	smbd_path=$(command -v smbd)
	v=$(smbd -V)
	check "env: SAMBA is '$SELFTEST_SAMBA'" test "${SMB3_TEST_SAMBA:-}" = "$SELFTEST_SAMBA"
	check "env: SAMBA_VERSION ($SMB3_TEST_SAMBA_VERSION) is what smbd -V prints" test "Version $SMB3_TEST_SAMBA_VERSION" = "$v"
	check "env: SMBCLIENT prints the same version" test "$("$SMB3_TEST_SMBCLIENT" -V 2>/dev/null)" = "$v"
	if [[ $SELFTEST_SAMBA == 4.22 ]]; then
		check "env: SAMBA_VERSION is 4.22.x" test "${SMB3_TEST_SAMBA_VERSION#4.22.}" != "$SMB3_TEST_SAMBA_VERSION"
		local t=${smbd_path%/bin/smbd}
		check "4.22: the running smbd is the tree's ($t/usr/sbin/smbd)" \
			test "$(readlink "/proc/$SMB3_TEST_SMBD_PID/exe")" = "$t/usr/sbin/smbd"
		check "4.22: smbd, smbclient, smbstatus, smbcontrol, testparm come from the tree" test \
			"$(command -v smbd smbclient smbstatus smbcontrol testparm | tr '\n' ' ')" = \
			"$t/bin/smbd $t/bin/smbclient $t/bin/smbstatus $t/bin/smbcontrol $t/bin/testparm "
	else
		check "system: the running smbd is $smbd_path" \
			test "$(readlink "/proc/$SMB3_TEST_SMBD_PID/exe")" = "$(readlink -f "$smbd_path")"
		check "env: SAMBA_VERSION is not 4.22 for the system Samba" test "${SMB3_TEST_SAMBA_VERSION#4.22.}" = "$SMB3_TEST_SAMBA_VERSION"
	fi

	# put / ls / get round trip
	head -c 100000 /dev/urandom >"$scratch/up.bin"
	expect_ok "login + put" test "${AUTH[@]}" -c "lcd $scratch; put up.bin"
	check "put: file is in SHARE_DIR with the same bytes" cmp -s "$scratch/up.bin" "$SMB3_TEST_SHARE_DIR/up.bin"
	check "put: file is owned by $SMB3_TEST_USER" test "$(stat -c %U "$SMB3_TEST_SHARE_DIR/up.bin")" = "$SMB3_TEST_USER"
	smbc test "${AUTH[@]}" -c "ls"
	if [[ $out == *up.bin* ]]; then ok "ls lists the file"; else ko "ls lists the file" "$out"; fi
	expect_ok "get" test "${AUTH[@]}" -c "lcd $scratch; get up.bin down.bin"
	check "get: same bytes back" cmp -s "$scratch/up.bin" "$scratch/down.bin"
	expect_ok "mkdir, put into it, rename, delete" test "${AUTH[@]}" \
		-c "lcd $scratch; mkdir d; cd d; put up.bin x; rename x y; del y; cd ..; rmdir d"
	check "  ... and the directory is gone" test ! -e "$SMB3_TEST_SHARE_DIR/d"
	echo "made on disk" >"$SMB3_TEST_SHARE_DIR/ondisk.txt"
	chown "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR/ondisk.txt"
	expect_ok "file created on disk (chowned) is readable and deletable" test "${AUTH[@]}" \
		-c "lcd $scratch; get ondisk.txt; del ondisk.txt"
	check "  ... with the right content" grep -qx "made on disk" "$scratch/ondisk.txt"
	expect_ok "login with -W DOMAIN" test "${AUTH[@]}" -W "$SMB3_TEST_DOMAIN" -c ls

	expect_fail "wrong password is refused" NT_STATUS_LOGON_FAILURE test -U "$SMB3_TEST_USER%wrong$SMB3_TEST_PASS" -c ls

	# guest share
	expect_ok "guest share works anonymously (-N): put" public -N -c "lcd $scratch; put up.bin guest.bin"
	check "  ... file is owned by the guest account (nobody)" test "$(stat -c %U "$SMB3_TEST_GUEST_DIR/guest.bin")" = nobody
	expect_ok "guest share works for an unknown user (map to guest = Bad User)" public -U "nosuchuser%x" -c ls
	expect_ok "the test user can use the guest share too" public "${AUTH[@]}" -c "lcd $scratch; get guest.bin"
	expect_fail "anonymous user cannot use the test share" NT_STATUS_ACCESS_DENIED test -N -c ls

	# read-only share
	expect_ok "ro share: read works" ro "${AUTH[@]}" -c "lcd $scratch; get hello.txt"
	check "  ... content from RO_DIR" cmp -s "$SMB3_TEST_RO_DIR/hello.txt" "$scratch/hello.txt"
	expect_fail "ro share: put is refused" NT_STATUS_ACCESS_DENIED ro "${AUTH[@]}" -c "lcd $scratch; put up.bin"
	expect_fail "ro share: delete is refused" NT_STATUS_ACCESS_DENIED ro "${AUTH[@]}" -c "del hello.txt"
	check "  ... nothing changed on disk" test ! -e "$SMB3_TEST_RO_DIR/up.bin" -a -e "$SMB3_TEST_RO_DIR/hello.txt"

	# share enumeration goes through samba-dcerpcd, which smbd spawns on demand and
	# which daemonizes: the harness must clean it up too (checked by the outer level)
	rc=0
	out=$(smbclient -s /dev/null -p "$SMB3_TEST_PORT" -L "$SMB3_TEST_HOST" "${AUTH[@]}" 2>&1) || rc=$?
	if [[ $out == *public* && $out == *ro* ]]; then ok "share list (-L, via samba-dcerpcd)"; else ko "share list (-L, via samba-dcerpcd)" "$out"; fi
	if [[ $SELFTEST_SAMBA == 4.22 ]]; then
		maps_of_4_22
	fi

	local row
	row=$(session_row test "${AUTH[@]}")
	echo "smbstatus: $row"
	check "default dialect is SMB3_11 (smbstatus)" test "$(field 6 "$row")" = SMB3_11
	# 4.17 shows "partial(ALG)" when only the session setup was signed, "ALG" when
	# every request is: the signing case below must show the latter
	local sig
	sig=$(field 8 "$row")
	if [[ $sig == - || $sig == partial* ]]; then
		ok "default: not every request is signed (smbstatus: $sig)"
	else
		ko "default: not every request is signed" "row: $row"
	fi
}

case_max_smb2_02() {
	expect_fail "max protocol SMB2_02: client min SMB3 fails" NT_STATUS_NOT_SUPPORTED \
		test "${AUTH[@]}" --option="client min protocol=SMB3" -c ls
	expect_fail "max protocol SMB2_02: client min SMB2_10 fails" NT_STATUS_NOT_SUPPORTED \
		test "${AUTH[@]}" --option="client min protocol=SMB2_10" -c ls
	expect_ok "max protocol SMB2_02: default client connects" test "${AUTH[@]}" -c ls
	local row
	row=$(session_row test "${AUTH[@]}")
	check "max protocol SMB2_02: smbstatus shows SMB2_02" test "$(field 6 "$row")" = SMB2_02
}

case_min_smb3() {
	expect_fail "min protocol SMB3: client max SMB2_10 fails" NT_STATUS_ \
		test "${AUTH[@]}" -m SMB2_10 -c ls
	local row
	row=$(session_row test "${AUTH[@]}")
	check "min protocol SMB3: smbstatus shows SMB3_11" test "$(field 6 "$row")" = SMB3_11
}

case_signing() {
	local row sig
	row=$(session_row test "${AUTH[@]}" --client-protection=off)
	sig=$(field 8 "$row")
	if [[ -n $sig && $sig != - && $sig != partial* ]]; then
		ok "signing mandatory: session is signed even with --client-protection=off ($sig)"
	else
		ko "signing mandatory: session is signed even with --client-protection=off" "row: $row"
	fi
	echo data >"$scratch/c"
	expect_ok "signing mandatory: put/get works" test "${AUTH[@]}" -c "lcd $scratch; put c; get c c2"
}

case_encrypt() {
	expect_fail "smb encrypt = required: SMB2_10 (no encryption) is refused" NT_STATUS_ACCESS_DENIED \
		test "${AUTH[@]}" -m SMB2_10 -c ls
	expect_fail "smb encrypt = required: guest is refused" NT_STATUS_ACCESS_DENIED public -N -c ls
	local row enc
	row=$(session_row test "${AUTH[@]}")
	enc=$(field 7 "$row")
	if [[ -n $enc && $enc != - ]]; then ok "smb encrypt = required: session is encrypted ($enc)"; else ko "smb encrypt = required: session is encrypted" "row: $row"; fi
}

case_share_opt() {
	echo data >"$scratch/x"
	expect_fail "--share 'read only = yes' applies to the test share" NT_STATUS_ACCESS_DENIED \
		test "${AUTH[@]}" -c "lcd $scratch; put x"
	check "--global 'smb2 max credits = 16' is in the config" grep -q "smb2 max credits = 16" "$SMB3_TEST_CONF"
	expect_ok "--global 'smb2 max credits = 16': server works" test "${AUTH[@]}" -c ls
}

case_tmpfs() {
	check "--tmpfs: SHARE_DIR is on tmpfs" test "$(stat -f -c %T "$SMB3_TEST_SHARE_DIR")" = tmpfs
	head -c 100000 /dev/urandom >"$scratch/up.bin"
	expect_ok "--tmpfs: put/get" test "${AUTH[@]}" -c "lcd $scratch; put up.bin; get up.bin down.bin"
	check "--tmpfs: same bytes" cmp -s "$scratch/up.bin" "$SMB3_TEST_SHARE_DIR/up.bin"
}

# posix (4.22 only): with-smbd --global/--share "smb3 unix extensions = yes" and
# --global "smb3 directory leases = yes"; 4.22's smbclient in "posix" mode gets
# POSIX path names, case-sensitive names, FIFOs and dangling symlinks; without
# "posix" the same session is a Windows one. (A directory lease itself is not
# requested by smbclient: its grant is for the library's tests to show.)
case_posix() {
	check "posix: testparm: smb3 unix extensions = Yes on the test share" \
		test "$(testparm -s --section-name=test --parameter-name="smb3 unix extensions" "$SMB3_TEST_CONF" 2>/dev/null)" = Yes
	check "posix: testparm: smb3 directory leases = Yes" \
		test "$(testparm -s --parameter-name="smb3 directory leases" "$SMB3_TEST_CONF" 2>/dev/null)" = Yes
	touch "$SMB3_TEST_SHARE_DIR/abc" "$SMB3_TEST_SHARE_DIR/Abc"
	mkfifo "$SMB3_TEST_SHARE_DIR/fifo"
	ln -s no-such-target "$SMB3_TEST_SHARE_DIR/dangling"
	chown -h "$SMB3_TEST_USER:" "$SMB3_TEST_SHARE_DIR"/{abc,Abc,fifo,dangling}
	echo x >"$scratch/x"
	expect_ok "posix: mkdir 'a:b' and put 'q?x' (POSIX path names)" test "${AUTH[@]}" -m SMB3_11 \
		-c "posix; mkdir a:b; lcd $scratch; put x q?x"
	check "  ... both are on the server's disk under those names" test -d "$SMB3_TEST_SHARE_DIR/a:b" -a -f "$SMB3_TEST_SHARE_DIR/q?x"
	smbc test "${AUTH[@]}" -m SMB3_11 -c "posix; ls"
	if [[ $out == *" abc "* && $out == *" Abc "* && $out == *" fifo "* && $out == *" dangling "* ]]; then
		ok "posix: ls lists abc and Abc, the FIFO and the dangling symlink"
	else
		ko "posix: ls lists abc and Abc, the FIFO and the dangling symlink" "$out"
	fi
	expect_ok "posix: del abc" test "${AUTH[@]}" -m SMB3_11 -c "posix; del abc"
	check "  ... removes abc only (case-sensitive)" test ! -e "$SMB3_TEST_SHARE_DIR/abc" -a -e "$SMB3_TEST_SHARE_DIR/Abc"
	expect_fail "without posix: 'c:d' is an invalid name" NT_STATUS_OBJECT_NAME_INVALID test "${AUTH[@]}" -m SMB3_11 -c "mkdir c:d"
	smbc test "${AUTH[@]}" -m SMB3_11 -c "ls"
	if [[ $out != *" dangling "* ]]; then ok "without posix: the dangling symlink is not listed"; else ko "without posix: the dangling symlink is not listed" "$out"; fi
}

# parallel: used by the outer level, two of these at once
case_parallel() {
	echo "$SMB3_TEST_PORT" >"$SELFTEST_TMP/parallel.$1.port"
	head -c 50000 /dev/urandom >"$scratch/p.bin"
	expect_ok "parallel instance $1: put/get" test "${AUTH[@]}" -c "lcd $scratch; put p.bin; get p.bin p2.bin"
	check "parallel instance $1: same bytes" cmp -s "$scratch/p.bin" "$scratch/p2.bin"
}

# sleeper: records its dir and waits to be killed by the outer level
case_sleeper() {
	echo "$$" >"$SELFTEST_TMP/sleeper.$1.pid"
	echo "$SMB3_TEST_DIR" >"$SELFTEST_TMP/sleeper.$1.dir.tmp"
	mv "$SELFTEST_TMP/sleeper.$1.dir.tmp" "$SELFTEST_TMP/sleeper.$1.dir"
	exec sleep 120
}

if [[ ${1:-} == --inner ]]; then
	scratch=$SMB3_TEST_DIR/selftest-scratch
	mkdir -p "$scratch"
	AUTH=(-U "$SMB3_TEST_USER%$SMB3_TEST_PASS")
	echo "$SMB3_TEST_DIR" >>"$SELFTEST_TMP/dirs"
	"case_$2" "${@:3}"
	exit 0
fi

# ---------------------------------------------------------------------------
# Outer level.

SELFTEST_SAMBA=system
if [[ ${1:-} == --samba ]]; then
	SELFTEST_SAMBA=${2:-}
	shift 2 || true
fi
case $SELFTEST_SAMBA in
system | 4.22) ;;
*)
	echo "usage: selftest.sh [--samba system|4.22]" >&2
	exit 2
	;;
esac
export SELFTEST_SAMBA
SAMBA_OPT=(--samba "$SELFTEST_SAMBA")

if ((EUID != 0)); then
	echo "selftest: SKIP: needs root (smbd)" >&2
	exit 77
fi
for tool in smbd smbclient smbstatus; do
	if ! command -v "$tool" >/dev/null; then
		echo "selftest: SKIP: $tool not installed (apt-get install samba smbclient)" >&2
		exit 77
	fi
done

SELFTEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/smb3-selftest.XXXXXX")
export SELFTEST_TMP
export SELFTEST_RESULTS=$SELFTEST_TMP/results
: >"$SELFTEST_RESULTS"
: >"$SELFTEST_TMP/dirs"
trap 'rm -rf -- "$SELFTEST_TMP"' EXIT

# run_case NAME [with-smbd options...]: one with-smbd instance for one inner case
run_case() {
	local name=$1 rc=0
	shift
	echo "=== $name: with-smbd $*"
	"$WITH_SMBD" "${SAMBA_OPT[@]}" "$@" -- "$SELF" --inner "$name" || rc=$?
	if ((rc == 0)); then ok "$name: with-smbd exited 0"; else ko "$name: with-smbd exited $rc"; fi
}

# cleaned DIR: the harness removed DIR and left no process mentioning it
# gone_soon DIR: no process references DIR within 3 s (one killed a moment ago may still be exiting)
gone_soon() {
	local i
	for ((i = 0; i < 30; i++)); do
		still_running "$1" || return 0
		sleep 0.1
	done
	return 1
}

assert_cleaned() {
	local name=$1 d=$2
	if [[ -z $d ]]; then
		ko "$name: cleanup" "no dir recorded"
	elif [[ -e $d ]]; then
		ko "$name: temp dir removed" "$d still exists"
	elif still_running "$d" && ! gone_soon "$d"; then
		ko "$name: no process left" "processes still reference $d"
	else
		ok "$name: temp dir removed and no process left"
	fi
}

if [[ $SELFTEST_SAMBA == 4.22 ]]; then
	# no skip here: the tree is a dependency that make check installs
	t=${SMB3_SAMBA422_DIR:-$HERE/../../build/samba-4.22}
	if [[ ! -x $t/bin/smbd ]]; then
		echo "selftest: FAIL: no Samba 4.22 tree in $t (scripts/samba422.sh makes it)" >&2
		echo "0 passed, 1 failed"
		exit 1
	fi
fi
run_case basic
run_case max_smb2_02 --global "server max protocol = SMB2_02"
run_case min_smb3 --global "server min protocol = SMB3"
run_case signing --global "server signing = mandatory"
run_case encrypt --global "smb encrypt = required"
run_case share_opt --share "read only = yes" --global "smb2 max credits = 16"
if [[ -d /dev/shm ]]; then
	run_case tmpfs --tmpfs
fi
if [[ $SELFTEST_SAMBA == 4.22 ]]; then
	run_case posix --global "smb3 unix extensions = yes" --share "smb3 unix extensions = yes" \
		--global "smb3 directory leases = yes"
fi

while read -r d; do
	assert_cleaned "after the cases" "$d"
done <"$SELFTEST_TMP/dirs"

echo "=== harness behaviour"
rc=0
"$WITH_SMBD" "${SAMBA_OPT[@]}" -- sh -c 'exit 7' || rc=$?
check "COMMAND's exit status is passed through (7)" test "$rc" = 7
rc=0
"$WITH_SMBD" "${SAMBA_OPT[@]}" --global "no such parameter = 1" -- true 2>/dev/null || rc=$?
check "an unknown --global parameter fails setup with 125" test "$rc" = 125
rc=0
"$WITH_SMBD" "${SAMBA_OPT[@]}" --bogus -- true 2>/dev/null || rc=$?
check "an unknown option fails with 125" test "$rc" = 125
rc=0
"$WITH_SMBD" --samba 4.21 -- true 2>/dev/null || rc=$?
check "an unknown --samba fails with 125" test "$rc" = 125
rc=0
SMB3_SAMBA422_DIR=$SELFTEST_TMP/no-such-tree "$WITH_SMBD" --samba 4.22 -- true 2>/dev/null || rc=$?
check "--samba 4.22 without a 4.22 tree fails with 125 (a failure in ctest, not a skip)" test "$rc" = 125
if [[ $SELFTEST_SAMBA == system && $(smbd -V) == "Version 4.17."* ]]; then
	rc=0
	"$WITH_SMBD" --global "smb3 unix extensions = yes" -- true 2>/dev/null || rc=$?
	check "4.17: 'smb3 unix extensions' is an unknown parameter (125)" test "$rc" = 125
fi
rc=0
log_out=$("$WITH_SMBD" "${SAMBA_OPT[@]}" --keep-log -- true 2>&1) || rc=$?
if ((rc == 0)) && [[ $log_out == *"smbd version"* ]]; then ok "--keep-log prints the smbd log"; else ko "--keep-log prints the smbd log" "rc=$rc"; fi
rc=0
# shellcheck disable=SC2016 # expanded by the inner shell
echo "piped input" | "$WITH_SMBD" "${SAMBA_OPT[@]}" -- sh -c 'read -r l && test "$l" = "piped input"' || rc=$?
check "COMMAND gets the harness' stdin" test "$rc" = 0

echo "=== two instances in parallel"
: >"$SELFTEST_TMP/dirs"
"$WITH_SMBD" "${SAMBA_OPT[@]}" -- "$SELF" --inner parallel 1 &
p1=$!
"$WITH_SMBD" "${SAMBA_OPT[@]}" -- "$SELF" --inner parallel 2 &
p2=$!
rc1=0 rc2=0
wait "$p1" || rc1=$?
wait "$p2" || rc2=$?
check "parallel: both instances exited 0" test "$rc1/$rc2" = 0/0
check "parallel: different ports" test "$(cat "$SELFTEST_TMP/parallel.1.port" 2>/dev/null)" != "$(cat "$SELFTEST_TMP/parallel.2.port" 2>/dev/null)"
while read -r d; do
	assert_cleaned "parallel" "$d"
done <"$SELFTEST_TMP/dirs"

# wait_for FILE: up to 30 s
wait_for() {
	local i
	for ((i = 0; i < 300; i++)); do
		[[ -s $1 ]] && return 0
		sleep 0.1
	done
	return 1
}

echo "=== signals"
# smbclient -L first, so that samba-dcerpcd is running too when we kill. The
# harness runs in a subshell that restores SIGINT: a plain `cmd &` from a script
# starts with SIGINT ignored, and bash cannot trap a signal ignored at entry.
for sig in TERM INT KILL; do
	(
		trap - INT
		# shellcheck disable=SC2016 # expanded by the inner shell
		exec "$WITH_SMBD" "${SAMBA_OPT[@]}" -- sh -c 'smbclient -s /dev/null -p "$SMB3_TEST_PORT" -L 127.0.0.1 -U "$SMB3_TEST_USER%$SMB3_TEST_PASS" >/dev/null 2>&1; exec "$0" --inner sleeper "$1"' "$SELF" "$sig"
	) &
	hp=$!
	if ! wait_for "$SELFTEST_TMP/sleeper.$sig.dir"; then
		ko "SIG$sig: harness started" "no dir recorded"
		kill -TERM "$hp" 2>/dev/null || true
		wait "$hp" || true
		continue
	fi
	d=$(cat "$SELFTEST_TMP/sleeper.$sig.dir")
	sp=$(cat "$SELFTEST_TMP/sleeper.$sig.pid")
	kill -"$sig" "$hp"
	rc=0
	wait "$hp" || rc=$?
	want=$((128 + $(kill -l "$sig")))
	check "SIG$sig: harness exits with $want" test "$rc" = "$want"
	if [[ $sig == KILL ]]; then
		# nothing ran our trap: the watchdog (polling once a second) cleans up
		for ((i = 0; i < 100; i++)); do
			[[ -e $d ]] || break
			sleep 0.1
		done
	fi
	assert_cleaned "SIG$sig" "$d"
	# (the sleeper is not our child: once its harness is gone it is a zombie until reaped)
	for ((i = 0; i < 50; i++)); do
		alive "$sp" || break
		sleep 0.1
	done
	if alive "$sp"; then
		ko "SIG$sig: COMMAND was stopped" "pid $sp still running"
		kill -KILL "$sp" 2>/dev/null || true
	else
		ok "SIG$sig: COMMAND was stopped"
	fi
done

passed=$(grep -c '^pass$' "$SELFTEST_RESULTS" || true)
failed=$(grep -c '^fail$' "$SELFTEST_RESULTS" || true)
echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
