"""Precision and recall of the caption rules with each POS tagger that runs here.

The rules are Table 4 (gold: every sentence of a caption is a grammatical sentence)
and the verb rule (silver/bronze: the caption contains a verb). They are measured
against hand-labelled captions from real Wikipedia articles
(``tests/data/labelled_captions.tsv``; its header says how they were labelled). The
second table gives the verb rule's verdict on the eight captions of the paper's
Table 5, which all come from its silver set, so a faithful tagger passes all eight.

Usage::

    python benchmarks/taggers.py [--spacy-model en_core_web_sm] [--show-errors]

A backend that is not installed is listed with the reason and how to install it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.filters.captions import satisfies, tag_captions, tag_sequences  # noqa: E402
from builder.filters.tagging import (
    CoreNLPTagger,
    PerceptronTagger,
    SpacyTagger,
    StanzaTagger,
    Tagger,
    TaggerUnavailable,
)

LABELLED = Path(__file__).resolve().parent.parent / "tests" / "data" / "labelled_captions.tsv"
COLUMNS = ("caption", "is_sentence", "has_verb", "title")
BACKENDS = ("corenlp", "stanza", "spacy", "perceptron")

# The eight captions of the paper's Table 5 (Wikipedia-IPC, silver quality).
TABLE_5 = (
    ("A1", "An Easter postcard from 1907 depicting a rabbit."),
    ("A2", "A 1907 postcard featuring the Easter Bunny."),
    ("B1", "Twelfth century illustration of a man digging."),
    ("B2", "An English serf at work digging, c. 1170."),
    ("C1", "Troops clearing rubble after the May air raid on Belfast."),
    ("C2", "Soldiers clearing rubble after the May air raid on Belfast."),
    ("D1", "System of a Down is composed of four Armenian-Americans."),
    ("D2", "Dolmayan drumming with System of a Down in 2011."),
)


class LabelError(ValueError):
    """A malformed line in a labelled-captions file."""


@dataclasses.dataclass(frozen=True)
class LabelledCaption:
    caption: str
    is_sentence: bool
    has_verb: bool
    title: str


def _flag(value: str, path: Path, line: int, column: str) -> bool:
    if value not in ("0", "1"):
        raise LabelError(f"{path}:{line}: {column} must be 0 or 1, not {value!r}")
    return value == "1"


def load_labelled(path: Path = LABELLED) -> list[LabelledCaption]:
    """The labelled captions of a TSV file: ``#`` comments, a header row, then one caption per line."""
    captions: list[LabelledCaption] = []
    header_seen = False
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split("\t")
            if not header_seen:
                if tuple(fields) != COLUMNS:
                    raise LabelError(f"{path}:{line_number}: expected the header {' / '.join(COLUMNS)}")
                header_seen = True
                continue
            if len(fields) != len(COLUMNS):
                found = len(fields)
                raise LabelError(f"{path}:{line_number}: expected {len(COLUMNS)} tab-separated fields, got {found}")
            caption, sentence, verb, title = fields
            is_sentence = _flag(sentence, path, line_number, "is_sentence")
            has_verb = _flag(verb, path, line_number, "has_verb")
            if is_sentence and not has_verb:
                raise LabelError(f"{path}:{line_number}: a sentence without a verb cannot be")
            captions.append(LabelledCaption(caption, is_sentence, has_verb, title))
    if not captions:
        raise LabelError(f"{path}: no labelled captions")
    return captions


@dataclasses.dataclass(frozen=True)
class Score:
    """A confusion matrix; precision and recall are None when undefined (nothing predicted or nothing to find)."""

    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int

    @property
    def precision(self) -> float | None:
        predicted = self.true_positives + self.false_positives
        return self.true_positives / predicted if predicted else None

    @property
    def recall(self) -> float | None:
        relevant = self.true_positives + self.false_negatives
        return self.true_positives / relevant if relevant else None

    @property
    def f1(self) -> float | None:
        precision, recall = self.precision, self.recall
        if precision is None or recall is None or precision + recall == 0:
            return None
        return 2 * precision * recall / (precision + recall)


def score(predicted: Sequence[bool], gold: Sequence[bool]) -> Score:
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} labels")
    pairs = list(zip(predicted, gold, strict=True))
    return Score(
        true_positives=sum(p and g for p, g in pairs),
        false_positives=sum(p and not g for p, g in pairs),
        false_negatives=sum(g and not p for p, g in pairs),
        true_negatives=sum(not p and not g for p, g in pairs),
    )


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """One backend's verdicts on the labelled captions and their scores, per rule."""

    signature: str
    sentence_verdicts: list[bool]
    verb_verdicts: list[bool]
    sentence: Score
    verb: Score


