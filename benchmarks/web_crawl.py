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


# ---- a crawl whose pages share images in the three ways §4.6's equivalences tell apart (tests/test_web_build.py)

SHARED_SITE = "https://shared.example.org"
SHARED_CAPTIONS = (
    "The old stone bridge crossed the wide river near the busy market town.",
    "Fishermen repaired their nets on the quiet beach before the summer storm arrived.",
    "A steam train climbed the steep valley toward the small mountain village.",
    "The ancient castle stood on a rocky hill above the frozen lake.",
    "Children played in the square while their parents sold vegetables at the market.",
    "The lighthouse keeper watched the ships sail past the dangerous rocks.",
    "Workers built the new railway station in the centre of the growing city.",
    "Heavy snow covered the church tower during the long and cold winter.",
    "The farmer led his horses across the muddy field after the autumn rain.",
    "Tourists walked along the old city wall to see the famous gardens.",
    "A small ferry carried the villagers across the river every single morning.",
    "The miners returned from the dark tunnels late in the cold evening.",
    "Soldiers marched through the narrow streets of the town during the parade.",
    "The painter sketched the harbour while the boats left for the open sea.",
    "Old women sold fresh fish from wooden baskets near the busy harbour.",
    "The river flooded the low meadows after the heavy rains of early spring.",
    "A group of students visited the museum to study the ancient paintings.",
    "The baker opened his shop before the sun rose over the sleeping town.",
)
# (image path, caption number) per page: page n shows SHARED_REFERENCES[n] as a figure
SHARED_REFERENCES = (
    ("/img/a.jpg", 0),  # one URL on two pages: every equivalence
    ("/img/a.jpg", 1),
    ("/img/b.png", 2),  # the same pixels as PNG and BMP under two URLs: pixels and the hashes
    ("/img/b.bmp", 3),
    ("/img/c.jpg", 4),  # a JPEG and its copy recompressed at quality 50: the hashes only
    ("/img/c-q50.jpg", 5),
    ("/img/d.jpg", 6),  # no record in the crawl: kept by url, left out where pixels are compared
    ("/img/d.jpg", 7),
    ("/img/logo.png", 8),  # 20 × 20 pixels: §4.3.2's too_few_pixels
    ("/img/logo.png", 9),
    *((f"/img/placeholder-{number}.png", 10 + number) for number in range(8)),  # one image under 8 URLs (§5.1.2)
)


def picture(seed: int, kind: str = "JPEG", size: tuple[int, int] = (240, 180)) -> bytes:
    """A photograph-like image (rectangles under noise, so that files pass §4.3.2's 3,000 bytes) from ``seed``."""
    from PIL import Image

    base = Image.open(io.BytesIO(image_payload(seed, size, "PNG"))).convert("RGB")
    noise = Image.effect_noise(size, 40).convert("RGB")
    data = io.BytesIO()
    Image.blend(base, noise, 0.15).save(data, kind)
    return data.getvalue()


def _reencoded(data: bytes, kind: str, **options: object) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(out, kind, **options)
    return out.getvalue()


def _figure_page(number: int, image: str, caption: str) -> Response:
    html = (
        f'<!DOCTYPE html><html lang="en-gb"><head><meta charset="utf-8"><title>Page {number}</title></head>'
        f'<body><figure><img src="{image}"><figcaption>{caption}</figcaption></figure></body></html>'
    )
    return Response(f"{SHARED_SITE}/page/{number}.html", html.encode())


def write_shared_images_crawl(path: Path) -> Path:
    """Pages sharing images by URL, by pixels (PNG and BMP) and by a recompressed JPEG copy, one image without a
    record, one too small (§4.3.2) and one placeholder under eight URLs, with the image records."""
    pages = [_figure_page(n, image, SHARED_CAPTIONS[caption]) for n, (image, caption) in enumerate(SHARED_REFERENCES)]
    a, b, c, placeholder = picture(1), picture(2, "PNG"), picture(3), picture(4, "PNG")
    images = [
        Response(f"{SHARED_SITE}/img/a.jpg", a, "image/jpeg"),
        Response(f"{SHARED_SITE}/img/b.png", b, "image/png"),
        Response(f"{SHARED_SITE}/img/b.bmp", _reencoded(b, "BMP"), "image/bmp"),
        Response(f"{SHARED_SITE}/img/c.jpg", c, "image/jpeg"),
        Response(f"{SHARED_SITE}/img/c-q50.jpg", _reencoded(c, "JPEG", quality=50), "image/jpeg"),
        Response(f"{SHARED_SITE}/img/logo.png", picture(5, "PNG", (20, 20)), "image/png"),
        *(Response(f"{SHARED_SITE}/img/placeholder-{k}.png", placeholder, "image/png") for k in range(8)),
    ]
    return write_records(path, pages + images)


