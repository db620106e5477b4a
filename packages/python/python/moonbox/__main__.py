"""``python -m moonbox``: the ``moonbox`` command."""

import sys

from .cli import main

sys.exit(main())
