"""LM Oracle from Python: check PyTorch, NumPy and JAX tensors against the correctly rounded
reference, in a pytest test, with no files in between.

    import lmoracle
    inputs = lmoracle.case("rmsnorm/llama3-8b", format="bf16", array="torch")
    y = my_rmsnorm(inputs["x"], inputs["gamma"])
    lmoracle.testing.assert_matches_reference("rmsnorm/llama3-8b", None, {"y": y})

reference(), case() and check() are the oracle's own C++ (lmoracle._core); evaluate() runs a
kernel under the guards of docs/harness.md (`python -m lmoracle.harness` for executables);
`python -m lmoracle` is the `lmoracle` command line; lmoracle.strategies has Hypothesis strategies
(import it explicitly: it needs hypothesis)."""
import pkgutil

# The build tree keeps the compiled _core in build/python/lmoracle/ and these files in
# python/lmoracle/: with both folders' parents on sys.path, the package spans the two.
__path__ = pkgutil.extend_path(__path__, __name__)

from . import _core  # noqa: E402
from ._api import (RECIPES, Case, OutputVerdict, Verdict, case, cases, cases_dir, check,  # noqa: E402
                   ops, reference, rounding_points)
from . import testing  # noqa: E402
from .evaluate_api import CHECKS, CheckResult, Report, evaluate  # noqa: E402

__version__ = _core.version()

__all__ = ["CHECKS", "CheckResult", "RECIPES", "Case", "OutputVerdict", "Report", "Verdict", "case",
           "cases", "cases_dir", "check", "evaluate", "ops", "reference", "rounding_points",
           "testing", "__version__"]
