# smb3fs - top-level driver. Every target first installs the Debian packages it needs.
#   make demo    set up, start a throwaway Samba share, run the workloads (large reads and writes,
#                compounded statfs, dd through the mount), print a table: median of DEMO_RUNS (3)
#                interleaved runs per row, range, ratio to the peer (DEMO_SIZE_MB, default 512)
#   make check   check the format, compile the build matrix (gcc and clang x Debug, RelWithDebInfo, Release,
#                dpkg-buildflags; any warning fails), build, run every test (unit, integration
#                against a real smbd: the system's Samba and Samba 4.22, scripts/samba422.sh), then
#                again under AddressSanitizer + UndefinedBehaviorSanitizer
#   make check-format  every C file matches .clang-format (scripts/check-format.sh --fix applies it)
#   make build-matrix  only the compile matrix (scripts/build-matrix.sh, into build-matrix/)
#   make install library, header, smb3.pc, smb3, smb3fs, man pages (PREFIX=/usr/local)
#   make fuzz    build the libFuzzer targets with clang and run each for FUZZ_SECONDS (default 60;
#                FUZZ_TARGETS="fuzz_a fuzz_b" only those)
#   make bench   the side-by-side benchmark (not part of check)
BUILD ?= build
ASAN_BUILD ?= build-asan
MATRIX_BUILD ?= build-matrix
FUZZ_BUILD ?= build-fuzz
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 60
JOBS ?= $(shell nproc)
# The Samba 4.22 variants (fs422.*, integration422.*) that the ASan run repeats: all that run our code;
# not the harness self-test, which exercises only with-smbd and smbclient (plain run has it).
ASAN_SAMBA422_TESTS ?= '^(fs422[.]|integration422[.](cli|lib)_)'

.PHONY: all deps build build-matrix check-format check check-fast check-asan demo install fuzz bench clean

all: build

build:
	@scripts/install-deps.sh build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

build-matrix:
	@scripts/install-deps.sh matrix
	JOBS=$(JOBS) scripts/build-matrix.sh $(MATRIX_BUILD)

check-format:
	@scripts/install-deps.sh format
	scripts/check-format.sh

check:
	@scripts/install-deps.sh check
	$(MAKE) --no-print-directory check-format
	$(MAKE) --no-print-directory build-matrix
	$(MAKE) --no-print-directory check-fast
	$(MAKE) --no-print-directory check-asan

check-fast: build
	cd $(BUILD) && ctest --output-on-failure -j2

check-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSMB3_SANITIZE=ON -DSMB3_SAMBA422_TESTS=$(ASAN_SAMBA422_TESTS) >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 ctest --output-on-failure -j2 -E '^fs422[.]random$$'
# (fs422.random, the longest test, runs in the plain pass only: under ASan on 2 cores it took 91 s
# and once saw its connection time out; fs.random still runs under ASan)

demo:
	@scripts/install-deps.sh demo
	$(MAKE) --no-print-directory build
	scripts/demo.sh $(BUILD)

install: build
	cmake --install $(BUILD)

fuzz:
	@scripts/install-deps.sh fuzz
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMB3_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS)
	scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench:
	@scripts/install-deps.sh bench
	$(MAKE) --no-print-directory build
	$(BUILD)/tools/bench/smb3-bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(MATRIX_BUILD)
