"""Progress for people and for logs: a live bar on a terminal, a few plain lines in a log file.

tqdm redraws its bar with ``\\r`` many times a second; written into a log (stderr redirected,
a batch job, CI) that becomes thousands of updates. When stderr is not a terminal, the
bars here print whole lines instead, at most one every ``LOG_SECONDS``, and the final state.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm.auto import tqdm

__all__ = ["progress_bar"]

LOG_SECONDS = 30.0


class LogLines(tqdm):
    """A tqdm that writes its state as plain lines, at most one every ``mininterval`` seconds."""

    def __init__(self, *arguments: Any, **options: Any) -> None:
        options.setdefault("mininterval", LOG_SECONDS)
        options.setdefault("maxinterval", LOG_SECONDS)
        self._lines = 0
        super().__init__(*arguments, **options)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        text = self.__str__() if msg is None else msg
        if not text:  # tqdm clears a bar that does not stay with an empty message: nothing to clear here
            return False
        # each line but the first starts with the newline that ends the one before; tqdm ends the last
        self.fp.write(("\n" if self._lines else "") + text.strip())
        self.fp.flush()
        self._lines += 1
        return True


def progress_bar(*arguments: Any, **options: Any) -> tqdm:
    """``tqdm(...)`` on a terminal; :class:`LogLines` when stderr goes to a file or a pipe."""
    stream = options.get("file") or sys.stderr
    terminal = hasattr(stream, "isatty") and stream.isatty()
    return tqdm(*arguments, **options) if terminal else LogLines(*arguments, **options)
