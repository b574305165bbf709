"""Images written with Pillow for the upload tests: photos with metadata, extra bytes, and decompression bombs."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image, ImageCms, PngImagePlugin

GPS_IFD = 0x8825
ORIENTATION = 0x0112
MAKE = 0x010F


def photo(*, size: tuple[int, int] = (64, 32), orientation: int = 1, icc: bool = False) -> bytes:
    """A JPEG carrying EXIF (camera make, GPS position, orientation), a comment and optionally a colour profile."""
    image = Image.new("RGB", size, (200, 40, 40))
    image.paste((20, 40, 200), (0, 0, size[0] // 2, size[1]))
    exif = Image.Exif()
    exif[MAKE] = "SecretCam 3000"
    exif[ORIENTATION] = orientation
    exif.get_ifd(GPS_IFD).update({1: "N", 2: (52.0, 31.0, 12.0)})
    out = io.BytesIO()
    extra = {"icc_profile": ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()} if icc else {}
    image.save(out, "JPEG", exif=exif, comment=b"patient Jane Roe, ward 4", quality=90, **extra)
    return out.getvalue()


def screenshot(*, text: dict[str, str] | None = None, size: tuple[int, int] = (40, 20)) -> bytes:
    """A PNG with text chunks (``text``) and an EXIF chunk."""
    image = Image.new("RGBA", size, (10, 200, 10, 255))
    info = PngImagePlugin.PngInfo()
    for key, value in (text or {}).items():
        info.add_text(key, value)
    exif = Image.Exif()
    exif[MAKE] = "SecretCam 3000"
    out = io.BytesIO()
    image.save(out, "PNG", pnginfo=info, exif=exif)
    return out.getvalue()


def noise_jpeg(target_bytes: int) -> bytes:
    """A JPEG of random pixels of about ``target_bytes`` (noise does not compress)."""
    import os

    side = 256
    while True:
        image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
        out = io.BytesIO()
        image.save(out, "JPEG", quality=95)
        if out.tell() >= target_bytes:
            return out.getvalue()
        side = int(side * (target_bytes / out.tell()) ** 0.5) + 16


def png_bomb(width: int, height: int, *, rgba: bool = False) -> bytes:
    """A valid one-bit PNG of ``width`` × ``height`` black pixels: a few kilobytes that decode to megapixels
    (``rgba``: 8-bit RGBA zeros instead, four bytes a pixel once decoded), written without decoding anything."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\x00" + b"\x00" * (width * 4 if rgba else (width + 7) // 8)
    packer = zlib.compressobj(9)
    compressed = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8 if rgba else 1, 6 if rgba else 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", compressed) + chunk(b"IEND", b"")


def large_jpeg(width: int, height: int) -> bytes:
    """A smooth JPEG (a gradient, as photos compress) of ``width`` × ``height``."""
    out = io.BytesIO()
    Image.linear_gradient("L").resize((width, height)).convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()
