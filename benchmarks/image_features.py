"""Speed of Déjà's image features (``builder.sources.features``): images per second for GIST and Tinyimage
on the repo's real photographs (img2dataset's test images, lear's GIST test scene), each decoded from its
bytes. Prints the rates; one process, one thread (numpy's FFT). Usage::

    python benchmarks/image_features.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from builder.sources.features import gist, image_features, tiny_image  # noqa: E402
from builder.sources.images import decode_image  # noqa: E402

PHOTOS = sorted((ROOT / "tests" / "data" / "captions" / "img2dataset" / "files").glob("*/*.jpg")) + [
    ROOT / "tests" / "data" / "gist" / "scene.ppm"
]


def rate(label: str, work, items: list, rounds: int) -> float:
    """Run ``work`` on every item ``rounds`` times (after one warm-up pass) and print items per second."""
    for item in items:
        work(item)
    started = time.perf_counter()
    for _ in range(rounds):
        for item in items:
            work(item)
    elapsed = time.perf_counter() - started
    per_second = rounds * len(items) / elapsed
    print(f"{label:<34} {per_second:8.1f} images/s  ({1000 / per_second:6.1f} ms each)")
    return per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    blobs = [path.read_bytes() for path in PHOTOS]
    images = [decode_image(blob).convert("RGB") for blob in blobs]
    sizes = ", ".join(f"{image.width}×{image.height}" for image in images)
    print(f"{len(images)} real images ({sizes})")
    rate("decode only", lambda blob: decode_image(blob).close(), blobs, args.rounds)
    rate("Tinyimage (32×32 colour)", tiny_image, images, args.rounds)
    rate("GIST (LMgist: grey, 256, 8×4, 4×4)", gist, images, args.rounds)
    rate("GIST colour (3 channels)", lambda image: gist(image, colour=True), images, args.rounds)
    rate("image_features (decode+both)", image_features, blobs, args.rounds)


if __name__ == "__main__":
    main()
