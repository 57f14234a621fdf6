"""The paper's corpus comparison (Table 7, Figure 2): ``python benchmarks/compare.py --help``.

The code is :mod:`metrics.compare` (installed with the toolkit, so this runs from any folder).
"""

from metrics.compare import main

if __name__ == "__main__":
    raise SystemExit(main())
