# The two commands of the quick start: `make gate` and `make test`.
# Each creates .venv and installs opcert with every extra it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: gate test install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch 2.13.0 first: the CPU wheel on the machine; a bare `torch` would fetch CUDA builds.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test,runtimes,report,dask]'
	touch $(STAMP)

install: $(STAMP)

OPS := Tanh ScaledTanh HardSigmoid Shrink Celu

gate: $(STAMP)
	set -e; for op in $(OPS); do for dt in float16 bfloat16; do \
	  $(BIN)/opcert accuracy $$op --dtype $$dt --exhaustive --max-ulp 1 --json reports/gate/$$op-$$dt.json; \
	done; done

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

clean:
	rm -rf $(VENV)
