"""Resumed float32 sweeps (issue 50): every resumed chunk runs again on every block, its outputs compared
with the fingerprints its checkpoint recorded, so that a change no key sees (here an environment variable
the kernel reads) is found however few outputs it alters; and a refused checkpoint names what changed."""

import functools
import json
import textwrap

import numpy as np
import pytest

from opcert.errors import UsageError
from opcert.targets import describe_target
from opcert.verify.accuracy.measure import measure
from opcert.verify.accuracy.sweep import SweepConfig, sweep

MAG = (0x3F000000, 0x3F010000)  # 65,536 magnitudes around 0.5, both signs: one chunk of measure()
SHIFT = 1 << 23  # added to an output's bits: twice the value, 8,388,608 ULPs off


def shifting_kernel(tmp_path, name, shifted):
    """tanh, except where OPCERT_TEST_SHIFT is set: then the outputs at `shifted` (binary32 bits) are
    twice the value (their exponent field plus one)."""
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(f"""
        import os
        import numpy as np
        SHIFTED = np.array({sorted(shifted)!r}, dtype=np.uint32)

        def f(x):
            y = np.tanh(x)
            if os.environ.get("OPCERT_TEST_SHIFT"):
                y = np.array(y, copy=True)
                hit = np.isin(np.asarray(x).view(np.uint32), SHIFTED)
                y.view(np.uint32)[hit] += np.uint32({SHIFT})
            return y
    """)
    )
    return f"{name}:f"


def spread(lo, hi, n):
    """n binary32 inputs spread over magnitudes [lo, hi), alternately positive and negative."""
    mags = np.linspace(lo + 3, hi - 5, n).astype(np.int64)
    return [int(m) | (0x80000000 if k % 2 else 0) for k, m in enumerate(mags)]


