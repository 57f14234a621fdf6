"""Write tests/data/frwiki-sample-pages-articles.xml.bz2 from real French Wikipedia pages as Parsoid rendered them.

The source is 1,000 pages of the French Wikipedia of August 2022, rendered to HTML by the
REST API, which DBpedia's extraction framework keeps as test data (see frwiki-sample.md).
The HTML holds no wikitext, so each chosen page is reduced to its figures, and each figure is
written back as one image link, ``[[Fichier:NAME|vignette|alt=ALT|CAPTION]]``: the file name
and the caption as the page displayed them (links and formatting as plain text, footnote
marks left out), the alt text as the image carried it. Pages are chosen when they share a
captioned file with another page. Usage::

    python tests/data/make_frwiki_sample.py /work/.mirror/dbpedia+extraction-framework/repo
"""

from __future__ import annotations

import bz2
import collections
import html
import io
import subprocess
import sys
import tarfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

COMMIT = "c1227c05d44cb11bb9c27266c9fdac911b34f553"
FOLDER = "GSOC external ressources/API_answer/REST_API_HTML/fr"
OUTPUT = Path(__file__).resolve().parent / "frwiki-sample-pages-articles.xml.bz2"
MAX_PAGES = 60
MIN_CAPTION_WORDS = 6
SKIPPED_CLASSES = ("reference", "mw-ref", "noprint", "mw-editsection")


class Figures(HTMLParser):
    """The page id, revision id and figures (file, alt text, caption text) of one Parsoid page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page_id = 0
        self.revision = 0
        self.title = ""
        self.figures: list[tuple[str, str, str]] = []
        self._figure_depth = 0
        self._file = ""
        self._alt = ""
        self._caption: list[str] | None = None
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "html" and "/revision/" in values.get("about", ""):
            self.revision = int(values["about"].rsplit("/", 1)[1])
        elif tag == "meta" and values.get("property") == "mw:pageId":
            self.page_id = int(values["content"])
        elif tag == "link" and values.get("rel") == "dc:isVersionOf":
            self.title = unquote(values["href"].rsplit("/wiki/", 1)[1]).replace("_", " ")
        if self._figure_depth:
            if tag == "figure":
                self._figure_depth += 1
            if self._skipping:
                self._skipping += tag not in ("br", "img", "meta", "link")
            elif any(name in values.get("class", "").split() for name in SKIPPED_CLASSES) or tag == "style":
                self._skipping = 1
            elif values.get("resource", "").startswith("./") and not self._file:
                self._file = unquote(values["resource"][2:]).replace("_", " ")
                self._alt = values.get("alt", "")
            elif tag == "figcaption":
                self._caption = []
        elif tag == "figure" and ("mw:File" in values.get("typeof", "") or "mw:Image" in values.get("typeof", "")):
            self._figure_depth = 1
            self._file, self._alt, self._caption = "", "", None

    def handle_endtag(self, tag: str) -> None:
        if not self._figure_depth:
            return
        if self._skipping:
            self._skipping -= tag not in ("br", "img", "meta", "link")
            return
        if tag == "figure":
            self._figure_depth -= 1
            if not self._figure_depth and self._file:
                caption = " ".join("".join(self._caption or []).split())
                alt = " ".join(self._alt.split())
                # Parsoid copies the caption into an image's alt when the page gave none: not an alt text of its own
                self.figures.append((self._file, "" if alt == caption else alt, caption))

    def handle_data(self, data: str) -> None:
        if self._figure_depth and not self._skipping and self._caption is not None:
            self._caption.append(data)


def read_pages(mirror: str) -> list[Figures]:
    """The pages of the source folder, read from a ``git archive`` of it."""
    archive = subprocess.run(
        ["git", f"--git-dir={mirror}", "archive", "--format=tar", COMMIT, FOLDER], capture_output=True, check=True
    ).stdout
    pages = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in sorted(tar.getmembers(), key=lambda member: member.name):
            if not member.isfile() or not member.name.endswith(".html"):
                continue
            parsed = Figures()
            parsed.feed(tar.extractfile(member).read().decode("utf-8", "replace"))  # type: ignore[union-attr]
            if parsed.figures and parsed.page_id:
                pages.append(parsed)
    return pages


def chosen_pages(pages: list[Figures]) -> list[Figures]:
    """The pages that share a file captioned with at least six words with another page, most shared first."""
    holders: dict[str, set[str]] = collections.defaultdict(set)
    for page in pages:
        for file, _, caption in page.figures:
            if len(caption.split()) >= MIN_CAPTION_WORDS:
                holders[file].add(page.title)
    shared = {file for file, titles in holders.items() if len(titles) >= 2 and not file.endswith(".svg")}
    score = {page.title: sum(file in shared for file, _, _ in page.figures) for page in pages}
    ranked = sorted((page for page in pages if score[page.title]), key=lambda page: (-score[page.title], page.title))
    return sorted(ranked[:MAX_PAGES], key=lambda page: page.title)


def page_xml(page: Figures) -> str:
    lines = []
    for file, alt, caption in page.figures:
        name = file.removeprefix("Fichier:")
        options = "vignette" + (f"|alt={alt}" if alt else "")
        lines.append(f"[[Fichier:{name}|{options}|{caption}]]" if caption else f"[[Fichier:{name}|{options}]]")
    text = html.escape("\n".join(lines), quote=False)
    return (
        f"  <page>\n    <title>{html.escape(page.title, quote=False)}</title>\n    <ns>0</ns>\n"
        f"    <id>{page.page_id}</id>\n    <revision>\n      <id>{page.revision}</id>\n"
        f'      <text xml:space="preserve">{text}</text>\n    </revision>\n  </page>\n'
    )


HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="fr">
  <siteinfo>
    <sitename>Wikipédia</sitename>
    <dbname>frwiki</dbname>
    <base>https://fr.wikipedia.org/wiki/Wikip%C3%A9dia:Accueil_principal</base>
    <generator>MediaWiki 1.39.0-wmf.22</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">Fichier</namespace>
    </namespaces>
  </siteinfo>
"""


def main() -> int:
    pages = chosen_pages(read_pages(sys.argv[1]))
    xml = HEADER + "".join(page_xml(page) for page in pages) + "</mediawiki>\n"
    OUTPUT.write_bytes(bz2.compress(xml.encode("utf-8"), 9))
    figures = sum(len(page.figures) for page in pages)
    print(f"{OUTPUT.name}: {len(pages)} pages, {figures} figures, {OUTPUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
