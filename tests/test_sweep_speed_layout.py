"""A float32 sweep's layout check runs in one of the sweep's workers beside its chunks (sweep's `alongside`), not
before them: the same result as when it ran first (measure run inside a worker keeps that order)."""

import json

import pytest

import opcert.verify.accuracy.measure as measure_mod
from opcert.options import Options
from opcert.verify.accuracy import sweep as sweep_mod

TIMING = ("elapsed", "wall", "seconds", "_s", "time", "date", "provenance", "host", "started", "finished", "cores")


def _strip(d):
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if not any(t in k for t in TIMING) and k != "checkpoint"}
    if isinstance(d, list):
        return [_strip(v) for v in d]
    return d


@pytest.mark.parametrize("target", ["opcert", "numpy:tanh"])
def test_the_layout_check_beside_the_chunks_gives_the_result_it_gave_first(target, tmp_path, monkeypatch):
    rng = (0x3F000000, 0x3F000000 + (1 << 17))
    given = []
    real = sweep_mod.sweep

    def spy(cfg, **kw):
        given.append(kw.get("alongside"))
        return real(cfg, **kw)

    monkeypatch.setattr(measure_mod, "sweep", spy)
    beside = measure_mod.measure(
        "Tanh", target, "float32", "exhaustive", Options(magnitude_range=rng, workers=2, checkpoint=tmp_path / "a")
    )
    assert given[-1] is not None and given[-1][0] is measure_mod._layout_alone
    monkeypatch.setattr(measure_mod, "in_worker", lambda: True)  # measure inside a worker: the check comes first
    first = measure_mod.measure(
        "Tanh", target, "float32", "exhaustive", Options(magnitude_range=rng, workers=2, checkpoint=tmp_path / "b")
    )
    assert given[-1] is None
    a, b = (_strip(json.loads(json.dumps(r.to_dict(), default=str))) for r in (beside, first))
    assert a["status"] == "ok" and any(p["name"] == "layout" and p["status"] == "checked" for p in a["properties"])
    assert a == b


def test_a_task_alongside_a_sweep_without_chunks_to_compute_still_runs(tmp_path):
    """Every chunk resumed from the checkpoint: the task runs alone in a worker."""
    from opcert.targets import describe_target

    fp = describe_target("numpy:tanh").fingerprint
    cfg = sweep_mod.SweepConfig("Tanh", "numpy:tanh", (), None, 0x3F000000, 0x3F001000, 1 << 12, target_fingerprint=fp)
    first = sweep_mod.sweep(cfg, workers=1, checkpoint=tmp_path, alongside=(sorted, ([3, 1, 2],), {}))
    assert first[2]["alongside"] == (True, [1, 2, 3])
    again = sweep_mod.sweep(cfg, workers=1, checkpoint=tmp_path, alongside=(sorted, ([2, 1],), {}))
    assert again[2]["resumed_chunks"] == 1 and again[2]["alongside"] == (True, [1, 2])
    assert "alongside" not in sweep_mod.sweep(cfg, workers=1, checkpoint=tmp_path)[2]
