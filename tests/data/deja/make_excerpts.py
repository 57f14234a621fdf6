"""Cut the Déjà test excerpts (COCO, Flickr8k, Conceptual Captions) from public copies and count them.

Déjà Image-Captions keeps captions that different people wrote for different images. These
excerpts keep, from three real caption files, every image of every caption the whole file
shares between two or more images (so each shared caption keeps all its images), plus the
first few other images, which share nothing. The counts printed at the end are the
independent reference that README.md states and tests/test_deja_data.py checks: plain
Python, not the toolkit. From Wikipedia it keeps the French and Romanian pages (of DBpedia's
Parsoid renderings) that caption two different files alike, each reduced to its figures as
tests/data/make_frwiki_sample.py does. Usage (the sources as the README says to fetch them)::

    python tests/data/deja/make_excerpts.py COCO_VAL2017_JSON FLICKR8K_TOKEN_TXT GCC_VALIDATION_TSV \
        EXTRACTION_FRAMEWORK_GIT_DIR
"""

from __future__ import annotations

import bz2
import collections
import hashlib
import html
import io
import json
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from make_frwiki_sample import Figures  # noqa: E402  (the project's own Parsoid figure reader)

# sha256 of each source as the README names it, so that a different copy is refused, not cut.
COCO_SHA256 = "1018a8760deaf1fc71be2f1b8da1a1348b9c35994af4322ca2fd795a78abb79c"
# Flickr8k: the first 40,460 lines of the copy (its last 500 lines were added by that repository).
FLICKR8K_LINES = 40_460
FLICKR8K_SHA256 = "1e1f3a371ba1a1bf742e6930521c037e046b2bf3fcc2390ba8405e0301ed7689"
GCC_SHA256 = "12559c4517bcc76eb9987c29267826ce4d3aa0ca14fa8ee1e536d542d64e81dd"

COCO_OTHERS = 50  # images by ascending id that share no caption
FLICKR8K_OTHERS = 50  # images by file name that share no caption
GCC_OTHERS = 100  # rows in file order whose caption no other URL has
TOP = 12

# DBpedia's Parsoid renderings of 1,000 French and 1,100 Romanian pages (2022), see the README.
WIKI_COMMIT = "c1227c05d44cb11bb9c27266c9fdac911b34f553"
WIKI_FOLDER = "GSOC external ressources/API_answer/REST_API_HTML/"
WIKIS = {  # language: (its File namespace, its thumb option, its sitename), as builder/data/languages.json has them
    "fr": ("Fichier", "vignette", "Wikipédia"),
    "ro": ("Fișier", "miniatura", "Wikipedia"),
}
# Figures of these files only: sound and video files (.ogg, .oga, .webm…) are not images, and Parsoid gives
# their player's "noicon" option as their caption.
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".svg", ".tif", ".tiff", ".webp")


def key(caption: str) -> str:
    """The exact comparison of the README: lower-cased, whitespace collapsed, nothing else."""
    return " ".join(caption.lower().split())


def shared(edges: Iterable[tuple[str, object]]) -> dict[str, set[object]]:
    """Each caption key used for two or more distinct images, with those images."""
    images: dict[str, set[object]] = collections.defaultdict(set)
    for caption, image in edges:
        images[key(caption)].add(image)
    return {k: v for k, v in images.items() if len(v) >= 2}


def counts(edges: list[tuple[str, object]]) -> dict[str, object]:
    """Captions, images, and the captions shared by two or more images, with their top ones."""
    many = shared(edges)
    top = sorted(many.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:TOP]
    return {
        "captions": len(edges),
        "distinct captions": len({key(c) for c, _ in edges}),
        "images": len({i for _, i in edges}),
        "shared captions": len(many),
        "images with a shared caption": len(set().union(*many.values())) if many else 0,
        "shared caption edges": sum(len(v) for v in many.values()),
        "top": [(k, len(v)) for k, v in top],
    }


