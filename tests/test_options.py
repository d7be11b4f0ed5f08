"""measure()'s options and the operator's attributes are two namespaces (opcert.Options, attrs=)."""

import inspect

import pytest

import opcert
from opcert import Options, UsageError
from opcert.options import NAMES, split_keywords


def test_the_public_signature_shows_options_and_attrs():
    params = inspect.signature(opcert.measure).parameters
    assert list(params)[:5] == ["op", "target", "dtype", "inputs", "options"]
    assert params["attrs"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "samples" in NAMES and "layout_samples" in NAMES and "alpha" not in NAMES


def test_a_keyword_that_is_an_option_and_an_attribute_is_refused():
    # no operator of the catalog has such an attribute today: an operator that would is simulated here
    with pytest.raises(UsageError, match="samples: both an option of measure.. and an attribute"):
        split_keywords(None, None, {"samples": 3}, ["Samples", "alpha"])
    opts, attrs = split_keywords(None, {"samples": 3}, {"seed": 7}, ["samples"])
    assert opts.seed == 7 and opts.samples is None and attrs == {"samples": 3}


def test_keywords_split_into_options_and_attributes():
    opts, attrs = split_keywords(Options(seed=1), None, {"samples": 50, "alpha": 0.5}, ["alpha"])
    assert (opts.samples, opts.seed, attrs) == (50, 1, {"alpha": 0.5})
    with pytest.raises(UsageError, match="alpha given twice"):
        split_keywords(None, {"alpha": 1}, {"alpha": 2}, ["alpha"])
    with pytest.raises(UsageError, match="options must be an opcert.Options"):
        split_keywords({"samples": 3}, None, {}, [])
    with pytest.raises(UsageError, match="unknown option.*samplez"):
        Options().replace(samplez=3)


def test_options_and_attrs_measure_what_keywords_measure():
    a = opcert.measure(
        "Elu", "opcert", "float16", "sample", Options(samples=400, seed=3, properties=()), attrs={"alpha": 0.5}
    )
    b = opcert.measure("Elu", "opcert", "float16", samples=400, seed=3, properties=(), alpha=0.5)
    assert a.status == b.status == "ok"
    assert a.attrs["alpha"]["exact"] == "0.5"
    assert (a.inputs_checked, a.max_ulp, a.correctly_rounded) == (b.inputs_checked, b.max_ulp, b.correctly_rounded)
