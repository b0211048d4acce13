# neardup — every target that needs Python creates .venv and installs the project on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export PYSPARK_PYTHON := $(abspath $(BIN)/python)

.PHONY: run test test-fast test-browser lint bench golden clean fingerprint dedup spans boilerplate index images

INPUT  ?= samples
OUTPUT ?= out/dedup
SPARK_SUBMIT = $(BIN)/spark-submit --properties-file conf/spark-local.conf \
	--driver-java-options "-Dlog4j2.configurationFile=file:$(abspath conf/log4j2.properties)"

# uv installs (pip bootstraps it): on a clean machine 38 s against pip's 108 s. Its cache is
# the project's own (build/uv-cache, gone with `make clean`): uv builds pyspark from its sdist
# at every install and keeps each build (1.5 GB) under a new key, so the build is dropped once
# installed; the wheels stay for build/env (hard links: no second copy on disk).
export UV_CACHE_DIR := $(abspath build/uv-cache)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	$(BIN)/uv cache clean --quiet pyspark
	touch $(STAMP)

# a venv made before uv was part of the install
$(BIN)/uv: | $(STAMP)
	$(BIN)/python -m pip install --quiet uv

## make run: the dedup job on the bundled samples in local mode, then the families it found
run: $(STAMP)
	$(SPARK_SUBMIT) jobs/dedup.py --config conf/dedup.toml --input samples --output out/run
	@echo
	$(BIN)/neardup clusters out/run

## make dedup INPUT=... OUTPUT=... [ARGS="--method simhash ..."]: the dedup job, local mode
dedup: $(STAMP)
	$(SPARK_SUBMIT) jobs/dedup.py --config conf/dedup.toml --input $(INPUT) --output $(OUTPUT) $(ARGS)

## make index: the weekly pattern on the samples: dedup against an index, then add to it
index: $(STAMP)
	$(SPARK_SUBMIT) jobs/dedup.py --config conf/dedup.toml --input samples --output out/index-run \
		--against out/index --update-index --batch-id samples
	$(BIN)/neardup similar --index out/index --top 3 samples/harbour-storm.txt

## make spans: where the near-duplicates of `make run` overlap (winnowing spans per cluster pair)
spans: $(STAMP)
	test -f out/run/_MANIFEST.json || $(SPARK_SUBMIT) jobs/dedup.py --config conf/dedup.toml \
		--input samples --output out/run
	$(SPARK_SUBMIT) jobs/spans.py --config conf/spans.toml --input samples \
		--pairs out/run/clusters --output out/spans
	$(BIN)/python -c "import pyarrow.parquet as pq; \
		print(pq.read_table('out/spans/pair_summary').to_pandas().sort_values(['a_id','b_id']).to_string(index=False))"

## make boilerplate [ARGS="--keep one"]: passages shared by >= 3 of the bundled samples, and the cleaned texts
boilerplate: $(STAMP)
	$(SPARK_SUBMIT) jobs/boilerplate.py --config conf/boilerplate.toml --input samples \
		--output out/boilerplate $(ARGS)
	$(BIN)/python -c "import pyarrow.parquet as pq; \
		t = pq.read_table('out/boilerplate/boilerplate_top').to_pandas(); \
		t['passage'] = t['passage'].str.replace('\n', ' ').str.slice(0, 70); \
		print(t.sort_values(['docs', 'length'], ascending=False).to_string(index=False))"

## make images INPUT=... OUTPUT=... [ARGS="--max-distance 8 ..."]: the images job, local mode
images: $(STAMP)
	$(SPARK_SUBMIT) jobs/images.py --config conf/images.toml --input $(INPUT) --output $(OUTPUT) $(ARGS)

## make fingerprint INPUT=... OUTPUT=...: the Spark fingerprint job in local mode
fingerprint: $(STAMP)
	$(SPARK_SUBMIT) jobs/fingerprint.py --input $(INPUT) --output $(OUTPUT) $(ARGS)

## make package: cluster artifacts in dist/ (docs/cluster.md): the wheel, a
## --py-files zip of neardup_udfs, and a venv-pack archive of a runtime env (build/env)
.PHONY: package
VERSION  := $(shell sed -n 's/^version *= *"\(.*\)"/\1/p' pyproject.toml)
WHEEL    := dist/neardup-$(VERSION)-py3-none-any.whl
PKG_SRC  := $(shell find neardup_udfs -name __pycache__ -prune -o -type f \
	\( -name '*.py' -o -name '*.json' \) -print)
