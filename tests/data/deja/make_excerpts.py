"""Cut the Déjà test excerpts (COCO, Flickr8k, Conceptual Captions) from public copies and count them.

Déjà Image-Captions keeps captions that different people wrote for different images. These
excerpts keep, from three real caption files, every image of every caption the whole file
shares between two or more images (so each shared caption keeps all its images), plus the
first few other images, which share nothing. The counts printed at the end are the
independent reference that README.md states and tests/test_deja_data.py checks: plain
Python, not the toolkit. Usage (the three files as the README says to fetch them)::

    python tests/data/deja/make_excerpts.py COCO_VAL2017_JSON FLICKR8K_TOKEN_TXT GCC_VALIDATION_TSV
"""

from __future__ import annotations

import collections
import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent

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
    taken = [line for line, (_, image) in zip(lines, edges) if image in keep]
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
    for line, (caption, _) in zip(lines, edges):
        if key(caption) in many:
            taken.append(line)
        elif others < GCC_OTHERS:
            taken.append(line)
            others += 1
    return "".join(taken).encode("utf-8"), edges, gcc_edges(taken)


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
    if len(argv) != 3:
        raise SystemExit(__doc__)
    jobs = (
        ("coco/captions_val2017.json", cut_coco),
        ("flickr8k/Flickr8k.token.txt", cut_flickr8k),
        ("conceptual_captions/Validation_GCC-1.1.0-Validation.tsv", cut_gcc),
    )
    for source, (target, cut) in zip(argv, jobs):
        data, whole, taken = cut(Path(source))
        out = HERE / target
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(out.suffix + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(out)
        report(target, len(data), whole, taken)


if __name__ == "__main__":
    main(sys.argv[1:])
