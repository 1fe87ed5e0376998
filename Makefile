# Two commands: `make run` and `make test`. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench soak contract clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ventana needs Python 3.11+; set PYTHON=python3.11")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/ventana run

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check bot memory providers config tests bench
	$(VENV)/bin/ruff format --check bot memory providers config tests bench
	$(VENV)/bin/mypy

contract: $(STAMP)
	$(PY) ../shared/contract/check_replay_contract.py $(VENV)/bin/ventana

bench: $(STAMP)
	$(PY) -m bench

soak: $(STAMP)
	VENTANA_SOAK_KILLS=200 $(PY) -m pytest -q tests/reliability -k crash

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
