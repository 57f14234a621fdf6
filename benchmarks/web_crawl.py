"""Test crawls written with a WARC library (warcio's ``WARCWriter``), never by hand.

:func:`write_records` writes HTTP response records as given; :func:`write_test_crawl` writes a
crawl of ``pages`` HTML pages that share ``images`` images (each page shows three, as a figure, in
a caption table and with an ``alt`` text) and one image record per image, made with Pillow.
The tests (``tests/test_warc.py``, ``tests/test_html_captions.py``) and ``benchmarks/warc_speed.py`` use it.
"""

from __future__ import annotations

import dataclasses
import io
import random
from collections.abc import Iterable
from pathlib import Path

SITE = "https://crawl.example.org"
WORDS = (
    "harbour ships town hill dawn winter boats tide morning fishermen market church bridge river "
    "mill street square tower castle wall garden station train road village valley mountain lake "
    "the a of in on at by with from and was were is are had has built old new long small great"
).split()


@dataclasses.dataclass(frozen=True)
class Response:
    """One HTTP response to record: its URL, its headers and its body."""

    url: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: str = "200 OK"
    extra_headers: tuple[tuple[str, str], ...] = ()


def write_records(path: Path, responses: Iterable[Response], gzip: bool | None = None) -> Path:
    """A WARC file of a ``warcinfo`` record and one ``response`` record per response (gzip per record
    when the name ends in ``.gz``, or when ``gzip`` says so)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    compress = path.name.endswith(".gz") if gzip is None else gzip
    with path.open("wb") as stream:
        writer = WARCWriter(stream, gzip=compress)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "wikipedia-ipc test crawl"}))
        for response in responses:
            headers = [("Content-Type", response.content_type), *response.extra_headers]
            http = StatusAndHeaders(response.status, headers, protocol="HTTP/1.1")
            record = writer.create_warc_record(
                response.url, "response", payload=io.BytesIO(response.body), http_headers=http
            )
            writer.write_record(record)
    return path


def image_payload(seed: int, size: tuple[int, int] = (160, 120), kind: str = "JPEG") -> bytes:
    """An image made with Pillow whose pixels depend on ``seed``: a gradient and a few rectangles."""
    from PIL import Image, ImageDraw

    generator = random.Random(seed)
    image = Image.new("RGB", size, tuple(generator.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x, y = generator.randrange(size[0]), generator.randrange(size[1])
        box = (x, y, min(size[0], x + generator.randrange(10, 80)), min(size[1], y + generator.randrange(10, 60)))
        draw.rectangle(box, fill=tuple(generator.randrange(256) for _ in range(3)))
    data = io.BytesIO()
    image.save(data, kind)
    return data.getvalue()


def image_url(number: int) -> str:
    return f"{SITE}/media/photo-{number}.jpg"


def page_html(number: int, images: int, filler: int = 0) -> bytes:
    """Page ``number``: three of the ``images`` shared images with a figure caption, a caption table
    and an alt text, and ``filler`` paragraphs of text around them."""
    first, second, third = (number % images, (number + 1) % images, (number + 2) % images)
    generator = random.Random(number)  # text that compresses like prose, not like one repeated line
    paragraphs = "".join(
        "<p>" + " ".join(generator.choice(WORDS) for _ in range(12)) + f" ({k}).</p>" for k in range(filler)
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {number}</title>'
        f'<base href="{SITE}/media/"></head><body><h1>Page {number}</h1>{paragraphs}'
        f'<figure><img src="photo-{first}.jpg"><figcaption>The harbour of town {number} '
        f"seen from the hill at dawn.</figcaption></figure>{paragraphs}"
        f'<table><tr><td><img src="photo-{second}.jpg"></td></tr>'
        f"<tr><td>A fishing boat leaves the harbour of town {number} in the morning.</td></tr></table>"
        f'<p><img src="photo-{third}.jpg" alt="Boats lie in the harbour of town {number} at low tide."></p>'
        f'<img src="/static/logo.png" alt=""></body></html>'
    ).encode()


def crawl_responses(pages: int, images: int = 20, filler: int = 0) -> list[Response]:
    """The responses of :func:`write_test_crawl`: the pages, then the images they share."""
    responses = [Response(f"{SITE}/page/{number}.html", page_html(number, images, filler)) for number in range(pages)]
    responses += [Response(image_url(number), image_payload(number), "image/jpeg") for number in range(images)]
    return responses


def write_test_crawl(path: Path, pages: int, images: int = 20, filler: int = 0) -> Path:
    """A crawl of ``pages`` pages sharing ``images`` images, and those images' records."""
    return write_records(path, crawl_responses(pages, images, filler))
