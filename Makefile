# Two commands: `make run` and `make test`. Both create .venv; `run` installs what running
# needs, `test` adds the dev extra (pytest, mypy, ruff, the bench baseline, matplotlib).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# `contract` needs only the installed console script.
STAMP := $(RUN_STAMP)

.PHONY: run test lint bench soak contract check-docker clean

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ventana needs Python 3.11+; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(PY)
	$(PIP) -e .
	@touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(PY)
	$(PIP) -e '.[dev]'
	@touch $(DEV_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(VENV)/bin/ventana run

test: $(DEV_STAMP)
	$(PY) -m pytest -q

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check bot memory providers config tests bench
	$(VENV)/bin/ruff format --check bot memory providers config tests bench
	$(VENV)/bin/mypy

contract: $(STAMP)
	$(PY) ../shared/contract/check_replay_contract.py --with-probes $(VENV)/bin/ventana

# The Dockerfile, compose.yaml and .env.example checked statically (no image registry in CI).
check-docker: $(DEV_STAMP)
	$(PY) -m pytest -q tests/config/test_packaging.py

bench: $(DEV_STAMP)
	$(PY) -m bench

soak: $(DEV_STAMP)
	VENTANA_SOAK_KILLS=200 $(PY) -m pytest -q tests/reliability -k crash

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
