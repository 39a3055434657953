# make run       : set everything up and run the console (web, Celery worker and beat) with demo data.
# make test      : the whole test suite, in parallel (one process per core, each its own databases).
# make test-fast : everything but the tests marked slow (servers, Celery workers, the browser).
# make ci        : lint, typecheck and the whole suite (what .ci/run runs).
# With no DATABASE_URL / REDIS_URL in the environment (or .env), both use embedded PostgreSQL and
# Redis kept under ./var/ (python -m console.devservers).

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DEBUG ?= true

# pytest-xdist: TEST_WORKERS processes ("auto": one per core), each with its own test databases
# (pytest-django names them test_<name>_gw<N>); the tests that share the clock's Redis database
# form one group, run by one worker in order. TEST_WORKERS=0 runs in this process.
TEST_WORKERS ?= auto
PYTEST_PARALLEL = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup)

.PHONY: run test test-fast ci venv services migrate demo lint typecheck stop-services clean

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: Python 3.11 is needed"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,embedded,run]"
	$(PY) -m pip install --quiet -e ./clients/python
	touch $@

venv: $(VENV)/.installed

# Start the embedded servers unless both URLs are configured. SERVICES_OWNER: who answers for the
# servers this starts (a developer's outlive everything; a test run's stop when the suite ends).
SERVICES_OWNER ?= developer
services: venv
	@if [ -z "$$DATABASE_URL" ] || [ -z "$$REDIS_URL" ]; then \
		if grep -qs '^DATABASE_URL=' .env && grep -qs '^REDIS_URL=' .env; then \
			echo "using DATABASE_URL and REDIS_URL from .env"; \
		else $(PY) -m console.devservers start --owner $(SERVICES_OWNER); fi; \
	else echo "using DATABASE_URL and REDIS_URL from the environment"; fi

migrate: services
	$(PY) manage.py create_databases
	$(PY) manage.py migrate --no-input
	$(PY) manage.py migrate --no-input --database keys
	$(PY) manage.py setup_roles

demo: migrate
	$(PY) manage.py seed_demo --if-empty

run: demo
	@echo ""
	@echo "  Console:  http://127.0.0.1:$(PORT)/   (log in as printed by seed_demo above)"
	@echo "  API docs: http://127.0.0.1:$(PORT)/api/docs/"
	@echo ""
	PORT=$(PORT) $(VENV)/bin/honcho start -f Procfile.dev

# What a test run starts, it stops: the embedded servers it had to start are stopped when the
# suite ends, pass or fail (those a developer started with `make services` or `make run` stay).
test: venv
	@$(MAKE) --no-print-directory services SERVICES_OWNER=test
	@status=0; $(PY) -m pytest $(PYTEST_PARALLEL) || status=$$?; \
		$(PY) -m console.devservers release --owner test; exit $$status

test-fast: venv
	@$(MAKE) --no-print-directory services SERVICES_OWNER=test
	@status=0; $(PY) -m pytest -m "not slow" $(PYTEST_PARALLEL) || status=$$?; \
		$(PY) -m console.devservers release --owner test; exit $$status

ci: lint typecheck test

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: venv
	$(VENV)/bin/mypy .

stop-services: venv
	$(PY) -m console.devservers stop

clean: stop-services
	rm -rf var $(VENV)
