"""Writes ``sample-crawl.warc.gz``, the small web crawl a first web build reads (docs/web.md).

Seven pages of six sites, written for the project (not crawled), show two photographs that the web hotlinks from
one host, each page captioning its photograph in its own words: what the web build is for. Tower Bridge's four
captions are three sentences that say one thing and a caption of four words, left out at step 4 (a caption of ten
words or more, §4.5.2); the Easter postcard's three are two sentences and a noun phrase, left out at step 5 (the
sentence rule). The build gives the four pairs of the five captions left, every one a paraphrase.

The crawl holds the pages only, as a Common Crawl WARC file mostly does: the images are compared by their URLs
(``--equivalence url``, the default), which needs no image record. Record ids and dates are fixed, so the records
are the same on every run; run ``python builder/data/make_sample_crawl.py`` (it needs warcio, of the test extras)
after editing the pages.
"""

from __future__ import annotations

import io
import uuid
from html import escape
from pathlib import Path
from typing import BinaryIO

OUTPUT = Path(__file__).resolve().parent / "sample-crawl.warc.gz"
DATE = "2024-01-01T12:00:00Z"
MEDIA = "https://media.example.net/photos"
TOWER_BRIDGE = f"{MEDIA}/tower-bridge-open.jpg"
POSTCARD = f"{MEDIA}/easter-postcard-1907.jpg"

# (page URL, title, image, caption): one figure a page
PAGES = (
    ("https://www.london-walks.example/bridges.html", "Bridges of the Thames", TOWER_BRIDGE,
     "The bascules of Tower Bridge are raised so that a tall ship can pass underneath."),
    ("https://thames-history.example/tower-bridge.html", "Tower Bridge, 1894 to today", TOWER_BRIDGE,
     "Tower Bridge opens its two bascules to let a tall sailing ship through."),
    ("https://tall-ships.example/visits/london-2019.html", "Our visit to London", TOWER_BRIDGE,
     "A tall sailing ship passes under the raised bascules of Tower Bridge in London."),
    ("https://www.london-walks.example/gallery.html", "Gallery", TOWER_BRIDGE,
     "Tower Bridge, London, 2019."),
    ("https://easter-customs.example/postcards.html", "Easter postcards", POSTCARD,
     "The Easter Bunny carries a basket of painted eggs on this postcard from 1907."),
    ("https://folklore-archive.example/eostre.html", "Ēostre and the hare", POSTCARD,
     "A rabbit brings a basket of coloured eggs on an Easter postcard printed in 1907."),
    ("https://postcard-collectors.example/holidays/easter.html", "Holiday postcards: Easter", POSTCARD,
     "An Easter postcard from 1907 depicting a rabbit with a basket of eggs."),
)  # fmt: skip


def page_html(title: str, image: str, caption: str) -> bytes:
    """A page as a site writes it: a heading, a line of text and the photograph as a captioned figure."""
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{escape(title)}</title></head>\n'
        f"<body>\n<h1>{escape(title)}</h1>\n<p>Notes and photographs from our archive.</p>\n"
        f'<figure><img src="{escape(image)}" width="640" height="480">'
        f"<figcaption>{escape(caption)}</figcaption></figure>\n</body>\n</html>\n"
    ).encode()


def write_crawl(stream: BinaryIO, gzip: bool) -> None:
    """One WARC response record per page; its id is derived from its URL and its date is fixed, so the bytes are
    the same on every run (warcio would draw both anew)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    writer = WARCWriter(stream, gzip=gzip)
    for url, title, image, caption in PAGES:
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        headers = {"WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>", "WARC-Date": DATE}
        body = io.BytesIO(page_html(title, image, caption))
        writer.write_record(
            writer.create_warc_record(url, "response", payload=body, http_headers=http, warc_headers_dict=headers)
        )


def sample_crawl_records() -> bytes:
    """The crawl's records, uncompressed: what ``sample-crawl.warc.gz`` decompresses to."""
    stream = io.BytesIO()
    write_crawl(stream, gzip=False)
    return stream.getvalue()


def main() -> None:
    with OUTPUT.open("wb") as stream:
        write_crawl(stream, gzip=True)
    print(f"Wrote {OUTPUT} ({OUTPUT.stat().st_size:,} bytes, {len(PAGES)} pages)")


if __name__ == "__main__":
    main()
