"""Cut the crowd-caption excerpts of the paraphrase study from COCO's and Flickr8k's whole caption files.

Crowd workers wrote five captions for each image, each worker on their own: a pair of them is two
writers' captions of one image. A seeded sample of images (``IMAGES`` of each file, drawn with
``random.Random(SEED)`` from the file's image ids in sorted order) is kept with all its captions, as
the file has them; ``draw_pairs.py`` then draws one pair of captions per image from the excerpt::

    python tests/data/paraphrases/make_crowd_excerpts.py captions_val2017.json Flickr8k.token.txt

Both files as ``git show`` wrote them from the commits that ``README.md`` names (the same copies as
``tests/data/deja/``); a file whose SHA-256 differs is refused. The output is the same bytes each run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CROWD = HERE / "crowd"
SEED = 47
IMAGES = 80
COCO_SHA256 = "1018a8760deaf1fc71be2f1b8da1a1348b9c35994af4322ca2fd795a78abb79c"
FLICKR8K_SHA256 = "1e1f3a371ba1a1bf742e6930521c037e046b2bf3fcc2390ba8405e0301ed7689"
FLICKR8K_LINES = 40460  # Flickr8k's own lines; the public copy appends 500 of its own, not read


def _checked(path: Path, expected: str, data: bytes) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise SystemExit(f"{path}: sha256 {digest}, not {expected}: not the copy README.md names")
    return data


def sample(ids: list, seed: int = SEED, count: int = IMAGES) -> list:
    """``count`` of ``ids``, drawn with ``random.Random(seed)`` from their sorted order."""
    return random.Random(seed).sample(sorted(ids), count)


def cut_coco(path: Path) -> dict:
    """COCO's file with only the drawn images and their captions, in the file's order and keys."""
    data = json.loads(_checked(path, COCO_SHA256, path.read_bytes()))
    drawn = set(sample([image["id"] for image in data["images"]]))
    return {
        **data,
        "images": [image for image in data["images"] if image["id"] in drawn],
        "annotations": [note for note in data["annotations"] if note["image_id"] in drawn],
    }


def cut_flickr8k(path: Path) -> str:
    """Flickr8k's lines of the drawn images, in the file's order, as they are."""
    text = path.read_bytes()
    lines = text.decode("utf-8").splitlines(keepends=True)[:FLICKR8K_LINES]
    _checked(path, FLICKR8K_SHA256, "".join(lines).encode("utf-8"))
    drawn = set(sample(sorted({line.split("#", 1)[0] for line in lines})))
    return "".join(line for line in lines if line.split("#", 1)[0] in drawn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("coco", type=Path, help="COCO's captions_val2017.json")
    parser.add_argument("flickr8k", type=Path, help="Flickr8k.token.txt")
    arguments = parser.parse_args(argv)
    CROWD.mkdir(exist_ok=True)
    coco = cut_coco(arguments.coco)
    (CROWD / "captions_val2017.json").write_text(json.dumps(coco, ensure_ascii=False) + "\n", encoding="utf-8")
    flickr = cut_flickr8k(arguments.flickr8k)
    (CROWD / "Flickr8k.token.txt").write_text(flickr, encoding="utf-8", newline="")
    print(
        f"coco: {len(coco['images'])} images, {len(coco['annotations'])} captions; "
        f"flickr8k: {len({line.split('#', 1)[0] for line in flickr.splitlines()})} images, "
        f"{len(flickr.splitlines())} captions",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