RUNTIME  := build/env
SITE     := lib/python*/site-packages
# Not in the archive: test suites, make's stamp (pyspark and py4j are not installed in it: the
# cluster's Spark provides them, executors import pyspark from $SPARK_HOME/python/lib/pyspark.zip)
PACK_EXCLUDE := $(SITE)/*/tests/* bin/__pycache__/* .installed

package: $(WHEEL) dist/neardup_udfs.zip dist/neardup-env.tar.gz
	@ls -l $^

$(WHEEL): $(STAMP) pyproject.toml $(PKG_SRC)
	rm -rf build/lib build/bdist.* dist/neardup-*.whl  # setuptools keeps deleted modules there
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist .

# the wheel's neardup_udfs/ (sources and data/*.json, no __pycache__) at the zip's root
dist/neardup_udfs.zip: $(WHEEL)
	rm -rf build/pyfiles $@
	$(BIN)/python -m zipfile -e $(WHEEL) build/pyfiles
	$(BIN)/python -m zipfile -c $@ build/pyfiles/neardup_udfs

# a fresh runtime env when pyproject.toml or its recipe changes; else only the wheel is reinstalled
$(RUNTIME)/pyvenv.cfg: pyproject.toml Makefile
	rm -rf $(RUNTIME)
	$(PYTHON) -m venv --without-pip $(RUNTIME)

# without pyspark and what only it needs (py4j, the Connect client's grpc): the cluster's
# Spark provides pyspark, and neither building (1.5 GB) nor installing it (0.5 GB) is paid
$(RUNTIME)/.installed: $(RUNTIME)/pyvenv.cfg $(WHEEL) $(BIN)/uv
	echo pyspark > build/runtime-excludes.txt
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(RUNTIME)/bin/python \
		--excludes build/runtime-excludes.txt $(WHEEL)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(RUNTIME)/bin/python --no-deps \
		--reinstall-package neardup $(WHEEL)
	touch $@

dist/neardup-env.tar.gz: $(RUNTIME)/.installed
	$(BIN)/venv-pack --quiet --force --prefix $(RUNTIME) --output $@ \
		$(foreach p,$(PACK_EXCLUDE),--exclude '$(p)')
	chmod 644 $@

## make test: lint, then every kernel, stage, job and CLI test (the fast tier, no e2e)
test: $(STAMP)
	@# numba compiles the kernels on one core while the linters run on the other
	$(BIN)/python tests/warm_kernels.py & warm=$$!; \
		$(MAKE) --no-print-directory lint; lint=$$?; wait $$warm && test $$lint = 0
	@# two pytest workers, each with its own local[2] session: both cores busy (the tier is
	@# CPU-bound; a third worker is slower) (docs/design-notes.md)
	$(BIN)/python -m pytest -q -m "not e2e" -n 2 --dist worksteal

## make test-fast: every test that needs no JVM (kernels, config, flags, CLI, README and docs, layout)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not spark and not e2e"

## make test-e2e: the end-to-end tier: spark-submit of every job, the standalone cluster and
## its fault test, report.html in headless chromium (installs Debian's), the Airflow DAG
.PHONY: test-e2e chromium
test-e2e: $(STAMP) chromium test-airflow
	@# two pytest workers, a test file each at a time: the cluster test and the Connect server
	@# (each several minutes of waiting on JVMs) run side by side
	$(BIN)/python -m pytest -q -m e2e -n 2 --dist loadfile
	@echo "screenshot: out/report-screenshot.png"

chromium:
	command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

## make test-browser: report.html rendered by headless Chromium (installs Debian's chromium)
test-browser: $(STAMP) chromium
	$(BIN)/python -m pytest -q -m browser
	@echo "screenshot: out/report-screenshot.png"

## make coverage: both tiers (not Airflow) with line coverage of neardup_udfs and jobs
.PHONY: coverage
coverage: $(STAMP) chromium
	$(BIN)/python -m pytest -q --cov=neardup_udfs --cov=jobs --cov-report=term \
		--cov-report=json:out/coverage.json

## make test-airflow: the Airflow DAG (conf/airflow) and its tests (tests_airflow), in a venv
## of their own, .venv-airflow (the main one has no Airflow); no Airflow DB, scheduler or Spark
.PHONY: test-airflow
AIRFLOW_VENV  := .venv-airflow
AIRFLOW_STAMP := $(AIRFLOW_VENV)/.installed
AIRFLOW_PINS  := 'apache-airflow>=3.3,<4' 'apache-airflow-providers-apache-spark>=6.3,<7' \
	'pytest>=8' 'pytest-timeout>=2.3'

# reinstalled (a no-op unless the pins changed) when this Makefile changes; '*' in its own
# .gitignore keeps the venv out of git
$(AIRFLOW_STAMP): Makefile
	test -x $(AIRFLOW_VENV)/bin/python || $(PYTHON) -m venv $(AIRFLOW_VENV)
	echo '*' > $(AIRFLOW_VENV)/.gitignore
	$(AIRFLOW_VENV)/bin/python -m pip install --quiet --upgrade pip uv
	$(AIRFLOW_VENV)/bin/uv pip install --quiet --python $(AIRFLOW_VENV)/bin/python $(AIRFLOW_PINS)
	touch $@

test-airflow: $(AIRFLOW_STAMP)
	mkdir -p $(AIRFLOW_VENV)/airflow-home
	AIRFLOW_HOME=$(abspath $(AIRFLOW_VENV))/airflow-home \
		$(AIRFLOW_VENV)/bin/python -m pytest -q tests_airflow

lint: $(STAMP)
	$(BIN)/ruff check $(wildcard neardup_udfs jobs tests bench conf/airflow tests_airflow)
	$(BIN)/mypy

## make bench: throughput figures; installs the compared libraries into the venv (bench only)
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet datasketch simhash imagehash
	$(BIN)/python bench/bench_ditto.py
	@echo
	$(BIN)/python bench/bench_semblance.py
	@echo
	$(BIN)/python bench/bench_text_presets.py
	@echo
	$(BIN)/python bench/bench_phash.py
	@echo
	$(BIN)/python bench/bench_winnow.py
	@echo
	$(BIN)/python bench/bench_dedup.py
	$(BIN)/python bench/bench_dedup.py --large-only --scale 500000
	@echo
	$(BIN)/python bench/bench_hamming.py --docs 50000
	$(BIN)/python bench/bench_hamming.py --docs 500000 --systems io-floor,minhash,simhash
	$(BIN)/python bench/bench_stream_floors.py out/bench_hamming/corpus-500000.jsonl
	$(BIN)/python bench/bench_hamming.py --docs 2000000 --systems io-floor,minhash --timeout 3000
	@echo
	$(BIN)/python bench/bench_floor.py --docs 1334 --runs 3
	@echo
	$(BIN)/python bench/bench_library.py --runs 3
	@echo
	$(BIN)/python bench/bench_image_keys.py --images 100000 --subset 10000
	@echo
	$(BIN)/python bench/bench_clustering.py --json out/bench_clustering.json
	@echo
	$(BIN)/python bench/bench_dense.py --corpus long --docs 50000 --runs 3 --with-conf \
		--systems job,exact,datatrove,mllib --timeout 3600 --mllib-runs 1 --mllib-timeout 1800
	@echo
	$(BIN)/python bench/bench_dense.py --corpus short --runs 3 \
		--systems job,job-spark,job-1core,floor,exact,datatrove,mllib --timeout 3600 \
		--mllib-runs 1 --mllib-timeout 1800
	@echo
	$(BIN)/python bench/bench_containment.py
	$(BIN)/python bench/bench_containment.py --dense --runs 3
	@echo
	$(BIN)/python bench/bench_index.py
	@echo
	$(BIN)/python bench/bench_warc.py
	@echo
	$(BIN)/python bench/bench_images.py

## make golden: the only way tests/golden changes (copies the reference goldens from ../shared)
golden:
	cp ../shared/golden/generated-ditto.json tests/golden/
	cp ../shared/golden/unicode-15.0.0-go-and-semblance-tables.json tests/golden/
	cp ../shared/golden/generated-semblance.json ../shared/golden/semblance-minhash-testdata-golden.json ../shared/golden/semblance-simhash-testdata-golden.json tests/golden/
	cp ../shared/golden/generated-fingerprint.json ../shared/golden/generated-anchor-fingerprint.json ../shared/golden/unicode-17.0.0-rust-anchor-tables.json tests/golden/
	mkdir -p tests/golden/phash-images && cp ../shared/golden/phash-images/* tests/golden/phash-images/

clean:
	rm -rf $(VENV) $(AIRFLOW_VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis out
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
