#!/usr/bin/env bash
# Compile everything (library, smb3, smb3fs, tools, every test program) with gcc and clang in each
# build type packagers use: Debug, RelWithDebInfo, Release, and Debian's hardening flags from
# dpkg-buildflags (-O2, -D_FORTIFY_SOURCE=2, -fstack-protector-strong, -Werror=format-security,
# relro) the way debhelper passes them (CMAKE_BUILD_TYPE=None, flags in CFLAGS/CPPFLAGS/LDFLAGS).
# Compile only: the tests run once, in `make check`, from ./build.
#
# Each build already has -Werror; the log is also searched for "warning:" so warnings that -Werror
# does not stop (the linker's, CMake's) fail the matrix too. Fails at the first configuration
# that does not build clean and prints the end of its log.
#
#   scripts/build-matrix.sh [OUTDIR]     OUTDIR defaults to build-matrix; JOBS=n (default nproc)
#   MATRIX="gcc:Release clang:dpkg"      only these configurations (default: all eight)
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-build-matrix}
jobs=${JOBS:-$(nproc)}
all="gcc:Debug gcc:RelWithDebInfo gcc:Release gcc:dpkg clang:Debug clang:RelWithDebInfo clang:Release clang:dpkg"
matrix=${MATRIX:-$all}

for tool in gcc clang cmake dpkg-buildflags; do
  command -v "$tool" >/dev/null || { echo "build-matrix: $tool not found (scripts/install-deps.sh check)" >&2; exit 1; }
done
mkdir -p "$out"

for cfg in $matrix; do
  cc=${cfg%%:*}
  type=${cfg#*:}
  dir="$out/$cc-$type"
  log="$dir.log"
  start=$SECONDS
  if [ "$type" = dpkg ]; then
    # dpkg-buildflags adds -ffile-prefix-map for the current directory; run it from the source tree
    # as a package build would.
    cflags="$(cd "$src" && dpkg-buildflags --get CFLAGS) $(cd "$src" && dpkg-buildflags --get CPPFLAGS)"
    ldflags=$(cd "$src" && dpkg-buildflags --get LDFLAGS)
    args=(-DCMAKE_BUILD_TYPE=None "-DCMAKE_C_FLAGS=$cflags" "-DCMAKE_EXE_LINKER_FLAGS=$ldflags"
          "-DCMAKE_SHARED_LINKER_FLAGS=$ldflags" "-DCMAKE_MODULE_LINKER_FLAGS=$ldflags")
  else
    args=(-DCMAKE_BUILD_TYPE="$type")
  fi
  # A fresh cache each time: a compiler or flag change in an old cache would be silently ignored.
  rm -rf "$dir"
  if ! { CC=$cc cmake -S "$src" -B "$dir" "${args[@]}" && cmake --build "$dir" -j"$jobs"; } >"$log" 2>&1; then
    grep -v '^\[ *[0-9]*%\]' "$log" | tail -n 80 >&2
    echo "build-matrix: $cc $type FAILED (log: $log)" >&2
    exit 1
  fi
  if grep -nE "warning:|CMake Warning" "$log" >&2; then
    echo "build-matrix: $cc $type built with warnings (log: $log)" >&2
    exit 1
  fi
  echo "build-matrix: $cc $type ok ($((SECONDS - start)) s)"
done