@pytest.fixture
def importable(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("OPCERT_TEST_SHIFT", raising=False)
    monkeypatch.delenv("OPCERT_REPLAY_SEED", raising=False)
    return tmp_path


def test_a_resume_after_an_environment_change_reports_the_256_changed_outputs(importable, monkeypatch):
    shifted = spread(*MAG, 256)
    target = shifting_kernel(importable, "env_kernel", shifted)
    ck = importable / "ck"
    first = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    assert first.status == "ok" and first.max_ulp < 2
    assert first.sweep["resume"] is None and first.sweep["rerun_chunks"] == 0
    # nothing changed: the chunk is replayed, matches its fingerprints, and resumes
    same = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    assert same.sweep["resumed_chunks"] == 1 and same.sweep["rerun_chunks"] == 0
    assert same.max_ulp == first.max_ulp and same.sweep["resume"]["rerun"] == []
    assert isinstance(same.sweep["resume"]["seed"], int)
    # an environment variable no key sees changes 256 of the 131,072 outputs: the chunk is computed again
    monkeypatch.setenv("OPCERT_TEST_SHIFT", "1")
    changed = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    assert changed.sweep["resumed_chunks"] == 0 and changed.sweep["rerun_chunks"] == 1
    assert changed.sweep["key"] == first.sweep["key"]
    assert changed.max_ulp > 4e6 and int(changed.worst_input_bits, 16) in shifted
    (rerun,) = changed.sweep["resume"]["rerun"]
    assert rerun["chunk"] == 0 and rerun["blocks_differing"] == rerun["blocks"] == 2
    assert "differ from the checkpoint" in changed.sweep["rejected_chunks"][0]
    assert any("computed again" in n for n in changed.notes)


def test_only_the_chunks_whose_outputs_changed_are_run_again_and_the_first_change_is_named(importable, monkeypatch):
    # 4 chunks of 2^14 magnitudes, blocks of 2^12: one changed output in some blocks of chunks 1 and 3
    lo = 0x3E800000
    shifted = [
        lo + (1 << 14) + 5 * 4096 // 4 + 77,
        (lo + (1 << 14) + 2 * 4096 + 901) | 0x80000000,
        lo + 3 * (1 << 14) + 4095,
    ]
    target = shifting_kernel(importable, "env_kernel_chunks", shifted)
    cfg = SweepConfig(
        "Tanh",
        target,
        (),
        None,
        lo,
        lo + (1 << 16),
        1 << 14,
        block=1 << 12,
        target_fingerprint=describe_target(target).fingerprint,
        properties=("range", "monotonic"),
    )
    first, _, _ = sweep(cfg, workers=1, checkpoint=importable / "ck")
    monkeypatch.setenv("OPCERT_TEST_SHIFT", "1")
    again, _, info = sweep(cfg, workers=1, checkpoint=importable / "ck", seed=12345)
    assert info["resumed_chunks"] == 2 and info["rerun_chunks"] == 2
    assert info["resume"]["seed"] == 12345 and info["resume"]["chunks"] == 4
    one, three = info["resume"]["rerun"]
    assert (one["chunk"], one["blocks_differing"], one["blocks"]) == (1, 2, 8)
    assert (three["chunk"], three["blocks_differing"], three["located"]) == (3, 1, 1)
    # a block with one changed output names it, with both outputs
    b = shifted[0]
    y = int(np.tanh(np.array([b], np.uint32).view(np.float32)).view(np.uint32)[0])
    assert one["first"] == {"input": f"0x{b:08x}", "output": f"0x{y + SHIFT:08x}", "checkpoint": f"0x{y:08x}"}
    assert one["located"] == 2 and f"at 0x{b:08x} the output is 0x{y + SHIFT:08x} now" in one["why"]
    # the merged result is the one a fresh sweep under the change gives
    fresh, _, _ = sweep(cfg, workers=1, checkpoint=importable / "fresh")
    assert again.to_json() == fresh.to_json() != first.to_json()
    assert {t[1] for t in again.top[:3]} == set(shifted)


def test_a_chunk_without_fingerprints_is_computed_again_and_says_so(importable):
    target = shifting_kernel(importable, "plain_kernel", [])
    cfg = SweepConfig(
        "Tanh",
        target,
        (),
        None,
        MAG[0],
        MAG[0] + (1 << 13),
        1 << 12,
        target_fingerprint=describe_target(target).fingerprint,
    )
    ck = importable / "ck"
    sweep(cfg, workers=1, checkpoint=ck)
    chunk = ck / "chunk-00001.json"
    data = json.loads(chunk.read_text())
    data["schema"] = "opcert.chunk/3"
    chunk.write_text(json.dumps(data))
    _, _, info = sweep(cfg, workers=1, checkpoint=ck)
    assert info["resumed_chunks"] == 1
    assert len(info["rejected_chunks"]) == 1 and "without the fingerprints" in info["rejected_chunks"][0]


def test_the_cli_fails_a_resumed_sweep_after_an_environment_change(cli, importable, monkeypatch):
    import opcert.cli
    from opcert.options import Options

    shifted = spread(*MAG, 256)
    target = shifting_kernel(importable, "env_kernel_cli", shifted)
    # the CLI sweeps the whole format; here its magnitudes around 0.5
    monkeypatch.setattr(opcert.cli, "Options", functools.partial(Options, magnitude_range=MAG))
    args = (
        "accuracy",
        "Tanh",
        "--dtype",
        "float32",
        "--target",
        target,
        "--exhaustive",
        "--workers",
        "1",
        "--checkpoint",
        importable / "ck",
        "--max-ulp",
        "2",
        "--json",
        importable / "r.json",
    )
    code, _, err = cli(*args)
    assert code == 0, err
    monkeypatch.setenv("OPCERT_TEST_SHIFT", "1")
    code, _, err = cli(*args)
    r = json.loads((importable / "r.json").read_text())
    assert code == 1 and r["sweep"]["rerun_chunks"] == 1 and r["max_ulp"] > 4e6
    assert int(r["worst_input_bits"], 16) in shifted


def test_a_refused_checkpoint_names_only_the_fields_that_changed(tmp_path):
    target = "opcert"
    fp = describe_target(target).fingerprint
    rng = (MAG[0], MAG[0] + (1 << 12))
    base = SweepConfig(
        "Celu",
        target,
        (("alpha", "1/1"),),
        None,
        *rng,
        1 << 12,
        target_fingerprint=fp,
        properties=("range", "monotonic"),
    )

    class Stop(Exception):
        pass

    def stop(done, total):  # the checkpoint directory is opened, and its identity written, before this
        raise Stop

    with pytest.raises(Stop):
        sweep(base, workers=1, checkpoint=tmp_path / "ck", progress=stop)
    assert json.loads((tmp_path / "ck" / "config.json").read_text())["key"] == base.key()
    other = SweepConfig(
        "Celu",
        target,
        (("alpha", "2/1"),),
        None,
        *rng,
        1 << 12,
        target_fingerprint=fp,
        properties=("range", "monotonic"),
    )
    with pytest.raises(UsageError, match="holds another sweep") as exc:
        sweep(other, workers=1, checkpoint=tmp_path / "ck")
    msg = str(exc.value)
    assert "differs in attrs (" in msg and '[["alpha", "1/1"]] there, [["alpha", "2/1"]] here' in msg
    assert "properties" not in msg and "opcert_code" not in msg and "schema" not in msg


def test_a_blocks_fingerprint_sees_every_single_change_and_locates_it():
    from opcert.verify.accuracy.sweep import _one_difference
    from opcert.verify.accuracy.sweep_kernel import fingerprint_weights, output_fingerprint

    rng = np.random.default_rng(5)
    w = fingerprint_weights(1 << 16)
    y = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    then = output_fingerprint(y, w)
    for j, new in [(0, 0), (65535, 0xFFFFFFFF), (1234, int(y[1234]) ^ 0x80000000), (77, int(y[77]) + 1)]:
        z = y.copy()
        z[j] = new
        now = output_fingerprint(z, w)
        assert tuple(now) != tuple(then) and _one_difference(z, w, then, now) == (j, new, int(y[j]))
    z = y.copy()
    z[[10, 20]] = z[[20, 10]]  # two outputs swapped: seen, not located as one
    now = output_fingerprint(z, w)
    assert tuple(now) != tuple(then) and (y[10] == y[20] or _one_difference(z, w, then, now) is None)
