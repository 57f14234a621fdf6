"""The images of the web source (thesis §4.3, §4.6, §5.1.2): real images drawn and encoded by Pillow,
inspected, filtered by the §4.3.2 rules, and made one by URL, pixels or perceptual hash."""

from __future__ import annotations

import io
import random
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from builder.filters.images import (
    DEFAULT_THRESHOLD,
    IMAGE_EQUIVALENCES,
    IMAGE_RULE_NAMES,
    IMAGE_RULES,
    ImageRules,
    ImageSkip,
    equivalence_key,
    group_by_hash,
    hash_items,
    image_rule_failed,
    inspect_image,
    normalize_url,
    oversized_sets,
    referenced_too_often,
)

ROOT = Path(__file__).resolve().parent.parent


def picture(seed: int, size: tuple[int, int] = (200, 150), mode: str = "RGB") -> Image.Image:
    """A noisy picture with shapes: big enough as PNG (over 3,000 bytes) and unlike any other seed's."""
    rng = random.Random(seed)
    image = Image.effect_noise(size, 40).convert(mode)
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        box = [(x, y), (x + rng.randrange(10, size[0] // 2), y + rng.randrange(10, size[1] // 2))]
        draw.rectangle(box, fill=tuple(rng.randrange(256) for _ in range(3)) + (255,) * (mode == "RGBA"))
    return image


def encoded(image: Image.Image, kind: str = "PNG", **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, kind, **options)
    return buffer.getvalue()


def distance(first: int, second: int) -> int:
    return bin(first ^ second).count("1")


# ---- inspection and its skips ------------------------------------------------------------------------


def test_the_same_pixels_in_png_and_lossless_webp_are_one_image_by_pixels() -> None:
    image = picture(1)
    png, webp = encoded(image), encoded(image, "WEBP", lossless=True)
    assert png != webp
    first, second = inspect_image(png), inspect_image(webp)
    assert (first.format, second.format) == ("PNG", "WEBP")
    assert first.pixels_md5 == second.pixels_md5
    assert equivalence_key(first, "pixels") == equivalence_key(second, "pixels")
    assert (first.width, first.height, first.bytes) == (200, 150, len(png))
    # one pixel changed: another digest
    image.putpixel((0, 0), (1, 2, 3))
    assert inspect_image(encoded(image)).pixels_md5 != first.pixels_md5


def test_a_jpeg_reencoding_is_found_by_phash_but_not_by_pixels() -> None:
    image = picture(2, (320, 240))
    original = inspect_image(encoded(image))
    copy = inspect_image(encoded(image, "JPEG", quality=50))
    assert copy.format == "JPEG" and copy.pixels_md5 != original.pixels_md5
    assert distance(original.phash, copy.phash) <= DEFAULT_THRESHOLD
    groups = group_by_hash(hash_items({"a": original, "b": copy}, "phash"), original.hash_bits, DEFAULT_THRESHOLD)
    assert groups == {"a": "a", "b": "a"}


def test_unrelated_images_are_not_matched() -> None:
    facts = {f"image{seed}": inspect_image(encoded(picture(seed, (240, 180)))) for seed in range(10, 22)}
    for kind in ("pixels", "phash", "dhash"):
        assert len({equivalence_key(one, kind) for one in facts.values()}) == len(facts), kind
    groups = group_by_hash(hash_items(facts, "phash"), 36, DEFAULT_THRESHOLD)
    assert groups == {name: name for name in facts}


def test_quarter_turns_and_mirror_images_share_the_rotation_invariant_hash() -> None:
    image = picture(3, (240, 180))
    original = inspect_image(encoded(image))
    turned = inspect_image(encoded(image.transpose(Image.Transpose.ROTATE_90)))
    mirrored = inspect_image(encoded(image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    assert distance(original.phash, turned.phash) > DEFAULT_THRESHOLD
    assert equivalence_key(original, "phash-rotation") == equivalence_key(turned, "phash-rotation")
    assert equivalence_key(original, "phash-rotation") == equivalence_key(mirrored, "phash-rotation")
    facts = {"original": original, "turned": turned, "mirrored": mirrored}
    assert set(group_by_hash(hash_items(facts, "phash-rotation"), 36, DEFAULT_THRESHOLD).values()) == {"mirrored"}
    assert len(set(group_by_hash(hash_items(facts, "phash"), 36, DEFAULT_THRESHOLD).values())) >= 2


def test_the_hash_length_is_a_parameter() -> None:
    facts = inspect_image(encoded(picture(4)), hash_size=8)
    assert facts.hash_bits == 64 and len(equivalence_key(facts, "phash")) == 16
    assert inspect_image(encoded(picture(4))).hash_bits == 36
    with pytest.raises(ValueError, match="hash_size"):
        inspect_image(encoded(picture(4)), hash_size=9)


def png_declaring(width: int, height: int) -> bytes:
    """A real 8×8 PNG whose IHDR chunk is rewritten to declare ``width`` × ``height`` (its CRC recomputed)."""
    data = bytearray(encoded(Image.new("RGB", (8, 8), (10, 20, 30))))
    assert data[12:16] == b"IHDR"
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def test_a_decompression_bomb_is_refused_from_its_header_in_milliseconds() -> None:
    bomb = png_declaring(100_000, 100_000)  # ten billion pixels: 40 GB as RGBA
    assert len(bomb) < 200
    started = time.perf_counter()
    with pytest.raises(ImageSkip) as skipped:
        inspect_image(bomb)
    assert time.perf_counter() - started < 0.5
    assert skipped.value.reason == "decompression_bomb"  # Pillow's own limit, past its warning, said so first
    # under Pillow's limit, over ours (25 million pixels by default): ours refuses it before decoding
    started = time.perf_counter()
    with pytest.raises(ImageSkip) as skipped:
        inspect_image(png_declaring(6000, 6000))
    assert time.perf_counter() - started < 0.5
    assert skipped.value.reason == "decompression_bomb" and "6000×6000" in str(skipped.value)
    # between Pillow's warning (89 million) and its error (179 million): the warning is a skip, not a decode
    with pytest.raises(ImageSkip) as skipped:
        inspect_image(png_declaring(10_000, 10_000), max_pixels=10**12)
    assert skipped.value.reason == "decompression_bomb"
    # and a small limit refuses a real image that is over it
    with pytest.raises(ImageSkip, match="decompression_bomb"):
        inspect_image(encoded(picture(5)), max_pixels=100 * 100)


def test_unreadable_and_corrupt_images_are_named_skips() -> None:
    with pytest.raises(ImageSkip) as skipped:
        inspect_image(b"<html>not an image</html>")
    assert skipped.value.reason == "unreadable"
    jpeg = encoded(picture(6, (320, 240)), "JPEG", quality=90)
    with pytest.raises(ImageSkip) as skipped:
        inspect_image(jpeg[: len(jpeg) // 2])
    assert skipped.value.reason == "corrupt"
    png = bytearray(encoded(picture(6)))
    png[60:80] = bytes(20)  # the image data damaged: its zlib stream and CRC fail
    with pytest.raises(ImageSkip) as skipped:
        inspect_image(bytes(png))
    assert skipped.value.reason == "corrupt"


# ---- §4.3.2: the rules -------------------------------------------------------------------------------


def test_each_filter_rule_is_named_in_order() -> None:
    passing = inspect_image(encoded(picture(7)))
    assert image_rule_failed(passing) is None
    cases = {
        "too_few_pixels": picture(7, (50, 50)),  # 2,500 pixels
        "too_many_pixels": Image.new("RGB", (1200, 1000), "white"),  # 1.2 million, whatever its file size
        "small_file": Image.new("RGB", (200, 150), "white"),  # a plain PNG of a few hundred bytes
        "aspect_ratio": picture(7, (310, 100)),  # 3.1 : 1
    }
    for rule, image in cases.items():
        assert image_rule_failed(inspect_image(encoded(image))) == rule, rule
    assert image_rule_failed(inspect_image(encoded(picture(7, (300, 100))))) is None  # 3 : 1 is allowed
    assert image_rule_failed(inspect_image(encoded(picture(7, (100, 300))))) is None  # either way up
    assert set(cases) | {"transparent"} == set(IMAGE_RULE_NAMES)
    assert IMAGE_RULES.max_references == 10


def test_transparency_means_a_transparent_pixel_not_an_alpha_channel() -> None:
    opaque = picture(8, mode="RGBA")
    facts = inspect_image(encoded(opaque))
    assert facts.transparent_pixels == 0 and not facts.has_transparency
    assert image_rule_failed(facts) is None
    opaque.putpixel((3, 3), (0, 0, 0, 0))
    opaque.putpixel((4, 3), (0, 0, 0, 254))  # not fully opaque counts too
    facts = inspect_image(encoded(opaque))
    assert facts.transparent_pixels == 2 and image_rule_failed(facts) == "transparent"
    assert image_rule_failed(facts, ImageRules(allow_transparency=True)) is None
    # a palette image's transparent entry (PNG tRNS) is a transparent pixel
    palette = picture(8).quantize(64)
    index = palette.getpixel((0, 0))
    facts = inspect_image(encoded(palette, transparency=index))
    assert facts.transparent_pixels >= 1 and image_rule_failed(facts) == "transparent"


def test_images_referenced_too_often_are_named() -> None:
    assert referenced_too_often({"logo.png": 11, "photo.jpg": 10, "map.png": 1}) == {"logo.png"}
    assert referenced_too_often({"photo.jpg": 3}, ImageRules(max_references=2)) == {"photo.jpg"}


# ---- §4.6.1: resource identity -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTP://Example.COM:80/a/./b/../c.jpg#top", "http://example.com/a/c.jpg"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:8443/x.png", "https://example.com:8443/x.png"),
        ("http://example.com/%7euser/%2fimg%20a.jpg", "http://example.com/~user/%2Fimg%20a.jpg"),
        ("http://example.com/a.jpg?size=%7e2&b=1", "http://example.com/a.jpg?size=~2&b=1"),
        ("http://example.com/../../x.jpg", "http://example.com/x.jpg"),
        ("  http://[2001:DB8::1]:80/x.gif ", "http://[2001:db8::1]/x.gif"),
        ("http://User:Pw@Example.com/x.gif", "http://User:Pw@example.com/x.gif"),
        # issue 45, item 3: the spellings of one image meet
        ("http://example.com/café.jpg", "http://example.com/caf%C3%A9.jpg"),
        ("http://example.com/caf%c3%a9.jpg", "http://example.com/caf%C3%A9.jpg"),
        ("http://example.com/a b.jpg", "http://example.com/a%20b.jpg"),
        ("http://bücher.example/x.jpg", "http://xn--bcher-kva.example/x.jpg"),
        ("http://XN--BCHER-KVA.example/x.jpg", "http://xn--bcher-kva.example/x.jpg"),
        ("http://example.com\\img\\a.jpg", "http://example.com/img/a.jpg"),
        ("http://example.com/a.jpg?q=é é", "http://example.com/a.jpg?q=%C3%A9%20%C3%A9"),
        # the WHATWG URL Standard's own examples (web-platform-tests, url/resources/urltestdata.json); the
        # fragment dropped, escapes of unreserved characters decoded
        ("http://example\t.\norg", "http://example.org/"),
        ("http://f:21/ b ? d # e ", "http://f:21/%20b%20?%20d%20"),
        ("http://f:00000000000000000000080/c", "http://f/c"),
        ("http://&a:foo(b]c@d:2/", "http://&a:foo(b%5Dc@d:2/"),
        ("http://foo.com/\\@", "http://foo.com//@"),
        ("http://example.com/foo/%2e%2", "http://example.com/foo/.%2"),
        ("http://example.com/foo/%2e./%2e%2e/.%2e/%2e.bar", "http://example.com/..bar"),
        ("http://www.foo\u3002bar.com", "http://www.foo.bar.com/"),
        ("http://\uff27\uff4f.com", "http://go.com/"),
        ("http://\u4f60\u597d\u4f60\u597d", "http://xn--6qqa088eba/"),
        ("https://fa\u00df.ExAmPlE/", "https://xn--fa-hia.example/"),
        ("http://example.com/\u4f60\u597d\u4f60\u597d", "http://example.com/%E4%BD%A0%E5%A5%BD%E4%BD%A0%E5%A5%BD"),
    ],
)
def test_normalize_url(url: str, normal: str) -> None:
    assert normalize_url(url) == normal
    assert normalize_url(normal) == normal  # idempotent


@pytest.mark.parametrize(
    "url", ["http://f:b/c", "http://f: /c", "http://f:999999/c", "http://a b/x.jpg", "http://[::1/x.jpg", "not a url"]
)
def test_a_url_the_standard_refuses_is_unusable(url: str) -> None:
    """The WHATWG failures (urltestdata.json's first three): ValueError, which a build counts as unusable."""
    with pytest.raises(ValueError):
        normalize_url(url)


def test_equivalence_keys() -> None:
    facts = inspect_image(encoded(picture(9)))
    assert equivalence_key("HTTP://EX.com/a/../b.jpg", "url") == "http://ex.com/b.jpg"
    assert equivalence_key(facts, "phash") == format(facts.phash, "09x")
    assert {kind: len(equivalence_key(facts, kind)) for kind in IMAGE_EQUIVALENCES[1:]} == {
        "pixels": 32,
        "ahash": 9,
        "dhash": 9,
        "phash": 9,
        "phash-rotation": 9,
    }
    with pytest.raises(ValueError, match="unknown image equivalence"):
        equivalence_key(facts, "sha1")
    with pytest.raises(TypeError):
        equivalence_key(facts, "url")
    with pytest.raises(TypeError):
        equivalence_key("http://ex.com/a.jpg", "pixels")


# ---- grouping within a Hamming distance ----------------------------------------------------------------


def brute_force(items: list[tuple[str, int]], threshold: int) -> dict[str, str]:
    """Every pair compared: the reference the banded grouping must equal."""
    parent = {name: name for name, _ in items}

    def find(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    for index, (first, one) in enumerate(items):
        for second, other in items[index + 1 :]:
            if first == second or distance(one, other) <= threshold:
                a, b = find(first), find(second)
                parent[max(a, b)] = min(a, b)
    return {name: find(name) for name in parent}


@pytest.mark.parametrize("seed", range(12))
def test_group_by_hash_equals_all_pairs_and_ignores_order(seed: int) -> None:
    rng = random.Random(seed)
    bits = rng.choice([9, 16, 25, 36, 64])
    threshold = rng.randrange(0, 7)
    centres = [rng.getrandbits(bits) for _ in range(15)]
    items = []
    for _ in range(200):
        value = rng.choice(centres)
        for _ in range(rng.randrange(4)):
            value ^= 1 << rng.randrange(bits)
        items.append((f"id{rng.randrange(160):03d}", value))  # some ids come with several hashes
    expected = brute_force(items, threshold)
    assert group_by_hash(items, bits, threshold) == expected
    shuffled = items[:]
    rng.shuffle(shuffled)
    assert group_by_hash(shuffled, bits, threshold) == expected
    assert group_by_hash(reversed(items), bits, threshold) == expected


def test_group_by_hash_edges() -> None:
    assert group_by_hash([], 36, 4) == {}
    assert group_by_hash([("b", 0b1111), ("a", 0b0000)], 4, 4) == {"a": "a", "b": "a"}  # threshold ≥ bits
    assert group_by_hash([("b", 0b1111), ("a", 0b0000)], 4, 3) == {"a": "a", "b": "b"}
    with pytest.raises(ValueError, match="does not fit in 4 bits"):
        group_by_hash([("a", 16)], 4, 1)
    with pytest.raises(ValueError, match="1 to 64 bits"):
        group_by_hash([("a", 1)], 65, 1)


# ---- §5.1.2: the bound on an equivalence set's size --------------------------------------------------


def test_oversized_sets_follow_the_z_score_bound() -> None:
    sizes = {f"set{index}": 2 + index % 3 for index in range(1356)}  # sets of 2, 3 and 4 images
    sizes |= {"placeholder": 846, "five": 5}
    mean = sum(sizes.values()) / len(sizes)
    spread = (sum((size - mean) ** 2 for size in sizes.values()) / len(sizes)) ** 0.5
    assert 4 < mean + 0.05 * spread < 5  # 1,358 sets, the bound between 4 and 5 images: as in the thesis
    assert oversized_sets(sizes) == {"placeholder", "five"}
    assert oversized_sets(sizes, z=2.0) == {"placeholder"}
    assert oversized_sets({"a": 3, "b": 3}) == set()  # no spread: nothing stands out
    assert oversized_sets({"a": 900}) == set()


def test_the_toolkit_imports_without_pillow() -> None:
    """The Wikipedia build decodes no image: importing its engine loads neither Pillow nor imagehash."""
    code = (
        "import sys, builder.engines.local, builder.filters.images\n"
        "print(sorted({'PIL', 'imagehash'} & set(sys.modules)))"
    )
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.strip() == "[]"
