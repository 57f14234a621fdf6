"""Image–caption datasets (thesis §5.1): img2dataset's three output layouts, written here file for file as
img2dataset writes them (images by Pillow, metadata parquet by pyarrow, shards by tarfile), read back
with every §5.1.1 check counted, and a Conceptual Captions–style TSV joined by URL."""

from __future__ import annotations

import io
import json
import struct
import tarfile
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageDraw

from builder.sources.images import ImageFacts
from builder.sources.img2dataset import (
    DATASET_SKIPS,
    LAYOUTS,
    ImageDataset,
    dataset_layout,
    read_caption_tsv,
)


def photo(size: tuple[int, int], seed: int, kind: str = "JPEG") -> bytes:
    image = Image.effect_noise(size, 30 + seed).convert("RGB")
    ImageDraw.Draw(image).ellipse([(10, 10), (size[0] // 2, size[1] // 2)], fill=(seed * 40 % 256, 90, 200))
    buffer = io.BytesIO()
    image.save(buffer, kind, quality=85) if kind == "JPEG" else image.save(buffer, kind)
    return buffer.getvalue()


def bomb() -> bytes:
    """A real PNG whose header is rewritten to declare 60,000 × 60,000 pixels."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    data[16:24] = struct.pack(">II", 60_000, 60_000)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


GOOD = photo((480, 400), 1)
SAMPLES = [  # (url, caption, image bytes or None for a failed download, what the reader must say)
    ("http://a.example/1.jpg", "a harbour at dawn with fishing boats", GOOD, "kept"),
    ("http://b.example/copy.jpg", "fishing boats moored in a small harbour", GOOD, "kept"),
    ("http://c.example/2.png", "a png diagram", photo((500, 500), 2, "PNG"), "not_jpeg"),
    ("http://d.example/3.jpg", "a narrow photograph", photo((300, 500), 3), "under_400x400"),
    ("http://e.example/4.jpg", "a broken download", photo((480, 480), 4)[:2000], "corrupt"),
    ("http://f.example/5.jpg", "an error page", b"<html>404 not found</html>", "unreadable"),
    ("http://g.example/6.jpg", "a vanished image", None, "not_downloaded"),
    ("http://h.example/7.jpg", "", photo((480, 480), 7), "no_caption"),
    ("http://i.example/8.png", "a bomb", bomb(), "decompression_bomb"),
]


def key(shard: int, index: int) -> str:
    return f"{shard:05d}{index:04d}"  # img2dataset: oom_shard_count 5, 10,000 samples per shard → 4 digits


def metadata(shard: int, index: int, url: str, caption: str, data: bytes | None) -> dict[str, object]:
    """A sample's metadata as img2dataset records it (its .json and its shard's parquet row)."""
    ok = data is not None
    return {
        "url": url,
        "caption": caption,
        "key": key(shard, index),
        "status": "success" if ok else "failed_to_download",
        "error_message": None if ok else "HTTP Error 404: Not Found",
        "width": 480 if ok else None,
        "height": 400 if ok else None,
        "original_width": 480 if ok else None,
        "original_height": 400 if ok else None,
        "exif": None,
        "md5": None,
    }


def write_img2dataset(folder: Path, layout: str, samples: list[tuple] = SAMPLES, per_shard: int = 5) -> None:
    """An img2dataset output folder in ``layout``, shard by shard, as its writers lay it out."""
    folder.mkdir(parents=True, exist_ok=True)
    for shard, start in enumerate(range(0, len(samples), per_shard)):
        name = f"{shard:05d}"
        metas, images = [], []
        for index, (url, caption, data, _) in enumerate(samples[start : start + per_shard]):
            metas.append(metadata(shard, index, url, caption, data))
            images.append(data)
        if layout == "files":
            (folder / name).mkdir()
            for meta, data in zip(metas, images, strict=True):
                if data is None:
                    continue
                (folder / name / f"{meta['key']}.jpg").write_bytes(data)
                (folder / name / f"{meta['key']}.txt").write_text(str(meta["caption"]), encoding="utf-8")
                (folder / name / f"{meta['key']}.json").write_text(json.dumps(meta, indent=4), encoding="utf-8")
        elif layout == "webdataset":
            with tarfile.open(folder / f"{name}.tar", "w") as archive:
                for meta, data in zip(metas, images, strict=True):
                    if data is None:
                        continue
                    parts = {
                        "jpg": data,
                        "txt": str(meta["caption"]).encode(),
                        "json": json.dumps(meta, indent=4).encode(),
                    }
                    for extension, payload in parts.items():
                        info = tarfile.TarInfo(f"{meta['key']}.{extension}")
                        info.size = len(payload)
                        archive.addfile(info, io.BytesIO(payload))
        table = pa.Table.from_pylist(metas)
        if layout == "parquet":
            table = table.append_column(
                "txt", pa.array([m["caption"] if d else None for m, d in zip(metas, images, strict=True)])
            )
            table = table.append_column("jpg", pa.array(images, pa.binary()))
        pq.write_table(table, folder / f"{name}.parquet")
        (folder / f"{name}_stats.json").write_text(json.dumps({"count": len(metas)}), encoding="utf-8")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_layout_is_read_with_every_check_counted(tmp_path: Path, layout: str) -> None:
    write_img2dataset(tmp_path / "out", layout)
    assert dataset_layout(tmp_path / "out") == layout
    dataset = ImageDataset(tmp_path / "out")
    records = list(dataset)
    said = {record.url: record.image if isinstance(record.image, str) else "kept" for record in records}
    assert said == {url: expected for url, _, _, expected in SAMPLES}
    assert dataset.counts["samples"] == len(SAMPLES) and dataset.counts["kept"] == 2
    assert all(dataset.counts[reason] == 1 for reason in DATASET_SKIPS if reason != "bad_metadata")
    kept = [record for record in records if isinstance(record.image, ImageFacts)]
    assert [record.key for record in kept] == ["000000000", "000000001"]
    assert kept[0].caption == "a harbour at dawn with fishing boats"
    assert kept[0].image.pixels_md5 == kept[1].image.pixels_md5  # §5.1.2: equal images by MD5
    assert (kept[0].image.width, kept[0].image.height, kept[0].image.format) == (480, 400, "JPEG")
    assert "9 samples, 2 kept; dropped: not_downloaded 1" in dataset.report()
    # the second shard's keys carry its number
    assert {record.key for record in records if record.url == "http://i.example/8.png"} == {"000010003"}


def test_a_cc_tsv_gives_the_captions_and_names_the_images_not_downloaded(tmp_path: Path) -> None:
    uncaptioned = [(url, "", data, expected) for url, _, data, expected in SAMPLES[:2]]
    write_img2dataset(tmp_path / "out", "webdataset", uncaptioned)
    tsv = tmp_path / "Train_GCC-training.tsv"  # Conceptual Captions: caption, tab, URL; no header
    tsv.write_text(
        "a harbour at dawn with fishing boats\thttp://a.example/1.jpg\n"
        "fishing boats moored in a small harbour\thttp://b.example/copy.jpg\n"
        "a row without its url\n"
        "a picture nobody downloaded\thttp://z.example/9.jpg\n",
        encoding="utf-8",
    )
    dataset = ImageDataset(tmp_path / "out", tsv)
    records = list(dataset)
    assert [(r.key, r.caption, isinstance(r.image, ImageFacts)) for r in records] == [
        ("000000000", "a harbour at dawn with fishing boats", True),
        ("000000001", "fishing boats moored in a small harbour", True),
        (None, "a picture nobody downloaded", False),
    ]
    assert records[2].image == "not_downloaded" and records[2].url == "http://z.example/9.jpg"
    assert dataset.problems == [f"{tsv}:3: expected a caption and a URL separated by a tab, found 1 field(s)"]
    assert dataset.counts["tsv_rows"] == 3


def test_a_tsv_header_names_its_columns(tmp_path: Path) -> None:
    tsv = tmp_path / "cc.tsv"
    tsv.write_text("url\tcaption\nhttp://a.example/1.jpg\ta harbour\n", encoding="utf-8")
    assert list(read_caption_tsv(tsv)) == [(2, "a harbour", "http://a.example/1.jpg")]
    tsv.write_text("a harbour\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cc\.tsv:1: expected a caption and a URL"):
        list(read_caption_tsv(tsv))


def test_a_truncated_shard_and_bad_metadata_are_counted_and_named(tmp_path: Path) -> None:
    write_img2dataset(tmp_path / "out", "webdataset", SAMPLES[:3], per_shard=3)
    shard = tmp_path / "out" / "00000.tar"
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) - len(SAMPLES[2][2]) - 3000])  # cut inside the last image
    dataset = ImageDataset(tmp_path / "out")
    records = list(dataset)
    assert dataset.counts["unreadable_shard"] == 1 and str(shard) in dataset.problems[0]
    assert [record.url for record in records][:2] == ["http://a.example/1.jpg", "http://b.example/copy.jpg"]
    assert "unreadable_shard 1" in dataset.report()

    write_img2dataset(tmp_path / "files", "files", SAMPLES[:1])
    (tmp_path / "files" / "00000" / "000000000.json").write_text("{not json", encoding="utf-8")
    dataset = ImageDataset(tmp_path / "files")
    assert [record.image for record in dataset] == ["bad_metadata"]
    assert dataset.problems[0].startswith(f"{tmp_path / 'files' / '00000'}/000000000.json: unreadable metadata")


def test_a_folder_that_is_not_img2dataset_output_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an img2dataset output folder"):
        ImageDataset(tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        ImageDataset(tmp_path / "missing")
    write_img2dataset(tmp_path / "out", "files", SAMPLES[:1])
    with pytest.raises(ValueError, match="no such caption TSV"):
        ImageDataset(tmp_path / "out", tmp_path / "missing.tsv")


def test_the_size_and_format_checks_are_parameters(tmp_path: Path) -> None:
    write_img2dataset(tmp_path / "out", "parquet", SAMPLES[2:4])
    dataset = ImageDataset(tmp_path / "out", require_jpeg=False, min_side=300)
    assert [isinstance(record.image, ImageFacts) for record in dataset] == [True, True]
