"""Image checking (Pillow): a PNG or JPEG is decoded in full and encoded again, and only the new encoding is kept.

What survives is the picture itself: metadata (EXIF with its GPS position and camera serial, XMP, comments, text
chunks), thumbnails, extra frames and anything hidden inside or appended after the image are gone. The EXIF
orientation is applied to the pixels first, so photos still stand the right way up, and an embedded colour profile
is applied (converted to sRGB) rather than kept. The pixel count is checked from the header before anything is
decoded, so a small file that would unpack into gigabytes (a decompression bomb) is refused cheaply.
"""

from __future__ import annotations

import io
from typing import IO

from PIL import Image, ImageCms, ImageOps

from doctordesk.domain.errors import DomainError
from doctordesk.domain.files.attachments import JPEG, PNG, FileType, refuse
from doctordesk.domain.texts import Text

# 40 megapixels: beyond any phone camera's full-size photo; decoded RGB that is 120 MB, so the checks run two
# at a time (services/chat/file_checking.py).
MAX_PIXELS = 40_000_000
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
