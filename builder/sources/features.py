"""The two global image descriptors of Déjà (Chen et al. 2015, §4, following Ordonez et al. 2011, Im2Text):
GIST and Tinyimage, each alone or combined, compared by ``sim(Q, I) = −‖Q − I‖²``.

**GIST** (Oliva & Torralba 2001, the spatial envelope) is Torralba's ``LMgist`` algorithm, written here with
numpy's FFT (no maintained GIST package installs on Python 3.11: ``pyleargist`` 2.0.5, the only one on PyPI,
is a Python 2 ``setup.py`` around lear's C code and FFTW). The steps and defaults are LMgist's:

1. grey: the mean of R, G and B (``mean(img, 3)``); ``colour=True`` keeps the three channels instead, as
   lear's ``color_gist`` does (three times the values);
2. resize and crop to ``image_size`` (256): the shorter side scaled to 256, the longer one cut in the middle
   (``imresizecrop``, bilinear); intensities stretched to 0–255 (``rescale``);
3. prefilter with ``fc`` = 4 cycles/image: ``log(1 + I)``, padded 5 pixels by mirroring, minus its Gaussian
   low-pass (whitening), divided by 0.2 + the local standard deviation (the low-pass of the squared result,
   averaged over the channels) — local contrast normalisation;
4. a bank of Gabor filters built in the frequency domain, ``orientations_per_scale`` (8, 8, 8, 8): 32
   filters; the image padded ``boundary_extension`` (32) pixels by mirroring before filtering;
5. the magnitude of each filtered image averaged over an ``n_blocks`` × ``n_blocks`` (4 × 4) grid.

The result is 4 × 4 × 32 = 512 values (1,536 in colour), ordered as LMgist's: channel, then filter (scale
by scale, orientation by orientation), then block, the blocks column by column (row index fastest).
Lear's C implementation (``compute_gist``) is the same algorithm with no resize, no stretch, no boundary
extension, in colour and with (8, 8, 4) orientations: ``gist(image, **LEAR_COMPUTE_GIST)`` reproduces its
published output (tests/data/gist/). A uniform image (one colour) has no structure: its GIST is zeros,
as in lear's code (LMgist's stretch divides 0 by 0 there).

**Tinyimage** (Torralba, Fergus & Freeman 2008, 80 million tiny images, stored as 32 × 32 colour images) is the
whole image reduced to 32 × 32 in colour, its aspect ratio not kept: nothing is cut, since a caption describes
the whole picture (neither Déjà nor Im2Text says how; GIST, whose blocks are a spatial layout, crops as LMgist
does). The filter is GIST's bilinear (Pillow's, widened when shrinking so that every pixel counts, like MATLAB's
antialiased ``imresize``): 3,072 values, row by row, R, G, B per pixel, on the pixels' own scale 0–255.

**GIST + Tinyimage** (``combined``): the paper writes ``g+t := gi + ti`` and gives no weights. The two are on
different scales (a GIST vector's length is about 1, a tiny image's several thousands), so each is divided by its
own length before they are put side by side: ``‖Q − I‖²`` is then the sum of the two features' distances between
unit vectors, each between 0 and 4, and neither drowns the other.

Transparent pixels are laid over white first, as ``builder.sources.images`` hashes them (a browser's page);
16-bit and float greys are scaled to 0–255 (Pillow would clip them at 255). Where this port is not LMgist to the
bit: the resize is Pillow's bilinear, not MATLAB's ``imresize`` (the same antialiased triangle kernel, other
rounding, so a resized image's vector differs slightly from MATLAB's; no published LMgist vector was found to
measure it; lear's, computed with no resize, are matched to their printed ±5 × 10⁻⁵); an odd-sized FFT
grid takes integer frequencies (MATLAB's ``-n/2:n/2-1`` falls between them; 256 + 2 × 32 is even); an image
under ``GIST_MIN_SIDE`` pixels a side is refused (lear's rule) where LMgist would stretch a few pixels to 256.
Speed (benchmarks/image_features.py): about 12 images a second for GIST on one core, 2,000 for Tinyimage.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from builder.config import DEJA_FEATURES
from builder.sources.images import DEFAULT_MAX_PIXELS, SKIP_REASONS, ImageSkip, decode_image

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from PIL import Image

__all__ = [
    "FEATURES",
    "FEATURE_SKIP_REASONS",
    "GIST_MIN_SIDE",
    "LEAR_COMPUTE_GIST",
    "VECTOR_KINDS",
    "TINY_SIDE",
    "Describer",
    "combined",
    "decode_vector",
    "encode_vector",
    "gist",
    "image_features",
    "similarities",
    "vector_bytes",
    "vector_kind",
    "tiny_image",
]

FEATURES = DEJA_FEATURES
# why an image has no features: the decoding's reasons, and GIST's own (a side under GIST_MIN_SIDE pixels)
FEATURE_SKIP_REASONS = (*SKIP_REASONS, "too_small")
TINY_SIDE = 32  # Torralba et al. 2008: 32 × 32 colour
GIST_ORIENTATIONS = (8, 8, 8, 8)  # LMgist's default: 4 scales × 8 orientations
GIST_BLOCKS = 4
GIST_IMAGE_SIZE = 256
GIST_PREFILTER_FC = 4  # cycles per image
GIST_BOUNDARY = 32  # pixels of mirrored padding before the Gabor filters
GIST_MIN_SIDE = 8  # lear's refusal ("Image not big enough"): fewer pixels than a 4 × 4 grid of 2 × 2 blocks
_PREFILTER_PAD = 5  # LMgist's and lear's padding before the prefilter
# lear's compute_gist (the C implementation's command): what its published vectors were computed with
LEAR_COMPUTE_GIST: dict[str, object] = {
    "orientations_per_scale": (8, 8, 4),
    "n_blocks": 4,
    "image_size": None,
    "colour": True,
    "rescale": False,
    "boundary_extension": 0,
}


def _rgb(image: Image.Image) -> Image.Image:
    """The image as 8-bit RGB, transparent pixels over white; 16-bit and float greys scaled, not clipped."""
    from PIL import Image

    if image.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F"):
        # Pillow clips these at 255 when converting: a 16-bit PNG would turn white. Scale by the mode's range.
        values = np.asarray(image, dtype=np.float64)
        top = 65535.0 if image.mode != "F" else max(float(values.max()), 1.0)
        grey = np.clip(np.rint(values * (255.0 / top)), 0, 255).astype(np.uint8)
        return Image.fromarray(grey, "L").convert("RGB")
    if image.mode in ("RGBA", "LA", "PA", "La", "RGBa") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        background.alpha_composite(rgba)
        return background.convert("RGB")
    return image if image.mode == "RGB" else image.convert("RGB")


def tiny_image(image: Image.Image) -> np.ndarray:
    """Torralba's tiny image: the whole picture at 32 × 32 colour (aspect ratio not kept), 0–255, float32."""
    from PIL import Image

    small = _rgb(image).resize((TINY_SIDE, TINY_SIDE), Image.Resampling.BILINEAR)
    return np.asarray(small, dtype=np.float32).reshape(-1)


