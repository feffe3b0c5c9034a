"""The store's files on disk: screenshots as JPEG and hierarchy XML, written atomically and hashed."""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tempfile
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from mobile_agent.errors import StoreError

log = logging.getLogger(__name__)

JPEG_MAGIC = b"\xff\xd8\xff"
JPEG_QUALITY = 90
TEMP_PREFIX = ".tmp-"


def screenshot_name(index: int) -> str:
    return f"{index:03d}.jpg"


def hierarchy_name(index: int) -> str:
    return f"{index:03d}.xml"


def as_jpeg(image: bytes | Image.Image) -> bytes:
    """JPEG bytes for a screenshot given as JPEG/PNG/... bytes or a Pillow image. JPEG input is kept as is."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        if data.startswith(JPEG_MAGIC):
            return data
        try:
            with Image.open(io.BytesIO(data)) as decoded:
                return _encode_jpeg(decoded)
        except (UnidentifiedImageError, OSError) as exc:
            raise StoreError(f"screenshot is not a readable image ({len(data)} bytes): {exc}") from exc
    if isinstance(image, Image.Image):
        return _encode_jpeg(image)
    raise StoreError(f"screenshot must be bytes or a PIL image, not {type(image).__name__}")


def _encode_jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory and rename, so readers never see half a file.

    No fsync: the store's SQLite runs with synchronous=NORMAL (store/engine.py), durable when the process dies
    (kill -9, a crash) but not on power loss, and the files it points to are kept to the same promise — the OS
    has them once written. An fsync per screenshot cost a 64-phone farm a third of a second at the p95 of
    recording a step (bench/farm_scaling.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def readable_image(path: Path | None, what: str) -> bytes | None:
    """The bytes of the image at ``path`` when it decodes completely; None, with a warning, when it is missing,
    truncated or not an image (a report, an export or an evaluation skips it and goes on)."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            image.load()  # a truncated JPEG opens fine and fails only here
    except FileNotFoundError:
        return None
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        log.warning("the %s %s is not a readable image (%s); skipped", what, path, exc)
        return None
    return data


def inside_root(root: Path, relative: str | None, what: str) -> Path | None:
    """``root / relative`` when it stays inside ``root`` (symlinks followed); None, with a warning, when it leads
    out (an edited or foreign row must not make a report embed, or an export copy, an arbitrary file)."""
    if relative is None:
        return None
    base = root.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        log.warning("the %s path %r points outside the store %s; skipped", what, relative, base)
        return None
    return path


__all__ = [
    "as_jpeg",
    "inside_root",
    "readable_image",
    "hierarchy_name",
    "screenshot_name",
    "sha256_bytes",
    "sha256_file",
    "write_atomic",
]
