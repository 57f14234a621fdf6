"""Brockett & Dolan's (2005) features of a sentence pair, the classifier behind MSRPC's construction.

The seed (§3.4) describes four feature classes; each is computed here from the two texts alone,
offline, with NLTK's rule-based Porter stemmer and the shipped English WordNet
(:func:`builder.lang.wordnet.load_wordnet`, no download):

- **string similarity**: absolute and relative length in words, shared words, word-based
  Levenshtein edit distance and its ratios, and the *lexical distance* ("converting the sentences
  into alphabetized strings of unique words and applying word based edit distance"), plus lexical
  matches over edit distance;
- **morphological variants**: words of the two texts that are not identical but share a stem or a
  WordNet base form (``orbit|orbital``, ``said|says``);
- **WordNet lexical mappings**: the remaining words that share a synset (synonyms) or whose synsets
  stand in a direct hypernym relation;
- **composite features**: the counts of each class normalised by the texts' lengths, and what no
  class matched ("No_of_List_2_Words", the count of WordNet matches, is ``synonyms``).

The seed's lexical classes are also *individual* word-pair features (``orbit|orbital`` as one
dimension of a sparse vector, those seen more than four times kept): :func:`word_pairs` gives them,
and the study measures them; the shipped models keep the composite counts, a short list of plain
numbers that any text can be scored with. Its word-association lexicon (log-likelihood pairings
mined from its own L12 corpus) has no public counterpart and is left out (docs/paraphrases.md).

Words are matched one to one in the seed's order of evidence: identical, then morphological
variant, then synonym, then hypernym, so a word counts in one class only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import numpy as np

SEED_FEATURES = (
    "words_short",  # string: lengths in words, absolute
    "words_long",
    "words_difference",
    "relative_length",  # shorter / longer, in words
    "shared",  # shared words (unique, case-folded)
    "shared_short",  # ... over the unique words of the shorter text (in words; "short" means it below)
    "shared_long",
    "edit",  # word-based Levenshtein distance
    "edit_long",  # ... over the longer text's length
    "edit_short",
    "lexical_edit",  # Levenshtein distance of the alphabetized unique words
    "lexical_edit_long",
    "matches_per_edit",  # shared words / (edit distance + 1)
    "morph",  # morphological variants: shared stem or WordNet base form, not identical
    "morph_short",
    "synonyms",  # WordNet: a shared synset
    "synonyms_short",
    "hypernyms",  # WordNet: one's synset is a direct hypernym of the other's
    "hypernyms_short",
    "matched_short",  # composite: words matched by any class over the shorter text's unique words
    "matched_long",
    "unmatched_short",  # composite: the shorter text's unique words no class matched
    "unmatched_long",
)
_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*")


def words(text: str) -> list[str]:
    """The text's words, case-folded, without punctuation (``"U.S.-led"`` stays one word)."""
    return _WORD.findall(text.casefold())


def levenshtein(first: Sequence[object], second: Sequence[object]) -> int:
    """The edit distance of two sequences (insertions, deletions, substitutions of one item each)."""
    if len(first) < len(second):
        first, second = second, first
    previous = list(range(len(second) + 1))
    for i, item in enumerate(first, 1):
        current = [i]
        for j, other in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (item != other)))
        previous = current
    return previous[-1]


class Lexicon:
    """Per word, what the morphological and WordNet classes compare, computed once per word and cached."""

    def __init__(self) -> None:
        from nltk.stem import PorterStemmer

        from builder.lang.wordnet import POS, load_wordnet

        self._wordnet = load_wordnet("oewn")
        self._stemmer = PorterStemmer()
        self._pos = POS

    @functools.lru_cache(maxsize=200_000)  # noqa: B019 - one Lexicon per process (lexicon())
    def forms(self, word: str) -> frozenset[str]:
        """The word's Porter stem and its WordNet base forms in every part of speech."""
        found = {self._stemmer.stem(word)}
        for pos in self._pos:
            found.update(self._wordnet.morphy(word, pos))
        return frozenset(found)

    @functools.lru_cache(maxsize=200_000)  # noqa: B019
    def senses(self, word: str) -> tuple[frozenset[str], frozenset[str]]:
        """The word's synsets and their direct hypernyms (instance hypernyms too), as synset ids."""
        synsets = self._wordnet.synsets(word)
        above = {parent.id() for synset in synsets for parent in (*synset.hypernyms(), *synset.instance_hypernyms())}
        return frozenset(synset.id() for synset in synsets), frozenset(above)


