# The two set-up commands of the README: `make report` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
NOTEBOOKS := $(wildcard notebooks/*.ipynb)

.PHONY: install report test lab-up lab-down lab-status bench clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

## the main job: bring the lab up and render every notebook into reports/
report: install
	$(BIN)/perfkit lab up
	@status=0; for nb in $(NOTEBOOKS); do $(BIN)/perfkit report $$nb || status=1; done; \
	echo "reports/index.html lists every report. Stop the lab with: $(BIN)/perfkit lab down"; exit $$status

## unit tests, then integration tests on the lab (started and stopped by the tests)
test: install
	$(BIN)/python -m pytest

lab-up: install
	$(BIN)/perfkit lab up

lab-down: install
	$(BIN)/perfkit lab down

lab-status: install
	$(BIN)/perfkit lab status

bench: install
	$(BIN)/perfkit lab up
	$(BIN)/python bench/query_overhead.py
	$(BIN)/python bench/transfer.py
	$(BIN)/python bench/cloudwatch_calls.py

clean:
	rm -rf $(VENV) data/generated
