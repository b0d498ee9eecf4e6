"""``python -m vendbench`` is the ``vendbench`` command."""

import sys

from .cli import main

if __name__ == "__main__":      # not again in a worker process (the site's readers spawn)
    sys.exit(main())
