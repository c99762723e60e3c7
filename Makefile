# Two commands: `make run` starts flynn, `make test` runs every check. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint typecheck format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps re-run the install whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/flynn chat

test: $(VENV)/.installed-dev
	$(BIN)/ruff format --check flynn tests
	$(BIN)/ruff check flynn tests
	$(BIN)/mypy
	$(BIN)/pytest -q

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check flynn tests

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

format: $(VENV)/.installed-dev
	$(BIN)/ruff format flynn tests
	$(BIN)/ruff check --fix flynn tests

bench: $(VENV)/.installed
	$(BIN)/flynn bench turn --messages 100000 --facts 10000

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
