# The two set-up commands of the README: `make report` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
## The lab's S3 sits behind an emulated network for every report that reads it (labelled as emulation in each
## report's first line): ec2-s3 (same-region S3 from EC2) for the HDFS vs S3, cache-tier and transfer reports,
## onprem-10gbe for the engine x storage matrix (the on-premises study's); s3_distance sets its own distances;
## the NFS and st1 reports do not touch S3. compare_runs compares the latest runs the others made: it renders last.
EC2_S3 := notebooks/hdfs_vs_s3_queries.ipynb notebooks/cache_tier.ipynb notebooks/s3_to_hdfs_transfer.ipynb
ONPREM := notebooks/engine_storage_matrix.ipynb
LAST := notebooks/s3_distance.ipynb notebooks/compare_runs.ipynb
OTHERS := $(filter-out $(EC2_S3) $(ONPREM) $(LAST),$(sort $(wildcard notebooks/*.ipynb)))

## make report's overrides of the notebooks' values (each notebook's value is its experiment's field default or its
## REPORT_DEFAULTS, declared once there; these are the only other place a size is written): each report still answers its question with its intervals (4 runs a query
## and storage, 3 rounds a payoff point, 3 round trips a fit) on fewer queries, files, jobs and settings than the
## notebooks' defaults, which `perfkit report NOTEBOOK` and JupyterLab run. Why: on a fresh 2-core machine the eight
## reports took 1271 s at the defaults, 938 s at these sizes (each right after the lab's first start). HDFS vs S3 runs
## q1 alone: 30 runs, not q1 and q4's 60 (256 s of a warm make report's 1122 s; q1 alone 112-127 s on a later day), in
## 12 rounds, not the notebook's 30: its Findings say the change its rounds could miss (bench/power.py: 15 of 20 at +10%)
REPORT_OVERRIDES_hdfs_vs_s3_queries := -p 'queries=[q1]' -p runs=12
REPORT_OVERRIDES_engine_storage_matrix := -p 'queries={tpch: [q1, q3, q5, q6, q10, q12, q14, q19]}'
## the cache tier's pay-off on q1 alone, without the scan of every column: with Spark and Hive through Alluxio beside
## Trino, the scan's reads took 129 of the sweep's 168 s of reads at its two round trips (three engines, one make report)
REPORT_OVERRIDES_cache_tier := -p 'queries=[q1]' -p copy_object_mb=8 -p payoff_scan=False
## the transfers' parallel methods at 4 at once only (the sequential methods are the one-at-a-time baseline): 146 -> 95 s;
## the S3-distance sweep on q1 and q4 (the narrowest and the widest aggregation): 126 -> 82 s (same day, lab warm)
REPORT_OVERRIDES_s3_to_hdfs_transfer := -p files=4 -p mean_mb=32 -p 'concurrency=[4]'
REPORT_OVERRIDES_nfs_vs_hdfs_reads := -p jobs=4
REPORT_OVERRIDES_s3_distance := -p 'per_connection_mb_s=[40]' -p 'queries=[q1, q4]'
overrides = $(REPORT_OVERRIDES_$(basename $(notdir $(1))))

## what the reports read at their defaults (and what those need): all of the lab but the Spark Thrift Server, which a
## notebook reads only when asked (engines=[spark-thrift]; `perfkit lab up spark-thrift` starts it)
REPORT_SERVICES := alluxio nfs hiveserver2 trino fuse-hdfs

.PHONY: install lab-tools system-deps test-deps report test test-cluster unit unit-py39 lint lab-up lab-down lab-status bench clean

## perfkit's own modules compiled too (seconds the first time, nothing when nothing changed; it is installed editable)
install: system-deps $(VENV)/.installed
	@$(BIN)/python -m compileall -q perfkit

## the lab reads NFS with libnfs (nfs-cat) and mounts HDFS with FUSE: Debian packages (installed when missing, as root)
SYSTEM_PACKAGES := libnfs-utils fuse3
## the browser tests (tests/integration/browser) drive Debian's chromium with Playwright (never `playwright install`'s download);
## only `make test` installs it, so `make report` does not wait for a browser
TEST_PACKAGES := chromium
## $(call apt_install,COMMANDS,PACKAGES,WHAT): install PACKAGES when one of COMMANDS is missing
apt_install = if ! (for c in $(1); do command -v $$c >/dev/null || exit 1; done); then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get install -y -q $(2) || (apt-get update -q && apt-get install -y -q $(2)); \
	  else echo "perfkit: $(3) need $(2): sudo apt-get install $(2)"; exit 1; fi; \
	fi
system-deps:
	@$(call apt_install,nfs-cat fusermount3,$(SYSTEM_PACKAGES),the lab)
test-deps:
	@$(call apt_install,chromium,$(TEST_PACKAGES),the browser tests)

## Python packages are installed with uv (from PyPI, into the venv; pip resolves the same versions): on a fresh
## machine with no cache, perfkit and its extras took pip 168 s and uv 42 s (`make install` in all: 58 s). uv trusts
## the system's certificates, as pip does here, and reads pip's wheel folder when one is set. It compiles the packages'
## bytecode as it installs them, as pip does: where PYTHONDONTWRITEBYTECODE is set (as on this machine), Python never
## writes what it compiled, and every process (each test worker, kernel, CLI call) compiled pandas, scipy and
## matplotlib anew: a report's import cell took 13.7 s, 4.1 s compiled
## $(call uv_install,PYTHON): uv's install into the venv of PYTHON
uv_install = $(if $(PIP_FIND_LINKS),UV_FIND_LINKS=$(PIP_FIND_LINKS)) UV_NATIVE_TLS=1 $(BIN)/uv pip install -q \
	--compile-bytecode --python $(1)
UV = $(call uv_install,$(BIN)/python)

## uv has its own target: a venv made before perfkit installed with uv has the stamps below but no uv
$(BIN)/uv:
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q 'uv>=0.13'

## the venv with what `perfkit.lab` imports (psutil, PyYAML, requests): enough to fetch the lab's tools beside the rest
$(VENV)/.base: | $(BIN)/uv
	$(UV) 'psutil>=6' 'pyyaml>=6' 'requests>=2.31'
	touch $@

## packages left out although a dependency's extra names them: rfc3987-syntax (jsonschema's "iri" format check, through
## jupyter-events) compiles 38 grammars at import; every process that imports papermill or nbformat paid 2.7 s for a
## check nothing here asks for (jsonschema does without it). `perfkit report` took 12.3 s -> 10.7 s on a 3-s notebook
EXCLUDED := rfc3987-syntax

$(VENV)/.installed: pyproject.toml $(VENV)/.base | $(BIN)/uv
	printf '%s\n' $(EXCLUDED) | $(UV) -e '.[dev,lab,report,tools]' --excludes -
	touch $@

## the lab's tools fetched and built once into the tool cache (Go builds, Maven fetches; seconds once they are there).
## `make report` runs it beside the Python install: on a fresh machine each takes minutes, and neither needs the other
lab-tools: system-deps $(VENV)/.base
	$(BIN)/python -m perfkit.lab.fetch

## the main job: bring the lab up and render every notebook into reports/; every step timed, the times printed last
TIMES := reports/.times
## the CPU counters at the start: the times printed last come with how busy the cores were, what the host took of
## them (steal) and one core's time for a fixed piece of work (the same code took 2.5x as long on some days)
CPU := reports/.cpu
## $(call timed,LABEL,COMMAND): runs COMMAND, notes its seconds under LABEL in $(TIMES), keeps its exit status
timed = s=$$(date +%s); $(2); rc=$$?; printf '%-40s %5d s%s\n' "$(1)" $$(( $$(date +%s) - s )) \
	"$$( [ $$rc = 0 ] || echo '  FAILED')" >> $(TIMES); [ $$rc = 0 ]
report:
	@mkdir -p reports; : > $(TIMES); began=$$(date +%s); status=0; $(PYTHON) -m perfkit.machine_load start $(CPU); \
	$(call timed,install (apt + Python) beside the lab's tools,$(MAKE) --no-print-directory -j2 install lab-tools) || exit 1; \
	$(call timed,lab up,$(BIN)/perfkit lab up --network ec2-s3 $(REPORT_SERVICES)) || exit 1; \
	$(foreach nb,$(EC2_S3),$(call timed,$(nb),$(BIN)/perfkit report $(nb) -p network=ec2-s3 $(call overrides,$(nb))) || status=1;) \
	$(foreach nb,$(ONPREM),$(call timed,$(nb),$(BIN)/perfkit report $(nb) -p network=onprem-10gbe $(call overrides,$(nb))) || status=1;) \
	$(foreach nb,$(OTHERS) $(LAST),$(call timed,$(nb),$(BIN)/perfkit report $(nb) $(call overrides,$(nb))) || status=1;) \
	$(BIN)/perfkit lab network ec2-s3; \
	echo; echo "make report: where the time went"; cat $(TIMES); \
	printf '%-40s %5d s\n' "in all" $$(( $$(date +%s) - began )); $(BIN)/python -m perfkit.machine_load since $(CPU); echo; \
	echo "reports/index.html lists every report. The lab stays up, its S3 behind ec2-s3"; \
	echo "(back to S3 on this machine: $(BIN)/perfkit lab network local; stop it: $(BIN)/perfkit lab down)"; exit $$status

## the lab's cluster shape (YARN, three DataNodes, Livy, EMR's notebook path): a lab of its own, `make test-cluster`
CLUSTER_TESTS := tests/integration/test_zzz_cluster_shape_lab.py
## pytest-xdist's workers: the tests that need no lab run side by side, one per core
WORKERS ?= auto
## labs side by side for the integration tests: one per pytest-xdist worker, a test module at a time (the modules
## that use Alluxio as one; worker gwN beyond the first on a lab of its own: tests/integration/conftest.py).
## Two on 2 cores: 1540 s -> 1168 s, 13.5 GB peak
LABS ?= 2

## the linter, the tests that need no lab (in parallel), then the integration and browser tests on $(LABS) one-process
## labs (each started once, shared by its worker's modules, and stopped by the tests); CI runs `make test test-cluster`
test: test-deps unit
	$(BIN)/python -m pytest -n $(LABS) --dist loadfile --no-loadscope-reorder --durations=40 tests/integration --ignore=$(CLUSTER_TESTS)

## the cluster shape's tests, in a lab home and on ports of their own, after the unit tests on the shape's Python 3.9
test-cluster: install unit-py39
	$(BIN)/python -m pytest --durations=30 $(CLUSTER_TESTS)

## the tests that need no lab (unit, and AWS APIs on moto): about a minute
unit: install lint
	$(BIN)/python -m pytest -n $(WORKERS) tests/unit tests/aws

## the same tests on Python 3.9, EMR 7's and the cluster shape's (found as the shape finds it: PERFKIT_CLUSTER_PYTHON,
## else python3.9 on the PATH or under pyenv), in a venv of their own: perfkit with its extras, the cluster's pyspark
## (3.5) in place of the lab's (4.x needs a newer Python)
VENV39 ?= .venv-py39
$(VENV39)/.installed: pyproject.toml | $(VENV)/.installed
	base=$$($(BIN)/python -c 'from perfkit.lab.cluster_spark import base_python; print(base_python())') && \
	  $(BIN)/uv venv -q --allow-existing --python "$$base" $(VENV39)
	printf '%s\n' $(EXCLUDED) | $(call uv_install,$(VENV39)/bin/python) -e '.[dev,report,tools]' --excludes - \
	  pyspark==$$($(BIN)/python -c 'from perfkit.lab.versions import CLUSTER_SPARK; print(CLUSTER_SPARK)')
	touch $@
unit-py39: $(VENV39)/.installed
	@$(VENV39)/bin/python -m compileall -q perfkit
	$(VENV39)/bin/python -m pytest -n $(WORKERS) tests/unit tests/aws

lint: install
	$(BIN)/ruff check perfkit tests bench

lab-up: install
	$(BIN)/perfkit lab up

lab-down: install
	$(BIN)/perfkit lab down

lab-status: install
	$(BIN)/perfkit lab status

## the benchmarks of perfkit against the plain tools at their full sizes (their figures are the point: minutes each).
## `make test` runs each one's --quick mode instead (tests/integration/test_bench.py, tests/aws/test_bench_cloudwatch_calls.py),
## which checks only that it still runs and prints its figures; `make bench BENCH_ARGS=--quick` runs those here
BENCH_ARGS ?=
bench: install
	$(BIN)/perfkit lab up
	$(BIN)/python bench/query_overhead.py $(BENCH_ARGS)
	$(BIN)/python bench/transfer.py $(BENCH_ARGS)
	$(BIN)/python bench/cloudwatch_calls.py $(BENCH_ARGS)
	$(BIN)/python bench/read.py $(BENCH_ARGS)
	$(BIN)/python bench/datagen.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(VENV39) data/generated