def check(data: bytes, expected: str, name: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise SystemExit(f"{name}: sha256 {digest}, expected {expected}: not the copy the README names")


def cut_coco(path: Path) -> tuple[bytes, list, list]:
    data = path.read_bytes()
    check(data, COCO_SHA256, str(path))
    whole = json.loads(data)
    edges = [(a["caption"], a["image_id"]) for a in whole["annotations"]]
    keep = set().union(*shared(edges).values())
    others = sorted({img["id"] for img in whole["images"]} - keep)[:COCO_OTHERS]
    keep |= set(others)
    excerpt = {
        "info": whole["info"],
        "licenses": whole["licenses"],
        "images": [img for img in whole["images"] if img["id"] in keep],
        "type": whole["type"],
        "annotations": [a for a in whole["annotations"] if a["image_id"] in keep],
    }
    text = json.dumps(excerpt, ensure_ascii=False, separators=(",", ": ")) + "\n"
    cut = [(a["caption"], a["image_id"]) for a in excerpt["annotations"]]
    return text.encode("utf-8"), edges, cut


def flickr8k_edges(lines: list[str]) -> list[tuple[str, str]]:
    edges = []
    for line in lines:
        name, caption = line.rstrip("\n").split("\t", 1)
        edges.append((caption, name.rsplit("#", 1)[0]))
    return edges


def cut_flickr8k(path: Path) -> tuple[bytes, list, list]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:FLICKR8K_LINES]
    check("".join(lines).encode("utf-8"), FLICKR8K_SHA256, f"{path} (first {FLICKR8K_LINES} lines)")
    edges = flickr8k_edges(lines)
    keep = set().union(*shared(edges).values())
    keep |= set(sorted({i for _, i in edges} - keep)[:FLICKR8K_OTHERS])
    taken = [line for line, (_, image) in zip(lines, edges, strict=True) if image in keep]
    return "".join(taken).encode("utf-8"), edges, flickr8k_edges(taken)


def gcc_edges(lines: list[str]) -> list[tuple[str, str]]:
    edges = []
    for line in lines:
        caption, url = line.rstrip("\n").rsplit("\t", 1)
        edges.append((caption, url))
    return edges


def cut_gcc(path: Path) -> tuple[bytes, list, list]:
    data = path.read_bytes()
    check(data, GCC_SHA256, str(path))
    lines = data.decode("utf-8").splitlines(keepends=True)
    edges = gcc_edges(lines)
    many = shared(edges)
    taken, others = [], 0
    for line, (caption, _) in zip(lines, edges, strict=True):
        if key(caption) in many:
            taken.append(line)
        elif others < GCC_OTHERS:
            taken.append(line)
            others += 1
    return "".join(taken).encode("utf-8"), edges, gcc_edges(taken)


def wiki_pages(mirror: str, language: str) -> list[Figures]:
    """The pages of one language's folder at WIKI_COMMIT, in file-name order, read from ``git archive``."""
    folder = WIKI_FOLDER + language
    archive = subprocess.run(
        ["git", f"--git-dir={mirror}", "archive", "--format=tar", WIKI_COMMIT, folder], capture_output=True, check=True
    ).stdout
    pages = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in sorted(tar.getmembers(), key=lambda member: member.name):
            if member.isfile() and member.name.endswith(".html"):
                parsed = Figures()
                parsed.feed(tar.extractfile(member).read().decode("utf-8", "replace"))  # type: ignore[union-attr]
                parsed.figures = [f for f in parsed.figures if f[0].lower().endswith(IMAGE_EXTENSIONS)]
                if parsed.figures and parsed.page_id:
                    pages.append(parsed)
    return pages


def wiki_edges(pages: list[Figures]) -> list[tuple[str, tuple[str, str]]]:
    """(caption, (file, page)) of every captioned figure."""
    return [(caption, (file, page.title)) for page in pages for file, _, caption in page.figures if caption]


def wiki_shared(pages: list[Figures]) -> dict[str, set[tuple[str, str]]]:
    """Captions of two or more distinct files on two or more distinct pages (a wiki's users are its pages)."""
    edges = wiki_edges(pages)
    files = shared((caption, file) for caption, (file, _) in edges)
    uses: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    for caption, use in edges:
        if key(caption) in files:
            uses[key(caption)].add(use)
    return {k: v for k, v in uses.items() if len({title for _, title in v}) >= 2}


