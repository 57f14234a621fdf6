"""Precision and recall of the caption rules per language, backend and tagset (PTB or UD).

English is measured with the paper's rules in Penn Treebank tags and with the same rules
in Universal Dependencies terms (spaCy's ``pos_`` and ``morph``), on the same labelled
captions, so the two can be compared. Every other language is measured in UD terms
with each backend that covers it here; its labelled captions are
``tests/data/labelled_captions_<language>.tsv`` (the header of each says where the
captions come from and how they were labelled).

Usage::

    python benchmarks/caption_rules.py [--languages en fr es de] [--spacy-model es=PATH] [--show-errors]

``--spacy-model LANGUAGE=MODEL`` tags a language with another spaCy package or folder
than :data:`builder.filters.tagging.SPACY_PIPELINES` names. A backend that is not installed is
listed with the reason and how to install it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.taggers import LABELLED, _errors, _figure, evaluate, load_labelled  # noqa: E402
from builder.filters.tagging import PerceptronTagger, SpacyTagger, StanzaTagger, Tagger, TaggerUnavailable  # noqa: E402

DATA = LABELLED.parent
LANGUAGES = ("en", "fr", "es", "de")
# (backend, tagset) pairs measured per language: English in both tagsets, the others in UD.
RUNS = {"en": (("perceptron", "ptb"), ("spacy", "ptb"), ("spacy", "ud"))}
FOREIGN_RUNS = (("spacy", "ud"), ("stanza", "ud"))


def labelled_file(language: str) -> Path:
    """The labelled captions of a language."""
    return LABELLED if language == "en" else DATA / f"labelled_captions_{language}.tsv"


def make_tagger(language: str, backend: str, tagset: str, spacy_models: dict[str, str]) -> Tagger:
    if backend == "perceptron":
        return PerceptronTagger()
    if backend == "stanza":
        return StanzaTagger(language=language)
    return SpacyTagger(spacy_models.get(language), language=language, tagset=tagset)


def _spacy_models(pairs: Sequence[str]) -> dict[str, str]:
    models = {}
    for pair in pairs:
        language, separator, model = pair.partition("=")
        if not separator or not language or not model:
            raise SystemExit(f"--spacy-model wants LANGUAGE=MODEL, not {pair!r}")
        models[language] = model
    return models


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    parser.add_argument("--spacy-model", action="append", default=[], metavar="LANGUAGE=MODEL")
    parser.add_argument("--show-errors", action="store_true", help="list every caption a rule gets wrong")
    arguments = parser.parse_args(argv)
    spacy_models = _spacy_models(arguments.spacy_model)

    columns = ["language", "captions (sentences, with a verb)", "backend", "tags", "model"]
    columns += ["Table 4 P", "Table 4 R", "verb P", "verb R"]
    print("| " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|---:|---:|---:|---:|")
    unavailable: list[str] = []
    errors: list[str] = []
    for language in arguments.languages:
        captions = load_labelled(labelled_file(language))
        counts = f"{len(captions)} ({sum(c.is_sentence for c in captions)}, {sum(c.has_verb for c in captions)})"
        for backend, tagset in RUNS.get(language, FOREIGN_RUNS):
            try:
                tagger = make_tagger(language, backend, tagset, spacy_models)
            except TaggerUnavailable as error:
                unavailable.append(f"- {language}, {backend}: not available here: {error}")
                continue
            result = evaluate(tagger, captions)
            figures = [result.sentence.precision, result.sentence.recall, result.verb.precision, result.verb.recall]
            cells = " | ".join(_figure(figure) for figure in figures)
            print(f"| {language} | {counts} | {backend} | {tagset.upper()} | {result.signature} | {cells} |")
            errors += [f"\n{language}, {backend} ({tagset}), Table 4:"]
            errors += _errors(captions, result.sentence_verdicts, "is_sentence")
            errors += [f"\n{language}, {backend} ({tagset}), verb rule:"]
            errors += _errors(captions, result.verb_verdicts, "has_verb")
    print("\nn/a: the rule passed no caption (precision undefined).")
    if unavailable:
        print("\n".join(["", *unavailable]))
    if arguments.show_errors:
        print("\n".join(errors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
