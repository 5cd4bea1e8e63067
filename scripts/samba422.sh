#!/usr/bin/env bash
# Unpack Samba 4.22 (smbd, its tools, smbclient and libsmbclient) from Debian's <codename>-backports
# into DIR, next to (never over) the system's Samba: tests/harness/with-smbd --samba 4.22 runs it.
#
#   scripts/samba422.sh [DIR]        default DIR: <repo>/build/samba-4.22
#
# Nothing is installed: apt-get runs with a private sources list, state and cache (so neither the
# system's package lists nor its dpkg database are touched), downloads the .debs and dpkg-deb -x
# unpacks them into DIR. DIR/bin holds one wrapper per program (smbd, smbclient, smbstatus,
# testparm, samba-dcerpcd, ...) that runs it with
#  - LD_LIBRARY_PATH into DIR, so that the libraries of 4.22 win over the system's 4.17 ones (the
#    binaries' RUNPATH names the system's private Samba directory; LD_LIBRARY_PATH comes first);
#  - LD_PRELOAD=DIR/preload/samba422-dirs.so (scripts/samba422-dirs.c, compiled here), which points
#    Samba's compiled-in modules and libexec directories at DIR: otherwise 4.22 would load the
#    system's 4.17 gensec/auth/vfs modules and start the system's samba-dcerpcd and rpcd_*.
# Both are inherited by what those programs start (smbd -> samba-dcerpcd -> rpcd_*), and by
# nothing else. Idempotent: a second run with the same package list returns at once, without
# network. DIR/VERSION records smbd -V, DIR/PACKAGES each package's name, version and the sha256
# of its .deb.
#
# The package list is fixed (see PKGS) and checked after unpacking: every program's ldd closure
# must resolve, and no library may come from the system's Samba packages (source samba, talloc, tdb,
# tevent or ldb) where the tree has its own. A missing package there fails this script.
# SAMBA422_MIRROR overrides the archive (default: the one the system's apt uses for <codename>).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$here/.." && pwd -P)
dir=${1:-$repo/build/samba-4.22}
readonly WANT_MAJOR=4.22
# smbd needs samba, samba-libs, samba-common(-bin: testparm, smbpasswd, smbcontrol) and the libraries
# that the Samba source builds (ldb, talloc, tdb, tevent, wbclient); smbclient + libsmbclient are the
# reference client that speaks the SMB3 POSIX extensions. Everything else smbd links comes from
# the system unchanged (libc, gnutls, ldap, icu, ...), checked below.
readonly PKGS=(samba samba-libs samba-common samba-common-bin libldb2 libtalloc2 libtdb1 libtevent0
  libwbclient0 smbclient libsmbclient)
readonly MULTIARCH=x86_64-linux-gnu

msg() { printf 'samba422: %s\n' "$*" >&2; }
die() {
  msg "error: $*"
  exit 1
}

[[ $(dpkg --print-architecture 2>/dev/null) == amd64 ]] || die "only amd64 is supported (multiarch dir $MULTIARCH)"
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $codename ]] || die "no VERSION_CODENAME in /etc/os-release"
suite=$codename-backports
spec="suite=$suite packages=${PKGS[*]} layout=4 dirs=$(sha256sum <"$here/samba422-dirs.c" | cut -c1-16)"
stamp=$dir/.samba422-complete

# Fast path, without the lock: a finished tree with the same package list.
if [[ -r $stamp && $(<"$stamp") == "$spec" && -x $dir/bin/smbd ]]; then
  exit 0
fi

mkdir -p "$(dirname "$dir")"
parent=$(cd "$(dirname "$dir")" && pwd -P)
dir=$parent/$(basename "$dir")
stamp=$dir/.samba422-complete
# One unpacker at a time (make check and make bench may start together): lock the parent directory.
exec 8<"$parent"
flock 8
if [[ -r $stamp && $(<"$stamp") == "$spec" && -x $dir/bin/smbd ]]; then
  exit 0
