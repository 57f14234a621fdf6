"""The paraphrase filter: duplicate, identical and near-identical caption pairs.

Near-duplicates are artifacts of centrally reused captions; they differ only in
case, punctuation, whitespace, or a bracketed expression such as "(1907)" (talk
slides, "significant caption difference").
"""

from __future__ import annotations

import re
import unicodedata

from builder.clusters import Pair

_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def unique_candidates(pairs: list[Pair]) -> list[Pair]:
    """Keep the first pair of each unordered text pair (references repeat captions)."""
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for pair in pairs:
        a, b = sorted((pair.sentence1, pair.sentence2))
        key = (pair.caption_type, a, b)
        if key not in seen:
            seen.add(key)
            kept.append(pair)
    return kept


def divergent_captions(pairs: list[Pair]) -> list[Pair]:
    """Drop pairs whose two texts are identical."""
    return [pair for pair in pairs if pair.sentence1 != pair.sentence2]


def skeleton(text: str) -> str:
    """What is left of a text without case, punctuation, whitespace and bracketed asides."""
    previous = None
    while previous != text:
        previous, text = text, _BRACKETED.sub(" ", text)
    return "".join(
        char for char in text.casefold() if not char.isspace() and not unicodedata.category(char).startswith("P")
    )


def significant_difference(pairs: list[Pair]) -> list[Pair]:
    """Drop near-duplicates: pairs whose texts share the same skeleton."""
    return [pair for pair in pairs if skeleton(pair.sentence1) != skeleton(pair.sentence2)]
