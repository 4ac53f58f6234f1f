# Two commands for a fresh machine:  `make run` (set up + start the product)  and  `make test` (set up + whole suite).
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MODEL := models/gpu-advisor.tar.gz
MODEL_INPUTS := config.yml bot/assistant/intent_classifier.py \
	$(shell find domain data bot/assistant/components -type f -not -name '*.pyc' 2>/dev/null)
TRAIN := $(BIN)/rasa train --fixed-model-name gpu-advisor --out models --domain domain --config config.yml --data data

.PHONY: run cluster test setup system-deps cluster-deps model train validate bench screenshots clean check \
	check-unpatched lock

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@PY310=$$(scripts/find_python310.sh) || { echo "Python 3.10 not found: rasa 3.6 needs it (install python3.10, or 'pyenv install 3.10')."; exit 1; }; \
	  [ -x $(BIN)/python ] || $$PY310 -m venv $(VENV)
	@mkdir -p var/log; echo "Installing rasa 3.6 and the project into $(VENV) (about 3 minutes the first time; log: var/log/install.log)…"
	@{ $(BIN)/pip install --upgrade "pip<25" && $(BIN)/pip install -e '.[dev]' -c constraints.txt; } \
	  >var/log/install.log 2>&1 \
	  || { grep -v "^WARNING: Location" var/log/install.log | tail -40; exit 1; }
	@touch $@

# Headless Chromium for the browser tests (Debian's package; Playwright's own browser downloads fail here).
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install chromium"; exit 1; fi; }

# Training prints thousands of progress lines: they go to var/log/train.log, shown only when training fails.
$(MODEL): $(STAMP) $(MODEL_INPUTS)
	@mkdir -p var/log; echo "Training the assistant's model (about 30 s; log: var/log/train.log)…"
	@$(TRAIN) >var/log/train.log 2>&1 || { tail -40 var/log/train.log; exit 1; }
	@touch $@

model: $(MODEL)

train: $(STAMP)
	$(TRAIN) --force

validate: $(STAMP)
	$(BIN)/rasa data validate --domain domain --data data --config config.yml --max-history 5

run: $(MODEL)
	@scripts/run.sh

# HAProxy (Debian's package) for `make cluster`, installed like chromium.
cluster-deps:
	@command -v haproxy >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; \
	  else echo "haproxy is missing: sudo apt-get install haproxy"; exit 1; fi; }

# Two Rasa instances + two action servers behind HAProxy on 127.0.0.1:5000 (README "Cluster"); needs PostgreSQL
# (127.0.0.1:5432) and Redis (6379). Foreground like `make run`: Ctrl-C stops all of it.
cluster: $(MODEL) cluster-deps
	@scripts/cluster.sh

test: $(STAMP) system-deps cluster-deps validate
	@mkdir -p var/log; echo "rasa train --force (log: var/log/train.log)…"
	@$(TRAIN) --force >var/log/train.log 2>&1 || { tail -40 var/log/train.log; exit 1; }
	$(BIN)/pytest

# The one-minute loop: lint (with the complexity gate), types of the pure packages, the tests that need no server,
# no model and no database (a test using a server fixture is e2e: tests/conftest.py), spread over every core
# (pytest-xdist). Needs the venv (`make setup` once); it installs nothing, so it can run in any worktree.
CHECK_TESTS := -n auto -m "not e2e and not browser and not cluster and not postgres"
check:
	@[ -x $(BIN)/ruff ] && [ -x $(BIN)/mypy ] && $(BIN)/python -c "import xdist" 2>/dev/null \
	  || { echo "ruff, mypy or pytest-xdist missing: make setup"; exit 1; }
	$(BIN)/ruff check .
	PYTHONPATH=$(CURDIR) $(BIN)/mypy
	PYTHONPATH=$(CURDIR) $(BIN)/pytest -q $(CHECK_TESTS)

# The conversation suites against Rasa as shipped (bot/assistant/patches/ switched off, in the servers the tests start
# too): the product must not depend on the patches to answer correctly.
UNPATCHED_SUITES := tests/e2e/test_conversations_fa.py tests/e2e/test_conversations_tr.py \
	tests/e2e/test_heldout_conversations.py
check-unpatched: $(MODEL)
	ADVISOR_RASA_PATCHES=off $(BIN)/pytest -q $(UNPATCHED_SUITES)

# constraints.txt: the exact versions of the venv (without the project), used by `make setup`. Regenerate after
# adding or upgrading a dependency.
lock: $(STAMP)
	$(BIN)/pip freeze --exclude-editable --exclude gpu-advisor > constraints.txt

bench: $(MODEL)
	$(BIN)/pytest bench/bench_advice.py --benchmark-only -q
	$(BIN)/python bench/bench_assistant.py

# Re-shoot the README's widget pictures (docs/img/) with the browser test.
screenshots: $(MODEL) system-deps
	UPDATE_README_SCREENSHOTS=1 $(BIN)/pytest tests/test_widget_browser.py -q

clean:
	rm -rf models .rasa var test-artifacts .pytest_cache