@functools.cache
def lexicon() -> Lexicon:
    """The one lexicon of this process (WordNet is loaded once)."""
    return Lexicon()


def _match(left: set[str], right: set[str], related: object, kind: str = "", pairs: list[str] | None = None) -> int:
    """Pairs words of ``left`` with words of ``right`` one to one where ``related(a, b)``; removes the matched
    words from both sets and returns how many pairs were made (greedy, in sorted order, so deterministic).
    ``pairs`` collects each match as ``kind:a|b``, the seed's individual word-pair feature."""
    made = 0
    for word in sorted(left):
        for other in sorted(right):
            if related(word, other):  # type: ignore[operator]
                left.discard(word)
                right.discard(other)
                made += 1
                if pairs is not None:
                    pairs.append(f"{kind}:{'|'.join(sorted((word, other)))}")
                break
    return made


def pair_features(
    first: str, second: str, lexicon_: Lexicon | None = None, pairs: list[str] | None = None
) -> list[float]:
    """One pair's features, in the order of :data:`SEED_FEATURES`; ``pairs`` collects the matched word pairs
    (:func:`word_pairs`)."""
    lex = lexicon_ or lexicon()
    a, b = words(first), words(second)
    if len(a) > len(b):  # the shorter text first: the features are symmetric
        a, b = b, a
    short, long = max(1, len(a)), max(1, len(b))
    types_a, types_b = set(a), set(b)
    unique_short, unique_long = max(1, len(types_a)), max(1, len(types_b))
    shared = len(types_a & types_b)
    edit = levenshtein(a, b)
    lexical_edit = levenshtein(sorted(types_a), sorted(types_b))
    left, right = types_a - types_b, types_b - types_a
    morph = _match(left, right, lambda x, y: bool(lex.forms(x) & lex.forms(y)), "morph", pairs)
    synonyms = _match(left, right, lambda x, y: bool(lex.senses(x)[0] & lex.senses(y)[0]), "synonym", pairs)
    hypernyms = _match(
        left,
        right,
        lambda x, y: bool(lex.senses(x)[0] & lex.senses(y)[1] or lex.senses(y)[0] & lex.senses(x)[1]),
        "hypernym",
        pairs,
    )
    matched = shared + morph + synonyms + hypernyms
    return [
        len(a),
        len(b),
        len(b) - len(a),
        short / long,
        shared,
        shared / unique_short,
        shared / unique_long,
        edit,
        edit / long,
        edit / short,
        lexical_edit,
        lexical_edit / unique_long,
        shared / (edit + 1),
        morph,
        morph / unique_short,
        synonyms,
        synonyms / unique_short,
        hypernyms,
        hypernyms / unique_short,
        matched / unique_short,
        matched / unique_long,
        len(left),
        len(right),
    ]


def seed_features(first: Iterable[str], second: Iterable[str]) -> np.ndarray:
    """Every pair's features (rows: pairs; columns: :data:`SEED_FEATURES`)."""
    lex = lexicon()
    rows = [pair_features(a, b, lex) for a, b in zip(first, second, strict=True)]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(SEED_FEATURES))


def word_pairs(first: str, second: str) -> list[str]:
    """The word pairs the morphological and WordNet classes matched, as ``kind:a|b`` (``morph:said|says``): the
    seed's individual lexical features, which the study measures (benchmarks/paraphrase_study.py) and the shipped
    models leave out (on MSRPC only a few dozen occur more than four times, and they do not help)."""
    pairs: list[str] = []
    pair_features(first, second, lexicon(), pairs)
    return pairs
