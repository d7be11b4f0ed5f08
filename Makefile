# The two commands of the quick start: `make gate` and `make test`.
# Each creates .venv and installs opcert with every extra it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: gate test reports install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch 2.13.0 first: the CPU wheel on the machine; a bare `torch` would fetch CUDA builds.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test,runtimes,more-runtimes,report,dask]'
	touch $(STAMP)

install: $(STAMP)

# The built-in gate: the whole catalog against opcert's implementation, with every proof.
gate: $(STAMP)
	$(BIN)/opcert gate --report build/gate --json build/gate/gate.json --junit build/gate/junit.xml

# Regenerate the committed reports (reports/opcert.toml: opcert, NumPy formulas, ONNX Runtime, torch).
reports: $(STAMP)
	$(BIN)/opcert gate --config reports/opcert.toml --report reports --json reports/gate.json \
	  --junit reports/junit.xml; test $$? -le 1   # exit 1 = some runtimes fail their budgets: reported

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

clean:
	rm -rf $(VENV)
