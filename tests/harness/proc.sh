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
