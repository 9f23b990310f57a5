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
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