def _resize_crop(channel: np.ndarray, size: int) -> np.ndarray:
    """LMgist's ``imresizecrop``: the shorter side to ``size`` (bilinear), the longer cut in its middle."""
    from PIL import Image

    height, width = channel.shape
    if (height, width) == (size, size):
        return channel
    scaling = max(size / height, size / width)
    # MATLAB's round: halves away from zero (Python's round takes halves to even)
    new_height, new_width = (max(size, int(side * scaling + 0.5)) for side in (height, width))
    resized = np.asarray(
        Image.fromarray(channel.astype(np.float32), "F").resize((new_width, new_height), Image.Resampling.BILINEAR),
        dtype=np.float64,
    )
    top, left = (new_height - size) // 2, (new_width - size) // 2
    return resized[top : top + size, left : left + size]


def _frequencies(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The integer frequencies of an FFT of this size, in the FFT's own order (zero first): fy by row, fx by column."""
    fy = np.fft.fftfreq(height, 1.0 / height)[:, None]
    fx = np.fft.fftfreq(width, 1.0 / width)[None, :]
    return np.broadcast_to(fy, (height, width)), np.broadcast_to(fx, (height, width))


def _prefilter(planes: np.ndarray, fc: float) -> np.ndarray:
    """LMgist's ``prefilt``: whitening and local contrast normalisation of ``planes`` (channels, rows, columns)."""
    channels, height, width = planes.shape
    pad = _PREFILTER_PAD
    logged = np.pad(np.log1p(planes), ((0, 0), (pad, pad), (pad, pad)), mode="symmetric")
    # LMgist pads on to an even square, so that one Gaussian fits every image of the batch
    side = max(height, width) + 2 * pad
    side += side % 2
    logged = np.pad(logged, ((0, 0), (0, side - logged.shape[1]), (0, side - logged.shape[2])), mode="symmetric")
    fy, fx = _frequencies(side, side)
    s1 = fc / np.sqrt(np.log(2.0))
    lowpass = np.exp(-(fx**2 + fy**2) / s1**2)
    whitened = logged - np.real(np.fft.ifft2(np.fft.fft2(logged) * lowpass))
    local_std = np.sqrt(np.abs(np.fft.ifft2(np.fft.fft2(whitened.mean(axis=0) ** 2) * lowpass)))
    normalised = whitened / (0.2 + local_std)
    return normalised[:, pad : pad + height, pad : pad + width]


@lru_cache(maxsize=8)
def _gabor_bank(orientations_per_scale: tuple[int, ...], height: int, width: int) -> np.ndarray:
    """LMgist's ``createGabor``: one transfer function per (scale, orientation), float32 (filters, rows, columns).

    Scale ``i`` (from 0) is centred on ``0.3 / 1.85**i`` cycles per pixel of the width; its ``n`` orientations
    are ``π / n`` apart, each with an angular width that narrows as ``n`` grows (``16 n² / 32²``)."""
    fy, fx = _frequencies(height, width)
    radius = np.sqrt(fx**2 + fy**2)
    angle = np.arctan2(fy, fx)
    filters = []
    for scale, orientations in enumerate(orientations_per_scale):
        centre = 0.3 / 1.85**scale
        angular = 16.0 * orientations**2 / 32.0**2
        for index in range(orientations):
            turned = angle + np.pi / orientations * index
            turned = np.where(turned > np.pi, turned - 2 * np.pi, turned)
            turned = np.where(turned < -np.pi, turned + 2 * np.pi, turned)
            filters.append(
                np.exp(-10.0 * 0.35 * (radius / width / centre - 1) ** 2 - 2.0 * angular * np.pi * turned**2)
            )
    bank = np.stack(filters).astype(np.float32)
    bank.flags.writeable = False
    return bank


def _block_means(energies: np.ndarray, n_blocks: int) -> np.ndarray:
    """LMgist's ``downN``: the mean of each of ``n_blocks`` × ``n_blocks`` blocks, as (filters, columns, rows)."""
    _, height, width = energies.shape
    rows = np.arange(n_blocks + 1) * height // n_blocks
    columns = np.arange(n_blocks + 1) * width // n_blocks
    sums = np.add.reduceat(np.add.reduceat(energies, rows[:-1], axis=1), columns[:-1], axis=2)
    counts = np.diff(rows)[:, None] * np.diff(columns)[None, :]
    means = sums / counts
    return np.swapaxes(means, 1, 2)  # column blocks outside, rows fastest: MATLAB's column-major reshape


def gist(
    image: Image.Image,
    *,
    orientations_per_scale: Sequence[int] = GIST_ORIENTATIONS,
    n_blocks: int = GIST_BLOCKS,
    image_size: int | None = GIST_IMAGE_SIZE,
    colour: bool = False,
    rescale: bool = True,
    boundary_extension: int = GIST_BOUNDARY,
    fc: float = GIST_PREFILTER_FC,
) -> np.ndarray:
    """The GIST descriptor of ``image`` with LMgist's settings (512 float32 values; see the module's text).

    ``image_size=None`` keeps the image's own size (lear's ``compute_gist``); an image under
    ``GIST_MIN_SIDE`` pixels a side is an ``ImageSkip("too_small")``: its grid would have empty blocks."""
    orientations = tuple(int(count) for count in orientations_per_scale)
    if not orientations or min(orientations) < 1 or n_blocks < 1:
        raise ValueError(f"GIST needs scales of at least one orientation and blocks: {orientations}, {n_blocks}")
    width, height = image.size
    if min(width, height) < max(GIST_MIN_SIDE, n_blocks):
        raise ImageSkip("too_small", f"{width}×{height} pixels: GIST needs {max(GIST_MIN_SIDE, n_blocks)} a side")
    pixels = np.asarray(_rgb(image), dtype=np.float64)
    planes = pixels.transpose(2, 0, 1) if colour else pixels.mean(axis=2)[None]
    if image_size is not None:
        planes = np.stack([_resize_crop(plane, image_size) for plane in planes])
    if rescale:
        planes = planes - planes.min()
        top = planes.max()
        if top > 0:
            planes = planes * (255.0 / top)
    filtered = _prefilter(planes, fc)
    _, rows, columns = filtered.shape
    edge = boundary_extension
    padded = np.pad(filtered, ((0, 0), (edge, edge), (edge, edge)), mode="symmetric") if edge else filtered
    bank = _gabor_bank(orientations, rows + 2 * edge, columns + 2 * edge)
    spectra = np.fft.fft2(padded.astype(np.float32))
    values = []
    for spectrum in spectra:
        energies = np.abs(np.fft.ifft2(spectrum[None] * bank))[:, edge : edge + rows, edge : edge + columns]
        values.append(_block_means(energies, n_blocks).reshape(-1))
    return np.concatenate(values).astype(np.float32)


def image_features(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> dict[str, np.ndarray]:
    """GIST and Tinyimage of an image file's bytes: ``{"gist": …, "tiny": …}``, or ``ImageSkip`` naming what
    failed (``unreadable``, ``corrupt``, ``decompression_bomb`` as ``builder.sources.images`` decodes;
    ``too_small`` for GIST), never a vector of zeros in place of an image that could not be read."""
    with decode_image(data, max_pixels=max_pixels) as image:
        try:
            rgb = _rgb(image)
        except (OSError, ValueError, MemoryError) as error:
            raise ImageSkip("corrupt", str(error) or type(error).__name__) from None
        return {"gist": gist(rgb), "tiny": tiny_image(rgb)}


def combined(features: Mapping[str, np.ndarray], name: str) -> np.ndarray:
    """The vector that ``name`` (one of ``FEATURES``) compares: ``gist`` or ``tiny`` as computed, or
    ``gist+tiny``: each divided by its length, then side by side (their squared distances add, 0–4 each)."""
    if name not in FEATURES:
        raise ValueError(f"unknown image feature {name!r}: one of {', '.join(FEATURES)}")
    if name != "gist+tiny":
        return np.asarray(features[name], dtype=np.float32)
    parts = []
    for part in ("gist", "tiny"):
        vector = np.asarray(features[part], dtype=np.float32)
        length = float(np.linalg.norm(vector))
        parts.append(vector / length if length > 0 else vector)
    return np.concatenate(parts)


# ---- a build's vectors: one per image, in its image index ---------------------------------------------------


def encode_vector(vector: np.ndarray) -> str:
    """A feature vector as text for an image index's facts: ``u1:`` and its bytes in base64 when every value is
    a whole number 0–255 (a tiny image: exact, a quarter of float32's size), else ``f4:`` and its float32 bytes."""
    values = np.asarray(vector, dtype=np.float32).reshape(-1)
    if values.size and np.all((values >= 0) & (values <= 255) & (values == np.rint(values))):
        return "u1:" + base64.b64encode(values.astype(np.uint8).tobytes()).decode("ascii")
    return "f4:" + base64.b64encode(values.astype("<f4").tobytes()).decode("ascii")


@lru_cache(maxsize=4096)
def decode_vector(text: str) -> np.ndarray:
    """The float64 vector of :func:`encode_vector`'s text (cached: an image meets many others in a build)."""
    kind, _, payload = text.partition(":")
    dtypes = {"u1": np.uint8, "f4": np.dtype("<f4")}
    if kind not in dtypes:
        raise ValueError(f"not an encoded feature vector: {text[:20]!r}")
    vector = np.frombuffer(base64.b64decode(payload), dtype=dtypes[kind]).astype(np.float64)
    vector.flags.writeable = False
    return vector


VECTOR_KINDS = {"u1": np.dtype(np.uint8), "f4": np.dtype("<f4")}
_BLOCK_ROWS = 256  # rows computed at once: a block's differences stay a few MB whatever the batch


def vector_kind(feature: str) -> str:
    """The one raw kind a build's vectors take for the similarity: ``u1`` for Tinyimage (whole values 0–255), else
    ``f4``, so that every vector of a build has one width and a block of rows is one matrix."""
    return "u1" if feature == "tiny" else "f4"


def vector_bytes(text: str | None, kind: str) -> bytes | None:
    """:func:`encode_vector`'s text as the raw bytes of ``kind`` (``VECTOR_KINDS``), the form the similarity reads;
    None for None. A vector of ``f4`` values read as ``u1`` is an error, never a rounding."""
    if text is None:
        return None
    values = decode_vector(text)
    if kind == "u1" and not np.all((values >= 0) & (values <= 255) & (values == np.rint(values))):
        raise ValueError("a feature vector of values other than whole numbers 0-255 cannot be read as u1")
    return values.astype(VECTOR_KINDS[kind]).tobytes()


def _rows(column: pa.Array | pa.ChunkedArray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """A binary column of raw vectors as a matrix (one row per entry, zero-copy when every entry has one width) and
    its validity; a null's row is zeros."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    dtype = VECTOR_KINDS[kind]
    valid = ~np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    offsets_type = np.int64 if pa.types.is_large_binary(column.type) else np.int32
    buffers = column.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offsets_type)[column.offset : column.offset + len(column) + 1]
    widths = np.diff(offsets)[valid]
    if widths.size == 0:
        return np.zeros((len(column), 0), dtype=dtype), valid
    if np.any(widths != widths[0]) or widths[0] % dtype.itemsize:
        sizes = sorted({int(width) // dtype.itemsize for width in widths})
        raise ValueError(f"feature vectors of {sizes[0]} and {sizes[-1]} values cannot be compared")
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    if valid.all():
        matrix = data[offsets[0] : offsets[-1]].view(dtype)
        return matrix.reshape(len(column), -1), valid
    size = int(widths[0])
    starts = offsets[:-1]
    starts = np.where(valid, starts, starts[valid][0])  # a null row reads a vector's bytes, zeroed below
    matrix = data[starts[:, None] + np.arange(size)].view(dtype)  # one gather for the block, not a loop per row
    matrix[~valid] = 0
    return matrix, valid


def similarities(first: pa.Array | pa.ChunkedArray, second: pa.Array | pa.ChunkedArray, kind: str) -> np.ndarray:
    """``sim(Q, I) = −‖Q − I‖²`` of each row's two vectors (binary columns of :func:`vector_bytes`), NaN where
    either is null: numpy over blocks of rows instead of one Python call per pair. Each row's value depends on its
    two vectors alone, whatever the block: ``u1`` sums are integers (exact), an ``f4`` row is one float64 sum in
    numpy's pairwise order over that row, as the row alone gives; so every engine and batch size gives the same
    bits."""
    a, valid_a = _rows(first, kind)
    b, valid_b = _rows(second, kind)
    valid = valid_a & valid_b
    if a.shape[1] != b.shape[1] and valid.any():
        raise ValueError(f"feature vectors of {a.shape[1]} and {b.shape[1]} values cannot be compared")
    out = np.full(len(valid), np.nan)
    if not valid.any():
        return out
    if kind == "u1":  # whole numbers: an int32 sum is exact while the largest possible sum fits
        accumulator = np.int32 if a.shape[1] * 255**2 < 2**31 else np.int64
    for start in range(0, len(valid), _BLOCK_ROWS):
        rows = slice(start, start + _BLOCK_ROWS)
        if kind == "u1":
            difference = np.subtract(a[rows], b[rows], dtype=accumulator)
            out[rows] = -np.einsum("ij,ij->i", difference, difference).astype(np.float64)
        else:
            difference = a[rows].astype(np.float64)
            difference -= b[rows]
            out[rows] = -np.square(difference, out=difference).sum(axis=1)
    out[~valid] = np.nan
    return out


@dataclass(frozen=True)
class Describer:
    """The feature vector a build keeps of every image it decodes (``feature``: one of ``FEATURES``), encoded;
    None for an image the feature cannot describe (GIST's ``too_small``), which then has no vector, while its
    facts stay. A frozen dataclass, so an inspector holding it pickles and its repr names it."""

    feature: str

    def __post_init__(self) -> None:
        if self.feature not in FEATURES:
            raise ValueError(f"unknown image feature {self.feature!r}: one of {', '.join(FEATURES)}")

    def __call__(self, image: Image.Image) -> str | None:
        try:
            rgb = _rgb(image)
            if self.feature == "tiny":
                return encode_vector(tiny_image(rgb))
            parts = {"gist": gist(rgb), "tiny": tiny_image(rgb)}
        except ImageSkip:
            return None
        return encode_vector(combined(parts, self.feature))
