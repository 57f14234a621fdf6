"""The command line (``wikipedia-ipc``, ``python wikipedia_ipc.py``): the last stage, above the engines.

:mod:`~builder.cli.parser` holds the words, :mod:`~builder.cli.options` the one mapping of parsed options onto
configs and build options, :mod:`~builder.cli.commands` what each command runs, :mod:`~builder.cli.summary` what a
build prints at its end. ``wikipedia_ipc.py`` is the entry that runs :func:`main`.
"""

from __future__ import annotations

from builder.cli.commands import main
from builder.cli.parser import command_parser

__all__ = ["command_parser", "main"]
