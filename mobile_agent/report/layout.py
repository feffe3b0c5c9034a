"""Where a report's files go, and writing them: the index page, its ``<name>_files/`` folder beside it with the
pages of episodes and the pictures (each step's screenshot with its action drawn, as a thumbnail and at full size).

Every name written is made here and checked, on its resolved real path, to stay inside the output folder: the files
folder may not be a symbolic link (nor lead elsewhere through one), and every file is written through a temporary
file renamed into place, so a link planted where a picture or page goes is replaced, never followed. Stored
screenshot paths that lead out of the store are refused by the store (``inside_root``); a screenshot that is not a
plain file (a FIFO would hang the report), is too big, or does not decode is skipped with a warning (as
``store.files.readable_image`` does; decoded once here), so an edited store can neither make a report copy an
arbitrary file nor take it down.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import re
import secrets
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from PIL import Image

from mobile_agent.actions import Action
from mobile_agent.errors import UserError
from mobile_agent.report.draw import draw_action, thumbnail_jpeg
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

HTML_SUFFIXES = (".html", ".htm")
FULL_WIDTH = 1080  # the zoomed picture: the stored frame, never enlarged, at most this wide
FULL_QUALITY = 85
MAX_SCREENSHOT_BYTES = 64 * 1024 * 1024  # a stored JPEG is ~0.1-0.5 MB; more is not a screenshot
MAX_PIXELS = 36_000_000  # decoded pixels of a picture that cannot be decoded reduced (a PNG); ~110 MB as RGB
OUTPUT_HINT = "pass -o NAME.html or -o FOLDER (a folder you can write)"
_SAFE_NAME = re.compile(r"[0-9A-Za-z_-]{1,64}")
_PAGE_NAME = re.compile(r"page-\d{3,}\.html")


@dataclass(frozen=True)
class Picture:
    """A step's pictures, as paths relative to the report's files folder (``shots/<episode>/<index>.jpg``)."""

    thumb: str
    full: str


@dataclass(frozen=True)
class ReportLayout:
    index: Path  # the page the command prints: the whole report of a small run or an episode, else the index
    files: Path  # <index stem>_files/: pictures, and the pages of a run too big for one page

    @property
    def files_href(self) -> str:
        """The files folder as a link from the index page (the folder name, URL-quoted)."""
        return quote(self.files.name) + "/"

    @property
    def index_href(self) -> str:
        """The index page as a link from a page inside the files folder."""
        return "../" + quote(self.index.name)

    def page(self, number: int) -> Path:
        return self.files / page_name(number)

    @property
    def real_files(self) -> Path:
        """Where the files folder really is: beside the page, in the page's resolved folder (never a link's target)."""
        return self.index.parent.resolve() / self.files.name

    def inside(self, path: Path) -> Path:
        """``path`` when its resolved real path stays inside the files folder; refuses anything else (a name made
        from store data, or a folder on the way that is a symbolic link leading elsewhere)."""
        base = self.real_files
        if not path.resolve().is_relative_to(base):
            raise UserError(
                f"refusing to write {path}: it leads outside the report folder {base} (a symbolic link?)",
                hint=OUTPUT_HINT,
            )
        return path


def page_name(number: int) -> str:
    return f"page-{number:03d}.html"


def safe_name(key: str) -> str:
    """A file-name component for a store id: the id itself when it is plain, else a digest of it."""
    if _SAFE_NAME.fullmatch(key):
        return key
    return "x" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def report_layout(output: str | Path | None, default_stem: str) -> ReportLayout:
    """Resolve ``-o``: NAME.html (that page), a folder (``FOLDER/<default>.html``, created when new) or nothing
    (``./<default>.html``); the files folder is ``<stem>_files`` beside the page. A path where a file stands in the
    way of a folder, a page or files folder that is a symbolic link, a name the system refuses (too long, a NUL
    byte) is a UserError with a hint."""
    if output is not None and "\0" in str(output):
        raise UserError(f"the output path {str(output)!r} holds a NUL byte", hint=OUTPUT_HINT)
    try:
        return _layout(Path(output) if output is not None else Path(f"{default_stem}.html"), default_stem)
    except OSError as exc:  # a name too long for the file system, a folder that cannot be looked into...
        raise UserError(
            f"cannot write the report to {output}: {exc.strerror or exc}", hint=OUTPUT_HINT
        ) from exc


def _layout(path: Path, default_stem: str) -> ReportLayout:
    if path.is_dir():
        path = path / f"{default_stem}.html"
    elif path.suffix.lower() not in HTML_SUFFIXES:
        if path.exists():
            raise UserError(f"{path} is a file, not a folder or an .html report", hint=OUTPUT_HINT)
        path = path / f"{default_stem}.html"
    files = path.with_name(f"{path.stem}_files")
    for blocking in (*reversed(path.parents), files):
        if blocking.exists() and not blocking.is_dir():
            raise UserError(f"{blocking} is a file, so the report cannot be written there", hint=OUTPUT_HINT)
    for link in (path, files):
        if link.is_symlink():
            raise UserError(
                f"{link} is a symbolic link; a report is written only into real files and folders",
                hint=OUTPUT_HINT,
            )
    if path.exists() and not path.is_file():
        raise UserError(f"{path} exists and is not a file", hint=OUTPUT_HINT)
    return ReportLayout(index=path, files=files)


def prepare(layout: ReportLayout) -> None:
    """Create the folders, and remove the pages an earlier report of the same name left (never other files)."""
    try:
        layout.files.mkdir(parents=True, exist_ok=True)
        layout.inside(layout.files)  # not swapped for a link since report_layout looked
        probe = _unguessable(layout.files / ".write-test")  # no link can be waiting under a name nobody knew
        probe.write_bytes(b"")
        probe.unlink()
        for old in layout.files.iterdir():
            if _PAGE_NAME.fullmatch(old.name) and (old.is_symlink() or old.is_file()):
                old.unlink()  # the name only, never what a link points at
    except OSError as exc:
        raise _unwritable(layout.files, exc) from exc


def write_text(path: Path, text: str) -> None:
    write_file(path, text.encode("utf-8"))


def write_file(path: Path, data: bytes) -> None:
    """``data`` at ``path`` through a temporary file renamed over it: a link (or anything) at ``path`` is
    replaced, never written through, and a reader never sees half a file."""
    temporary = _unguessable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except BaseException as exc:  # a full disk, an unwritable folder, Ctrl-C: no half-written file is left
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _unwritable(path, exc) from exc
        raise


def _unguessable(path: Path) -> Path:
    """A hidden name beside ``path`` that nobody could have known in advance, to write before renaming (short, so
    that any name the file system takes for ``path`` works)."""
    return path.with_name(f".{secrets.token_hex(8)}.part")


def _unwritable(path: Path, exc: OSError) -> UserError:
    return UserError(f"cannot write the report to {path}: {exc.strerror or exc}", hint=OUTPUT_HINT)


class PictureWriter:
    """Writes each step's annotated thumbnail and full-size picture into ``shots/``, a few at a time (Pillow
    decodes, resizes and encodes without holding the GIL). Counts what it wrote and what it skipped."""

    def __init__(self, store: TrajectoryStore, layout: ReportLayout, thumb_width: int) -> None:
        self.store = store
        self.layout = layout
        self.thumb_width = thumb_width
        self.written = 0
        self.skipped = 0
        self._pool = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1))

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> PictureWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def episode(self, episode_id: str, steps: list[StepInfo]) -> dict[int, Picture]:
        """The pictures of ``steps`` by step index; a step without a readable screenshot has none."""
        folder = self.layout.inside(self.layout.files / "shots" / safe_name(episode_id))
        results = list(self._pool.map(lambda step: self._one(folder, step), steps))
        pictures = {
            step.index: picture for step, picture in zip(steps, results, strict=True) if picture is not None
        }
        self.written += len(pictures)
        skipped = [s for s, p in zip(steps, results, strict=True) if p is None and s.screenshot_path]
        self.skipped += len(skipped)
        missing = [s.index for s in skipped if (path := self.store.screenshot_path(s)) and not path.exists()]
        if missing:  # the store's reader says nothing of a missing file; a whole episode of them is news
            log.warning(
                "episode %s: %d screenshot(s) missing under %s (steps %s); skipped",
                printable(episode_id),
                len(missing),
                self.store.root,
                ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else ""),
            )
        return pictures

    def _one(self, folder: Path, step: StepInfo) -> Picture | None:
        what = f"screenshot of step {step.index} of {printable(step.episode_id)}"
        frame = screenshot_frame(self.store.screenshot_path(step), what)
        if frame is None:
            return None
        device_width = step.screen.width if step.screen else None
        try:
            thumb, full = annotated_pair(frame, step.action, self.thumb_width, device_width)
        except (OSError, ValueError) as exc:
            log.warning("the %s could not be drawn (%s); skipped", what, exc)
            return None
        name = f"{step.index:03d}"
        write_file(folder / f"{name}-thumb.jpg", thumb)
        write_file(folder / f"{name}.jpg", full)
        relative = f"shots/{folder.name}/{name}"
        return Picture(thumb=f"{relative}-thumb.jpg", full=f"{relative}.jpg")


def screenshot_frame(path: Path | None, what: str) -> Image.Image | None:
    """The screenshot at ``path`` decoded (at most FULL_WIDTH wide), or None: no path (none recorded, or one
    leading out of the store, refused by ``store.screenshot_path``), a missing file, or, with the warning
    ``store.files.readable_image`` gives, a file that does not decode completely. Decoded once, here."""
    if path is None:
        return None
    try:
        with Image.open(io.BytesIO(_plain_file_bytes(path))) as img:
            if img.format == "JPEG" and img.width > FULL_WIDTH:
                img.draft("RGB", (FULL_WIDTH, FULL_WIDTH * img.height // img.width))
            if img.width * img.height > MAX_PIXELS:
                raise ValueError(f"{img.width}x{img.height} pixels is too big a screenshot")
            return img.convert("RGB")  # a truncated JPEG opens fine and fails only here
    except FileNotFoundError:
        return None
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        log.warning("the %s %s is not a readable image (%s); skipped", what, printable(str(path)), exc)
        return None


def _plain_file_bytes(path: Path) -> bytes:
    """The bytes of the plain file at ``path``; OSError for anything else: a link swapped in (O_NOFOLLOW), a FIFO
    or a device (O_NONBLOCK: opening one does not wait for a writer), a file too big to be a screenshot."""
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    handle = os.open(path, flags)
    with os.fdopen(handle, "rb") as opened:
        info = os.fstat(opened.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a plain file")
        if info.st_size > MAX_SCREENSHOT_BYTES:
            raise OSError(f"{info.st_size} bytes is too big for a screenshot")
        return opened.read(MAX_SCREENSHOT_BYTES + 1)


def printable(text: str) -> str:
    """``text`` as it may be shown in a log line on a terminal: as is when printable, else quoted with its control
    characters escaped (an id or a path from an edited store can hold escape sequences)."""
    return text if text.isprintable() else repr(text)


def annotated_pair(
    frame: Image.Image, action: Action | None, thumb_width: int, device_width: int | None
) -> tuple[bytes, bytes]:
    """The screenshot with its action drawn, at full size (at most FULL_WIDTH) and as a thumbnail of that same
    drawing (the marks scale with the picture, so the thumbnail shows them just as the full size does).
    ``device_width`` is the screen width the action's pixels refer to (default: the picture's own)."""
    device_width = device_width or frame.width
    if frame.width > FULL_WIDTH:
        frame = frame.resize(
            (FULL_WIDTH, max(1, round(frame.height * FULL_WIDTH / frame.width))), Image.Resampling.LANCZOS
        )
    drawn = draw_action(frame, action, scale=frame.width / device_width)
    thumb = drawn
    if drawn.width > thumb_width:  # box-averaging first, then Lanczos: a third of the time of Lanczos alone
        size = (thumb_width, max(1, round(drawn.height * thumb_width / drawn.width)))
        thumb = drawn.resize(size, Image.Resampling.LANCZOS, reducing_gap=1.0)
    full = io.BytesIO()
    drawn.save(full, "JPEG", quality=FULL_QUALITY)  # no optimize pass: it costs more than it saves here
    return thumbnail_jpeg(thumb, thumb_width), full.getvalue()


__all__ = [
    "FULL_WIDTH",
    "Picture",
    "PictureWriter",
    "ReportLayout",
    "annotated_pair",
    "page_name",
    "prepare",
    "report_layout",
    "printable",
    "safe_name",
    "screenshot_frame",
    "write_file",
    "write_text",
]
