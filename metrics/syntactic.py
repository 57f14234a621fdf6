"""Syntactic similarity: ROUGE-1, ROUGE-L and symmetric sentence BLEU, as the paper's authors scored.

* ROUGE-1 and ROUGE-L F1 from ``rouge_score`` with its Porter stemmer, on lower-cased texts;
* BLEU up to 4-grams with NLTK's smoothing method 7, on the tokens of
  ``rouge_score.tokenize`` (Porter-stemmed), averaged over both directions because
  a paraphrase pair has no reference side; clipped to [0, 1].

These settings reproduce the syntactic columns of the paper's Table 5.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from nltk.stem.porter import PorterStemmer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer, tokenize, tokenizers

SYNTACTIC = ("rouge1", "rougeL", "bleu")


class _CachingTokenizer:
    """rouge_score's own tokenizer, remembering each text's tokens: corpora repeat sentences."""

    def __init__(self, tokenizer: tokenizers.Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._cache: dict[str, list[str]] = {}

    def tokenize(self, text: str) -> list[str]:
        if text not in self._cache:
            self._cache[text] = self._tokenizer.tokenize(text)
        return self._cache[text]


class SyntacticScorer:
    """Scores text pairs with the three syntactic measures; one instance can be reused.

    Stemming dominates the cost of ROUGE and BLEU, so each text is tokenized once.
    """

    def __init__(self) -> None:
        self._bleu_tokens: dict[str, list[str]] = {}

    @cached_property
    def _rouge(self) -> rouge_scorer.RougeScorer:
        tokenizer = _CachingTokenizer(tokenizers.DefaultTokenizer(use_stemmer=True))
        return rouge_scorer.RougeScorer(["rouge1", "rougeL"], tokenizer=tokenizer)

    def _tokens(self, text: str) -> list[str]:
        if text not in self._bleu_tokens:
            self._bleu_tokens[text] = tokenize.tokenize(text, self._stemmer)
        return self._bleu_tokens[text]

    @cached_property
    def _stemmer(self) -> PorterStemmer:
        return PorterStemmer()

    @cached_property
    def _smoothing(self):  # noqa: ANN202 - NLTK's smoothing functions have no public type
        return SmoothingFunction().method7

    def bleu(self, a: str, b: str) -> float:
        """Sentence BLEU both ways, averaged; empty texts score 0."""
        tokens_a = self._tokens(a)
        tokens_b = self._tokens(b)
        if not tokens_a or not tokens_b:
            return 0.0
        forward = sentence_bleu([tokens_b], tokens_a, smoothing_function=self._smoothing)
        backward = sentence_bleu([tokens_a], tokens_b, smoothing_function=self._smoothing)
        return min(1.0, max(0.0, (forward + backward) / 2))

    def score(self, a: str, b: str, measures: Sequence[str] = SYNTACTIC) -> dict[str, float]:
        scores: dict[str, float] = {}
        if "rouge1" in measures or "rougeL" in measures:
            rouge = self._rouge.score(a.lower(), b.lower())
            scores["rouge1"] = float(rouge["rouge1"].fmeasure)
            scores["rougeL"] = float(rouge["rougeL"].fmeasure)
        if "bleu" in measures:
            scores["bleu"] = self.bleu(a, b)
        return {measure: scores[measure] for measure in SYNTACTIC if measure in measures}
