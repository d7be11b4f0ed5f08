"""The exhaustive binary32 sweep, on reduced magnitude ranges: its reference is
the exact one, it equals measure() on the same inputs, and the result does not
depend on workers, resumption or the scheduler."""

import math
import textwrap
from fractions import Fraction

import numpy as np
import pytest

import opcert
from opcert.targets import describe_target
from opcert.verify.accuracy.measure import AccuracyResult, measure
from opcert.verify.accuracy.stats import float_stats
from opcert.verify.accuracy.sweep import SweepConfig, sweep

# Around 0.5 and across the binary32 subnormal/normal boundary (magnitudes; both signs are swept).
RANGE = (0x3EFF0000, 0x3F010000)
TINY = (0x007F8000, 0x00808000)
# a sweep's statistics that two ways of computing it must give alike: the counts, and the top lists
COUNTS = (
    "n",
    "correctly_rounded",
    "nan_mismatches",
    "inf_mismatches",
    "signed_zero_mismatches",
    "subnormal_flushes",
    "histogram",
    "max_distance",
    "first",
)
TOP_LISTS = ("top", "top_wrong")


def cfg(op="Tanh", target="numpy:tanh", rng=RANGE, chunk=1 << 13, attrs=(), properties=()):
    fp = describe_target(target).fingerprint
    return SweepConfig(op, target, attrs, None, rng[0], rng[1], chunk, target_fingerprint=fp, properties=properties)


