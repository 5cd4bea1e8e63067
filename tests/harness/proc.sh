# proc.sh - process helpers shared by the test scripts (sourced): pure bash and /proc, so they
# work in with-smbd's watchdog too.

# alive PID: true while PID exists and is not a zombie (kill -0 succeeds on zombies, and a daemon
# that died is one until it is reaped).
alive() {
	local stat
	[[ -r /proc/$1/stat ]] || return 1
	read -r stat </proc/"$1"/stat 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# san_to_files DIR: from here on, the sanitizers of this shell's processes write their reports to
# DIR/asan.PID and DIR/ubsan.PID instead of standard error, which a mounted daemon has pointed at
# /dev/null (ASan and UBSan each read log_path from their own options).
san_to_files() {
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}log_path=$1/asan"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}${UBSAN_OPTIONS:+:}log_path=$1/ubsan"
}

# san_reports DIR: prints the reports written so, if there are any, and then returns 1.
san_reports() {
	compgen -G "$1/*san.*" >/dev/null || return 0
	echo "FAIL sanitizer reports:"
	cat "$1"/*san.*
	return 1
}
