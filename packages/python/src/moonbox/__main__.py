"""``python -m moonbox run [flags] FILE|-``."""

import sys

from .cli import main

sys.exit(main())
