"""Independent truth for the package's tests: values computed here with mpmath (60 digits) and
correctly rounded by this file's own rounding, not by the oracle."""
import mpmath

mpmath.mp.dps = 60

# format -> (precision p with the implicit bit, minimum normal exponent, largest finite)
FORMATS = {"f64": (53, -1022, 1.7976931348623157e308), "f32": (24, -126, 3.4028234663852886e38),
           "bf16": (8, -126, 3.3895313892515355e38), "f16": (11, -14, 65504.0)}


def round_to(v, fmt):
    """The mpf v correctly rounded (to nearest, ties to even) to fmt, as a Python float."""
    p, emin, fmax = FORMATS[fmt]
    if v == 0:
        return 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = int(mpmath.floor(mpmath.log(a, 2)))
    while mpmath.mpf(2) ** e > a:  # settle floor(log2 a) exactly
        e -= 1
    while mpmath.mpf(2) ** (e + 1) <= a:
        e += 1
    q = max(e, emin) - (p - 1)  # the ulp's exponent (subnormals share emin's)
    m = a / mpmath.mpf(2) ** q
    n = int(mpmath.floor(m))
    rest = m - n
    if rest > 0.5 or (rest == 0.5 and n % 2 == 1):
        n += 1
    r = float(mpmath.mpf(n) * mpmath.mpf(2) ** q)
    return sign * (r if r <= fmax else float("inf"))


def gelu(x):
    """GELU(x) = x·Φ(x) = x/2·(1 + erf(x/√2)), exact."""
    x = mpmath.mpf(float(x))
    return x / 2 * (1 + mpmath.erf(x / mpmath.sqrt(2)))


def rmsnorm_row(xs, gamma, eps):
    """y_i = x_i / sqrt(mean(x²) + eps) · γ_i, exact (eps as the double it is)."""
    xs = [mpmath.mpf(float(x)) for x in xs]
    ms = mpmath.fsum(x * x for x in xs) / len(xs)
    r = 1 / mpmath.sqrt(ms + mpmath.mpf(float(eps)))
    return [x * r * mpmath.mpf(float(g)) for x, g in zip(xs, gamma)]