# ---- one image under two spellings of its URL (issue 45, item 3; tests/test_web_build.py) ----------------------

# (first page's src, second page's src, the image record's WARC-Target-URI): each triple names one image, which
# the WHATWG URL Standard spells one way (builder.filters.images.normalize_url)
SPELLINGS = (
    ("/img/caf%C3%A9.jpg", "/img/café.jpg", f"{SHARED_SITE}/img/café.jpg"),
    ("/img/a b.jpg", "/img/a%20b.jpg", f"{SHARED_SITE}/img/a%20b.jpg"),
    ("http://xn--bcher-kva.example/img/book.jpg", "http://bücher.example/img/book.jpg", "http://BÜCHER.example/img/book.jpg"),
    ("\\img\\e.jpg", f"{SHARED_SITE}/img/e.jpg", f"{SHARED_SITE}\\img\\e.jpg"),
)


def write_spellings_crawl(path: Path) -> Path:
    """Two pages per :data:`SPELLINGS` triple, each naming the image under one spelling with a caption of its own,
    and the image's record under a third; every image's pixels are its own."""
    pages = [
        _figure_page(2 * number + side, spelling[side], SHARED_CAPTIONS[2 * number + side])
        for number, spelling in enumerate(SPELLINGS)
        for side in (0, 1)
    ]
    images = [Response(record, picture(10 + number), "image/jpeg") for number, (*_, record) in enumerate(SPELLINGS)]
    return write_records(path, pages + images)


# ---- captions in repetition across sites (Déjà, issue 46; tests/test_deja_build.py) ------------------------------

# (page URL, image path, caption): the sites' registered domains are the users; each image path is one image (its
# record is written too). The first two captions are one in canonical form ("bird fly IN blue sky", §2's example)
# on two sites: kept. The dog on the beach is on two pages of one site (www. and blog.birds.test): one user, left
# out at "Users ≥ 2". The first-person caption fails "No personal information"; the sunset twice names one image:
# left out at "Images ≥ 2"; "Hello" names nothing visible. The resting birds are kept, and share their bird (and
# beach) with the flying bird and the dog: PARAcaption pairs the two bird captions.
REPEATED = (
    ("https://www.birds.test/1.html", "/img/1.jpg", "The bird flies in blue sky"),
    ("https://photos.shore.test/2.html", "/img/2.jpg", "A bird flying into the blue sky"),
    ("https://www.birds.test/3.html", "/img/3.jpg", "A dog running on the beach"),
    ("https://blog.birds.test/4.html", "/img/4.jpg", "Dogs run on the beach"),
    ("https://news.wildlife.test/5.html", "/img/5.jpg", "My dog on the beach"),
    ("https://photos.shore.test/6.html", "/img/6.jpg", "My dog on the beach"),
    ("https://news.wildlife.test/7.html", "https://cdn.pictures.test/7.jpg", "Sunset over the sea"),
    ("https://www.birds.test/8.html", "https://cdn.pictures.test/7.jpg", "Sunset over the sea"),
    ("https://news.wildlife.test/9.html", "/img/9.jpg", "Hello"),
    ("https://photos.shore.test/10.html", "/img/10.jpg", "Hello"),
    ("https://news.wildlife.test/11.html", "/img/11.jpg", "Birds resting on the beach"),
    ("https://photos.shore.test/12.html", "/img/12.jpg", "A bird rests on the beach."),
)


def write_repeated_captions_crawl(path: Path) -> Path:
    """The pages of :data:`REPEATED`, each a figure with its caption, and one image record per image, all in one
    WARC file; an image path is on its page's site, a URL where it is."""
    pages, images = [], {}
    for number, (page, image, caption) in enumerate(REPEATED):
        site = page.split("/", 3)[:3]
        url = image if "://" in image else "/".join(site) + image
        html = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {number}</title></head>'
            f'<body><figure><img src="{url}"><figcaption>{caption}</figcaption></figure></body></html>'
        )
        pages.append(Response(page, html.encode()))
        images.setdefault(url, Response(url, picture(100 + number), "image/jpeg"))
    return write_records(path, pages + list(images.values()))
