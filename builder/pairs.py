"""The paraphrase filter (Table 3, steps 7–9): repeated, identical and near-identical caption pairs.

Near-duplicates are artifacts of centrally reused captions: they differ only in
case, punctuation, whitespace or a bracketed expression such as "(1907)", or one
is the other with something added ("X" and "X, 1941"). The rules are the ones the
paper's authors ran (their ``ParaphraseFilterMapper`` with the equality and
near-equality heuristics), with the deviations named in each docstring.
"""

from __future__ import annotations

import hashlib
import re

from builder.clusters import Pair

_PARENTHESIZED = re.compile(r"\(.*?\)")
_NON_WORD = re.compile(r"\W")
DIGEST_BYTES = 16


def candidate_key(pair: Pair) -> bytes:
    """A fixed-size digest of the pair's lower-cased texts, in sorted order.

    Order, caption type and image do not enter the key: the same two wordings form
    one candidate wherever they occur, as in the authors' pair hash.
    """
    first, second = sorted((pair.sentence1.lower(), pair.sentence2.lower()))
    # a NUL cannot occur in dump text (XML forbids it), so the joined key is unambiguous
    joined = f"{first}\x00{second}".encode()
    return hashlib.blake2b(joined, digest_size=DIGEST_BYTES).digest()


class UniqueCandidates:
    """Step 7 across a whole build: the first pair of each unordered, lower-cased text pair.

    Engines feed clusters in image order, so "first" means first in image order and
    the result does not depend on how many workers extracted the dump. The state is a
    set of 16-byte digests; in CPython that costs about 85 MB per million distinct
    pairs (each digest is a 49-byte object plus its slot in the set). A digest
    collision (odds about n² / 2¹²⁹) would drop one pair.
    """

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def __call__(self, pairs: list[Pair]) -> list[Pair]:
        kept = []
        for pair in pairs:
            key = candidate_key(pair)
            if key not in self._seen:
                self._seen.add(key)
                kept.append(pair)
        return kept

    def __len__(self) -> int:
        return len(self._seen)


def divergent_captions(pairs: list[Pair]) -> list[Pair]:
    """Step 8: drop pairs whose two texts are equal ignoring case."""
    return [pair for pair in pairs if pair.sentence1.lower() != pair.sentence2.lower()]


def skeleton(text: str) -> str:
    """What the near-duplicate test compares: no ``( … )`` expressions, no non-word characters, lower case.

    Parenthesized expressions go first, matched non-greedily as the authors did, so
    ``"a (b (c) d) e"`` keeps ``" d) e"``. Word characters are Python's Unicode ``\\w``
    (letters, digits and underscore of every script). The authors' Java ``[\\W]`` is
    ASCII-only: it also deletes accented and non-Latin letters, so for them
    "Tokyo 東京 Tower" and "Tokyo Tower" were near-duplicates; their extraction had
    stripped accents before, so "Café" and "Cafe" were equal for them. We keep
    accents and scripts, and those pairs survive here (a documented deviation).
    """
    return _NON_WORD.sub("", _PARENTHESIZED.sub("", text)).lower()


def near_duplicates(first: str, second: str) -> bool:
    """Two texts whose skeletons are equal or where one skeleton contains the other."""
    one, two = skeleton(first), skeleton(second)
    return one in two or two in one


def significant_difference(pairs: list[Pair]) -> list[Pair]:
    """Step 9: drop near-duplicates (see :func:`near_duplicates`)."""
    return [pair for pair in pairs if not near_duplicates(pair.sentence1, pair.sentence2)]