fi

for tool in apt-get dpkg-deb ldd sha256sum cc; do
  command -v "$tool" >/dev/null || die "'$tool' not found"
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r $keyring ]] || die "$keyring missing (apt-get install debian-archive-keyring)"
mirror=${SAMBA422_MIRROR:-}
if [[ -z $mirror ]]; then
  # The archive the system already uses for <codename> main; --no-release-info needs no package lists.
  # shellcheck disable=SC2016 # apt's own $(FIELD) syntax
  mirror=$(apt-get indextargets --no-release-info --format '$(SITE) $(RELEASE) $(COMPONENT)' 2>/dev/null |
    awk -v s="$codename" '$2 == s && $3 == "main" { print $1; exit }')
fi
[[ -n $mirror ]] || die "no apt source for '$codename main' found; set SAMBA422_MIRROR"

work=$dir.work
rm -rf -- "$work" "$dir.new"
mkdir -p "$work/etc" "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs" "$dir.new"
trap 'rm -rf -- "$work" "$dir.new"' EXIT
# Both suites: the backports packages depend on nothing newer from <codename>, but apt must see the
# base suite to accept the pin-less "pkg/suite" requests.
cat >"$work/etc/sources.list" <<EOF
deb [signed-by=$keyring] $mirror $codename main
deb [signed-by=$keyring] $mirror $suite main
EOF
: >"$work/status"
apt=(apt-get -q -o "Dir::Etc::SourceList=$work/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::Etc::Preferences=$work/etc/preferences" -o Dir::Etc::PreferencesParts=/dev/null
  -o "Dir::State=$work/state" -o "Dir::State::status=$work/status" -o "Dir::Cache=$work/cache"
  -o "APT::Sandbox::User=$(id -un)")
: >"$work/etc/preferences"
msg "downloading ${PKGS[*]} from $suite"
"${apt[@]}" update >"$work/update.log" 2>&1 || {
  cat "$work/update.log" >&2
  die "apt-get update ($mirror $suite) failed"
}
reqs=()
for p in "${PKGS[@]}"; do reqs+=("$p/$suite"); done
(cd "$work/debs" && "${apt[@]}" download "${reqs[@]}") >"$work/download.log" 2>&1 || {
  cat "$work/download.log" >&2
  die "apt-get download failed"
}

