"""The CI accuracy gate: checks from a configuration, run, judged by their policies."""

from opcert.gating.config import Check, GateConfig, default_config, load_config
from opcert.gating.run import CheckResult, GateResult, run_gate
from opcert.gating.select import select

__all__ = ["Check", "CheckResult", "GateConfig", "GateResult", "default_config", "load_config", "run_gate", "select"]
