"""``python -m vendbench.cli``."""

import sys

from . import main

sys.exit(main())
