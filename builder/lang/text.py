"""What a reader sees of a text: the rule for printable characters, and §4.5.1's preprocessing of captions that
are plain text already. One place for both: wikitext cleaning (:mod:`builder.extract.cleaning`), web pages
(:mod:`builder.extract.html`) and image–caption datasets (:mod:`builder.sources.img2dataset`) read them here.
"""

from __future__ import annotations

import unicodedata

__all__ = ["preprocess_caption", "printable"]

_KEPT_FORMAT_CHARACTERS = frozenset({"\u200d"})  # the zero-width joiner shapes Indic scripts and emoji sequences
_BREAKS = {ord(char): " " for char in "\n\r\v\f\x85\u2028\u2029"}


def printable(char: str) -> str:
    """Line breaks, tabs and Unicode spaces become a space; control, format and unassigned characters go."""
    if char.isspace():
        return " "
    if char in _KEPT_FORMAT_CHARACTERS:
        return char
    return "" if unicodedata.category(char)[0] == "C" else char


def preprocess_caption(text: str) -> str:
    """§4.5.1: line breaks removed, non-printable characters deleted, runs of whitespace reduced to one space.

    For captions that are plain text already (a web page's, an image–caption dataset's); wikitext's cleaning is
    :func:`builder.extract.cleaning.clean_caption`. A line break becomes a space (as a browser shows it), so that
    the words on either side stay apart; Unicode spaces (no-break space, …) count as whitespace; the zero-width
    joiner is kept, as it shapes scripts and emoji. The ends are trimmed.
    """
    text = text.translate(_BREAKS)
    if not text.isprintable():
        text = "".join(printable(char) for char in text)
    return " ".join(text.split())
