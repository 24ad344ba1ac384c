# The two commands: `make demo` and `make test`. Both create .venv and install the project into it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# `make test` also installs the built wheel here, apart from the source tree, and smoke-tests it.
WHEEL_VENV := .venv-wheel

.PHONY: demo test unit-test doc-test wheel-test bench clean

$(STAMP): pyproject.toml requirements-ci.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-ci.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m actuator_gym demo

# The installed-wheel smoke test first, then every python block of README.md and docs/ as written
# (pytest-markdown-docs: each block a whole program, run as a script in a temporary folder; docs/conftest.py),
# then the whole suite (whose summary line closes the log). Both run in one worker per core
# (pytest-xdist; each test is independent of the others' order).
DOCS  := $(PY) -m pytest -n auto --dist worksteal -p no:cacheprovider --markdown-docs README.md docs
SUITE := $(PY) -m pytest -n auto --dist worksteal tests

test: $(STAMP)
	@$(MAKE) --no-print-directory wheel-test
	$(DOCS)
	$(SUITE)

unit-test: $(STAMP)
	$(SUITE)

doc-test: $(STAMP)
	$(DOCS)

# Build the wheel, install it (with the pinned dependencies) into a fresh environment, and run
# tests_installed/ with that environment's Python from an empty temporary folder.
wheel-test: $(STAMP)
	rm -rf dist $(WHEEL_VENV) build
	$(PY) -m pip wheel -q --no-deps --no-build-isolation . -w dist
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q -c requirements-ci.txt "$$(ls dist/actuator_gym-*.whl)[onnx,onnxruntime,sysid,test]"
	tmp=$$(mktemp -d) && cd $$tmp && ACTUATOR_GYM_REPO="$(CURDIR)" "$(CURDIR)/$(WHEEL_VENV)/bin/python" \
		-m pytest -q -p no:cacheprovider --rootdir="$$tmp" "$(CURDIR)/tests_installed"; \
		rc=$$?; rm -rf "$$tmp"; exit $$rc

bench: $(STAMP)
	$(PY) benchmarks/actuator_step.py

clean:
	rm -rf $(VENV) $(WHEEL_VENV) build dist *.egg-info
