# toolhost — the two commands are `make run` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo

PLUGIN_TARGET := target/plugins
WASM_DIR := $(PLUGIN_TARGET)/wasm32-wasip2/release
# The reviewed reference plugins `make run` serves (hostile fixtures are for tests only).
REFERENCE_PLUGINS := hello
CATALOG := target/catalog
CACHE := target/cwasm
TOOLHOST := target/debug/toolhost

.PHONY: run test lint fmt build plugins catalog bench toolchain clean

## toolchain: what the build needs beyond the machine's Rust (idempotent, quick when done)
toolchain:
	@rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

## build: the host (debug build; the compiler inside it is optimised, see Cargo.toml)
build: toolchain
	$(CARGO) build --workspace --locked

## plugins: every component in plugins/ (reference plugins and hostile fixtures)
plugins: toolchain
	CARGO_TARGET_DIR=$(PLUGIN_TARGET) $(CARGO) build --manifest-path plugins/Cargo.toml \
	  --target wasm32-wasip2 --release --locked

## catalog: pin the reference plugins into a plugin directory
catalog: build plugins
	rm -rf $(CATALOG) && mkdir -p $(CATALOG)
	for p in $(REFERENCE_PLUGINS); do \
	  $(TOOLHOST) plugin pin plugins/$$p/toolhost.toml --component $(WASM_DIR)/$${p//-/_}.wasm --out $(CATALOG) >/dev/null; \
	done

## run: build everything, load the reference catalog and call a tool in the sandbox
run: catalog
	@echo "== catalog ($(CATALOG))"
	@$(TOOLHOST) catalog check --plugins $(CATALOG) --cache-dir $(CACHE)
	@echo "== toolhost call greet '{\"name\":\"world\"}'"
	@$(TOOLHOST) call --plugins $(CATALOG) --cache-dir $(CACHE) greet '{"name":"world"}'
	@echo "Try: $(TOOLHOST) call --plugins $(CATALOG) --cache-dir $(CACHE) word_stats '{\"text\":\"a b a\"}'"

## test: lints, then every test of both workspaces
test: lint
	$(CARGO) test --workspace --locked

## lint: formatting and clippy, warnings are errors
lint: toolchain
	$(CARGO) fmt --all --check
	$(CARGO) fmt --manifest-path plugins/Cargo.toml --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	CARGO_TARGET_DIR=$(PLUGIN_TARGET) $(CARGO) clippy --manifest-path plugins/Cargo.toml \
	  --target wasm32-wasip2 --release --all-targets --locked -- -D warnings

fmt:
	$(CARGO) fmt --all
	$(CARGO) fmt --manifest-path plugins/Cargo.toml --all

## bench: the sandbox benchmark (release build); results go in BENCHMARKS.md
bench: toolchain
	$(CARGO) bench -p toolhost-runtime --bench sandbox --locked

clean:
	$(CARGO) clean
