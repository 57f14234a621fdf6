"""Déjà's image features (Chen et al. 2015 §4): GIST against lear's published vectors, the algorithm's
invariances and a hand-checked grating, Tinyimage's size and scale, their combination, and the named skips
of bad images; on the repo's real photographs (tests/data/gist/, tests/data/captions/img2dataset/)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from builder.filters.association import similarities
from builder.sources.features import (
    FEATURE_SKIP_REASONS,
    FEATURES,
    LEAR_COMPUTE_GIST,
    TINY_SIDE,
    combined,
    gist,
    image_features,
    tiny_image,
)
from builder.sources.images import ImageSkip

DATA = Path(__file__).resolve().parent / "data"
GIST_DATA = DATA / "gist"
PHOTOS = sorted((DATA / "captions" / "img2dataset" / "files").glob("*/*.jpg"))
# compute_gist prints four decimals (±5e-5); float32 FFTs add about 1e-7
LEAR_TOLERANCE = 6e-5


def encoded(image: Image.Image, kind: str = "PNG", **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, kind, **options)
    return buffer.getvalue()


def blocks(vector: np.ndarray, orientations: int = 8) -> np.ndarray:
    """A 512-value grey GIST as (scale, orientation, column block, row block)."""
    return vector.reshape(4, orientations, 4, 4)


# ---- GIST against the published vectors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "options", "length"),
    [
        ("scene.no_arg.result", {}, 960),
        ("scene.nblocks2.result", {"n_blocks": 2}, 240),
        ("scene.ops_8_8_8.result", {"orientations_per_scale": (8, 8, 8)}, 1152),
        ("scene.ops_4_4_4.result", {"orientations_per_scale": (4, 4, 4)}, 576),
    ],
)
def test_gist_reproduces_lears_compute_gist(result: str, options: dict[str, object], length: int) -> None:
    reference = np.loadtxt(GIST_DATA / result)
    assert reference.shape == (length,)
    with Image.open(GIST_DATA / "scene.ppm") as image:
        assert image.size == (96, 96)
        descriptor = gist(image, **{**LEAR_COMPUTE_GIST, **options})
    assert descriptor.dtype == np.float32 and descriptor.shape == (length,)
    np.testing.assert_allclose(descriptor, reference, rtol=0, atol=LEAR_TOLERANCE)


def test_the_default_is_lmgists_grey_512_and_its_colour_path_is_lears() -> None:
    with Image.open(PHOTOS[0]) as photo:
        grey = gist(photo)
        assert grey.shape == (512,) and grey.dtype == np.float32
        assert np.isfinite(grey).all() and grey.min() > 0
        # the grey image is the mean of R, G and B: a photo of equal channels gives the colour path's three copies
        pixels = np.asarray(photo.convert("RGB"), dtype=np.float64).mean(axis=2)
    equal_channels = Image.fromarray(np.repeat(np.rint(pixels).astype(np.uint8)[:, :, None], 3, axis=2), "RGB")
    colour = gist(equal_channels, colour=True)
    assert colour.shape == (1536,)
    np.testing.assert_allclose(colour, np.tile(gist(equal_channels), 3), rtol=1e-5, atol=1e-6)
    # an image already 256 × 256 is not resized: image_size=None gives the same vector
    with Image.open(GIST_DATA / "scene.ppm") as scene:
        square = scene.resize((256, 256), Image.Resampling.BILINEAR)
    np.testing.assert_array_equal(gist(square), gist(square, image_size=None))
    # the boundary extension changes the vector (LMgist pads 32 pixels; lear's C code does not)
    assert not np.allclose(gist(square), gist(square, boundary_extension=0), atol=1e-3)


def test_gist_orders_orientations_and_blocks_as_lmgist() -> None:
    """Turning the picture moves its energy to known places: a transposed image's orientation j is the
    original's n/2 − j, its blocks transposed; a mirrored one's orientation j is n − j, its columns reversed."""
    with Image.open(PHOTOS[0]) as photo:
        photo.load()
        original = blocks(gist(photo))
        transposed = blocks(gist(photo.transpose(Image.Transpose.TRANSPOSE)))
        mirrored = blocks(gist(photo.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    tolerance = 2e-3 * float(original.max())  # the FFT grid's Nyquist row is not symmetric: 0.1 % of the peak
    for j in range(8):
        np.testing.assert_allclose(transposed[:, (4 - j) % 8], original[:, j].transpose(0, 2, 1), atol=tolerance)
        np.testing.assert_allclose(mirrored[:, (8 - j) % 8], original[:, j][:, ::-1, :], atol=tolerance)
    assert not np.allclose(transposed, original, atol=tolerance)  # the photograph is not symmetric itself


@pytest.mark.parametrize(
    ("cycles", "stripes", "scale", "orientation"),
    [(41.5, "vertical", 1, 0), (22, "vertical", 2, 0), (12, "horizontal", 3, 4), (77, "horizontal", 0, 4)],
)
def test_a_grating_lights_the_filter_of_its_frequency_and_orientation(
    cycles: float, stripes: str, scale: int, orientation: int
) -> None:
    """Hand-checked: LMgist's scales are centred on 0.3 / 1.85**s cycles per pixel (76.8, 41.5, 22.4, 12.1
    cycles over 256 pixels); orientation 0 takes a wave along x (vertical stripes), orientation 4 one along y."""
    wave = 127.5 + 100 * np.sin(2 * np.pi * cycles * np.arange(256) / 256)
    plane = np.tile(wave, (256, 1)) if stripes == "vertical" else np.tile(wave[:, None], (1, 256))
    energies = blocks(gist(Image.fromarray(np.rint(plane).astype(np.uint8), "L"))).mean(axis=(2, 3))
    assert np.unravel_index(int(energies.argmax()), energies.shape) == (scale, orientation)
    assert energies.max() > 1.5 * np.sort(energies.ravel())[-2]


def test_a_uniform_image_has_a_zero_gist_not_an_error() -> None:
    flat = gist(Image.new("RGB", (300, 200), (90, 140, 200)))
    assert flat.shape == (512,) and not flat.any()


# ---- Tinyimage ------------------------------------------------------------------------------------------


def test_tiny_image_is_the_whole_picture_at_32_by_32_on_the_pixel_scale() -> None:
    with Image.open(PHOTOS[1]) as tall:  # 123 × 456: squeezed to 32 × 32, nothing cut
        assert tall.size == (123, 456)
        tiny = tiny_image(tall)
        mean = np.asarray(tall.convert("RGB"), dtype=np.float64).reshape(-1, 3).mean(axis=0)
    assert tiny.dtype == np.float32 and tiny.shape == (TINY_SIDE * TINY_SIDE * 3,)
    assert tiny.min() >= 0 and tiny.max() <= 255
    np.testing.assert_allclose(tiny.reshape(-1, 3).mean(axis=0), mean, atol=1.5)  # the whole image's colour
    # left half red, right half blue, top to bottom: the tiny image is split at column 16, row by row, R G B
    halves = Image.new("RGB", (123, 456), (0, 0, 255))
    halves.paste((255, 0, 0), (0, 0, 61, 456))
    pixels = tiny_image(halves).reshape(TINY_SIDE, TINY_SIDE, 3)
    assert (pixels[:, :15] == (255, 0, 0)).all() and (pixels[:, 17:] == (0, 0, 255)).all()
    assert (tiny_image(Image.new("RGB", (50, 70), (12, 34, 56))).reshape(-1, 3) == (12, 34, 56)).all()


def test_transparent_and_16_bit_images_keep_their_picture() -> None:
    assert (tiny_image(Image.new("RGBA", (40, 40), (0, 0, 0, 0))) == 255).all()  # laid over white
    ramp = np.tile(np.linspace(0, 65535, 64), (64, 1)).astype(np.uint16)
    deep = Image.open(io.BytesIO(encoded(Image.fromarray(ramp))))
    assert deep.mode.startswith("I")
    eight_bit = Image.fromarray(np.rint(ramp / 257).astype(np.uint8), "L")
    np.testing.assert_allclose(tiny_image(deep), tiny_image(eight_bit), atol=1)  # scaled, not clipped at 255
    np.testing.assert_allclose(gist(deep), gist(eight_bit), atol=1e-3)


# ---- both, from bytes, and their comparison ---------------------------------------------------------------


def test_image_features_of_the_real_photographs() -> None:
    features = [image_features(path.read_bytes()) for path in PHOTOS]
    assert [sorted(found) for found in features] == [["gist", "tiny"]] * 5
    assert all(found["gist"].shape == (512,) and found["tiny"].shape == (3072,) for found in features)
    # img2dataset's files 000000 and 000010 are one picture, 000011 and 000012 another: equal features
    names = [path.stem for path in PHOTOS]
    assert names == ["000000", "000001", "000010", "000011", "000012"]
    for first, second in ((0, 2), (3, 4)):
        for name in ("gist", "tiny"):
            np.testing.assert_array_equal(features[first][name], features[second][name])
    assert not np.allclose(features[0]["gist"], features[3]["gist"], atol=1e-3)


@pytest.mark.parametrize("name", FEATURES)
def test_each_feature_finds_a_re_encoded_copy_first(name: str) -> None:
    """sim(Q, I) = −‖Q − I‖²: a JPEG copy at quality 40 is nearer its original than the other pictures are."""
    pictures = [PHOTOS[0], PHOTOS[1], PHOTOS[3], GIST_DATA / "scene.ppm"]
    library = np.stack([combined(image_features(path.read_bytes()), name) for path in pictures])
    for index, path in enumerate(pictures):
        with Image.open(path) as image:
            copy = encoded(image.convert("RGB"), "JPEG", quality=40)
        scores = similarities(combined(image_features(copy), name), library)
        assert scores.shape == (4,) and int(scores.argmax()) == index and scores.max() <= 0


def test_gist_plus_tiny_puts_both_on_one_scale() -> None:
    first, second = (image_features(path.read_bytes()) for path in (PHOTOS[0], PHOTOS[3]))
    both = combined(first, "gist+tiny"), combined(second, "gist+tiny")
    assert both[0].shape == (512 + 3072,)
    assert np.linalg.norm(both[0][:512]) == pytest.approx(1, abs=1e-6)
    assert np.linalg.norm(both[0][512:]) == pytest.approx(1, abs=1e-6)
    unit = {
        name: [vector[name] / np.linalg.norm(vector[name]) for vector in (first, second)] for name in ("gist", "tiny")
    }
    parts = [float(np.sum((unit[name][0] - unit[name][1]) ** 2)) for name in ("gist", "tiny")]
    assert -similarities(both[0], both[1][None])[0] == pytest.approx(sum(parts), rel=1e-5)
    assert all(0 < part < 4 for part in parts)
    np.testing.assert_array_equal(combined(first, "tiny"), first["tiny"])  # alone: as computed
    with pytest.raises(ValueError, match="unknown image feature 'hog'"):
        combined(first, "hog")


def test_bad_images_are_named_skips_never_zeros() -> None:
    photo = PHOTOS[0].read_bytes()
    cases = {
        "unreadable": b"<html>not an image</html>",
        "corrupt": photo[: len(photo) // 2],
        "too_small": encoded(Image.new("RGB", (6, 40), (1, 2, 3))),
    }
    for reason, data in cases.items():
        with pytest.raises(ImageSkip) as skipped:
            image_features(data)
        assert skipped.value.reason == reason, reason
    with pytest.raises(ImageSkip) as skipped:
        image_features(photo, max_pixels=100 * 100)
    assert skipped.value.reason == "decompression_bomb" and "400×400" in str(skipped.value)
    assert {*cases, "decompression_bomb"} == set(FEATURE_SKIP_REASONS)
