#!/usr/bin/env bash
# Install the Debian packages a target needs, only those missing (idempotent; root or sudo).
#   scripts/install-deps.sh build|format|matrix|check|demo|bench|fuzz
# check, demo and bench also unpack Samba 4.22 from backports into build/samba-4.22 (scripts/samba422.sh;
# the system's Samba stays as it is), for tests/harness/with-smbd --samba 4.22.
set -euo pipefail
build=(build-essential cmake pkg-config libssl-dev libcmocka-dev libfuse3-dev fuse3 python3 libkrb5-dev) # python3: ctest fs.floors; libkrb5-dev: GSSAPI (Kerberos)
server=(samba smbclient debian-archive-keyring) # the keyring: scripts/samba422.sh
dc=(samba-ad-dc samba-ad-provision krb5-user winbind faketime) # tests/harness/with-dc: a throwaway AD DC, kinit; faketime: integration.krb5_reconnect (a clock an hour off)
samba422=0
case "${1:-check}" in
  build) want=("${build[@]}") ;;
  format) want=(clang-format git) ;;
  matrix) want=("${build[@]}" clang dpkg-dev) ;;
  check) samba422=1 && want=("${build[@]}" "${server[@]}" "${dc[@]}" clang clang-format dpkg-dev iproute2 procps groff-base man-db tshark python3-impacket) ;; # groff, man: docs.man; tshark: mitm.tshark_sealed; python3-impacket: tests/harness/with-impacket (a second server implementation)
  demo) samba422=1 && want=("${build[@]}" "${server[@]}" iproute2 procps) ;;
  fuzz) want=("${build[@]}" clang libclang-rt-14-dev) ;;
  bench) samba422=1 && want=("${build[@]}" "${server[@]}" iproute2 procps iperf3 gnuplot-nox smbnetfs rclone time rsync) ;; # time: GNU time -v, peak RSS; rsync: the programs section
  *) echo "install-deps: unknown target '$1'" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q >/dev/null
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts the samba services on install; the tests run their own smbd on other ports.
  if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl stop smbd nmbd samba-ad-dc winbind 2>/dev/null || true; fi
fi
# Fast (no network) once unpacked; a failure here fails the target, so that a machine without
# the 4.22 tree never runs the suite with its 4.22 half missing.
if [ "$samba422" = 1 ]; then "$(dirname "$0")/samba422.sh"; fi
