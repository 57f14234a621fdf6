"""Captions with inline templates per language on real page excerpts, before and after the inline table.

For each edition's excerpt in ``tests/data/minidumps`` (DBpedia's test data, CC BY-SA), this
extracts every caption and alt text twice: *before*, with English's renderers alone and unknown
templates cut out (the authors' cleaning, which every edition had until the inline table);
*after*, with the edition's rules (:func:`builder.extract.inline.caption_rules`: its inline
table, and the no-hole rule in every edition but English). It prints, per language, the
captions holding a template, how many had a template cut out before, how many are
rendered whole after, how many are dropped after, and under which template titles. Usage::

    python benchmarks/inline_templates.py [LANG ...]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.extract.cleaning import CaptionError, render_caption  # noqa: E402
from builder.extract.inline import CaptionRules, caption_rules  # noqa: E402
from builder.extract.wikitext import extract_images  # noqa: E402
from builder.lang.languages import language_for  # noqa: E402
from builder.sources.xml import DumpReader  # noqa: E402

MINIDUMPS = Path(__file__).resolve().parent.parent / "tests" / "data" / "minidumps"


@dataclasses.dataclass
class Census:
    """One edition's captions with templates, before and after."""

    language: str
    with_template: int = 0
    holes_before: int = 0
    whole_after: int = 0
    dropped_after: int = 0
    holes_after: int = 0  # English: cut out by the authors' cleaning, as before
    before: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    after: collections.Counter = dataclasses.field(default_factory=collections.Counter)


def _texts(folder: str) -> list[str]:
    """The caption and alt wikitexts the extractor cleans, one per use, in page order.

    ``extract_images`` gives cleaned texts only; the raw ones are what it hands the cleaner, so the
    cleaner it calls is wrapped, for this census alone, to note its input (the texts do not change).
    """
    import builder.extract.wikitext as wikitext

    language = language_for(f"{folder.replace('-', '_')}wiki") if folder != "simple" else language_for("simplewiki")
    seen: list[str] = []
    original = wikitext.render_caption

    def record(text: str, table: object = None) -> object:
        seen.append(text)
        return original(text, table)  # type: ignore[arg-type]

    wikitext.render_caption = record  # type: ignore[assignment]
    try:
        for page in DumpReader(MINIDUMPS / folder / "wiki.xml.bz2", (0,)):
            extract_images(page.text, page.title, language=language, rules=CaptionRules(None, False))
    finally:
        wikitext.render_caption = original
    return [text for text in seen if "{{" in text]


def census(folder: str) -> Census:
    code = language_for(f"{folder.replace('-', '_')}wiki").code if folder != "simple" else "en"
    rules = caption_rules(code)
    result = Census(folder)
    for text in _texts(folder):
        try:
            before = render_caption(text)
            after = render_caption(text, rules.table)
        except CaptionError:
            continue
        if not after.templates and not before.templates:
            continue
        result.with_template += 1
        if before.unrendered:
            result.holes_before += 1
            result.before.update(dict.fromkeys(before.unrendered, 1))
        if not after.unrendered:
            result.whole_after += 1
        elif rules.whole:
            result.dropped_after += 1
            result.after.update(dict.fromkeys(after.unrendered, 1))
        else:
            result.holes_after += 1
            result.after.update(dict.fromkeys(after.unrendered, 1))
    return result


def _names(counter: collections.Counter) -> str:
    return ", ".join(f"`{{{{{name}}}}}` {count}" for name, count in counter.most_common()) or "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("languages", nargs="*", help="excerpt folders (default: all)")
    arguments = parser.parse_args()
    folders = arguments.languages or sorted(path.name for path in MINIDUMPS.iterdir() if path.is_dir())
    print(
        "| wiki | captions with a template | before: a template cut out | after: whole | after: dropped "
        "| after: a template cut out (English) | before: templates cut out | after: templates that dropped (or cut) |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---|")
    totals = Census("all")
    for folder in folders:
        found = census(folder)
        for field in ("with_template", "holes_before", "whole_after", "dropped_after", "holes_after"):
            setattr(totals, field, getattr(totals, field) + getattr(found, field))
        if found.with_template:
            print(
                f"| {folder} | {found.with_template} | {found.holes_before} | {found.whole_after} | "
                f"{found.dropped_after} | {found.holes_after} | {_names(found.before)} | {_names(found.after)} |"
            )
    print(
        f"| all {len(folders)} | {totals.with_template} | {totals.holes_before} | {totals.whole_after} | "
        f"{totals.dropped_after} | {totals.holes_after} | | |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
