"""The thesis's §6.2 case study, over many images: which copies each image equivalence finds, and how
often it takes unrelated images for one.

N originals are drawn with Pillow from fixed seeds, each a different composition (a gradient of random
colours and direction, random rectangles, ellipses and lines, a few words of text, light noise), and
each is copied as §6.2 and the web do: saved as lossless WebP (the same pixels), scaled to 60 %,
re-encoded as JPEG at quality 50, cropped by 10 % (5 % off each side), turned 90°, turned 5° (corners
filled white), mirrored, and watermarked (a semi-transparent text and a logo box in a corner). Every
image goes through ``builder.sources.images.inspect_image`` as a PNG (the JPEG and WebP copies as
their own bytes). A copy is found when its key equals the original's (``pixels``) or its hash is
within the Hamming threshold of the original's (the perceptual hashes; for ``phash-rotation``, any of
the eight orientations). False matches are counted over all pairs of different originals. A second
table gives, per threshold, all copies found and the false matches, to choose the threshold. Usage::

    python benchmarks/image_hashes.py [--originals 60] [--threshold 4] [--hash-size 6] [--scale 0]

``--scale N`` also times ``group_by_hash`` on N random hashes of the chosen length.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from builder.filters.images import DEFAULT_THRESHOLD, group_by_hash  # noqa: E402
from builder.sources.images import DEFAULT_HASH_SIZE, ImageFacts, inspect_image  # noqa: E402

KINDS = ("pixels", "ahash", "dhash", "phash", "phash-rotation")
WORDS = "harbour castle river bridge tower market garden station church valley museum mountain".split()


def original(seed: int) -> Image.Image:
    """A synthetic picture of its own: gradient, shapes, text and noise, all drawn from ``seed``."""
    rng = random.Random(seed)
    width, height = rng.choice([(320, 240), (300, 300), (360, 240), (256, 320)])
    start = [rng.randrange(256) for _ in range(3)]
    end = [rng.randrange(256) for _ in range(3)]
    horizontal = rng.random() < 0.5
    image = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(image)
    span = width if horizontal else height
    for step in range(span):
        colour = tuple(int(a + (b - a) * step / span) for a, b in zip(start, end, strict=True))
        draw.line([(step, 0), (step, height)] if horizontal else [(0, step), (width, step)], fill=colour)
    for _ in range(rng.randrange(3, 9)):
        x0, y0 = rng.randrange(width), rng.randrange(height)
        x1, y1 = x0 + rng.randrange(20, width // 2), y0 + rng.randrange(20, height // 2)
        colour = tuple(rng.randrange(256) for _ in range(3))
        shape = rng.choice(("rectangle", "ellipse", "line"))
        if shape == "line":
            draw.line([(x0, y0), (x1, y1)], fill=colour, width=rng.randrange(2, 9))
        else:
            getattr(draw, shape)([(x0, y0), (x1, y1)], fill=colour)
    font = ImageFont.load_default(size=rng.randrange(18, 36))
    draw.text(
        (rng.randrange(width // 2), rng.randrange(height - 40)),
        " ".join(rng.sample(WORDS, 2)),
        fill=(0, 0, 0),
        font=font,
    )
    noise = Image.effect_noise((width, height), 12).convert("RGB")
    return Image.blend(image, noise, 0.08)


def watermarked(image: Image.Image) -> Image.Image:
    """A semi-transparent text across the picture and an opaque logo box in its lower right corner."""
    marked = image.convert("RGBA")
    layer = Image.new("RGBA", marked.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    font = ImageFont.load_default(size=max(14, marked.width // 12))
    draw.text((marked.width // 8, marked.height // 2), "© stock photo", fill=(255, 255, 255, 110), font=font)
    box = max(16, marked.width // 8)
    draw.rectangle(
        [marked.width - box - 6, marked.height - box - 6, marked.width - 6, marked.height - 6], fill=(200, 30, 30, 255)
    )
    return Image.alpha_composite(marked, layer).convert("RGB")


def _cropped(image: Image.Image) -> Image.Image:
    dx, dy = image.width // 20, image.height // 20
    return image.crop((dx, dy, image.width - dx, image.height - dy))


TRANSFORMS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "WebP lossless": lambda image: image,  # the same pixels in another file format: encoded below
    "scaled 60 %": lambda image: image.resize((image.width * 3 // 5, image.height * 3 // 5), Image.Resampling.LANCZOS),
    "JPEG q50": lambda image: image,  # encoded as JPEG below
    "cropped 10 %": _cropped,
    "rotated 90°": lambda image: image.transpose(Image.Transpose.ROTATE_90),
    "rotated 5°": lambda image: image.rotate(5, resample=Image.Resampling.BICUBIC, fillcolor=(255, 255, 255)),
    "mirrored": lambda image: image.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
    "watermarked": watermarked,
}


def encoded(image: Image.Image, kind: str = "PNG", **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, kind, **options)
    return buffer.getvalue()


def _distance(first: ImageFacts, second: ImageFacts, kind: str) -> int:
    """Hamming distance under ``kind``; for pixels 0 when the digests are equal, else more than any threshold."""
    if kind == "pixels":
        return 0 if first.pixels_md5 == second.pixels_md5 else 1 << 16
    if kind == "phash-rotation":
        return min(bin(value ^ second.phash).count("1") for value in first.phash_orientations)
    return bin(getattr(first, kind) ^ getattr(second, kind)).count("1")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--originals", type=int, default=60, help="synthetic originals (default 60)")
    parser.add_argument("--threshold", type=int, default=DEFAULT_THRESHOLD, help="Hamming threshold of the table")
    parser.add_argument("--hash-size", type=int, default=DEFAULT_HASH_SIZE, help="imagehash grid side (bits = side²)")
    parser.add_argument("--scale", type=int, default=0, help="also time group_by_hash on this many random hashes")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    originals: list[ImageFacts] = []
    copies: dict[str, list[ImageFacts]] = {name: [] for name in TRANSFORMS}
    for seed in range(args.originals):
        image = original(seed)
        originals.append(inspect_image(encoded(image), hash_size=args.hash_size))
        for name, transform in TRANSFORMS.items():
            if name == "JPEG q50":
                data = encoded(image, "JPEG", quality=50)
            elif name == "WebP lossless":
                data = encoded(image, "WEBP", lossless=True)
            else:
                data = encoded(transform(image))
            copies[name].append(inspect_image(data, hash_size=args.hash_size))
    bits = args.hash_size**2
    seconds = time.perf_counter() - started
    unrelated = [(a, b) for a in range(len(originals)) for b in range(a + 1, len(originals))]

    def found(kind: str, name: str, threshold: int) -> int:
        return sum(_distance(o, c, kind) <= threshold for o, c in zip(originals, copies[name], strict=True))

    def false(kind: str, threshold: int) -> int:
        return sum(_distance(originals[a], originals[b], kind) <= threshold for a, b in unrelated)

    n = len(originals)
    print(
        f"{n} originals × {len(TRANSFORMS)} transformations, {bits}-bit hashes (hash_size {args.hash_size}), "
        f"Hamming threshold {args.threshold}; {len(unrelated)} pairs of unrelated originals; "
        f"{n * (len(TRANSFORMS) + 1)} images inspected in {seconds:.1f} s\n"
    )
    print("| copy found by | " + " | ".join(TRANSFORMS) + " | false matches |")
    print("|---" * (len(TRANSFORMS) + 2) + "|")
    for kind in KINDS:
        threshold = 0 if kind == "pixels" else args.threshold
        cells = [f"{found(kind, name, threshold)}/{n}" for name in TRANSFORMS]
        print(f"| {kind} | " + " | ".join(cells) + f" | {false(kind, threshold)}/{len(unrelated)} |")
    print("\nPer threshold: copies found (all transformations) / false matches among unrelated originals\n")
    thresholds = list(range(0, 9))
    print("| hash | " + " | ".join(f"≤ {t}" for t in thresholds) + " |")
    print("|---" * (len(thresholds) + 1) + "|")
    total = n * len(TRANSFORMS)
    for kind in KINDS[1:]:
        cells = [f"{sum(found(kind, name, t) for name in TRANSFORMS)}/{total} · {false(kind, t)}" for t in thresholds]
        print(f"| {kind} | " + " | ".join(cells) + " |")
    if args.scale:
        rng = random.Random(0)
        items = [(f"{index:09d}", rng.getrandbits(bits)) for index in range(args.scale)]
        started = time.perf_counter()
        groups = group_by_hash(items, bits, args.threshold)
        print(
            f"\ngroup_by_hash: {args.scale:,} random {bits}-bit hashes at threshold {args.threshold} in "
            f"{time.perf_counter() - started:.2f} s, {len(set(groups.values())):,} groups"
        )


if __name__ == "__main__":
    main()
