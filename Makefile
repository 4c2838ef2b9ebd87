# Boxwood — the two setup commands are `make demo` and `make test`; both install what they need.
SWIFT ?= swift
APT_PACKAGES := liblz4-dev pkg-config
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)

.PHONY: deps build release test demo clean

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

# Builds everything (the CLI tests run the built `boxwood` binary), then runs every test.
test: deps
	$(SWIFT) build
	$(SWIFT) test

demo: release
	.build/release/boxwood demo

clean:
	rm -rf .build demo-data
