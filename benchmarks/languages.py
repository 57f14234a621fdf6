"""Image links found per language on real page excerpts of Wikipedia editions.

For each edition's excerpt in ``tests/data/minidumps`` (DBpedia's test data, CC BY-SA), this
counts the links into the File namespace in the page text with a plain regular expression
over the language's namespace names (comments, ``<nowiki>``, ``<pre>``, ``<math>``, footnotes
and galleries left out, as MediaWiki shows no image for them), and checks that the extractor
found a reference at each such link, and that no caption is an image option of the
language. Usage::

    python benchmarks/languages.py [LANG ...]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.extract.wikitext import extract_images  # noqa: E402
from builder.lang.languages import language_for  # noqa: E402
from builder.sources.xml import DumpReader  # noqa: E402

MINIDUMPS = Path(__file__).resolve().parent.parent / "tests" / "data" / "minidumps"
_HIDDEN = re.compile(
    r"<!--.*?(?:-->|\Z)|<(nowiki|pre|math|ref|gallery|syntaxhighlight|source)\b[^<>]*?(?<!/)>.*?</\1\s*>",
    re.DOTALL | re.IGNORECASE,
)


@dataclasses.dataclass
class Census:
    """What one edition's excerpt holds and what the extractor made of it."""

    language: str
    pages: int = 0
    links_in_text: int = 0
    links_found: int = 0
    references: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    option_captions: list[str] = dataclasses.field(default_factory=list)
    missed: list[str] = dataclasses.field(default_factory=list)


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def census(folder: str) -> Census:
    """Links in the text of one excerpt (its folder name is the wiki's subdomain) against the references found."""
    language = language_for(f"{folder.replace('-', '_')}wiki") if folder != "simple" else language_for("simplewiki")
    names = "|".join(re.escape(name).replace(r"\ ", "[ _]+") for name in language.file_namespaces)
    link = re.compile(r"\[\[[ \t]*(?:" + names + r")[ \t]*:", re.IGNORECASE)
    result = Census(folder)
    for page in DumpReader(MINIDUMPS / folder / "wiki.xml.bz2", (0,)):
        result.pages += 1
        references = extract_images(page.text, page.title, language=language)
        positions = {reference.position for reference in references}
        result.references.update(reference.source for reference in references)
        for match in link.finditer(_HIDDEN.sub(_blank, page.text)):
            result.links_in_text += 1
            if match.start() in positions:
                result.links_found += 1
            else:
                result.missed.append(f"{page.title}: {page.text[match.start() : match.start() + 80]!r}")
        for reference in references:
            if reference.caption and language.image_option(reference.caption) is not None:
                result.option_captions.append(reference.caption)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("languages", nargs="*", help="excerpt folders (default: all)")
    arguments = parser.parse_args()
    folders = arguments.languages or sorted(path.name for path in MINIDUMPS.iterdir() if path.is_dir())
    header = "| wiki | File namespace names | pages | links in text | found | references (link / template) |"
    print(header + " captions that are options |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for folder in folders:
        found = census(folder)
        language = language_for(f"{folder.replace('-', '_')}wiki")
        names = ", ".join(name for name in language.file_namespaces if name not in ("File", "Image")) or "–"
        print(
            f"| {folder} | {names} | {found.pages} | {found.links_in_text} | {found.links_found} | "
            f"{found.references['link']} / {found.references['template']} | {len(found.option_captions)} |"
        )
        for missed in found.missed:
            print(f"|  | missed: {missed} | | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
