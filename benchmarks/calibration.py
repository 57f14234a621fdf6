"""Table 7's ST threshold chosen on MSRPC's labels: ``python benchmarks/calibration.py --help``.

The code is :mod:`metrics.calibration` (installed with the toolkit, so this runs from any folder).
"""

from metrics.calibration import main

if __name__ == "__main__":
    raise SystemExit(main())
