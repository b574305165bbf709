"""Image checking (Pillow): a PNG or JPEG is decoded in full and encoded again, and only the new encoding is kept.

What survives is the picture itself: metadata (EXIF with its GPS position and camera serial, XMP, comments, text
chunks), thumbnails, extra frames and anything hidden inside or appended after the image are gone. The EXIF
orientation is applied to the pixels first, so photos still stand the right way up, and an embedded colour profile
is applied (converted to sRGB) rather than kept. The pixel count is checked from the header before anything is
decoded, so a small file that would unpack into gigabytes (a decompression bomb) is refused cheaply.

Each decode has a byte budget (``DECODE_BUDGET_BYTES``): the decoded size, width × height × the bytes Pillow keeps
per pixel of the image's mode, read from the header. A JPEG over it is decoded already reduced (by the decoder's
own 1/2, 1/4 or 1/8 scaling, ``draft``), so its full size is never in memory; any other image over it is refused.
With the checks two at a time (services/chat/file_checking.py), uploads arriving together cannot take more than
about twice the budget each, however many there are (docs/chat.md#files).
"""

from __future__ import annotations

import io
from typing import IO

from PIL import Image, ImageCms, ImageOps

from doctordesk.domain.errors import DomainError
from doctordesk.domain.files.attachments import JPEG, PNG, FileType, refuse
from doctordesk.domain.texts import Text

# 40 megapixels: beyond any phone camera's full-size photo. The budget of one decode: 64 MB is a 16-megapixel
# image at 4 bytes a pixel (a 12-megapixel phone photo, a 4K screenshot with transparency fit whole).
MAX_PIXELS = 40_000_000
DECODE_BUDGET_BYTES = 64_000_000
# The JPEG decoder's scalings (1/1, 1/2, 1/4, 1/8), tried in order until the decoded image fits the budget.
_JPEG_SCALES = (1, 2, 4, 8)
JPEG_QUALITY = 92
ORIENTATION_TAG = 0x0112
_FORMATS = {PNG: "PNG", JPEG: "JPEG"}
_SRGB = ImageCms.createProfile("sRGB")


def reencode_image(stream: IO[bytes], kind: FileType, *, out: IO[bytes]) -> None:
    """Decode the image in ``stream`` and write it to ``out`` encoded again as ``kind``; ValidationFailed when it
    cannot be read or has too many pixels."""
    image_format = _FORMATS[kind]
    stream.seek(0)
    try:
        with Image.open(stream, formats=[image_format]) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise _too_large(width, height)
            _fit_budget(image)
            image.load()
            clean = _normalised(image)
            if kind is JPEG:
                clean.save(out, "JPEG", quality=JPEG_QUALITY)
            else:
                clean.save(out, "PNG")
    except DomainError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        limit = MAX_PIXELS // 1_000_000
        raise refuse(Text("The image has too many pixels (at most {limit} megapixels).", limit=limit)) from None
    except Exception:
        # Truncated data, broken chunks, bad Huffman tables...: a decoder of untrusted bytes fails in many ways,
        # and all mean the image cannot be checked.
        raise refuse(Text("The {label} could not be read: it is damaged or not an image.", label=kind.label)) from None


def pixel_bytes(mode: str) -> int:
    """The bytes Pillow keeps in memory per pixel of ``mode``: one for bilevel, grey and palette images, two for
    16-bit grey, four for everything else (Pillow stores RGB in four bytes too)."""
    if mode in ("1", "L", "P"):
        return 1
    if mode.startswith("I;16"):
        return 2
    return 4


def decoded_bytes(size: tuple[int, int], mode: str) -> int:
    return size[0] * size[1] * pixel_bytes(mode)


def _fit_budget(image: Image.Image) -> None:
    """Make the decode of ``image`` (opened, not yet loaded) fit ``DECODE_BUDGET_BYTES``: a JPEG by decoding it
    scaled down, anything else by refusing it."""
    width, height = image.size
    if decoded_bytes(image.size, image.mode) <= DECODE_BUDGET_BYTES:
        return
    if image.format == "JPEG":
        for scale in _JPEG_SCALES[1:]:
            if decoded_bytes((width // scale, height // scale), image.mode) <= DECODE_BUDGET_BYTES:
                image.draft(image.mode, (width // scale, height // scale))
                break
        if decoded_bytes(image.size, image.mode) <= DECODE_BUDGET_BYTES:
            return
    raise refuse(
        Text(
            "The image is too large to check ({width}×{height}; at most {limit} MB once decoded).",
            width=width, height=height, limit=DECODE_BUDGET_BYTES // 1_000_000,
        )
    )  # fmt: skip


def _too_large(width: int, height: int) -> DomainError:
    return refuse(
        Text(
            "The image has too many pixels ({width}×{height}; at most {limit} megapixels).",
            width=width, height=height, limit=MAX_PIXELS // 1_000_000,
        )
    )  # fmt: skip


def _normalised(image: Image.Image) -> Image.Image:
    """The pixels only: orientation applied, colours in sRGB, no metadata left to be written again."""
    # Transposing copies the pixels: only done when the photo is actually turned.
    turned = image.getexif().get(ORIENTATION_TAG, 1) not in (None, 1)
    upright = ImageOps.exif_transpose(image) if turned else image
    profile = image.info.get("icc_profile")
    if profile and upright.mode in ("RGB", "RGBA", "CMYK"):
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
            output_mode = "RGBA" if upright.mode == "RGBA" else "RGB"
            converted = ImageCms.profileToProfile(upright, source, _SRGB, outputMode=output_mode)
            if converted is not None:
                upright = converted
        except (ImageCms.PyCMSError, OSError, ValueError):
            pass  # an unusable profile is dropped: the colours stay as stored
    # Only what the encoder needs to draw the same picture: a palette's transparent index.
    transparency = upright.info.get("transparency")
    upright.info = {} if transparency is None else {"transparency": transparency}
    return upright
