"""The ``moonbox`` command: the Rust crate's command line, entered through
the native module, so ``python -m moonbox`` and the ``moonbox`` script are
the same command as the Rust binary (``run``, ``check``, ``tool-schema``,
``mcp``, ``serve``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from . import _native


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line ``argv`` (default: this process's arguments)
    and returns its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.cli_main(["moonbox", *args])


def main_exit() -> None:
    """The ``moonbox`` console script: :func:`main`, then exit with its
    status."""
    sys.exit(main())