def both_signs(rng):
    m = np.arange(*rng, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([m, m | np.uint32(0x80000000)]).view(np.float32)


@pytest.mark.parametrize("rng", [RANGE, TINY, (0x7F7FF000, 0x7F801000)])
def test_kernel_reference_is_the_exact_reference(rng, tmp_path):
    # 4096 magnitudes per range, both signs, including infinities and NaNs at the top of the exponent range
    n = 0x1000 if rng[1] - rng[0] > 0x1000 else rng[1] - rng[0]
    r = (rng[0], rng[0] + n)
    good, _, _ = sweep(cfg(target="bad_targets:exact_tanh", rng=r), workers=1, checkpoint=tmp_path / "a")
    assert good.n == 2 * n and good.correctly_rounded == 2 * n and good.max_distance <= 0
    assert good.nan_mismatches == good.inf_mismatches == good.signed_zero_mismatches == 0
    assert all(e <= 0.5 for e, _ in good.top)
    bad, _, _ = sweep(cfg(target="bad_targets:exact_tanh_plus_one", rng=r), workers=1, checkpoint=tmp_path / "b")
    finite = np.isfinite(both_signs(r)).sum()
    assert bad.correctly_rounded == 2 * n - finite


def test_sweep_equals_measure_on_the_same_inputs(tmp_path):
    stats, _, _ = sweep(cfg(), workers=1, checkpoint=tmp_path)
    x = both_signs(RANGE)
    order = np.argsort(x.view(np.uint32), kind="stable")
    x = x[order]
    from opcert.spec.reference import reference_detailed

    ref = reference_detailed("Tanh", x, {}, None)
    direct = float_stats(x, np.tanh(x), ref, opcert.formats.FLOAT_FORMATS["float32"])
    a, b = stats.to_json(), direct.to_json()
    for key in COUNTS:
        assert a[key] == b[key], key
    assert [t[1] for t in a["top"]] == [t[1] for t in b["top"]]
    for (ea, _), (eb, _) in zip(a["top"], b["top"]):
        assert abs(ea - eb) <= 2**-18  # both estimate from a binary64 value within 2**-44


def test_workers_and_resumption_do_not_change_the_result(tmp_path):
    c = cfg(op="Celu", target="opcert", attrs=(("alpha", "1/1"),), properties=("range", "monotonic"))
    one, p1, _ = sweep(c, workers=1, checkpoint=tmp_path / "one")
    two, p2, _ = sweep(c, workers=2, checkpoint=tmp_path / "two")
    assert one.to_json() == two.to_json() and p1.to_json() == p2.to_json()

    # interrupt after 5 of the 16 chunks, then run again
    class Stop(Exception):
        pass

    def interrupt(done, total):
        if done >= 5:
            raise Stop

    with pytest.raises(Stop):
        sweep(c, workers=1, checkpoint=tmp_path / "resumed", progress=interrupt)
    assert len(list((tmp_path / "resumed").glob("chunk-*.json"))) == 5
    again, p3, info = sweep(c, workers=1, checkpoint=tmp_path / "resumed")
    assert info["resumed_chunks"] == 5 and again.to_json() == one.to_json() and p3.to_json() == p1.to_json()


def test_dask_equals_local(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    c = cfg(rng=(0x3F000000, 0x3F004000))
    local, _, _ = sweep(c, workers=1, checkpoint=tmp_path / "local")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        remote, _, _ = sweep(c, scheduler=f"dask://{cluster.scheduler_address}", checkpoint=tmp_path / "dask")
    assert local.to_json() == remote.to_json()


def test_a_crashing_target_fails_the_sweep(tmp_path):
    from opcert.errors import TargetFailure

    with pytest.raises(TargetFailure, match="kernel exploded"):
        sweep(cfg(target="bad_targets:crashes"), workers=1, checkpoint=tmp_path)


@pytest.mark.parametrize(
    "target,op,dtype,reason",
    [
        ("onnxruntime", "HardSigmoid", "float64", "HardSigmoid in float64"),
        ("onnxruntime", "Tanh", "bfloat16", "NOT_IMPLEMENTED"),
        ("onnx-reference", "ScaledTanh", "float32", "No registered schema"),
        # CI: test_gate's unsupported check gives torch's ScaledTanh reason, test_attr_sweep every skipped
        # HardSigmoid set's (each torch case starts torch in a worker)
        pytest.param("torch", "ScaledTanh", "float32", "maps no torch function to ScaledTanh", marks=pytest.mark.slow),
        pytest.param("torch", "HardSigmoid", "float32", "alpha = 1/6", marks=pytest.mark.slow),
    ],
)
def test_unsupported_combinations_give_their_reasons(target, op, dtype, reason):
    exhaustive = dtype in ("float16", "bfloat16")
    r = measure(op, target, dtype, "exhaustive" if exhaustive else "sample", samples=None if exhaustive else 100)
    assert r.status == "unsupported" and reason in r.error and r.inputs_checked == 0


@pytest.mark.slow  # CI: test_attr_sweep's sweep of HardSigmoid on torch runs the one set it maps, 1/6 and 1/2
def test_torch_hardsigmoid_maps_at_one_sixth():
    # the mapping is what is tested here: no properties (the layout check runs: measure's default)
    r = measure("HardSigmoid", "torch", "float16", "exhaustive", alpha=1 / 6, beta=0.5, properties=())
    assert r.status == "ok" and r.inputs_checked == 65536, r.error


@pytest.mark.parametrize("target", ["onnxruntime", "onnx-reference", "torch"])
def test_targets_agree_with_their_libraries(target):
    from runtime_helpers import agree_with_library

    from opcert.workers import run_isolated

    rows = run_isolated(agree_with_library, target)
    assert rows
    for dtype, ydtype, y, want in rows:
        assert ydtype == dtype and np.array_equal(y, want), dtype


def test_accuracy_result_records_the_target_version():
    from importlib.metadata import version

    # what a result records does not depend on its inputs: a sample (test_layout enumerates torch's layouts)
    r = measure("Tanh", "torch", "float16", "sample", samples=100, properties=())
    assert r.status == "ok", r.error
    assert r.provenance["target_version"] == version("torch") and isinstance(r, AccuracyResult)
    assert r.target_info["details"]["git"] and r.target_info["fingerprint"]


def test_checkpoints_are_keyed_by_code_and_target_fingerprint():
    a = cfg()
    b = SweepConfig(a.op, a.target, a.attrs, a.standard, a.start, a.stop, a.chunk, target_fingerprint="other")
    assert a.key() != b.key()
    from opcert import fingerprint

    original = a.key()
    saved = list(fingerprint._FINGERPRINT)
    fingerprint._FINGERPRINT[:] = ["another version of the code"]
    try:
        assert cfg().key() != original
    finally:
        fingerprint._FINGERPRINT[:] = saved


def test_checkpoints_are_keyed_by_the_cpus_simd_paths(monkeypatch):
    """onnx.reference's float32 Elu differs with and without AVX-512: chunks swept on one
    host are not resumed on another."""
    import opcert.provenance as prov

    original = cfg().key()
    other = prov.simd() + " X86_V4 (another host)"  # whatever this host has: another value
    monkeypatch.setattr(prov, "simd", lambda: other)
    assert cfg().key() != original


def test_checkpoints_are_keyed_by_the_references_array_functions(monkeypatch):
    """With glibc's vector functions or NumPy's the chunks' exact-path counts differ (never a verdict):
    a sweep resumed with the others starts those chunks again."""
    from opcert.expr import libm_arrays

    original = cfg().key()
    other = libm_arrays.status() + " (another host)"  # whatever this host has: another value
    monkeypatch.setattr(libm_arrays, "status", lambda: other)
    assert cfg().key() != original


def test_interrupting_a_pool_leaves_no_workers(tmp_path):
    import multiprocessing
    import time

    class Stop(Exception):
        pass

    def interrupt(done, total):
        if done >= 2:
            raise Stop

    c = cfg(op="Celu", target="opcert", attrs=(("alpha", "1/1"),))
    with pytest.raises(Stop):
        sweep(c, workers=2, checkpoint=tmp_path, progress=interrupt)
    deadline = time.time() + 10
    while multiprocessing.active_children() and time.time() < deadline:
        time.sleep(0.1)
    assert not multiprocessing.active_children()
    again, _, info = sweep(c, workers=2, checkpoint=tmp_path)
    assert info["resumed_chunks"] >= 2 and again.n == 2 * (RANGE[1] - RANGE[0])


def test_worst_case_is_the_output_the_sweep_measured(tmp_path):
    # A target that answers differently for an input alone than inside a block
    # (as torch's float32 celu does): the reported worst output must be the
    # block's, and its error the one the histogram counted.
    r = measure(
        "Tanh",
        "bad_targets:tanh_off_in_blocks",
        "float32",
        "exhaustive",
        workers=1,
        magnitude_range=(0x3F000000, 0x3F020000),
        checkpoint=tmp_path,
    )
    assert r.inputs_checked == 2 * 0x20000 and not r.exhaustive
    assert r.max_ulp > 0.5 and r.correctly_rounded < r.inputs_checked // 2
    assert r.worst_output == np.nextafter(np.tanh(np.float32(r.worst_input)), np.float32(np.inf)).item()


def test_exact_midpoints_are_rounded_in_the_sweep_not_sent_to_the_exact_path(tmp_path):
    """Linear's 0.5 x + 0.25 is exact in binary64 and often a binary32 midpoint:
    the exact sum has no radius, so it rounds as it is (ties to even), and the
    sweep agrees with the per-input path on every input."""
    lo = 0x3F000000
    r = measure(
        "Linear",
        "opcert",
        "float32",
        "exhaustive",
        magnitude_range=(lo, lo + (1 << 18)),
        workers=1,
        checkpoint=tmp_path / "ck",
    )
    assert r.sweep["undecided"] == 0 and r.inputs_checked == 1 << 19
    b = np.arange(lo, lo + (1 << 18), dtype=np.uint32)
    x = np.concatenate([b, b | np.uint32(0x80000000)]).view(np.float32)
    g = measure("Linear", "opcert", "float32", x)
    assert (g.correctly_rounded, g.max_ulp, g.histogram) == (r.correctly_rounded, r.max_ulp, r.histogram)
    assert r.histogram["(0, 0.5]"] > 0  # midpoints were among them


def test_kernel_next_down_and_up_are_nextafter():
    """The sweep kernel steps a ball's ends outward on the bits (numba's nextafter is a libm call)."""
    from opcert.verify.accuracy.sweep_kernel import next_down, next_up

    rng = np.random.default_rng(3)
    xs = np.concatenate(
        [
            rng.integers(0, 2**64, 2000, dtype=np.uint64).view(np.float64),
            [
                0.0,
                -0.0,
                5e-324,
                -5e-324,
                2.2250738585072014e-308,
                1.0,
                -1.0,
                1.7976931348623157e308,
                -1.7976931348623157e308,
                np.inf,
                -np.inf,
            ],
        ]
    )
    for x in xs.tolist():
        with np.errstate(over="ignore", invalid="ignore"):  # the largest double steps to inf; NaN stays
            pairs = ((next_down(x), np.nextafter(x, -np.inf)), (next_up(x), np.nextafter(x, np.inf)))
        for got, want in pairs:
            if np.isnan(want):
                assert np.isnan(got)
            else:
                assert np.float64(got).view(np.uint64) == np.float64(want).view(np.uint64), x


@pytest.mark.parametrize("seed", range(6))
def test_easy_pass_then_block_counts_what_block_counts_alone(seed):
    """The sweep splits each block: a branch-free pass counts the common case
    (sweep_kernel.easy), block takes the rest. On inputs built to hit every
    branch (NaNs, infinities, zeros, subnormals, undecided and exact balls,
    powers of two, outputs right, one step off, wrong in sign, NaN, flushed),
    in blocks with the worst cases carried over (and taken out of order, so
    that ties are broken both ways), both give the same state."""
    rng = np.random.default_rng(seed)
    n = 1 << 13
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    pick = rng.random(n)
    bits[pick < 0.2] &= np.uint32(0x807FFFFF)  # subnormals and zeros
    bits[pick > 0.95] |= np.uint32(0x7F800000)  # infinities, NaNs
    bits = np.sort(bits)
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        v = np.tanh(x.astype(np.float64)) * rng.choice([1.0, 3.0, 1e-30, 1e30], n)
        if seed % 3 == 0:  # every value exact: err 0 everywhere, ties
            v = v.astype(np.float32).astype(np.float64)
        v[rng.random(n) < 0.05] = 2.0 ** rng.integers(-160, 10, n)[:1]  # powers of two
        exact = rng.random(n) < 0.2
        v[exact] = v[exact].astype(np.float32)  # exact binary32 values (err 0, ties in the top)
        zero = rng.random(n) < 0.05
        v[zero] = np.where(rng.random(n) < 0.5, 0.0, -0.0)[zero]  # exact zeros of both signs
        rad = np.abs(v) * rng.choice([0.0, 2.0**-52, 2.0**-30, 2.0**-20, np.nan], n, p=[0.3, 0.3, 0.2, 0.1, 0.1])
        rad[rng.random(n) < 0.02] = 2.0**-1074
        tiny = (rng.random(n) < 0.03) & (seed % 3 != 0)
        v[tiny] *= 2.0**-200  # below the binary32 subnormals
        rad[tiny] *= 2.0**-200
        # the exact value's sign, unknown for some: int8, as the ball kernels give it (a float64 array would compile
        # every pass once more, for this test alone)
        sg = np.sign(np.nan_to_num(v)).astype(np.int8) * (rng.random(n) < 0.8)
        y = v.astype(np.float32)
        off = rng.random(n) if seed % 3 else np.ones(n)  # every output right in the tied case
        y[off < 0.1] = np.nextafter(y[off < 0.1], np.float32(np.inf))
        y[(off > 0.1) & (off < 0.15)] = -y[(off > 0.1) & (off < 0.15)]
        y[(off > 0.15) & (off < 0.18)] = np.nan
        y[(off > 0.18) & (off < 0.2)] = 0.0
        y[(off > 0.2) & (off < 0.22)] = np.inf
    states, total_easy, total_wrong, near = _easy_then_block_and_block_alone(
        bits, y, v, rad, sg, np.random.default_rng(seed).permutation(n // 1024).tolist(), bool(seed % 2)
    )
    assert states[0][0][0] > n // 2 and states[1]  # most inputs counted, some undecided
    assert n // 8 < total_easy < states[0][0][0]  # both paths took a share
    assert total_wrong > 0 or seed % 3 == 0  # wrong outputs too


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("parity", ["odd", "even"])
def test_the_mirrored_pass_then_block_counts_what_block_counts_alone(seed, parity):
    """At -m the sweep takes what easy() decided at +m with r's sign flipped (odd) or kept (even)
    (sweep_kernel.easy with kept): on balls built to hit every branch (as above), mirror then block on what it
    leaves gives the state block alone gives on the mirrored ball, blocks taken out of order."""
    from opcert.verify.accuracy.stats import HIST_LABELS
    from opcert.verify.accuracy.sweep_kernel import (
        NOT_KEPT,
        TOP,
        AtInf,
        Block,
        Floor,
        Mirror,
        block,
        block_state,
        easy,
        easy_pass,
        sampled_floor,
        take_easy,
    )

    rng = np.random.default_rng(100 + seed)
    n = 1 << 13
    mags = np.sort(rng.integers(0, 1 << 31, n, dtype=np.uint64).astype(np.uint32))
    pick = rng.random(n)
    mags[pick < 0.2] &= np.uint32(0x007FFFFF)  # subnormals and zeros
    mags[pick > 0.95] |= np.uint32(0x7F800000)  # infinities, NaNs
    x = mags.view(np.float32)
    with np.errstate(all="ignore"):
        v = np.tanh(x.astype(np.float64)) * rng.choice([1.0, 3.0, 1e-30, 1e30, -1.0], n)
        v[rng.random(n) < 0.05] = 2.0 ** rng.integers(-160, 10, n)[:1]
        exact = rng.random(n) < 0.2
        v[exact] = v[exact].astype(np.float32)
        zero = rng.random(n) < 0.05
        v[zero] = np.where(rng.random(n) < 0.5, 0.0, -0.0)[zero]
        rad = np.abs(v) * rng.choice([0.0, 2.0**-52, 2.0**-30, 2.0**-20, np.nan], n, p=[0.3, 0.3, 0.2, 0.1, 0.1])
        tiny = rng.random(n) < 0.03
        v[tiny] *= 2.0**-200
        rad[tiny] *= 2.0**-200
        sg = np.sign(np.nan_to_num(v)).astype(np.int8) * (rng.random(n) < 0.8)
        y_pos = v.astype(np.float32)
        keep = np.empty(n, np.uint32)
        easy(
            Block(mags, y_pos, y_pos.view(np.uint32), v, rad, sg),
            Floor(-1.0, -1, -1.0, -1),
            np.empty(n, np.bool_),
            keep,
        )
        odd = parity == "odd"
        bits = mags | np.uint32(0x80000000)
        vm, sgm = (-v, -sg) if odd else (v.copy(), sg)
        y = vm.astype(np.float32)
        off = rng.random(n)
        y[off < 0.1] = np.nextafter(y[off < 0.1], np.float32(np.inf))
        y[(off > 0.1) & (off < 0.15)] = -y[(off > 0.1) & (off < 0.15)]
        y[(off > 0.15) & (off < 0.18)] = np.nan
        y[(off > 0.18) & (off < 0.2)] = 0.0
        y[(off > 0.2) & (off < 0.22)] = np.inf
        y[(off > 0.22) & (off < 0.3)] = (y[(off > 0.22) & (off < 0.3)] * np.float32(1.001)).astype(np.float32)
    assert np.any(keep != NOT_KEPT) and np.any(keep == NOT_KEPT)
    # an exact zero's sign at -m is the standard formula's there (run_chunk), not +m's flipped: never kept
    exact_zero = (v == 0) & (rad == 0)
    assert exact_zero.any() and np.all(keep[exact_zero] == NOT_KEPT)
    yb = y.view(np.uint32)
    states, taken = [], 0
    for split in (False, True, "sampled"):
        st = block_state()
        undecided = []
        near = True
        for k in np.random.default_rng(seed).permutation(n // 1024).tolist():
            s = slice(1024 * k, 1024 * k + 1024)
            und = np.empty(1024, np.int64)
            args = (
                Block(bits[s], y[s], yb[s], vm[s], rad[s], sgm[s]),
                AtInf(np.uint32(0xBF800000), np.uint32(0x3F800000), -1.0, 1.0),
                st,
                und,
                False,
            )
            if split:
                hard = np.empty(1024, np.bool_)
                mirrored = Mirror(keep[s], -1.0 if odd else 1.0, np.uint32(0x80000000 if odd else 0))
                tops = Floor(st[2][TOP - 1], st[3][TOP - 1], st[4][TOP - 1], st[5][TOP - 1])
                at_plus = Block(bits[s], y[s], yb[s], v[s], rad[s], sg[s])
                if split == "sampled":  # from the ball at +m, as run_chunk has it
                    tops = sampled_floor(at_plus, args[1], st, False, 5, mirrored.scale)
                got, near = easy_pass(near, at_plus, tops, hard, None, mirrored)
                take_easy(got, st)
                taken += (got[0] + got[2]) if split is True else 0
                n_und = block(*args, np.flatnonzero(hard))
            else:
                n_und = block(*args, np.arange(1024))
            undecided += (und[:n_und] + 1024 * k).tolist()
        states.append(([a.tolist() for a in st], sorted(undecided)))
    assert states[0] == states[1] == states[2]
    assert n // 8 < taken < states[0][0][0][0] and states[0][0][1][3:] != [0] * (len(HIST_LABELS) - 3)


@pytest.mark.parametrize("stride", [1, 64])
@pytest.mark.parametrize("wrong", [False, True])
def test_a_block_whose_errors_rise_goes_to_block_only_near_its_worst_cases(wrong, stride):
    """Where the error rises with the input (tanh below 2^-12: tanh(x) rounds to x, 1 - x^2/3 away),
    each input is a new worst case when it comes, and easy() alone leaves every one to block. With the
    thresholds a sample of the block gives (sampled_floor), block takes about 8 x the stride of them, and
    the worst-case lists, counts and histogram are block's alone. wrong: the outputs one value above, so
    that the wrong outputs' list rises too."""
    from opcert.verify.accuracy.sweep_kernel import (
        TOP,
        AtInf,
        Block,
        Floor,
        block,
        block_state,
        easy,
        sampled_floor,
        take_easy,
    )

    n = 1 << 14
    bits = np.arange(0x3A000000, 0x3A000000 + n, dtype=np.uint32)  # 2^-11 and up, one binade
    x = bits.view(np.float32).astype(np.float64)
    v = x - x**3 / 3  # tanh's first two terms: within half an ULP of x, and rising
    rad = np.abs(v) * 2.0**-50
    sg = np.ones(n, np.int8)
    y = x.astype(np.float32)
    if wrong:
        y = np.nextafter(y, np.float32(1))  # one value above x: 1 ULP + (x - v), rising too
    yb = y.view(np.uint32)
    states, sent = [], []
    for how in ("block", "easy", "sampled"):
        st = block_state()
        und = np.empty(n, np.int64)
        args = (
            Block(bits, y, yb, v, rad, sg),
            AtInf(np.uint32(0xBF800000), np.uint32(0x3F800000), -1.0, 1.0),
            st,
            und,
            False,
        )
        if how == "block":
            assert block(*args, np.arange(n)) == 0
        else:
            hard = np.empty(n, np.bool_)
            # the lists already full from an earlier block, of smaller errors: every input here is above them
            for lst_e, lst_b in ((st[2], st[3]), (st[4], st[5])):
                lst_e[:], lst_b[:] = 1e-9, np.arange(TOP)
            tops = Floor(st[2][TOP - 1], st[3][TOP - 1], st[4][TOP - 1], st[5][TOP - 1])
            if how == "sampled":
                tops = sampled_floor(args[0], args[1], st, False, stride)
            take_easy(easy(args[0], tops, hard, np.empty(n, np.uint32)), st)  # keep: as the sweep calls it
            sent.append(int(hard.sum()))
            assert block(*args, np.flatnonzero(hard)) == 0
            for lst_e, _lst_b in ((st[2], st[3]), (st[4], st[5])):
                assert lst_e[-1] > 1e-9  # the earlier entries left the lists
        states.append([a.tolist() for a in st])
    assert states[0] == states[1] == states[2]
    # the 8 largest errors in binary32 ULPs of the value's binade (x = 2^-11 has its value in the binade
    # below, where the ULP is half), by Python's sort
    err = [abs(float(y[i]) - v[i]) / math.ldexp(1.0, math.frexp(v[i])[1] - 24) for i in range(n)]
    want = sorted(range(n), key=lambda i: (-err[i], i))[:TOP]
    assert states[0][3] == [int(bits[i]) for i in want]
    # stride 1: the sample is the block, its 8th is the block's 8th, which block must still take
    assert sent[0] == n and TOP * stride // 2 < sent[1] <= TOP * stride + 1
    # lists that already hold larger errors than the block's: the sample raises nothing
    big = st._replace(
        top_err=np.full(TOP, 1e9),
        top_bits=np.arange(TOP, dtype=np.int64),
        topw_err=np.full(TOP, 1e9),
        topw_bits=np.arange(TOP, dtype=np.int64),
    )
    assert sampled_floor(args[0], args[1], big, False, stride) == (1e9, TOP, 1e9, TOP)


def test_easy_pass_takes_wrong_outputs_in_every_bin_and_the_largest_distance():
    """Block 3, taken first, fills the worst wrong outputs with errors of 2^20
    ULPs (same binade: 2^20 values away); the other blocks hold 16 ties of
    those (smaller bits: they enter the list) and wrong outputs with smaller
    errors in every bin of the histogram, some in the binade below the exact
    value (twice as many values away as ULPs of its binade): the easy pass
    takes those, and the largest distance is one of them."""
    n = 1 << 12
    bits = (np.arange(n) + 0x3F800000).astype(np.uint32)
    v = 1.0 + (np.arange(n) + 1) * 2.0**-40  # just above 1: binary32 rounds them to 1.0
    rad = np.full(n, 2.0**-60)
    sg = np.ones(n, np.int8)
    one = np.uint32(0x3F800000)
    # values below 1.0 (half an ULP of 1's binade each), errors on both sides of every bin's edges
    steps = np.array([1, 2, 3, 4, 5, 8, 9, 31, 33, 511, 513, 131_071, 131_073, 3 << 19], np.int64)
    yb = (one - steps[np.arange(n) % steps.size]).astype(np.uint32)
    neg = np.arange(n) % 3 == 0  # and the same below zero
    far = np.zeros(n, bool)
    far[3072:] = far[:1024:64] = True  # block 3 (taken first), and 16 ties in block 0
    yb[far], v[far], neg[far] = one + np.uint32(1 << 20), 1.0 + 2.0**-40, False  # errors of 2^20 ULPs
    v[neg], sg[neg], yb[neg] = -v[neg], -1.0, yb[neg] | np.uint32(0x80000000)
    y = yb.view(np.float32)
    states, total_easy, total_wrong, near = _easy_then_block_and_block_alone(bits, y, v, rad, sg, [3, 0, 1, 2], False)
    # block 3's errors go to block (the worst-case lists are empty before it), block 0's errors in every
    # bin turn the sweep to easy() for good
    assert near == [True, False, False, False]
    hist = states[0][1]
    assert all(h > 0 for h in hist[2:]) and states[0][7] == [3 << 19]
    assert all(b < 1024 for b in np.array(states[0][5]) - 0x3F800000)  # the ties from block 0
    assert total_wrong > n // 2


def _easy_then_block_and_block_alone(bits, y, v, rad, sg, block_order, flush_ok):
    """The state after sweep_kernel.easy then block on the rest, and after block alone,
    over blocks of 1,024 inputs in the given order; they must agree."""
    from opcert.verify.accuracy.sweep_kernel import (
        TOP,
        AtInf,
        Block,
        Floor,
        block,
        block_state,
        easy,
        easy_pass,
        sampled_floor,
        take_easy,
    )

    yb = y.view(np.uint32)
    states = []
    near_used = []
    for split in (False, True, "adaptive", "sampled"):
        st = block_state()
        undecided = []
        total_easy = total_wrong = 0
        near = True
        for k in block_order:
            b0 = 1024 * k
            s = slice(b0, b0 + 1024)
            und = np.empty(1024, np.int64)
            args = (
                Block(bits[s], y[s], yb[s], v[s], rad[s], sg[s]),
                AtInf(np.uint32(0xBF800000), np.uint32(0x3F800000), -1.0, 1.0),
                st,
                und,
                flush_ok,
            )
            if split:
                hard = np.empty(1024, np.bool_)
                tops = Floor(st[2][TOP - 1], st[3][TOP - 1], st[4][TOP - 1], st[5][TOP - 1])
                if split == "sampled":  # the thresholds raised by every 7th input, as crowded blocks have them
                    tops = sampled_floor(args[0], args[1], st, flush_ok, 7)
                easy_args = (args[0], tops, hard, np.empty(1024, np.uint32))  # keep: as the sweep calls it
                if split == "adaptive":  # as the sweep does: easy_near until a wrong output is above 2 ULPs
                    got, near = easy_pass(near, *easy_args)
                    near_used.append(near)
                else:
                    got = easy(*easy_args)
                take_easy(got, st)
                n_und = block(*args, np.flatnonzero(hard))
                total_easy += got[0] + got[2]
                total_wrong += got[2]
            else:
                n_und = block(*args, np.arange(1024))
            undecided += (und[:n_und] + b0).tolist()
        states.append(([a.tolist() for a in st], sorted(undecided)))
    assert states[0] == states[1] == states[2] == states[3]
    return states[0], total_easy, total_wrong, near_used


def test_source_changed_during_a_sweep_is_a_clear_error(tmp_path):
    """A worker started after opcert's files changed runs other code than the sweep's: it says so
    (a usage error, exit 2), instead of failing the chunk's own key check (an internal error)."""
    import dataclasses

    from opcert.errors import UsageError
    from opcert.fingerprint import code_fingerprint

    c = dataclasses.replace(cfg(rng=(RANGE[0], RANGE[0] + 256), chunk=256), opcert_code="0" * 64)
    with pytest.raises(UsageError, match="source files changed while the sweep ran"):
        sweep(c, workers=1, checkpoint=tmp_path / "a")
    ok = dataclasses.replace(c, opcert_code=code_fingerprint())
    stats, _, _ = sweep(ok, workers=1, checkpoint=tmp_path / "b")
    assert stats.n == 512


@pytest.mark.parametrize(
    "op,target", [("Relu", "opcert"), ("Tanh", "numpy:tanh"), ("Mish", "opcert"), ("HardSigmoid", "opcert")]
)
def test_the_numpy_ball_and_the_compiled_one_give_the_same_sweep(op, target, tmp_path, monkeypatch):
    """Where the compiled ball has no code, run_chunk takes numerics.ball's: the same statistics, exact
    zeros (the negative half of Relu, every zero input) and their signs included."""
    from opcert.spec.attrs import resolve

    attrs = tuple((k, f"{v.numerator}/{v.denominator}") for k, v in resolve(opcert.get_operator(op)).items())
    rng = (0, 0x1000)
    import opcert.numerics.ball_compiled as bc
    from opcert.verify.accuracy import sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "COMPILED_BALL_FROM", 0)  # the compiled ball, on a chunk this small
    real, asked = bc.compiled, tmp_path / "compiled"  # the chunk runs in a worker: it says so in a file
    monkeypatch.setattr(bc, "compiled", lambda *a, **k: asked.touch() or real(*a, **k))
    fast, _, _ = sweep(cfg(op, target, rng=rng, attrs=attrs), workers=1, checkpoint=tmp_path / "a")
    assert asked.exists()

    monkeypatch.setattr(bc, "compiled", lambda *a, **k: None)
    slow, _, _ = sweep(cfg(op, target, rng=rng, attrs=attrs), workers=1, checkpoint=tmp_path / "b")
    a, b = fast.to_json(), slow.to_json()
    assert a["n"] == 2 * 0x1000
    for key in COUNTS + TOP_LISTS:
        assert a[key] == b[key], key


@pytest.mark.parametrize(
    "op,target,attrs,rng",
    [
        ("Tanh", "numpy:tanh", (), (0, 0x1000)),  # +-0 and subnormals
        ("Tanh", "bad_targets:exact_tanh_plus_one", (), (0x3EFFFC00, 0x3F000400)),
        ("ScaledTanh", "opcert", (("alpha", "3/2"), ("beta", "1/2")), TINY),
        ("ScaledTanh", "opcert", (("alpha", "1/1048576"), ("beta", "1/2")), (0, 0x1000)),  # zeros of a known sign
        ("Softsign", "opcert", (), (0x7F7FF000, 0x7F801000)),  # up to infinity and NaNs
        ("Identity", "opcert", (), (0, 0x800)),  # exact zeros, a sign each
        # below and above 1/2: mostly exact zeros, signed at -m before an unmirrored pass (sweep.ZEROS_SHIFT)
        ("Round", "opcert", (), (0x3EFFF000, 0x3F001000)),
        ("Round", "bad_targets:round_unsigned_zeros", (), (0x3E7FF000, 0x3E801000)),
    ],
)
def test_the_negative_half_from_the_mirrored_reference_is_the_exact_reference(
    op, target, attrs, rng, tmp_path, monkeypatch
):
    """For an odd reference form the sweep takes the ball at -m from the one at +m: the same
    statistics as with each side's own ball, and as the exact reference on both signs."""
    from opcert.expr import parity
    from opcert.spec.reference import reference_detailed
    from opcert.targets import load_target

    assert parity(opcert.get_operator(op).reference_form(None)) == "odd"
    mirrored, _, _ = sweep(cfg(op, target, rng=rng, attrs=attrs), workers=1, checkpoint=tmp_path / "a")
    monkeypatch.setattr(opcert.expr, "parity", lambda e: None)
    own, _, _ = sweep(cfg(op, target, rng=rng, attrs=attrs), workers=1, checkpoint=tmp_path / "b")
    x = both_signs(rng)
    x = x[np.argsort(x.view(np.uint32), kind="stable")]
    a = {k: float(Fraction(v)) for k, v in attrs}
    y = load_target(target).run(opcert.get_operator(op), x, a)
    direct = float_stats(x, y, reference_detailed(op, x, a, None), opcert.formats.FLOAT_FORMATS["float32"])
    m, o, d = mirrored.to_json(), own.to_json(), direct.to_json()
    assert m["n"] == 2 * (rng[1] - rng[0])
    for key in COUNTS + TOP_LISTS:
        assert m[key] == o[key], key
        if key not in ("top", "top_wrong"):
            assert m[key] == d[key], key
    assert [t[1] for t in m["top"]] == [t[1] for t in d["top"]]


def test_easy_near_is_easy_while_no_wrong_output_is_above_2_ulps():
    """sweep_kernel.easy_near counts two histogram bins and how many wrong outputs are above
    2 ULPs; while none is, its answer is easy()'s (outputs right and one value away);
    one output 3 values away makes easy_pass take easy() and keep to it."""
    from opcert.verify.accuracy.sweep_kernel import Block, Floor, easy, easy_near, easy_pass

    n = 4096
    bits = (np.arange(n) + 0x3F400000).astype(np.uint32)  # [0.75, 0.7505): one binade of outputs
    v = np.tanh(bits.view(np.float32).astype(np.float64))
    rad, sg = np.full(n, 2.0**-60), np.ones(n, np.int8)
    # right, or one value up: errors in (0.5, 1] and (1, 1.5]
    yb = v.astype(np.float32).view(np.uint32) + (np.arange(n) % 2).astype(np.uint32)
    tops = Floor(1e9, 0, 1e9, 0)
    blk = Block(bits, yb.view(np.float32), yb, v, rad, sg)
    # with keep, as the sweep calls them (each set of argument types is another compiled form)
    h1, h2, keep = np.empty(n, np.bool_), np.empty(n, np.bool_), np.empty(n, np.uint32)
    want = easy(blk, tops, h1, keep)
    got, beyond = easy_near(blk, tops, h2, keep)
    assert beyond == 0 and got == want and (h1 == h2).all()
    assert want[3] > 0 and want[4] > 0 and want[0] > 0  # bins (0.5, 1] and (1, 2], and right ones
    assert easy_pass(True, blk, tops, h2, keep) == (want, True)
    yb[100] += 3
    want = easy(blk, tops, h1, keep)
    assert easy_near(blk, tops, h2, keep)[1] == 1 and want[5] == 1
    assert easy_pass(True, blk, tops, h2, keep) == (want, False)
    assert easy_pass(False, blk, tops, h2, keep) == (want, False)


def test_the_distributions_of_top_level_modules_are_the_standard_librarys_mapping():
    # a Python target's fingerprint names the installed distributions its modules come from; opcert reads
    # that mapping itself (faster): it must be importlib.metadata's, key for key and in order
    from importlib.metadata import packages_distributions

    from opcert.targets.python import _distributions

    # read both now: the cached mapping may come from an earlier test in this worker, before another test's
    # build changed what is installed (a fresh-clone run saw 'opcert' twice in one and three times in the other)
    _distributions.cache_clear()
    assert _distributions() == packages_distributions()
    _distributions.cache_clear()  # now from the kernel cache's copy, as the next process reads it
    assert _distributions() == packages_distributions()


def test_the_cached_distributions_follow_an_install(tmp_path, monkeypatch):
    # the mapping is kept between processes under a key of what is installed: a distribution added to a
    # directory on sys.path, or one removed, is read again, not served from the old copy
    from importlib.metadata import packages_distributions

    from opcert.targets.python import _distributions

    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(tmp_path / "cache"))
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def install(name, top):
        meta = site / f"{name}-1.0.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (meta / "top_level.txt").write_text(f"{top}\n")

    install("opcert-probe-a", "probe_a")
    (site / "dangling-1.0.dist-info").symlink_to(tmp_path / "nowhere")  # unreadable: the others still count
    _distributions.cache_clear()
    assert _distributions()["probe_a"] == ["opcert-probe-a"]
    assert "probe_b" not in _distributions()
    assert list((tmp_path / "cache" / "distributions").glob("*.json"))  # written for the next process
    install("opcert-probe-b", "probe_b")
    _distributions.cache_clear()
    assert _distributions()["probe_b"] == ["opcert-probe-b"]
    assert _distributions() == packages_distributions()
    for f in (site / "opcert-probe-a-1.0.dist-info").iterdir():
        f.unlink()
    (site / "opcert-probe-a-1.0.dist-info").rmdir()
    _distributions.cache_clear()
    assert "probe_a" not in _distributions()
    _distributions.cache_clear()


def test_kernel_tuning_can_be_turned_off_and_a_bad_value_is_named(monkeypatch):
    """OPCERT_KERNEL_TUNING=0 (the test suite's setting): a float32 sweep compiles its ball kernel one way
    instead of timing four; 1 or unset: tuned; anything else: a usage error naming what is allowed."""
    from opcert.errors import UsageError
    from opcert.numerics.ball_compiled import kernel_tuning

    monkeypatch.setenv("OPCERT_KERNEL_TUNING", "0")
    assert kernel_tuning() is False
    monkeypatch.setenv("OPCERT_KERNEL_TUNING", "1")
    assert kernel_tuning() is True
    monkeypatch.delenv("OPCERT_KERNEL_TUNING")
    assert kernel_tuning() is True
    monkeypatch.setenv("OPCERT_KERNEL_TUNING", "yes")
    with pytest.raises(UsageError, match="allowed are 1 .* and 0"):
        kernel_tuning()


def test_the_second_workers_warm_up_compiles_only_what_a_chunk_calls():
    """sweep.warm_kernels (a second worker's first task in a cold sweep) calls block and the property
    scans with run_chunk's argument types: in a fresh process, a chunk run after it compiles or loads no
    other signature of those kernels (a wrong type would have compiled a variant nobody calls)."""
    import subprocess
    import sys

    code = textwrap.dedent("""
        from opcert.targets import describe_target
        from opcert.verify.properties import kernels as pk
        from opcert.verify.accuracy import sweep_kernel as sk
        from opcert.verify.accuracy.sweep import SweepConfig, run_chunk, warm_kernels
        kernels = (sk.block, pk.scan_values, pk.scan_parity, pk.scan_monotonic)
        cfg = SweepConfig("Tanh", "numpy:tanh", (), None, 0x3F000000, 0x3F000000 + 4096,
                          target_fingerprint=describe_target("numpy:tanh").fingerprint,
                          properties=("range", "monotonic", "odd", "zero", "nan", "limits"))
        warm_kernels(cfg)
        warmed = [sorted(map(str, k.signatures)) for k in kernels]
        assert all(warmed), warmed
        data = run_chunk(cfg, 0)
        assert data["stats"]["n"] == 8192, data["stats"]["n"]
        after = [sorted(map(str, k.signatures)) for k in kernels]
        print("same" if after == warmed else f"warmed {warmed} after {after}")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "same", out.stdout
