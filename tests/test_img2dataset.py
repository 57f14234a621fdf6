"""Image–caption datasets (thesis §5.1): img2dataset's three output layouts, written here file for file as
img2dataset writes them (images by Pillow, metadata parquet by pyarrow, shards by tarfile), read back
with every §5.1.1 check counted, and a Conceptual Captions–style TSV joined by URL."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageDraw

from builder.lang.text import preprocess_caption
from builder.sources.captions import read_caption_tsv, sample_caption
from builder.sources.images import ImageFacts
from builder.sources.img2dataset import DATASET_SKIPS, LAYOUTS, ImageDataset, dataset_layout

REAL = Path(__file__).resolve().parent / "data" / "captions"  # img2dataset's own output of real rows: README.md
REAL_TSV = REAL / "captions.tsv"
TELEFLORA = "http://teleflora.edgesuite.net/images/products/HW0_372682.jpg"  # one URL, two captions
SLIDESERVE = "http://thumbs.slideserve.com/1_6119232.jpg"  # a caption with three tabs
REAL_CAPTIONS = {  # the input rows, in order: img2dataset's key numbers them
    0: "Local Malden Florists Deliver Flowers for 4th of July",
    1: "III Digital Audio III.5 (W Oct 22) MP3 and other digital audio file formats",
    2: "Coffee Table with Tray Top Color: Gray",
    3: "America the Beautiful by Teleflora in Linthicum MD, Petal Pusher Florist",
    4: "Stir Fry Mango Chicken",
    5: "Breakfast on Pluto",
}


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
    """An img2dataset output folder in ``layout``, shard by shard, as its writers lay it out.

    A caption given as bytes is written as they are in the ``.txt`` (decoded with U+FFFD where img2dataset
    holds a string: the ``.json`` and the parquet); a sample expected ``missing_image`` is listed as downloaded
    (``status`` success) with its ``.txt`` and ``.json``, but its image is not in the shard. A fifth element of a
    sample, a dict, is more metadata (img2dataset's ``--save_additional_columns``: a RedCaps ``author``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for shard, start in enumerate(range(0, len(samples), per_shard)):
        name = f"{shard:05d}"
        metas, images, texts = [], [], []
        for index, (url, caption, data, expected, *more) in enumerate(samples[start : start + per_shard]):
            text = caption.decode("utf-8", "replace") if isinstance(caption, bytes) else caption
            metas.append({**metadata(shard, index, url, text, data), **(more[0] if more else {})})
            images.append(None if expected == "missing_image" else data)
            texts.append(caption if isinstance(caption, bytes) else str(caption).encode())
        if layout == "files":
            (folder / name).mkdir()
            for meta, data, text in zip(metas, images, texts, strict=True):
                if meta["status"] != "success":
                    continue
                if data is not None:
                    (folder / name / f"{meta['key']}.jpg").write_bytes(data)
                (folder / name / f"{meta['key']}.txt").write_bytes(text)
                (folder / name / f"{meta['key']}.json").write_text(json.dumps(meta, indent=4), encoding="utf-8")
        elif layout == "webdataset":
            with tarfile.open(folder / f"{name}.tar", "w") as archive:
                for meta, data, text in zip(metas, images, texts, strict=True):
                    if meta["status"] != "success":
                        continue
                    parts = {"jpg": data, "txt": text, "json": json.dumps(meta, indent=4).encode()}
                    for extension, payload in parts.items():
                        if payload is None:
                            continue
                        info = tarfile.TarInfo(f"{meta['key']}.{extension}")
                        info.size = len(payload)
                        archive.addfile(info, io.BytesIO(payload))
        table = pa.Table.from_pylist(metas)
        if layout == "parquet":
            table = table.append_column(
                "txt", pa.array([m["caption"] if d else None for m, d in zip(metas, images, strict=True)], pa.string())
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
    unused = ("missing_image", "bad_metadata", "unreadable_caption", "outside_link", "too_large")  # tested below
    assert all(dataset.counts[reason] == 1 for reason in DATASET_SKIPS if reason not in unused)
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


# ---- every sample listed is a record: missing images, unreadable captions, the reasons' sum ----

BINARY_CAPTION = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00H"  # a JPEG's first bytes saved as the .txt
EVERY = [  # SAMPLES and the two defects' samples: each reason but bad_metadata once
    *SAMPLES,
    ("http://k.example/10.jpg", BINARY_CAPTION, GOOD, "unreadable_caption"),
    ("http://l.example/11.jpg", "a sample whose image was deleted", GOOD, "missing_image"),
]


def listed(folder: Path) -> int:
    """The samples img2dataset lists: the rows of the shards' metadata (a parquet shard is its own)."""
    return sum(pq.read_metadata(path).num_rows for path in folder.glob("*.parquet"))


def reasons_sum(dataset: ImageDataset) -> int:
    return dataset.counts["kept"] + sum(dataset.counts[reason] for reason in DATASET_SKIPS)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_sample_listed_is_read_or_counted_by_reason(tmp_path: Path, layout: str) -> None:
    write_img2dataset(tmp_path / "out", layout, EVERY, per_shard=4)
    dataset = ImageDataset(tmp_path / "out")
    records = list(dataset)
    said = {record.url: record.image if isinstance(record.image, str) else "kept" for record in records}
    assert said == {url: expected for url, _, _, expected in EVERY}
    assert dataset.counts["samples"] == len(EVERY) == listed(tmp_path / "out") == reasons_sum(dataset)
    unused = ("bad_metadata", "outside_link", "too_large")  # tested on their own
    assert all(dataset.counts[reason] == 1 for reason in DATASET_SKIPS if reason not in unused)
    assert "missing_image 1" in dataset.report() and "unreadable_caption 1" in dataset.report()
    assert all(record.caption is None or "\ufffd" not in record.caption for record in records)
    shard = {"files": "00002", "webdataset": "00002.tar", "parquet": "00002.parquet"}[layout]
    assert any(
        problem.startswith(str(tmp_path / "out" / shard)) and "000020002" in problem for problem in dataset.problems
    )
    if layout == "webdataset":  # a shard cut inside its last image: the samples it lists beyond the cut are counted
        tar = tmp_path / "out" / "00001.tar"
        with tarfile.open(tar) as archive:
            last = [member for member in archive if member.name.endswith(".jpg")][-1]
        tar.write_bytes(tar.read_bytes()[: last.offset_data + 100])
        dataset = ImageDataset(tmp_path / "out")
        records = list(dataset)
        assert dataset.counts["samples"] == len(EVERY) == reasons_sum(dataset)
        assert dataset.counts["unreadable_shard"] == 1 and dataset.counts["missing_image"] == 2


@pytest.mark.parametrize("layout", ["files", "webdataset"])
def test_an_image_deleted_from_a_shard_is_a_missing_image_named_in_the_problems(tmp_path: Path, layout: str) -> None:
    """Listed as downloaded by the shard's metadata, yet not in the shard: the image alone, or every file."""
    write_img2dataset(tmp_path / "out", layout, SAMPLES[:3])
    shard = tmp_path / "out" / ("00000" if layout == "files" else "00000.tar")
    if layout == "files":
        (shard / "000000001.jpg").unlink()
        for path in shard.glob("000000002.*"):
            path.unlink()
    else:
        with tarfile.open(shard) as archive:
            kept = [(m, archive.extractfile(m).read()) for m in archive if m.name not in ("000000001.jpg",)]
        with tarfile.open(shard, "w") as archive:
            for member, data in kept:
                if not member.name.startswith("000000002."):
                    archive.addfile(member, io.BytesIO(data))
    dataset = ImageDataset(tmp_path / "out")
    assert [(record.key, record.image if isinstance(record.image, str) else "kept") for record in dataset] == [
        ("000000000", "kept"),
        ("000000001", "missing_image"),
        ("000000002", "missing_image"),
    ]
    assert dataset.counts["samples"] == 3 == listed(tmp_path / "out") == reasons_sum(dataset)
    assert dataset.problems == [
        f"{shard}/000000001: listed as downloaded, no image",
        f"{shard}/000000002: listed as downloaded, no image",
    ]
    (tmp_path / "out" / "00000.parquet").unlink()  # without the metadata, a .txt or .json left says as much
    dataset = ImageDataset(tmp_path / "out")
    assert [record.image for record in dataset][1:] == ["missing_image"]
    assert dataset.problems == [f"{shard}/000000001: its caption or metadata written, no image"]


def test_a_parquet_row_downloaded_without_its_bytes_is_a_missing_image(tmp_path: Path) -> None:
    write_img2dataset(tmp_path / "out", "parquet", [*SAMPLES[:2], SAMPLES[6]])
    path = tmp_path / "out" / "00000.parquet"
    table = pq.read_table(path)
    images = table.column("jpg").to_pylist()
    images[1] = None  # status success, no bytes
    pq.write_table(table.set_column(table.schema.get_field_index("jpg"), "jpg", pa.array(images, pa.binary())), path)
    dataset = ImageDataset(tmp_path / "out")
    assert [record.image if isinstance(record.image, str) else "kept" for record in dataset] == [
        "kept",
        "missing_image",
        "not_downloaded",  # status failed_to_download: no image expected
    ]
    assert dataset.problems == [f"{path}: sample 000000001: no image"]


CAPTIONS = [  # (the .txt's bytes, what is published: the caption, or the reason)
    (BINARY_CAPTION, "unreadable_caption"),
    (b"\x01\x02\x03\x04\x05abc", "unreadable_caption"),  # UTF-8, but control characters
    ("caf\ufffd au lait".encode(), "unreadable_caption"),  # decoded once already, with U+FFFD
    (b"null\x00byte", "unreadable_caption"),
    ("  a  harbour\tat\r\ndawn \x07with\u00a0boats\n".encode(), "a harbour at dawn with boats"),
    ("\ufeffBOM and  soft\u00adhyphen".encode(), "BOM and softhyphen"),
    (b" \n\t \r\n", "no_caption"),
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_caption_is_utf8_text_cleaned_as_a_web_caption_or_a_counted_skip(tmp_path: Path, layout: str) -> None:
    samples = [(f"http://t.example/{n}.jpg", text, GOOD, "kept") for n, (text, _) in enumerate(CAPTIONS)]
    write_img2dataset(tmp_path / "out", layout, samples)
    dataset = ImageDataset(tmp_path / "out")
    said = [record.caption if isinstance(record.image, ImageFacts) else record.image for record in dataset]
    # the parquet layout holds strings: img2dataset's undecodable bytes are U+FFFD there, and skipped as well
    assert said == [expected for _, expected in CAPTIONS]
    assert dataset.counts["unreadable_caption"] == 4 and dataset.counts["no_caption"] == 1
    assert len([problem for problem in dataset.problems if ": caption not " in problem]) == 4


def test_a_sample_caption_is_cleaned_by_the_web_captions_rule() -> None:
    for text in ("  A line\nbreak,\r\ntabs\tand\u00a0spaces  ", "Para\u2029graph\u2028line", "नमस्ते \u200d kept", ""):
        assert sample_caption(text) == sample_caption(text.encode()) == preprocess_caption(text)
    assert sample_caption(None) is None
    with pytest.raises(ValueError, match="not UTF-8 text"):
        sample_caption(BINARY_CAPTION)
    with pytest.raises(ValueError, match="control characters"):
        sample_caption("\x1b[31m\x1b[0m")


def test_reading_a_dataset_needs_no_html_parser(tmp_path: Path) -> None:
    """A captions build must not need selectolax: the cleaning comes from builder.extract.cleaning."""
    write_img2dataset(tmp_path / "out", "webdataset", SAMPLES[:2])
    code = (
        "import sys; sys.modules['selectolax'] = sys.modules['selectolax.lexbor'] = None\n"
        "from builder.sources.img2dataset import ImageDataset\n"
        f"dataset = ImageDataset({str(tmp_path / 'out')!r})\n"
        "print([record.caption for record in dataset])\n"
        "assert 'builder.extract.html' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "a harbour at dawn with fishing boats" in done.stdout


# ---- the caption TSV: a row split on its last tab ----


def test_a_tsv_row_is_split_on_its_last_tab(tmp_path: Path) -> None:
    tsv = tmp_path / "cc.tsv"
    tsv.write_bytes(
        b"a caption\twith\ttabs\thttp://a.example/1.jpg\n"
        b"crlf ends\thttp://b.example/2.jpg\r\n"
        b"one\rline\thttp://c.example/3.jpg\n"
        b"\n"
        b"caf\xe9 in Latin-1\thttp://d.example/4.jpg\n"
        b"no url\t \n"
        b"  \thttp://e.example/5.jpg\n"
    )
    problems: list[str] = []
    assert list(read_caption_tsv(tsv, problems)) == [
        (1, "a caption with tabs", "http://a.example/1.jpg"),
        (2, "crlf ends", "http://b.example/2.jpg"),
        (3, "one line", "http://c.example/3.jpg"),
        (7, "", "http://e.example/5.jpg"),  # a row without a caption is a row; its sample has no caption
    ]
    assert problems == [
        f"{tsv}:5: not text (a NUL or U+FFFD character)",
        f"{tsv}:6: expected a caption and a URL separated by a tab, found no URL",
    ]


@pytest.mark.parametrize(
    ("header", "row"),
    [
        ("caption\turl", "with\ta tab\thttp://a.example/1.jpg"),
        ("url\tcaption", "http://a.example/1.jpg\twith\ta tab"),
        ("url\tcaption\tlicense", "http://a.example/1.jpg\twith\ta tab\tCC BY"),
        ("key\tCaption\tURL\tlicense", "7\twith\ta tab\thttp://a.example/1.jpg\tCC BY"),
    ],
)
def test_a_tsv_header_names_its_columns_and_a_caption_keeps_its_tabs(tmp_path: Path, header: str, row: str) -> None:
    tsv = tmp_path / "cc.tsv"
    tsv.write_text(f"{header}\n{row}\n", encoding="utf-8")
    assert list(read_caption_tsv(tsv)) == [(2, "with a tab", "http://a.example/1.jpg")]


def test_a_real_tsv_caption_with_tabs_keeps_its_url() -> None:
    rows = list(read_caption_tsv(REAL_TSV))
    assert [(caption, url) for _, caption, url in rows][1] == (REAL_CAPTIONS[1], SLIDESERVE)
    assert [caption for _, caption, _ in rows] == list(REAL_CAPTIONS.values())
    assert sum(url == TELEFLORA for _, _, url in rows) == 2


# ---- a URL's captions do not depend on the sharding ----

REPEATED = [  # one URL twice, its samples without captions: the TSV gives them theirs
    ("http://a.example/1.jpg", "", GOOD, "kept"),
    ("http://b.example/2.jpg", "", photo((480, 480), 2), "kept"),
    ("http://r.example/same.jpg", "", GOOD, "kept"),
    ("http://c.example/3.jpg", "", None, "not_downloaded"),
    ("http://r.example/same.jpg", "", GOOD, "kept"),
]
REPEATED_TSV = (
    "a harbour at dawn\thttp://a.example/1.jpg\n"
    "a red bicycle\thttp://b.example/2.jpg\n"
    "the first caption of a repeated URL\thttp://r.example/same.jpg\n"
    "never downloaded\thttp://c.example/3.jpg\n"
    "the second caption of a repeated URL\thttp://r.example/same.jpg\n"
    "a row img2dataset did not read\thttp://z.example/9.jpg\n"
)


def captions_read(dataset: ImageDataset) -> list[tuple[str, str | None, str]]:
    return sorted(
        (record.url, record.caption, record.image if isinstance(record.image, str) else "kept") for record in dataset
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_urls_tsv_captions_are_the_same_in_one_shard_or_several(tmp_path: Path, layout: str) -> None:
    tsv = tmp_path / "cc.tsv"
    tsv.write_text(REPEATED_TSV, encoding="utf-8")
    seen = []
    for per_shard in (5, 3, 2, 1):  # one shard; the repeated URL's samples in one shard or in two
        folder = tmp_path / f"by{per_shard}"
        write_img2dataset(folder, layout, REPEATED, per_shard=per_shard)
        whole = ImageDataset(folder, tsv)
        read = captions_read(whole)
        seen.append(read)
        # a build's tasks: one shard each, the places found over the folder (by the reader, or given)
        places = whole.tsv_places()
        for given in (None, places):
            parts = []
            for name in whole.shard_names():
                shard_places = None if given is None else given.get(name, {})
                parts += captions_read(ImageDataset(folder, tsv, shards=[name], places=shard_places))
            assert sorted(parts) == [row for row in read if row[0] != "http://z.example/9.jpg"]
    assert all(read == seen[0] for read in seen)
    assert ("http://r.example/same.jpg", "the first caption of a repeated URL", "kept") in seen[0]
    assert ("http://r.example/same.jpg", "the second caption of a repeated URL", "kept") in seen[0]
    assert ("http://z.example/9.jpg", "a row img2dataset did not read", "not_downloaded") in seen[0]


def test_a_url_the_tsv_names_once_gives_its_caption_to_each_of_its_samples(tmp_path: Path) -> None:
    tsv = tmp_path / "cc.tsv"
    tsv.write_text("the only caption\thttp://r.example/same.jpg\n", encoding="utf-8")
    samples = [("http://r.example/same.jpg", "", GOOD, "kept")] * 2 + [
        ("http://r.example/same.jpg", "own", GOOD, "kept")
    ]
    for per_shard in (3, 1):
        write_img2dataset(tmp_path / f"by{per_shard}", "files", samples, per_shard=per_shard)
        dataset = ImageDataset(tmp_path / f"by{per_shard}", tsv)
        assert [(record.caption, record.source) for record in dataset] == [
            ("the only caption", "tsv"),
            ("the only caption", "tsv"),
            ("own", "sample"),
        ]


# ---- real data: img2dataset's own output (tests/data/captions/README.md) ----

REAL_LAYOUTS = {"webdataset": "webdataset", "files": "files", "parquet": "parquet", "parquet_one_shard": "parquet"}


@pytest.mark.parametrize("folder", REAL_LAYOUTS)
def test_real_img2dataset_output_is_read_and_every_sample_counted(folder: str) -> None:
    path = REAL / "img2dataset" / folder
    assert dataset_layout(path) == REAL_LAYOUTS[folder]
    tsv = None if folder == "files" else REAL_TSV  # the files run kept its captions (--caption_col TEXT)
    dataset = ImageDataset(path, tsv)
    records = list(dataset)
    assert dataset.counts["samples"] == 6 == listed(path) == reasons_sum(dataset)
    assert (dataset.counts["kept"], dataset.counts["not_downloaded"], dataset.counts["under_400x400"]) == (4, 1, 1)
    assert dataset.problems == [] and dataset.counts["tsv_matched"] == (0 if tsv is None else 6)
    per_shard = 6 if folder == "parquet_one_shard" else 3
    # img2dataset numbers each sample by its input row (its shard, then its place in the shard), whatever order the
    # downloads finished in: each sample has its own row's caption, the repeated URL's two captions included
    for record in records:
        number = int(record.key[:5]) * per_shard + int(record.key[5:])
        assert record.caption == REAL_CAPTIONS[number]
        assert record.source == ("sample" if tsv is None else "tsv")
    slideserve = next(record for record in records if record.url == SLIDESERVE)
    assert slideserve.image == "under_400x400"  # the caption with tabs did not take the URL's place
    kept = [record for record in records if isinstance(record.image, ImageFacts)]
    assert len({record.image.pixels_md5 for record in kept}) == 2  # the florist twice, the border picture twice


# ---- a build reads the TSV in parts, each where the engine runs it ----

PARTED_TSV = (
    "\ufeffcaption\turl\n".encode()
    + b"a caption\twith\ttabs\thttp://a.example/1.jpg\n"
    + b"crlf ends\thttp://b.example/2.jpg\r\n"
    + b"\n"
    + b"caf\xe9 in Latin-1\thttp://d.example/4.jpg\n"
    + "ünïcödé across a cut \u2014 long enough\thttp://e.example/5.jpg\n".encode()
    + b"no url\t \n"
    + b"one\rline\thttp://c.example/3.jpg\n"
    + b"the last row has no line end\thttp://f.example/6.jpg"
)


@pytest.mark.parametrize("tsv_bytes", [PARTED_TSV, PARTED_TSV.split(b"\n", 1)[1], REAL_TSV.read_bytes()])
def test_a_tsv_read_in_parts_gives_the_rows_and_problems_of_a_whole_read(tmp_path: Path, tsv_bytes: bytes) -> None:
    """Cut at any size (a part of one line, of several, the whole file), the parts give the whole read's rows in
    its order and its problems with its line numbers: the cuts fall after a line's \\n, and a part decodes alone."""
    from builder.extract.captiontsv import TsvPartTask, tsv_totals
    from builder.sources.captions import caption_tsv_parts, tsv_layout

    tsv = tmp_path / "cc.tsv"
    tsv.write_bytes(tsv_bytes)
    problems: list[str] = []
    whole = [(caption, url) for _, caption, url in read_caption_tsv(tsv, problems)]
    layout = tsv_layout(tsv)
    for part_bytes in (1, 7, 40, 100, len(tsv_bytes) + 1):
        ranges = caption_tsv_parts(tsv, part_bytes)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(tsv_bytes)
        assert all(end == start for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False))
        tasks = [
            TsvPartTask(n, str(tsv), start, end, layout, "", str(tmp_path)) for n, (start, end) in enumerate(ranges)
        ]
        rows, results = [], []
        for task in tasks:
            result = task.new_result()
            rows += [(row["part"], row["line"], row["caption"], row["url"]) for _, row in task.rows(result)]
            results.append(result)
        assert [(caption, url) for _, _, caption, url in sorted(rows)] == whole
        counted, unreadable, named = tsv_totals(tsv, results)
        assert (counted, unreadable, named) == (len(whole), len(problems), problems)


def test_a_samples_file_linked_out_of_the_folder_is_not_read_but_counted_and_named(tmp_path: Path) -> None:
    """A caption or an image that is a symbolic link to a file outside the folder is never read (a link inside the
    folder is): the sample is ``outside_link``, the link counted and named, where it leads not said."""
    out, private = tmp_path / "out", tmp_path / "private"
    write_img2dataset(out, "files", SAMPLES[:3])
    private.mkdir()
    (private / "diary.txt").write_text("my private diary entry", encoding="utf-8")
    (private / "photo.jpg").write_bytes(GOOD)
    (out / "extra").mkdir()
    (out / "extra" / "inside.jpg").write_bytes(GOOD)
    shard = out / "00000"
    for name, target in (("000000000.txt", private / "diary.txt"), ("000000001.jpg", private / "photo.jpg")):
        (shard / name).unlink()
        (shard / name).symlink_to(target)
    (shard / "000000002.jpg").unlink()
    (shard / "000000002.jpg").symlink_to(Path("..") / "extra" / "inside.jpg")  # inside the folder: followed
    dataset = ImageDataset(out)
    records = list(dataset)
    assert [(r.key, r.image if isinstance(r.image, str) else "kept") for r in records] == [
        ("000000000", "outside_link"),
        ("000000001", "outside_link"),
        ("000000002", "kept"),
    ]
    assert not any("diary" in (record.caption or "") for record in records)
    assert records[2].caption == "a png diagram"  # the PNG's sample now links to a JPEG in the folder
    assert dataset.counts["outside_links"] == 2 and dataset.counts["outside_link"] == 2
    assert dataset.counts["samples"] == 3 == reasons_sum(dataset)
    assert dataset.problems == [
        f"{shard / name}: a symbolic link leading out of {out}; not read" for name in ("000000000.txt", "000000001.jpg")
    ]
    assert "outside_link 2" in dataset.report() and "outside_links 2" in dataset.report()
    assert not any(str(private) in problem for problem in dataset.problems)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_shard_linked_out_of_the_folder_is_not_read_but_counted_and_named(tmp_path: Path, layout: str) -> None:
    """A shard (folder, tar or parquet) and its metadata parquet linked from another folder: neither is read."""
    out, other = tmp_path / "out", tmp_path / "other"
    write_img2dataset(out, layout, SAMPLES[:2])
    write_img2dataset(other, layout, SAMPLES[2:4])
    shard = {"files": "00000", "webdataset": "00000.tar", "parquet": "00000.parquet"}[layout]
    linked = {"files": "00001", "webdataset": "00001.tar", "parquet": "00001.parquet"}[layout]
    (out / linked).symlink_to(other / shard)
    refused = [linked]
    if layout != "parquet":  # the metadata of a shard in the folder, linked from the other folder
        (out / "00000.parquet").unlink()
        (out / "00000.parquet").symlink_to(other / "00000.parquet")
        refused.insert(0, "00000.parquet")
    dataset = ImageDataset(out)
    assert dataset.shard_names() == [shard, linked]
    records = list(dataset)
    assert [record.url for record in records] == [url for url, *_ in SAMPLES[:2]]  # not those of other's metadata
    assert dataset.counts["samples"] == 2 == dataset.counts["kept"]
    assert dataset.counts["outside_links"] == len(refused)
    assert dataset.problems == [f"{out / name}: a symbolic link leading out of {out}; not read" for name in refused]
    task = ImageDataset(out, shards=[linked])  # a build's task of that shard alone
    assert list(task.read_samples()) == [] and task.counts["outside_links"] == 1


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, handed out as read: a member larger than memory would hold, written as a stream."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # noqa: ANN001 - a writable buffer
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def test_a_member_over_the_cap_in_a_gzip_tar_shard_is_skipped_with_memory_bounded(tmp_path: Path) -> None:
    """A gzip-compressed webdataset shard with a member one byte over MAX_MEMBER (zeros: the shard stays small):
    the member is never held, the reader's peak of Python memory stays a small share of it, the sample is
    ``too_large`` and named, the samples around it read."""
    import tracemalloc

    from builder.sources.img2dataset import MAX_MEMBER

    out = tmp_path / "out"
    write_img2dataset(out, "webdataset", SAMPLES[:3])
    tar = out / "00000.tar"
    with tarfile.open(tar) as archive:
        members = [(member, archive.extractfile(member).read()) for member in archive]
    with tarfile.open(tar, "w:gz", compresslevel=1) as archive:  # still named .tar, as a user's gzip left it
        for member, data in members:
            if member.name == "000000001.jpg":
                member.size = MAX_MEMBER + 1
                archive.addfile(member, _Zeros(member.size))
            else:
                archive.addfile(member, io.BytesIO(data))
    assert tar.stat().st_size < 1 << 20  # a small file on disk
    dataset = ImageDataset(out)
    tracemalloc.start()
    try:
        records = list(dataset)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(r.key, r.image if isinstance(r.image, str) else "kept") for r in records] == [
        ("000000000", "kept"),
        ("000000001", "too_large"),
        ("000000002", "not_jpeg"),
    ]
    assert records[1].caption == "fishing boats moored in a small harbour"  # the caption read, the image not
    assert peak < MAX_MEMBER // 20, f"peak {peak:,} bytes for a member of {MAX_MEMBER + 1:,}"
    assert dataset.problems == [
        f"{tar}/000000001.jpg: {MAX_MEMBER + 1:,} bytes, over the cap of {MAX_MEMBER:,}; not read"
    ]
    assert dataset.counts["samples"] == 3 == reasons_sum(dataset) and dataset.counts["too_large"] == 1


def test_a_file_over_the_cap_is_skipped_unread_in_every_layout(tmp_path: Path) -> None:
    """The files layout reads a file's size before its bytes (a sparse file over the cap is never read); the
    parquet layout, whose cells are read whole, gives the same verdict."""
    from builder.sources.img2dataset import MAX_MEMBER

    out = tmp_path / "files"
    write_img2dataset(out, "files", SAMPLES[:2])
    with (out / "00000" / "000000001.txt").open("r+b") as handle:  # a caption of MAX_MEMBER + 1 bytes, sparse
        handle.truncate(MAX_MEMBER + 1)
    dataset = ImageDataset(out)
    assert [r.image if isinstance(r.image, str) else "kept" for r in dataset] == ["kept", "too_large"]
    assert dataset.problems == [
        f"{out / '00000' / '000000001.txt'}: {MAX_MEMBER + 1:,} bytes, over the cap of {MAX_MEMBER:,}; not read"
    ]
    write_img2dataset(tmp_path / "parquet", "parquet", [*SAMPLES[:2], SAMPLES[5]])  # two photos, an error page
    dataset = ImageDataset(tmp_path / "parquet", max_member=len(GOOD) - 1)
    assert [r.image if isinstance(r.image, str) else "kept" for r in dataset] == [
        "too_large",
        "too_large",
        "unreadable",
    ]
    assert dataset.counts["too_large"] == 2 and dataset.counts["samples"] == 3 == reasons_sum(dataset)
