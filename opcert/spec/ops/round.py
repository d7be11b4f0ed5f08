"""Round: ONNX Round-11 (bfloat16 from 22), halves to even; DirectML DML_ELEMENT_WISE_ROUND (level 2.1, no ScaleBias)
with its RoundingMode: HALVES_TO_NEAREST_EVEN, TOWARD_ZERO (truncation) or TOWARD_INFINITY (halves away from zero).

Exact: an integer, which every format represents; x itself where it is integral, +-0, +-inf or NaN (ONNX's
words); odd in every mode, zeros' signs included (Round(-0.3) = -0, as IEEE 754's roundToIntegral). Written with
floor (expr.primitives has floor only): on u > 0, floor(u + 1/2), one less at a tie whose floor is odd; the sign
outside. opcert's implementation rounds halves to even as binary64 does, (u + 2^52) - 2^52, u itself from 2^52 on;
halves away from zero as floor(u + 1/2) from u = 1/2 on, 0 below (in binary64, u + 1/2 rounds up to 1 at
u = 0.49999999999999994)."""

from fractions import Fraction

from opcert.expr import absolute, attr, both, eq, floor, negate, select
from opcert.spec.declarations import DML_FLOATS, LIMITS, NAN_PROPAGATION, Property, Support, const, limits, x
from opcert.spec.elementwise import DML_ELEMENT_WISE_DOC, onnx_unary
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

mode = attr("rounding_mode")
HALF = const(Fraction(1, 2))
BIG = const(2.0**52)  # from here every binary64 value is an integer


def _signed(r, t):
    """r on t > 0, extended as an odd function; +-0 and NaN are t itself."""
    return select(t < 0, -r(-t), select(t > 0, r(t), t))


def _away(u):
    return floor(u + HALF)


def _even(u):
    n = floor(u + HALF)
    return select(both(eq(n - u, HALF), eq(n - 2 * floor(n * HALF), 1)), n - 1, n)


def _even_in_binary64(u):
    # u + 2^52 rounds u to an integer, halves to even (binary64's own rounding; every u below 2^52), and
    # subtracting 2^52 back is exact
    return select(u >= BIG, u, (u + BIG) - BIG)


def _away_in_binary64(u):
    # floor(u + 1/2) is exact from u = 1/2 on (u + 1/2 is a binary64 value there, below 2^52); below 1/2 it is 0, where
    # binary64's u + 1/2 rounds up to 1 at u = 0.49999999999999994
    return select(u < HALF, const(0), select(u >= BIG, u, floor(u + HALF)))


def _integral(e):
    """e, or x itself where |x| >= 2^52: every binary64 value there is an integer (the reference's form: u + 1/2
    would be a ball across integers there, never decided; equal to the definition at every binary64 x)."""
    return select(absolute(x) >= BIG, x, e)


def _modes(even, away):
    return select(eq(mode, 0), _signed(even, x), select(eq(mode, 1), _signed(floor, x), _signed(away, x)))


OPERATOR = Operator(
    name="Round",
    family="rounding",
    summary="the nearest integer, element-wise: halves to even (DirectML: or toward zero, or halves away from zero)",
    attributes=(
        Attribute(
            "rounding_mode",
            "DirectML RoundingMode: halves to the nearest even integer, toward zero, or halves away from zero",
            kind="choice",
            choices=("halves_to_nearest_even", "toward_zero", "toward_infinity"),
            aliases=("RoundingMode",),
            example="halves_to_nearest_even",
        ),
    ),
    standards=(
        onnx_unary(
            "Round",
            _signed(_even, x),
            "y = round(x), halves to the nearest even integer",
            since=("11", "22"),
            reference_form=_integral(_signed(_even, x)),
        ),
        Standard(
            key="directml",
            op_name="DML_ELEMENT_WISE_ROUND",
            document=DML_ELEMENT_WISE_DOC.format("round"),
            formula_text="round(x) by RoundingMode: HALVES_TO_NEAREST_EVEN, TOWARD_ZERO (truncate), "
            "TOWARD_INFINITY (halves away from zero)",
            formula=_modes(_even, _away),
            defaults={},
            attribute_names={"rounding_mode": "RoundingMode"},
            support=(Support("2.1", DML_FLOATS, (4, 4)), Support("3.0", DML_FLOATS, (1, 8))),
            implementation=_modes(_even_in_binary64, _away_in_binary64),
            reference_form=_integral(_modes(_even, _away)),
            notes="RoundingMode has no default (a required member): opcert checks HALVES_TO_NEAREST_EVEN unless "
            "told. TOWARD_INFINITY rounds halfway values away from zero, as its document says, not upward.",
        ),
    ),
    primary="onnx",
    implementation=_signed(_even_in_binary64, x),
    standards_differ_where=negate(eq(mode, 0)),
    limits=limits("inf", "-inf"),
    properties=(
        Property("monotonic", "monotonic", "Round is non-decreasing"),
        Property("odd", "odd", "Round(-x) = -Round(x), zeros' signs included"),
        Property(
            "halves_to_even",
            "exact_point",
            "Round(0.5) = 0, Round(1.5) = 2, Round(2.5) = 2, Round(-2.5) = -2, Round(2.7) = 3",
            points=tuple((const(a), const(b)) for a, b in ((0.5, 0), (1.5, 2), (2.5, 2), (-2.5, -2), (2.7, 3))),
            standards=("onnx",),
        ),
        Property(
            "modes",
            "exact_point",
            "Round(2.5) = 2, 2 or 3 and Round(-2.7) = -3, -2 or -3 by RoundingMode",
            points=(
                (const(2.5), select(eq(mode, 2), const(3), const(2))),
                (const(-2.7), select(eq(mode, 1), const(-2), const(-3))),
            ),
            standards=("directml",),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={"torch": RuntimeMap("torch.round"), "jax": RuntimeMap("jax.numpy.round")},
)
