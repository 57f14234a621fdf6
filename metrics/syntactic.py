"""Syntactic similarity: ROUGE-1, ROUGE-L and symmetric sentence BLEU, as the paper's authors scored.

* ROUGE-1 and ROUGE-L F1 from ``rouge_score`` with its Porter stemmer, on lower-cased texts;
  ROUGE-L's longest common subsequence is measured by rapidfuzz (``LCSseq``, bit-parallel, in C++)
  on the same tokens, then turned into F1 by rouge_score's own formula: the same figure as
  rouge_score's, which fills a table of len(a) × len(b) Python integers (two 100 KB texts:
  minutes and gigabytes, ``benchmarks/long_pair.py``); no text is cut for any syntactic measure;
* BLEU up to 4-grams with NLTK's smoothing method 7, on the tokens of
  ``rouge_score.tokenize`` (Porter-stemmed), averaged over both directions because
  a paraphrase pair has no reference side; clipped to [0, 1].

These settings reproduce the syntactic columns of the paper's Table 5. One deviation:
a pair whose shorter text has fewer than 4 tokens is scored up to n-grams of that
length (uniform weights), so that BLEU of two identical short texts is 1; the
authors' BLEU-4 gave "Hello"/"Hello" 0.19, calling a copy diverse.

rouge_score's tokenizer keeps ``[a-z0-9]`` only: a Chinese, Russian or Greek text has no
token at all, and two identical such texts would share nothing. Tokenization is therefore
a choice, named in the signature (after sacrebleu's ``tok:`` field):

* ``rouge`` – the authors' tokenizer, always;
* ``unicode`` – lower-cased Unicode words (letters, marks and digits), each character a
  token in scripts written without spaces (Chinese, Japanese, Thai, ...), ASCII words
  Porter-stemmed like rouge_score does; on plain ASCII text it gives rouge_score's tokens;
* ``auto`` (default) – ``rouge`` for a pair unless one of its texts has a word written
  wholly outside ASCII (a word the authors' tokenizer would drop), then ``unicode``.

Those are the choices for English texts (``language="en"``). For another language every pair is
tokenized ``unicode`` and nothing is stemmed: the Porter stemmer is English, and rouge_score's
tokenizer would cut a French "élève" into "l" and "ve" (``rouge`` is refused there).

A pair with a text that has no token under its tokenizer (empty, punctuation or emoji only)
has no syntactic similarity: NaN, never a confident 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import regex
from rapidfuzz.distance import LCSseq
from rouge_score import scoring, tokenize

from metrics.language import is_english

# NLTK (whose package import loads scikit-learn, SciPy and pandas) and rouge_score's scorer and tokenizers
# (which import NLTK) are imported when a pair is first scored, not with the module: the command line's
# --help and its argument choices (TOKENIZERS) answer without them.
if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer

SYNTACTIC = ("rouge1", "rougeL", "bleu")
BLEU_ORDER = 4  # the longest n-grams BLEU counts, as the authors (NLTK's default)
TOKENIZERS = ("auto", "rouge", "unicode")

# Scripts written without spaces between words: one token per character (with its marks).
_UNSPACED = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}"
_UNICODE_TOKEN = regex.compile(rf"[{_UNSPACED}]\p{{M}}*|(?:(?![{_UNSPACED}])[\p{{L}}\p{{M}}\p{{N}}])+")
_ASCII_WORD = regex.compile(r"^[a-z0-9]+$")
_HAS_ASCII_ALNUM = regex.compile(r"[A-Za-z0-9]")


def unicode_words(text: str) -> list[str]:
    """Lower-cased Unicode words; a character of an unspaced script is a word of its own."""
    return _UNICODE_TOKEN.findall(text.lower())


def needs_unicode(text: str) -> bool:
    """Whether rouge_score's tokenizer would drop a whole word of ``text`` (one without any ASCII letter or digit)."""
    return any(not _HAS_ASCII_ALNUM.search(word) for word in unicode_words(text))


