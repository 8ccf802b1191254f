# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
DEMO_SAMPLE ?= samples/mariadb-10.11/types_full.binlog

.PHONY: install install-dev server-deps peers compat demo lint docs test test-fast samples bench

install:
	$(PIP) install -q -e .

# Tests need the dev tools (with the [crypt] extra: cryptography) and the [spark] extra
# (pyspark, pyarrow; Java 17 is on the machine).
install-dev:
	$(PIP) install -q -e '.[dev,spark]'

# Tests start a real mariadbd on loopback: install Debian's server when it is absent.
server-deps:
	@if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then \
		echo "installing Debian's mariadb-server (needed by the tests)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null; \
	fi

# The real peers the tests run against (go-mysql as TiDB DM configures it, Debezium, TiDB...),
# pinned by tests/peers/<name>/ and built once into ~/.cache/binlog-temporal/peers
# ($BINLOG_PEERS_CACHE) from the Go module proxy and Maven Central (tests/peers/build.py).
peers:
	$(PYTHON) tests/peers/build.py all

# docs/compatibility.md: every peer (go-mysql as DM configures it, python-mysql-replication,
# mariadb-binlog, a MariaDB replica, ...) on every cell of the temporal corpus, on the original
# and on the rewritten binlog, from real runs (tests/peers/compat.py; about a minute).
compat: peers
	PATH="$$PATH:/usr/sbin" $(PYTHON) tests/peers/compat.py

demo: install
	@echo "== binlog dump --format text (first events and rows of $(DEMO_SAMPLE)) =="
	@binlog dump --format text $(DEMO_SAMPLE) | head -n 60
	@echo
	@echo "== binlog dump --format json (first rows) =="
	@binlog dump --format json $(DEMO_SAMPLE) | head -n 8
	@echo
	@echo "== legacy MariaDB 5.3 temporals, tables created before the binlog: without a schema, a clear error =="
	@binlog dump samples/mariadb-10.11/temporal_predump.binlog > /dev/null || true
	@echo
	@echo "== ...and with the schema dump taken when the binlog started: exact values =="
	@binlog dump --schema-ddl samples/mariadb-10.11/temporal_predump.schema.sql --table tp.tt samples/mariadb-10.11/temporal_predump.binlog

# The linters alone: ruff (pyflakes, bugbear, import order) and mypy (binlog/,
# schema_store/, spark_ingest/, bodies of unannotated functions too); settings in pyproject.toml.
lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy

# The documentation site (mkdocs.yml) into site/, strict: a broken link or anchor, a page
# missing from nav, or an option/exit-code table that differs from the code
# (tools/docs_reference.py) fails it.  No -q: mkdocs' strict mode counts only the
# warnings it logs.
docs:
	$(PYTHON) -m mkdocs build --strict

# The linters and the site first (either failing fails the target), then the suite.
test: install-dev server-deps peers
	$(MAKE) lint docs
	PATH="$$PATH:/usr/sbin" BINLOG_REQUIRE_SERVER=1 BINLOG_REQUIRE_SPARK=1 BINLOG_REQUIRE_PEERS=1 \
		BINLOG_REQUIRE_COMPILED=1 $(PYTHON) -m pytest -q

# The tests that need neither a server nor the [spark] extra and are not slow (the kinds
# are markers: docs/testing.md).
test-fast:
	$(PYTHON) -m pytest -q -m "not server and not spark and not slow"

# Regenerate the sample corpus on the local mariadbd (see samples/README.md).
samples: install-dev server-deps
	PATH="$$PATH:/usr/sbin" $(PYTHON) samples/generate.py

# Decoder benchmark: generates 2 x 205 MB binlogs on the local mariadbd the first time,
# then times every contender (mariadb-binlog, python-mysql-replication, this tool's
# outputs) on one core in one run, with the apply and Spark decode benches, and prints
# each ratio against its target (bench/run.py TARGETS); see BENCHMARKS.md.
bench: install-dev server-deps
	PATH="$$PATH:/usr/sbin" $(PYTHON) bench/run.py

# Spark: the [spark] extra (pyspark, pyarrow; needs Java 17), its tests, its benchmark.
.PHONY: install-spark test-spark bench-spark
install-spark:
	$(PIP) install -q -e '.[spark,dev]'

test-spark: install-spark
	BINLOG_REQUIRE_SPARK=1 $(PYTHON) -m pytest -q -m spark

bench-spark: install-spark server-deps
	PATH="$$PATH:/usr/sbin" $(PYTHON) bench/spark_bench.py run --tables --repeat 3

# Fuzzing (fuzz/RESULTS.md).  The extensions are built with AddressSanitizer + UBSan into
# a temporary directory (never into the package: fuzz/sanitize.py); a self-check builds a
# scratch copy with one bound removed and requires ASan to report it; then, under the
# sanitizers, the fuzz tests (the modules marked fuzz: differential, mutation, names,
# protocol; the regressions) and the atheris
# harnesses: the whole-dump target and the differential one (compiled vs pure), each on
# FUZZ_JOBS processes for FUZZ_SECONDS, or until FUZZ_RUNS inputs ran in all (-1: no
# limit).  gcc, its sanitizer runtimes and atheris are installed when missing.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_JOBS ?= 1
FUZZ_TARGETS ?= differential binlog protocol
.PHONY: fuzz fuzz-deps
fuzz-deps:
	@$(PYTHON) -c "import atheris" 2>/dev/null || $(PIP) install -q atheris
	@if ! command -v gcc >/dev/null 2>&1 || ! gcc -print-file-name=libasan.so | grep -q / \
			|| ! gcc -print-file-name=libubsan.so | grep -q /; then \
		echo "installing gcc and its sanitizer runtimes (libasan, libubsan)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libasan8 libubsan1 >/dev/null; \
	fi

# FUZZ_BUILD: where the sanitized builds go (default: a new temporary directory, removed after)
fuzz: fuzz-deps
	@set -e; build=$${FUZZ_BUILD:-$$(mktemp -d /tmp/binlog-sanitized-XXXXXX)}; \
	$(PYTHON) fuzz/sanitize.py build $$build/sanitized; \
	$(PYTHON) fuzz/sanitize.py self-check $$build/broken; \
	$(PYTHON) fuzz/sanitize.py run $$build/sanitized -- $(PYTHON) -m pytest -p sanitize -q -p no:cacheprovider \
		tests/hostile/test_differential.py tests/hostile/test_mutation.py tests/hostile/test_names.py \
		tests/hostile/test_protocol.py tests/binlog/rewrite/test_rewrite_mutation.py tests/hostile/test_regressions.py \
		tests/binlog/test_speedups.py tests/binlog/test_scan.py tests/binlog/test_checksum.py; \
	for target in $(FUZZ_TARGETS); do \
		$(PYTHON) fuzz/run.py --target $$target --sanitized $$build/sanitized \
			--seconds $(FUZZ_SECONDS) --runs $(FUZZ_RUNS) --jobs $(FUZZ_JOBS); \
	done; \
	[ -n "$(FUZZ_BUILD)" ] || rm -rf $$build