def wiki_xml(language: str, pages: list[Figures]) -> str:
    """A MediaWiki export of the pages, each figure written back as one image link."""
    namespace, thumb, sitename = WIKIS[language]
    out = [
        f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="{language}">\n'
        f"  <siteinfo>\n    <sitename>{sitename}</sitename>\n    <dbname>{language}wiki</dbname>\n"
        f"    <base>https://{language}.wikipedia.org/wiki/</base>\n    <generator>MediaWiki 1.39.0-wmf.22</generator>\n"
        '    <case>first-letter</case>\n    <namespaces>\n      <namespace key="0" case="first-letter" />\n'
        f'      <namespace key="6" case="first-letter">{namespace}</namespace>\n    </namespaces>\n  </siteinfo>\n'
    ]
    for page in pages:
        links = []
        for file, alt, caption in page.figures:
            for part in (file, alt, caption):
                if "|" in part or "[[" in part or "]]" in part:
                    raise SystemExit(f"{language}: {page.title}: | or brackets, which a link cannot hold: {part!r}")
            name = file.split(":", 1)[1]
            options = thumb + (f"|alt={alt}" if alt else "") + (f"|{caption}" if caption else "")
            links.append(f"[[{namespace}:{name}|{options}]]")
        text = html.escape("\n".join(links), quote=False)
        out.append(
            f"  <page>\n    <title>{html.escape(page.title, quote=False)}</title>\n    <ns>0</ns>\n"
            f"    <id>{page.page_id}</id>\n    <revision>\n      <id>{page.revision}</id>\n"
            f'      <text xml:space="preserve">{text}</text>\n    </revision>\n  </page>\n'
        )
    return "".join(out) + "</mediawiki>\n"


def cut_wiki(mirror: str, language: str) -> tuple[bytes, list, list]:
    """Every page holding a caption that two or more pages give to different files, with all its figures."""
    pages = wiki_pages(mirror, language)
    titles = {title for uses in wiki_shared(pages).values() for _, title in uses}
    taken = [page for page in pages if page.title in titles]
    # bz2 of a fixed level over fixed text: the same bytes on every run
    data = bz2.compress(wiki_xml(language, taken).encode("utf-8"), 9)
    print(f"## {language}: {len(pages):,} pages with figures, {len(taken)} taken; captions on 2+ pages and files:")
    for caption, uses in sorted(wiki_shared(taken).items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {len(uses)} ({', '.join(sorted(title for _, title in uses))}): {caption}")
    return data, *[[(caption, file) for caption, (file, _) in wiki_edges(p)] for p in (pages, taken)]


def report(name: str, size: int, whole: list, cut: list) -> None:
    print(f"## {name} ({size:,} bytes)")
    for label, edges in (("whole file", whole), ("excerpt", cut)):
        c = counts(edges)
        top = c.pop("top")
        print(f"{label}: " + ", ".join(f"{k} {v:,}" for k, v in c.items()))
        if label == "excerpt":
            for caption, n in top:
                print(f"  {n} images: {caption}")


def main(argv: list[str]) -> None:
    if len(argv) != 4:
        raise SystemExit(__doc__)
    jobs = (
        ("coco/captions_val2017.json", cut_coco),
        ("flickr8k/Flickr8k.token.txt", cut_flickr8k),
        ("conceptual_captions/Validation_GCC-1.1.0-Validation.tsv", cut_gcc),
    )
    results = [(target, *cut(Path(source))) for source, (target, cut) in zip(argv[:3], jobs, strict=True)]
    results += [(f"wikipedia/{lang}wiki-deja-pages-articles.xml.bz2", *cut_wiki(argv[3], lang)) for lang in WIKIS]
    for target, data, whole, taken in results:
        out = HERE / target
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(out.suffix + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(out)
        report(target, len(data), whole, taken)


if __name__ == "__main__":
    main(sys.argv[1:])
