"""Progress in the long phases that advance no count (issue 55, item 5): a resumed float32 sweep's replay of
its checkpointed chunks, and each set of an attribute sweep, told to the run's progress callback
(opcert.progress.tell) and shown beside the count (Progress.phase)."""

import io

from opcert.options import Options
from opcert.progress import Progress, takes_phase, tell
from opcert.targets import describe_target
from opcert.verify.accuracy import attr_sweep
from opcert.verify.accuracy import sweep as sweep_mod
from opcert.verify.accuracy.sweep import SweepConfig, sweep

MAG = (0x3F000000, 0x3F000000 + (1 << 13))  # two chunks of 2^12 magnitudes around 0.5, both signs


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_phase_is_shown_in_the_lines_until_the_next_one():
    out, clock = io.StringIO(), Clock()
    with Progress("float32 sweep", 100, "chunks", stream=out, tty=False, seconds=10, clock=clock) as p:
        p.update(phase="replaying 4 resumed chunks: 1/4")  # a phase alone moves no count
        assert p.done == 0
        clock.t = 11
        p.advance(0)
        p.update(phase=None)
        p.update(5, 100)
        clock.t = 22
        p.advance()
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("; now replaying 4 resumed chunks: 1/4") and "0/100 chunks" in lines[0]
    assert "6/100 chunks" in lines[1] and "now" not in lines[1]


def test_tell_reaches_only_callbacks_that_take_a_phase():
    got = []

    def counts(done, total):  # an older callback: counts only
        got.append((done, total))

    def phases(done=None, total=None, phase=None):
        got.append(phase)

    assert not takes_phase(counts) and takes_phase(phases) and takes_phase(Progress("x", 1).advance)
    tell(counts, "replaying")
    tell(phases, "replaying")
    tell(None, "replaying")
    assert got == ["replaying"]


class InProcess:
    """A Pool that runs its tasks here, in order: the sweep's chunks without a worker's start (cheap)."""

    size = 1

    def __init__(self, n):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, tasks):
        for j, (fn, args, kwargs) in enumerate(tasks):
            yield j, True, fn(*args, **kwargs)


def test_a_resumed_sweep_tells_its_replay_phase(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_mod, "Pool", InProcess)
    cfg = SweepConfig(
        "Tanh", "opcert", (), None, *MAG, 1 << 12, target_fingerprint=describe_target("opcert").fingerprint
    )
    sweep(cfg, workers=1, checkpoint=tmp_path / "ck")
    seen = []

    def progress(done=None, total=None, phase="-"):
        seen.append((done, total, phase))

    _, _, info = sweep(cfg, workers=1, checkpoint=tmp_path / "ck", progress=progress)
    assert info["resumed_chunks"] == 2
    phases = [p for d, _, p in seen if d is None]
    assert phases[0].startswith("replaying the 2 chunks resumed from the checkpoint") and phases[0].endswith("0/2")
    assert phases[-2].endswith("2/2") and phases[-1] is None  # told before the count goes on, then ended
    assert seen[-1] == (2, 2, "-")  # the count, after the replay


def test_an_attribute_sweep_tells_which_set_runs(monkeypatch):
    sets = attr_sweep.attribute_sets("HardSigmoid")[:2]
    monkeypatch.setattr(attr_sweep, "attribute_sets", lambda op, standard=None: sets)
    seen = []

    def progress(n=None, *, phase="-"):
        seen.append(phase)

    res = attr_sweep.sweep_attributes(
        "HardSigmoid", "opcert", "float16", "exhaustive", Options(layout_samples=64), progress=progress
    )
    assert [r["verdict"] for r in res.rows] == ["pass", "pass"]
    assert seen[0].startswith("set 1/2, default (onnx) (alpha=0.200000003, beta=0.5)")
    assert seen[1] == "-" and seen[2].startswith("set 2/2, onnx test") and seen[3] == "-"  # each set's end counted
    assert seen[-1] is None


def test_a_float32_sweep_names_its_phases_before_and_after_the_chunks_and_the_gate_shows_them():
    """measure's exhaustive float32 path tells the callback when it loads the target and checks its code
    paths, and when it makes the verdicts (the sweep's own chunks count in between); the gate's progress,
    which counts checks, shows the sweep's share of its chunks as the phase of the check running."""
    import opcert
    from opcert.gating.run import _sweep_phase

    seen = []

    def callback(done=None, total=None, phase=None):
        seen.append(phase if phase is not None else ("count", done, total))

    r = opcert.measure("Tanh", "numpy:tanh", "float32", "exhaustive", magnitude_range=MAG, workers=1, progress=callback)
    assert r.status == "ok" and r.inputs_checked == 2 * (MAG[1] - MAG[0])
    texts = [s for s in seen if isinstance(s, str)]
    assert texts[0].startswith("loading the target") and any(t.startswith("the verdicts") for t in texts)
    assert any(isinstance(s, tuple) for s in seen)  # the chunks' own count in between

    shown = []
    update = _sweep_phase(lambda n=None, *, phase=None: shown.append(phase), "Tanh float32 numpy:tanh")
    update(32, 128)
    update(phase="replaying 2 resumed chunks: 1/2")
    assert shown == [
        "Tanh float32 numpy:tanh: float32 sweep 25% of its chunks",
        "Tanh float32 numpy:tanh: replaying 2 resumed chunks: 1/2",
    ]
    assert _sweep_phase(lambda n=None: None, "x") is None  # a callback that takes no phase gets none
