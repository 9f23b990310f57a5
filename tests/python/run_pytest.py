"""Run the analysis package's pytest suite; exit 77 (skip) with the reason
when this interpreter lacks the package's dependencies."""
import importlib.util
import os
import sys

missing = [m for m in ("numpy", "scipy", "jinja2", "pytest") if importlib.util.find_spec(m) is None]
if missing:
    print(f"SKIP: {sys.executable} lacks {', '.join(missing)}; create the environment with "
          "'python3 -m venv .venv && .venv/bin/pip install -e reports[test]' "
          "or configure with -Dpython=/path/to/that/python", flush=True)
    sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
# The tests are independent computations (no timing, no fixed ports or paths): with
# pytest-xdist they run on two workers, which halves the suite on a 2-core host whose
# other tests run one at a time.
workers = []
if importlib.util.find_spec("xdist") is not None and (os.cpu_count() or 1) >= 2:
    workers = ["-n", "2"]
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *workers, here] + sys.argv[1:]))
