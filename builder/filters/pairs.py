"""The paraphrase filter (Table 3, steps 7–9): repeated, identical and near-identical caption pairs.

Near-duplicates are artifacts of centrally reused captions: they differ only in
case, punctuation, whitespace or a bracketed expression such as "(1907)", or one
is the other with something added ("X" and "X, 1941"). The rules are the ones the
paper's authors ran (their ``ParaphraseFilterMapper`` with the equality and
near-equality heuristics), with the deviations named in each docstring.

All three steps compare texts through :func:`fold`, so that Unicode variants of one
wording (composed and decomposed "Café", "ﬁ" and "fi", fullwidth "ＡＢＣ" and "ABC",
"ß" and "SS") count as the same text, not as a paraphrase.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import regex

from builder.filters.clusters import Pair

__all__ = [
    "DIGEST_BYTES",
    "UniqueCandidates",
    "candidate_key",
    "divergent_captions",
    "significant_difference",
    "skeleton",
]

_PARENTHESIZED = re.compile(r"\(.*?\)")
_NON_WORD = re.compile(r"\W")
# the regex module's \w also holds combining marks: Devanagari and Thai vowel signs are parts of words
_NON_WORD_NOR_MARK = regex.compile(r"\W")
DIGEST_BYTES = 16


def fold(text: str) -> str:
    """The text as steps 7–9 compare it: NFKC-normalized and case-folded, ``NFKC(casefold(NFKC(text)))``.

    The authors compared with Java's ``toLowerCase`` (step 8: ``equalsIgnoreCase``)
    on text whose accents their extraction had stripped; we keep Unicode, so
    lower-casing alone would leave "Café" composed and decomposed, "ﬁ" and "fi",
    "ＡＢＣ" and "ABC", "ß" and "SS" apart. NFKC comes first so that compatibility forms (fullwidth, ligatures, "Ⅰ")
    are case-folded too, and again last because case folding can decompose ("ǰ"
    becomes "j" plus a combining caron, which :func:`skeleton` would then delete as
    a non-word character); the result is stable under a second :func:`fold`.
    ASCII text is its own NFKC form and its case folding is ``lower()``: the short
    path keeps English builds fast and their keys unchanged.
    """
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def candidate_key(pair: Pair) -> bytes:
    """A fixed-size digest of the pair's folded texts (see :func:`fold`), in sorted order.

    Order, caption type and image do not enter the key: the same two wordings form
    one candidate wherever they occur, as in the authors' pair hash.
    """
    first, second = sorted((fold(pair.sentence1), fold(pair.sentence2)))
    # a NUL cannot occur in dump text (XML forbids it), so the joined key is unambiguous
    joined = f"{first}\x00{second}".encode()
    return hashlib.blake2b(joined, digest_size=DIGEST_BYTES).digest()


class UniqueCandidates:
    """Step 7 across a whole build: the first pair of each unordered pair of folded texts.

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
    """Step 8: drop pairs whose two texts are equal ignoring case and Unicode form (see :func:`fold`)."""
    return [pair for pair in pairs if fold(pair.sentence1) != fold(pair.sentence2)]


def skeleton(text: str, marks: bool = False) -> str:
    """What the near-duplicate test compares: no ``( … )`` expressions, no non-word characters, folded.

    The text is folded (:func:`fold`) first, so fullwidth brackets count as brackets
    and a decomposed accent is composed before ``\\W`` could delete its combining
    mark; it is folded again at the end, since deleting characters can leave a
    sequence that NFKC composes (Hangul jamo that a bracket kept apart).
    Parenthesized expressions go first, matched non-greedily as the authors did, so
    ``"a (b (c) d) e"`` keeps ``" d) e"``. Word characters are Python's Unicode ``\\w``
    (letters, digits and underscore of every script). The authors' Java ``[\\W]`` is
    ASCII-only: it also deletes accented and non-Latin letters, so for them
    "Tokyo 東京 Tower" and "Tokyo Tower" were near-duplicates; their extraction had
    stripped accents before, so "Café" and "Cafe" were equal for them. We keep
    accents and scripts, and those pairs survive here (a documented deviation).

    ``marks`` keeps combining marks too, for texts of languages other than English:
    ``\\W`` deletes the vowel signs of Devanagari or Thai, so that "किताब" (book) and
    "कताब" would be one skeleton. English keeps the skeleton the paper's method had.
    """
    non_word = _NON_WORD_NOR_MARK if marks else _NON_WORD
    return fold(non_word.sub("", _PARENTHESIZED.sub("", fold(text))))


def near_duplicates(first: str, second: str, marks: bool = False) -> bool:
    """Two texts whose skeletons are equal or where one skeleton contains the other."""
    one, two = skeleton(first, marks), skeleton(second, marks)
    return one in two or two in one


def significant_difference(pairs: list[Pair]) -> list[Pair]:
    """Step 9: drop near-duplicates (see :func:`near_duplicates`), keeping combining marks unless both are English."""
    return [
        pair
        for pair in pairs
        if not near_duplicates(
            pair.sentence1, pair.sentence2, pair.first.language != "en" or pair.second.language != "en"
        )
    ]