: >"$dir.new/PACKAGES"
for p in "${PKGS[@]}"; do
  debs=("$work/debs/${p}_"*.deb)
  if ((${#debs[@]} != 1)) || [[ ! -f ${debs[0]} ]]; then die "no single .deb for $p in $work/debs"; fi
  deb=${debs[0]}
  version=$(dpkg-deb -f "$deb" Version)
  [[ $(dpkg-deb -f "$deb" Package) == "$p" ]] || die "$deb is not $p"
  dpkg-deb -x "$deb" "$dir.new"
  printf '%s %s %s\n' "$p" "$version" "$(sha256sum <"$deb" | cut -d' ' -f1)" >>"$dir.new/PACKAGES"
done

lib=$dir.new/usr/lib/$MULTIARCH
libpath=$lib/samba:$lib
mkdir "$dir.new/preload" "$dir.new/bin"
cc -O2 -Wall -Wextra -Werror -shared -fPIC -DSAMBA422_MULTIARCH="\"$MULTIARCH\"" \
  -o "$dir.new/preload/samba422-dirs.so" "$here/samba422-dirs.c" -ldl || die "cannot compile samba422-dirs.c"
# Wrappers: each finds the tree from its own path, so DIR may be moved as a whole.
for prog in "$dir.new"/usr/bin/* "$dir.new"/usr/sbin/* "$dir.new"/usr/libexec/samba/*; do
  [[ -f $prog && -x $prog ]] || continue
  name=${prog##*/}
  rel=${prog#"$dir.new"/}
  cat >"$dir.new/bin/$name" <<EOF
#!/bin/sh
# Generated by scripts/samba422.sh: Samba 4.22's $name with the tree's libraries first.
root=\$(cd "\${0%/*}/.." && pwd -P) || exit 127
LD_LIBRARY_PATH=\$root/usr/lib/$MULTIARCH/samba:\$root/usr/lib/$MULTIARCH\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
LD_PRELOAD=\$root/preload/samba422-dirs.so\${LD_PRELOAD:+:\$LD_PRELOAD}
export LD_LIBRARY_PATH LD_PRELOAD
exec "\$root/$rel" "\$@"
EOF
  chmod 0755 "$dir.new/bin/$name"
done
[[ -x $dir.new/bin/smbd && -x $dir.new/bin/smbclient && -x $dir.new/bin/samba-dcerpcd ]] ||
  die "smbd, smbclient or samba-dcerpcd missing from the unpacked packages"

# Check the closure of every program: all resolved, none from the system's Samba-built libraries.
declare -A checked=()
syslibs=()
bad=0
for prog in "$dir.new"/usr/bin/* "$dir.new"/usr/sbin/* "$dir.new"/usr/libexec/samba/*; do
  [[ -f $prog && -x $prog ]] || continue
  head -c 4 "$prog" | grep -q 'ELF' || continue
  out=$(LD_LIBRARY_PATH=$libpath ldd "$prog" 2>&1) || die "ldd $prog failed: $out"
  if grep -q 'not found' <<<"$out"; then
    msg "$prog: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ')"
    bad=1
  fi
  while read -r path; do
    [[ -n $path && -z ${checked[$path]:-} ]] || continue
    checked[$path]=1
    [[ $path == "$dir.new"/* ]] && continue
    if [[ $path == */samba/* || -e $lib/${path##*/} || -e $lib/samba/${path##*/} ]]; then
      msg "$prog: $path comes from the system although the tree has its own"
      bad=1
      continue
    fi
    syslibs+=("$path")
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 }' <<<"$out")
done
# The system libraries left: none may be built from the Samba sources (a package missing from PKGS).
# dpkg knows a library by the path its package ships (/lib or /usr/lib on a merged /usr).
if ((${#syslibs[@]})); then
  mapfile -t real < <(readlink -f "${syslibs[@]}")
  while read -r line; do
    owner=${line%%: *} path=${line#*: }
    owner=${owner%%,*}
    owner=${owner%:*} # libfoo:amd64
    src=$(dpkg-query -W -f='${source:Package}' "$owner" 2>/dev/null || true)
    case ${src%% *} in
    samba | talloc | tdb | tevent | ldb)
      msg "$path is the system's $owner (source $src): add the backports package to PKGS"
      bad=1
      ;;
    esac
  done < <(dpkg-query -S "${syslibs[@]}" "${real[@]}" 2>/dev/null | sort -u)
fi
((bad == 0)) || die "the unpacked tree does not run on its own libraries (see above)"

version=$("$dir.new/bin/smbd" -V) || die "smbd -V failed"
build_paths=$("$dir.new/bin/smbd" -b) || die "smbd -b failed"
grep -qxF "   MODULESDIR: $dir.new/usr/lib/$MULTIARCH/samba" <<<"$build_paths" ||
  die "samba422-dirs.so did not move smbd's MODULESDIR into the tree"
[[ $version == "Version $WANT_MAJOR."* ]] || die "unpacked smbd is '$version', expected $WANT_MAJOR.x"
printf '%s\n' "${version#Version }" >"$dir.new/VERSION"
printf '%s\n' "$spec" >"$dir.new/.samba422-complete"
rm -rf -- "$dir"
mv -- "$dir.new" "$dir"
msg "Samba $(<"$dir/VERSION") unpacked into $dir"
sed 's/^/samba422:   /' "$dir/PACKAGES" >&2