class CachedStemmer:
    """NLTK's Porter stemmer, remembering each word's stem: a long text repeats its words (16,000 tokens of
    a 100 KB text are 5,000 words), and stemming is most of the syntactic measures' time."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._stemmer = PorterStemmer()
        self._stems: dict[str, str] = {}

    def stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stemmer.stem(word)
        return stem


class Tokenizer:
    """Both tokenizations, cached per text (corpora repeat sentences); ``scheme`` picks the one in use.

    rouge_score's ``RougeScorer`` takes it as its tokenizer (any object with ``tokenize``, as its
    ``tokenizers.Tokenizer`` asks), so ROUGE and BLEU see the same tokens.
    """

    def __init__(self, stem: bool = True) -> None:
        self.scheme = "rouge"
        self.stem = stem  # Porter-stem ASCII words of the unicode scheme (English only)
        self._stemmer = CachedStemmer()
        self._cache: dict[tuple[str, str], list[str]] = {}

    def tokens(self, text: str, scheme: str) -> list[str]:
        key = (scheme, text)
        if key not in self._cache:
            self._cache[key] = self._tokenize(text, scheme)
        return self._cache[key]

    def _tokenize(self, text: str, scheme: str) -> list[str]:
        if scheme == "rouge":
            return tokenize.tokenize(text, self._stemmer)
        if not self.stem:
            return unicode_words(text)
        return [
            self._stemmer.stem(word) if len(word) > 3 and _ASCII_WORD.match(word) else word
            for word in unicode_words(text)
        ]

    def tokenize(self, text: str) -> list[str]:
        return self.tokens(text, self.scheme)


def pair_scheme(a: str, b: str, tokenizer: str) -> str:
    """The tokenization of one pair under the ``tokenizer`` option."""
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; choose from {list(TOKENIZERS)}")
    if tokenizer != "auto":
        return tokenizer
    return "unicode" if needs_unicode(a) or needs_unicode(b) else "rouge"


def rouge_l(target: Sequence[str], prediction: Sequence[str]) -> float:
    """ROUGE-L F1 exactly as rouge_score's ``_score_lcs`` computes it, in linear memory.

    Tokens become integers (one per distinct token of the pair), so the LCS compares tokens, never hashes.
    """
    if not target or not prediction:
        return 0.0
    ids: dict[str, int] = {}
    first = [ids.setdefault(token, len(ids)) for token in target]
    second = [ids.setdefault(token, len(ids)) for token in prediction]
    common = LCSseq.similarity(first, second)
    return scoring.fmeasure(common / len(prediction), common / len(target))


class SyntacticScorer:
    """Scores text pairs with the three syntactic measures; one instance can be reused.

    Stemming dominates the cost of ROUGE and BLEU, so each text is tokenized once.
    """

    def __init__(self, tokenizer: str = "auto", language: str = "en") -> None:
        pair_scheme("", "", tokenizer)
        self.english = is_english(language)
        if tokenizer == "rouge" and not self.english:
            raise ValueError(
                f"tokenize='rouge' keeps [a-z0-9] only and drops the words of language {language!r}: "
                "use 'auto' or 'unicode'"
            )
        self.tokenizer = tokenizer if self.english else "unicode"
        self._tokenizer = Tokenizer(stem=self.english)

    @cached_property
    def _rouge(self) -> RougeScorer:
        from rouge_score.rouge_scorer import RougeScorer

        return RougeScorer(["rouge1"], tokenizer=self._tokenizer)

    @cached_property
    def _smoothing(self):  # noqa: ANN202 - NLTK's smoothing functions have no public type
        from nltk.translate.bleu_score import SmoothingFunction

        return SmoothingFunction().method7

    @cached_property
    def _sentence_bleu(self):  # noqa: ANN202 - NLTK's sentence_bleu
        from nltk.translate.bleu_score import sentence_bleu

        return sentence_bleu

    def tokens(self, a: str, b: str) -> tuple[list[str], list[str]]:
        """The pair's tokens under its scheme (also the stemmed words the ``paper`` profile's WMS uses)."""
        scheme = pair_scheme(a, b, self.tokenizer)
        return self._tokenizer.tokens(a, scheme), self._tokenizer.tokens(b, scheme)

    def bleu(self, tokens_a: list[str], tokens_b: list[str]) -> float:
        """Sentence BLEU both ways, averaged; n-grams up to 4 tokens, or up to the shorter text's length.

        BLEU-4 of a 1-token text counts 2-, 3- and 4-grams that cannot exist, so even a copy
        scored 0.19; from 4 tokens on this is NLTK's default weighting, the authors' BLEU-4.
        """
        order = min(BLEU_ORDER, len(tokens_a), len(tokens_b))
        weights = (1 / order,) * order
        forward = self._sentence_bleu([tokens_b], tokens_a, weights=weights, smoothing_function=self._smoothing)
        backward = self._sentence_bleu([tokens_a], tokens_b, weights=weights, smoothing_function=self._smoothing)
        return min(1.0, max(0.0, (forward + backward) / 2))

    def score(self, a: str, b: str, measures: Sequence[str] = SYNTACTIC) -> dict[str, float]:
        """The chosen measures of one pair; NaN for all of them when a text has no token."""
        scheme = pair_scheme(a, b, self.tokenizer)
        tokens_a, tokens_b = self._tokenizer.tokens(a, scheme), self._tokenizer.tokens(b, scheme)
        if not tokens_a or not tokens_b:
            return {measure: math.nan for measure in SYNTACTIC if measure in measures}
        scores: dict[str, float] = {}
        if "rouge1" in measures:
            # The authors lower-cased the texts for ROUGE; both tokenizers lower-case anyway.
            self._tokenizer.scheme = scheme
            scores["rouge1"] = float(self._rouge.score(a, b)["rouge1"].fmeasure)
        if "rougeL" in measures:  # rouge_score's score(a, b): a is the target, b the prediction
            scores["rougeL"] = float(rouge_l(tokens_a, tokens_b))
        if "bleu" in measures:
            scores["bleu"] = self.bleu(tokens_a, tokens_b)
        return {measure: scores[measure] for measure in SYNTACTIC if measure in measures}
