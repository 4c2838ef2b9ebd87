# Boxwood — the two setup commands are `make demo` and `make test`; both install what they need.
SWIFT ?= swift
APT_PACKAGES := liblz4-dev pkg-config liblmdb-dev libsqlite3-dev
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)

.PHONY: deps build release test lint demo demo-check bench docs clean fuzz fuzz-smoke lazyfs test-sanitize example

# Installs the Debian packages the build links against, only when they are missing.
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product boxwood
	$(SWIFT) build -c release --product boxwood-sync-child

# Builds everything (the CLI tests run the built `boxwood` binary), runs every test, then a smoke run of the
# benchmark harness (every engine and workload on a few thousand keys, each result verified).
test: deps
	$(SWIFT) build
	$(SWIFT) test
	$(SWIFT) run boxwood-bench --smoke
	$(MAKE) --no-print-directory demo-check
	$(MAKE) --no-print-directory example
	@if [ "$(FUZZ_SMOKE)" = "0" ]; then echo "fuzz-smoke: skipped (FUZZ_SMOKE=0)"; else $(MAKE) --no-print-directory fuzz-smoke; fi

# The embedding example, a separate package that depends on this checkout's products (README, "Adding Boxwood
# to an app"): built in its own Examples/ChatApp/.build and run; it checks every step and exits 1 on a mismatch.
example: deps
	$(SWIFT) run --package-path Examples/ChatApp ChatApp

# ThreadSanitizer on the concurrency and view suites, AddressSanitizer (with leak checks) on the decoding suites,
# each in its own build directory (.build-tsan, .build-asan); any report fails. Run by .ci/run.
test-sanitize: deps
	SWIFT=$(SWIFT) scripts/test-sanitize.sh

# The platform-layer rule: no OS-specific code in a library outside Sources/BoxwoodPlatform (run by .ci/run).
lint:
	scripts/check-platform-layer.sh

# Benchmarks Boxwood against SQLite (Postbox configuration), LMDB and a raw mmap'ed file on 1,000,000 keys;
# BENCH_ARGS passes options, e.g. `make bench BENCH_ARGS="--quick --json bench.json"`.
bench: deps
	$(SWIFT) build -c release --product boxwood-bench && .build/release/boxwood-bench $(BENCH_ARGS)

# The LazyFS power-loss tests' long run (docs/crash-safety.md): the crash workload on a database inside LazyFS, a
# FUSE file system that drops or tears unsynced writes on command; BOXWOOD_LAZYFS_ROUNDS rounds per test case.
# scripts/lazyfs.sh builds LazyFS once into .build-lazyfs/; without Linux, /dev/fuse or root it prints
# "skipped: <reason>" and this target does nothing more.
BOXWOOD_LAZYFS_ROUNDS ?= 100
lazyfs: deps
	@status=0; scripts/lazyfs.sh check || status=$$?; \
	if [ $$status -eq 77 ]; then exit 0; elif [ $$status -ne 0 ]; then exit $$status; fi; \
	$(SWIFT) build --build-tests && \
	BOXWOOD_LAZYFS_ROUNDS=$(BOXWOOD_LAZYFS_ROUNDS) $(SWIFT) test --skip-build --filter LazyFSTests

# A full sync session: simulated server, a client process syncing under faults (killed and restarted part-way),
# live views of its database in this terminal, and a consistency verdict. DEMO_ARGS passes options.
demo: release
	.build/release/boxwood demo $(DEMO_ARGS)

# A short demo as part of `make test`, on the release build the README's `make demo` uses: it exits 1 unless the
# verdict is `consistent` (release builds have broken what debug-built tests passed: see the channel fetches in
# AccountStateManager+Channels.swift).
demo-check: release
	rm -rf .build/demo-check
	.build/release/boxwood demo --no-tui --duration 6 --data-dir .build/demo-check > .build/demo-check.log 2>&1 || { tail -40 .build/demo-check.log; exit 1; }
	@grep -E "^(verdict|  rich content)" .build/demo-check.log

# Builds the DocC documentation of the BoxwoodStore and Boxwood libraries into docs/api/, one archive per module.
docs: deps
	$(SWIFT) package --allow-writing-to-directory docs/api generate-documentation --target BoxwoodStore \
		--target Boxwood --output-path docs/api --transform-for-static-hosting

# The libFuzzer targets (Fuzz/README.md), built with -sanitize=fuzzer,address into .build-fuzz. `fuzz` runs each
# target FUZZ_SECONDS (default 600), growing .build-fuzz/corpus/<target> and minimizing every crash into
# .build-fuzz/artifacts/<target>; `fuzz-smoke` (part of `make test`; FUZZ_SMOKE=0 skips it) runs each for
# FUZZ_SMOKE_SECONDS from its seeds and fails on a crash. FUZZ_TARGETS picks targets (default: all).
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_TARGETS ?=

fuzz: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf .build .build-fuzz demo-data Examples/ChatApp/.build
