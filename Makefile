# The two commands of the quick start: `make gate` and `make test`.
# Each creates .venv and installs opcert with every extra it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: gate test reports docs install clean

# pip installs without compiling every module of every package to bytecode (torch's, JAX's, OpenVINO's:
# 106.5 s of install instead of 44.7 s on a 2-core host, measured); Python compiles what is imported, once,
# when it may write bytecode. So the recipes may, whatever the shell says (PYTHONDONTWRITEBYTECODE would
# have every process compile those modules from source again).
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch pinned to 2.13.0: the CPU wheel on the machine (a bare `torch` would fetch CUDA builds); in the same
	# resolution as the rest (two pip runs took 120-155 s, one 112 s).
	$(BIN)/pip install --quiet --no-compile torch==2.13.0 -e '.[test,runtimes,dask,docs]'
	touch $(STAMP)

install: $(STAMP)

# The built-in gate: the whole catalog against opcert's implementation, with every proof.
gate: $(STAMP)
	$(BIN)/opcert gate --report build/gate --json build/gate/gate.json --junit build/gate/junit.xml

# The runtimes' reports (reports/opcert.toml: opcert, ONNX Runtime, onnx.reference, torch, JAX, OpenVINO):
# the full report in build/reports/ (HTML, Markdown, JSON, JUnit: a build artifact, not committed) and its
# summary in reports/README.md (committed: small enough to keep in history).
reports: $(STAMP)
	$(BIN)/opcert gate --config reports/opcert.toml --report build/reports --json build/reports/gate.json \
	  --junit build/reports/junit.xml; test $$? -le 1   # exit 1 = some runtimes fail their budgets: reported
	$(BIN)/opcert report build/reports/gate.json --summary reports/README.md

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal

# The documentation site (build/site), as the test suite builds it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV)
