"""What an image's bytes hold, read once with Pillow: size, format, transparency, the MD5 of its decoded
pixels and its perceptual hashes (thesis §4.3, §4.6.2–4.6.3), or a named reason why it cannot be read.

This module sits among the sources so that every reader of images (web crawls, image–caption datasets)
and the filters above them share one inspection; the rules and equivalences that use its facts are in
``builder.filters.images``. Pillow and imagehash are imported here only, so the Wikipedia build, which
never decodes an image, does not need them.

Perceptual hashes: the thesis used 30-bit hashes from JImageHash (§4.6.3, Eq. 4.1: 29 bits tell a
billion images apart, one bit of headroom). ``imagehash`` computes its hashes on a square grid,
``hash_size`` × ``hash_size`` bits, so 30 bits is not one of its lengths; the default here is the
smallest square at or above the thesis's 29 bits, ``hash_size=6``: 36-bit average, difference and DCT
hashes. ``hash_size`` is a parameter (at most 8: 64 bits, one machine word).

The rotation-invariant hash is the DCT hash of the image's eight orientations (the four quarter turns,
each also mirrored): ``phash_orientations`` keeps all eight, ``phash_rotation`` the smallest, which is
the same number for an image and any of its quarter turns or mirror images (the eight orientations of
a turned image are the same eight images). It is not invariant to turns by other angles; the thesis's
ring-bucket hashes of JImageHash were not either in its own case study (§6.2).
"""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "DEFAULT_HASH_SIZE",
    "DEFAULT_MAX_PIXELS",
    "SKIP_REASONS",
    "ImageFacts",
    "ImageSkip",
    "decode_image",
    "inspect_image",
]

DEFAULT_HASH_SIZE = 6  # 6 × 6 = 36 bits: the smallest imagehash grid that holds the thesis's 29-30 bits
DEFAULT_MAX_PIXELS = 25_000_000  # never decode more (100 MB as RGBA); a header declaring more is a bomb
MAX_HASH_SIZE = 8  # 64 bits: a hash stays one unsigned machine word for the grouping's bit arithmetic
SKIP_REASONS = ("unreadable", "corrupt", "decompression_bomb")
# The eight orientations of an image (the dihedral group of the square), as Pillow transposes; None: as is.
ORIENTATIONS = (
    None,
    "ROTATE_90",
    "ROTATE_180",
    "ROTATE_270",
    "FLIP_LEFT_RIGHT",
    "FLIP_TOP_BOTTOM",
    "TRANSPOSE",
    "TRANSVERSE",
)


class ImageSkip(Exception):
    """An image that is not inspected; ``reason`` is a short fixed name a caller counts (``SKIP_REASONS``)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class ImageFacts:
    """One decoded image, reduced to what the filters (§4.3.2, §5.1.1) and the equivalences (§4.6) ask.

    ``pixels_md5`` is the MD5 of the size and the RGBA pixels (first frame), so the same pixels stored
    as PNG, lossless WebP or BMP give one digest, and a re-encoded JPEG another. The hashes are
    unsigned integers of ``hash_bits`` bits, row-major, first cell in the highest bit.
    """

    width: int
    height: int
    bytes: int
    format: str
    transparent_pixels: int
    pixels_md5: str
    ahash: int
    dhash: int
    phash: int
    phash_orientations: tuple[int, ...]
    hash_bits: int
    # the image's feature vector for Déjà's visual paraphrases (builder.sources.features.encode_vector), when the
    # build asked for one; None otherwise, and then left out of the facts' JSON, which stays as it was
    vector: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The facts as plain data, for their JSON in an image index; ``vector`` only when there is one."""
        data = asdict(self)
        if data["vector"] is None:
            del data["vector"]
        return data

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def has_transparency(self) -> bool:
        """Whether any pixel is not fully opaque: an alpha channel whose pixels are all opaque does not count."""
        return self.transparent_pixels > 0

    @property
    def aspect_ratio(self) -> float:
        """The longer side over the shorter (§4.3.1): at least 1."""
        return max(self.width, self.height) / max(1, min(self.width, self.height))

    @property
    def phash_rotation(self) -> int:
        """The smallest DCT hash of the eight orientations: equal for quarter turns and mirror images."""
        return min(self.phash_orientations)


def _check_hash_size(hash_size: int) -> None:
    if not 2 <= hash_size <= MAX_HASH_SIZE:
        raise ValueError(f"hash_size is the side of imagehash's square grid: 2 to {MAX_HASH_SIZE}, not {hash_size}")


