"""``python -m metrics``: the scoring command line."""

import sys

from metrics.cli import main

sys.exit(main())
