#!/usr/bin/env bash
# Install the Debian packages a target needs, only those missing (idempotent; root or sudo).
#   scripts/install-deps.sh build|format|matrix|check|demo|bench|fuzz
set -euo pipefail
build=(build-essential cmake pkg-config libssl-dev libcmocka-dev libfuse3-dev fuse3 python3 libkrb5-dev) # python3: ctest fs.floors; libkrb5-dev: GSSAPI (Kerberos)
server=(samba smbclient)
dc=(samba-ad-dc samba-ad-provision krb5-user winbind) # tests/harness/with-dc: a throwaway AD DC, kinit
case "${1:-check}" in
  build) want=("${build[@]}") ;;
  format) want=(clang-format git) ;;
  matrix) want=("${build[@]}" clang dpkg-dev) ;;
  check) want=("${build[@]}" "${server[@]}" "${dc[@]}" clang clang-format dpkg-dev iproute2 procps groff-base man-db) ;; # groff, man: docs.man
  demo) want=("${build[@]}" "${server[@]}" iproute2 procps) ;;
  fuzz) want=("${build[@]}" clang libclang-rt-14-dev) ;;
  bench) want=("${build[@]}" "${server[@]}" iproute2 procps iperf3 gnuplot-nox smbnetfs rclone time) ;; # time: GNU time -v, peak RSS
  *) echo "install-deps: unknown target '$1'" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the samba services on install; the tests run their own smbd on other ports.
if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl stop smbd nmbd samba-ad-dc winbind 2>/dev/null || true; fi