def _as_int(value: object) -> int:
    """An imagehash ``ImageHash`` as an unsigned integer, its bits row-major, first bit highest."""
    bits = value.hash.flatten()  # type: ignore[attr-defined]
    number = 0
    for bit in bits:
        number = (number << 1) | int(bit)
    return number


def decode_image(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """The first frame of an image file's bytes, decoded (``Image.load`` done, ``format`` kept), or
    ``ImageSkip``: ``unreadable`` (not an image Pillow knows), ``corrupt`` (a known format whose data fails
    to decode, truncated files included) or ``decompression_bomb`` (the header declares more than
    ``max_pixels`` pixels: refused before any pixel is decoded, so a small file that would expand to
    gigabytes costs nothing). Every reader of pixels decodes here, so all skip the same files alike."""
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        # Pillow's own bomb check (its global limit) warns, then raises past twice the limit: both are a skip
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data))
        except (Image.DecompressionBombWarning, Image.DecompressionBombError) as error:
            raise ImageSkip("decompression_bomb", str(error)) from None
        except UnidentifiedImageError:
            raise ImageSkip("unreadable", "not an image format Pillow reads") from None
        except (OSError, ValueError, SyntaxError, EOFError) as error:
            raise ImageSkip("corrupt", str(error) or type(error).__name__) from None
        width, height = image.size
        if width * height > max_pixels:
            image.close()
            raise ImageSkip("decompression_bomb", f"{width}×{height} pixels declared, over {max_pixels:,}")
        if width < 1 or height < 1:
            image.close()
            raise ImageSkip("corrupt", f"{width}×{height} pixels")
        try:
            image.load()
        except (Image.DecompressionBombWarning, Image.DecompressionBombError) as error:
            image.close()
            raise ImageSkip("decompression_bomb", str(error)) from None
        except (OSError, ValueError, SyntaxError, EOFError, MemoryError) as error:
            image.close()
            raise ImageSkip("corrupt", str(error) or type(error).__name__) from None
    return image


def inspect_image(
    data: bytes,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    hash_size: int = DEFAULT_HASH_SIZE,
    describe: Callable[[Image.Image], str | None] | None = None,
) -> ImageFacts:
    """The facts of one image file's bytes, or ``ImageSkip`` (``decode_image``'s reasons). ``describe`` (a
    :class:`builder.sources.features.Describer`) gives the encoded feature vector from the decoded image, so an
    image is decoded once whatever the build asks of it."""
    _check_hash_size(hash_size)
    import imagehash
    from PIL import Image

    with decode_image(data, max_pixels=max_pixels) as image:
        width, height = image.size
        image_format = image.format or "unknown"
        vector = describe(image) if describe is not None else None
        try:
            rgba = image.convert("RGBA")
        except (OSError, ValueError, MemoryError) as error:
            raise ImageSkip("corrupt", str(error) or type(error).__name__) from None
    digest = hashlib.md5(usedforsecurity=False)
    digest.update(f"{width}x{height}:".encode("ascii"))
    digest.update(rgba.tobytes())
    alpha = rgba.getchannel("A")
    transparent = 0 if alpha.getextrema()[0] == 255 else width * height - alpha.histogram()[255]
    del alpha
    # Hashes of the visible image: transparent pixels over white, as a browser shows them on a white page
    if transparent:
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        background.alpha_composite(rgba)
        rgba = background
    gray = rgba.convert("L")
    del rgba
    orientations = []
    for name in ORIENTATIONS:
        # each orientation of the whole image, then reduced: the eight reduced images of a turned or
        # mirrored copy are exactly the eight of the original (turning first keeps resampling out of it)
        turned = gray if name is None else gray.transpose(getattr(Image.Transpose, name))
        orientations.append(_as_int(imagehash.phash(turned, hash_size=hash_size)))
    return ImageFacts(
        width=width,
        height=height,
        bytes=len(data),
        format=image_format,
        transparent_pixels=transparent,
        pixels_md5=digest.hexdigest(),
        ahash=_as_int(imagehash.average_hash(gray, hash_size=hash_size)),
        dhash=_as_int(imagehash.dhash(gray, hash_size=hash_size)),
        phash=orientations[0],
        phash_orientations=tuple(orientations),
        hash_bits=hash_size * hash_size,
        vector=vector,
    )