def evaluate(tagger: Tagger, captions: Sequence[LabelledCaption]) -> Evaluation:
    """Tag every caption once and apply both rules in the tagger's tagset, as the pipeline does."""
    tags = [tag_sequences(tagged) for tagged in tag_captions([c.caption for c in captions], tagger)]
    sentence_verdicts = [satisfies("sentence", sentences, tagger.tagset) for sentences in tags]
    verb_verdicts = [satisfies("verb", sentences, tagger.tagset) for sentences in tags]
    return Evaluation(
        signature=tagger.signature(),
        sentence_verdicts=sentence_verdicts,
        verb_verdicts=verb_verdicts,
        sentence=score(sentence_verdicts, [c.is_sentence for c in captions]),
        verb=score(verb_verdicts, [c.has_verb for c in captions]),
    )


def table_5_verdicts(tagger: Tagger) -> list[bool]:
    """The verb rule on the paper's Table 5 captions, in the order A1 … D2."""
    return [satisfies("verb", tag_sequences(tagged)) for tagged in tag_captions([t for _, t in TABLE_5], tagger)]


def make_tagger(backend: str, spacy_model: str) -> Tagger:
    if backend == "corenlp":
        return CoreNLPTagger()
    if backend == "stanza":
        return StanzaTagger()
    if backend == "spacy":
        return SpacyTagger(spacy_model)
    if backend == "perceptron":
        return PerceptronTagger()
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _errors(captions: Sequence[LabelledCaption], verdicts: Sequence[bool], label: str) -> list[str]:
    lines = []
    for caption, verdict in zip(captions, verdicts, strict=True):
        if verdict != getattr(caption, label):
            kind = "false positive" if verdict else "false negative"
            lines.append(f"  {kind}: {caption.caption}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LABELLED, help="labelled captions (TSV)")
    parser.add_argument("--spacy-model", default="en_core_web_sm", help="spaCy model package or folder")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--show-errors", action="store_true", help="list every caption a rule gets wrong")
    arguments = parser.parse_args(argv)

    captions = load_labelled(arguments.data)
    sentences = sum(c.is_sentence for c in captions)
    verbs = sum(c.has_verb for c in captions)
    print(f"{len(captions)} labelled captions ({arguments.data.name}): {sentences} sentences, {verbs} with a verb\n")
    print("| backend | model | Table 4 P | Table 4 R | Table 4 F1 | verb P | verb R | verb F1 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    verdicts: dict[str, list[bool]] = {}
    unavailable: list[str] = []
    errors: list[str] = []
    for backend in arguments.backends:
        try:
            tagger = make_tagger(backend, arguments.spacy_model)
        except TaggerUnavailable as error:
            unavailable.append(f"- {backend}: not available here: {error}")
            continue
        try:
            result = evaluate(tagger, captions)
            verdicts[backend] = table_5_verdicts(tagger)
        finally:
            if isinstance(tagger, CoreNLPTagger):
                tagger.close()
        figures = [result.sentence.precision, result.sentence.recall, result.sentence.f1]
        figures += [result.verb.precision, result.verb.recall, result.verb.f1]
        print(f"| {backend} | {result.signature} | " + " | ".join(_figure(f) for f in figures) + " |")
        errors += [f"\n{backend}, Table 4:", *_errors(captions, result.sentence_verdicts, "is_sentence")]
        errors += [f"\n{backend}, verb rule:", *_errors(captions, result.verb_verdicts, "has_verb")]
    print("\nThe paper (CoreNLP, its own 100 test captions): Table 4 P 0.94, R 0.79.")
    if unavailable:
        print("\n".join(["", *unavailable]))
    if verdicts:
        print("\nVerb rule on the captions of the paper's Table 5 (all from its silver set):\n")
        print("| caption | " + " | ".join(verdicts) + " |")
        print("|---|" + "---|" * len(verdicts))
        for index, (label, text) in enumerate(TABLE_5):
            cells = ["pass" if backend_verdicts[index] else "REJECT" for backend_verdicts in verdicts.values()]
            print(f"| {label}: {text} | " + " | ".join(cells) + " |")
    if arguments.show_errors:
        print("\n".join(errors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
