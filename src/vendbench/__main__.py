"""``python -m vendbench`` is the ``vendbench`` command."""

import sys

from .cli import main

sys.exit(main())
