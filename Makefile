# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: demo demo-reset worker test lint lock install install-dev browser services serve migrate clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "Parley needs $(PYTHON) on PATH (or run: make PYTHON=python3 ...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Every dependency comes at the version its lock file pins (`make lock` writes them); Parley itself
# is installed on top without resolving anything again.
$(VENV)/.installed: requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.lock pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The targets below are for a developer's machine: debug mode, a key kept under var/. Parley's
# default is DEBUG off, which wants SECRET_KEY and ALLOWED_HOSTS (a production server sets them).
demo serve migrate worker: export DEBUG ?= true

migrate: install
	$(BIN)/python manage.py migrate --no-input $(MIGRATE_FLAGS)

## demo: set up everything, load the demo data and serve it on http://$(HOST):$(PORT)/; the login
## links and passwords come last, and the server's request log goes to var/access.log
demo: MIGRATE_FLAGS = --verbosity 0
demo: migrate
	$(BIN)/python manage.py load_demo --no-logins --base-url http://$(HOST):$(PORT)
	$(BIN)/python manage.py load_demo_studies --base-url http://$(HOST):$(PORT)
	$(BIN)/python manage.py load_demo_chat --base-url http://$(HOST):$(PORT)
	@echo
	@$(BIN)/python manage.py demo_logins --base-url http://$(HOST):$(PORT)
	@echo "Parley is at http://$(HOST):$(PORT)/ (Ctrl-C stops it; requests are logged to $${PARLEY_VAR_DIR:-var}/access.log,"
	@echo "its task consumer's work to $${PARLEY_VAR_DIR:-var}/consumer.log)"
	@$(BIN)/python manage.py run_huey >$${PARLEY_VAR_DIR:-var}/consumer.log 2>&1 & consumer=$$!; \
	  trap 'interrupted=1' INT; \
	  $(BIN)/python -m config.serve -v 0 --access-log $${PARLEY_VAR_DIR:-var}/access.log -b $(HOST) -p $(PORT) \
	    config.asgi:application; status=$$?; \
	  [ -n "$$interrupted" ] || kill -INT $$consumer 2>/dev/null; wait $$consumer; exit $$status

## worker: a task consumer (`manage.py run_huey`; workers and their kind from PARLEY_TASK_WORKERS and
## PARLEY_TASK_WORKER_TYPE). More machines: the README's "Processes" says what each needs. Exactly one
## consumer of a deployment runs the periodic upkeep: PERIODIC=0 on every other.
worker: install
	$(BIN)/python manage.py run_huey $(if $(filter 0,$(PERIODIC)),--no-periodic)

## demo-reset: start the demo over on an empty embedded database (the venv and secret key stay)
demo-reset:
	@test -z "$$DATABASE_URL" || { echo "demo-reset deletes only the embedded SQLite database; drop and recreate \
	the DATABASE_URL database yourself, then run make demo"; exit 1; }
	rm -f $${PARLEY_VAR_DIR:-var}/parley.sqlite3 $${PARLEY_VAR_DIR:-var}/parley.sqlite3-wal \
	  $${PARLEY_VAR_DIR:-var}/parley.sqlite3-shm
	$(MAKE) demo

serve: migrate
	$(BIN)/python -m config.serve -b $(HOST) -p $(PORT) config.asgi:application

## browser: the Chromium that end-to-end tests drive (Debian's package)
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }

## services: in CI, start PostgreSQL and Redis when they are not running
services:
	bash .ci/services

## test: install and run every test (CI=true: PostgreSQL + Redis, which must be up, then the
## concurrency tests once more on the embedded SQLite default, whose locking differs; pytest's
## exit status 5 there only means PYTEST_ARGS selected none of them); the ten slowest tests are listed
ifeq ($(CI),true)
test: export DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/parley
test: export REDIS_URL ?= redis://127.0.0.1:6379/0
test: export PARLEY_REQUIRE_BACKENDS := true
test: install-dev browser services
else
test: install-dev browser
endif
	$(BIN)/ruff check .
	$(BIN)/python -m pytest --durations=10 $(PYTEST_ARGS)
ifeq ($(CI),true)
	env -u DATABASE_URL -u REDIS_URL PARLEY_REQUIRE_BACKENDS=false \
	  $(BIN)/python -m pytest -m concurrency $(PYTEST_ARGS) || [ $$? -eq 5 ]
endif

## lock: pin pyproject.toml's dependencies in requirements.lock (the demo's) and requirements-dev.lock
## (the tests'), keeping existing pins; `make lock UPGRADE=1` moves every pin to the newest allowed
## release, `make lock UPGRADE=litellm` just that one package. Commit both files.
COMPILE = $(BIN)/pip-compile --quiet --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links
lock: | $(BIN)/python
	@test -x $(BIN)/pip-compile || $(BIN)/pip install --quiet pip-tools
	$(COMPILE) $(if $(filter 1,$(UPGRADE)),--upgrade,$(if $(UPGRADE),--upgrade-package $(UPGRADE))) \
	  -o requirements.lock pyproject.toml
	$(COMPILE) --extra dev $(if $(filter 1,$(UPGRADE)),--upgrade,$(if $(UPGRADE),--upgrade-package $(UPGRADE))) \
	  -c requirements.lock -o requirements-dev.lock pyproject.toml

## lint: static checks only
lint: install-dev
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var .pytest_cache
