"""Déjà's visual paraphrases (§5, ``--configs deja-paraphrases``) on COCO's 159 real images and their real captions.

No caption of these 159 images is written for two of them, so the graph is built with ``min_images=1`` (every kept
caption, each in its image): the visual step then reranks each caption's candidates (the captions sharing its
nouns) by the real pixels' Tinyimage. The images are written as img2dataset's ``files`` layout, one sample per
caption row (each image five times, one per COCO writer, under its own URL), enlarged to 400 pixels on the shorter
side (§5.1.1 refuses a side under 400). Prints the funnel's last steps, σ and its development set, the time, and
writes the pairs as a TSV that ``benchmarks/compare.py --corpus deja-visual=FILE`` takes::

    python benchmarks/deja_visual.py --output comparison/deja-visual.tsv
    python benchmarks/deja_visual.py --data sic_translator/data   # 1,000 real Flickr8k pictures (docs/deja.md)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

if TYPE_CHECKING:
    from PIL import Image

COCO_IMAGES = Path(__file__).resolve().parent.parent / "tests" / "data" / "deja" / "images"
SAMPLES_PER_SHARD = 400  # two shards: an image's five samples may lie in both, as a real download's do


def enlarged(image: Image.Image) -> Image.Image:
    """A committed COCO picture (shrunk to 256 pixels on its longer side) in RGB, enlarged with Pillow's LANCZOS to
    400 pixels on its shorter side, the least §5.1.1 accepts."""
    from PIL import Image

    scale = 400 / min(image.size)
    size = (max(400, round(image.width * scale)), max(400, round(image.height * scale)))
    return image.convert("RGB").resize(size, Image.Resampling.LANCZOS)


def enlarged_jpeg(path: Path) -> tuple[bytes, int, int]:
    """A picture file :func:`enlarged` and saved as JPEG (quality 85), as a dataset sample holds it: its bytes, width
    and height."""
    from PIL import Image

    with Image.open(path) as image:
        picture = enlarged(image)
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=85)
    return buffer.getvalue(), *picture.size


def write_coco_files(folder: Path) -> Path:
    """tests/data/deja/images as img2dataset's ``files`` layout (:func:`write_files`), each sample under a URL of its
    COCO split, image and caption ids."""
    from benchmarks.deja_captioning import caption_rows

    captions = caption_rows(COCO_IMAGES)[1]
    for row in captions:
        row["url"] = f"https://images.cocodataset.test/{row['split']}/{row['image_id']}/{row['caption_id']}.jpg"
    return write_files(folder, COCO_IMAGES, captions)


def folder_captions(data: Path) -> list[dict[str, str]]:
    """The caption rows of a folder of captioned pictures as ``benchmarks/deja_captioning.py`` reads it (its
    ``captions.tsv``, or Flickr8k's ``captions.txt`` with ``Images/``), each with a URL of its own."""
    from benchmarks.deja_captioning import caption_rows

    rows = caption_rows(data)[1]
    for number, row in enumerate(rows):
        row["url"] = f"https://pictures.test/{row['file']}/{number}"
    return rows


def write_files(folder: Path, pictures: Path, captions: list[dict[str, str]]) -> Path:
    """Captioned pictures as img2dataset's ``files`` layout: one sample per caption row (each picture once per
    caption, under the row's own ``url``, so that only its pixels make its samples one image), in the rows' order.
    The pictures are enlarged (Pillow, LANCZOS) to 400 pixels on their shorter side, since §5.1.1 refuses a side
    under 400 (the committed COCO copies were shrunk to 256 on their longer side, Flickr8k's are about 500 × 375); the
    samples of a picture hold the same bytes."""
    encoded = {name: enlarged_jpeg(pictures / name) for name in sorted({row["file"] for row in captions})}
    folder.mkdir(parents=True)
    for shard, start in enumerate(range(0, len(captions), SAMPLES_PER_SHARD)):
        rows = captions[start : start + SAMPLES_PER_SHARD]
        (folder / f"{shard:05d}").mkdir()
        metadata = []
        for index, row in enumerate(rows):
            key = f"{shard:05d}{index:04d}"
            data, width, height = encoded[row["file"]]
            meta = {
                "caption": row["caption"],
                "url": row["url"],
                "key": key,
                "status": "success",
                "error_message": None,
                "width": width,
                "height": height,
                "original_width": width,
                "original_height": height,
                "exif": "{}",
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            metadata.append(meta)
            (folder / f"{shard:05d}" / f"{key}.jpg").write_bytes(data)
            (folder / f"{shard:05d}" / f"{key}.txt").write_text(row["caption"], encoding="utf-8")
            (folder / f"{shard:05d}" / f"{key}.json").write_text(json.dumps(meta, indent=4), encoding="utf-8")
        pq.write_table(pa.Table.from_pylist(metadata), folder / f"{shard:05d}.parquet")
        stats = {"count": len(rows), "successes": len(rows), "failed_to_download": 0, "failed_to_resize": 0,
                 "status_dict": {"success": len(rows)}}  # fmt: skip
        (folder / f"{shard:05d}_stats.json").write_text(json.dumps(stats, indent=4), encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    from builder.config import DEJA, DEJA_PARAPHRASES
    from builder.engines.local import build

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=Path("comparison") / "deja-visual.tsv")
    parser.add_argument("--feature", default="tiny", choices=("tiny", "gist", "gist+tiny"))
    parser.add_argument("--data", type=Path, help="another folder of captioned pictures (captions.tsv, or Flickr8k's "
                        "captions.txt and Images/; benchmarks/deja_captioning.py reads the same), instead of COCO's")
    parser.add_argument("--min-images", type=int, default=1, help="the images a caption needs (Déjà: 3; 1 keeps all)")
    arguments = parser.parse_args(argv)
    configs = [dataclasses.replace(DEJA, min_images=arguments.min_images),
               dataclasses.replace(DEJA_PARAPHRASES, min_images=arguments.min_images,
                                   deja_feature=arguments.feature)]  # fmt: skip
    with tempfile.TemporaryDirectory() as work:
        if arguments.data:
            folder = write_files(Path(work) / "images", arguments.data, folder_captions(arguments.data))
        else:
            folder = write_coco_files(Path(work) / "images")
        started = time.perf_counter()
        build([folder], configs, Path(work) / "out", tagger="perceptron", show_progress=False)
        seconds = time.perf_counter() - started
        out = Path(work) / "out" / "deja-paraphrases"
        record = json.loads((out / "funnel.json").read_text())
        pairs = pq.read_table(sorted(out.glob("*.parquet"))).to_pylist()
    for step in record["funnel"][-3:]:
        print(f"{step['name']}: {step['images']} images, {step['captions']} captions, {step['edges']} edges or pairs")
    chosen = record["deja"]["pairs"]
    print(f"feature {chosen['feature']}, K {chosen['K']}, σ {chosen['sigma']}; development: {chosen['development']}")
    same = sum(1 for pair in pairs if pair["affinity"] == 0.0)
    print(f"{len(pairs)} pairs, {same} of them with a caption of the same picture (φ = 0); build {seconds:.1f} s")
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    with arguments.output.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(["sentence1", "sentence2", "image", "affinity"])
        for pair in pairs:
            writer.writerow([pair["sentence1"], pair["sentence2"], pair["image"], pair["affinity"]])
    print(f"wrote {arguments.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
