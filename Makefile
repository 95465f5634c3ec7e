# The two commands of the README: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is only needed by `memlint confirm` / `estimate` and their tests; pinned so pip takes the
# local CPU build instead of the newest CUDA one.
TORCH_SPEC ?= torch==2.13.0

.PHONY: demo test determinism fuzz docs venv clean-venv

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'  # 25.1: --group (PEP 735 dependency groups)
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.test-installed: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e . --group test '$(TORCH_SPEC)'
	touch $@

venv: $(VENV)/.installed

demo: $(VENV)/.installed
	@echo "== memlint check fixtures/"
	$(BIN)/memlint check fixtures/ || true
	@echo
	@echo "== memlint check --diff --unsafe-fixes fixtures/  (what --fix would change; nothing is written)"
	$(BIN)/memlint check --diff --unsafe-fixes fixtures/ || true

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest

# The suite in a fresh clone of HEAD at 1, 2 and 4 threads, each in a random order, twice over (about six
# times `make test`); fails if any run fails or leaves a file in the clone. See docs/reliability.md.
determinism: $(VENV)/.test-installed
	$(BIN)/python bench/determinism.py

# The generated-program property test with many more examples (EXAMPLES=2000 by default).
fuzz: $(VENV)/.test-installed
	$(BIN)/python bench/fuzz.py $(or $(EXAMPLES),2000)

docs: $(VENV)/.installed
	$(BIN)/python -m memlint.commands.ruledocs docs/rules README.md
	$(BIN)/python -m memlint.commands.schema > docs/memlint.schema.json

clean-venv:
	rm -rf $(VENV)
