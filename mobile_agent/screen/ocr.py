"""Text on the screenshot around a tap point, read by a CPU OCR model whose weights ship inside its package.

The safety gate needs to know what a tap is about to press where the view tree is blind under the finger (icon-only
buttons, WebView, Flutter, canvas, an empty dump). It reads the pixels instead: ``OcrReader().words_near(frame,
point)`` returns the text runs around the point, nearest first, with boxes in the frame's own pixels.

The engine is RapidOCR 3.x (``pip install 'mobile-agent[ocr]'``: ``rapidocr`` and ``onnxruntime``). Its wheel
carries the PP-OCRv6 small detection and recognition models (Chinese and English in one model, 31 MB). RapidOCR
downloads a model from a hub when it is given no file; this module always gives it the files inside the installed
package, and when they are not there ``ocr_available()`` is False and nothing is fetched. Nothing here opens a
socket (the tests run it with every connection refused), so an offline farm reads the same; onnxruntime's own
usage telemetry is switched off before it is imported (``ORT_DISABLE_TELEMETRY``, see ``_import_onnxruntime``).

How the defaults were chosen (``bench/ocr_cost.py``: the 7 real screens of the project's shared/data/real-screens
scaled to 1080x2400, 83 taps on the clear labels a full-resolution reading finds, and synthetic confirm dialogs;
one onnxruntime thread on the 2-core machine; CPU ms per call):

* Recognition dominates, ~8 ms per 100 px of line width once a line is scaled to the model's 48 px height: a
  short label ~9 ms, a 40-character line ~40 ms. So only the ``MAX_LINES`` (4) runs nearest the point are read:
  the label under the finger, its row, the message or title above a dialog's button. Reading 1 costs 31 ms
  median, 2: 38, 3: 47, 4: 54, 5: 61, 8: 85; every run of the region, 150-250 ms.
* Detection runs on the region scaled so that the screen's width is ``DET_WIDTH`` (360) px, a third of a 1080
  frame; recognition still reads each run's full-resolution pixels. Label under the finger read: 360 px 95 %
  (54 ms), 270 px 89 % (48 ms), 420 px 95 % (61 ms), 540 px 99 % (71 ms), full 1080 px 100 % (207 ms). The
  labels lost at 360 px are faint grey ones (disabled tabs) and text inside pictures.
* The region is the full width, from 12 % of the height above the point to 4 % below (288 and 96 px on 2400):
  a dialog's title sits 250-300 px above its buttons, the label of an icon within 80 px below it. A symmetric
  ±12 % band costs 8-11 ms more and read fewer labels (90 %); ±8 % misses the title. With the defaults the title and
  message of a one-line confirm dialog are read from a tap on its button; with a two-line message the title is
  the fifth run (``max_lines=5``, ``radius_y=(380, 96)``) and the message lines are read instead.

So a gate decision costs 55 ms of CPU median (p90 94 ms, min 30 ms) on a 1080x2400 frame, within the project's
60 ms goal; on a synthetic dialog, whose lines are longer, 71 ms. With one thread the wall time is the CPU time
while a core is free (53 ms median measured at load 2); when the cores are busy it is longer by the wait for one.
``words`` reads a whole frame, detecting at ``WORDS_DET_WIDTH`` (540 px: 97 % of the labels, against 90 % at
360), in 0.6 s of CPU median: for reports and tools, not the hot path.

Threads: each engine uses ONE onnxruntime intra-op thread (``THREADS``). A farm runs one agent loop per phone in one
process on a 2-core machine; with onnxruntime's default (a thread per core, spinning while it waits) every gate
decision would try to take both cores at once, and on this machine two threads were slower than one as soon as
anything else ran. One thread keeps a decision's cost predictable and leaves the other core to the other phones.
Calls into one engine are serialised by a lock (RapidOCR keeps per-call flags on the engine object), so OCR uses at
most one core per engine at a time. ``OcrReader(threads=2)`` builds a second engine for a machine that has cores to
spare.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mobile_agent.errors import MobileAgentError, UserError

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

ENGINE = "rapidocr"
INSTALL_HINT = "pip install 'mobile-agent[ocr]'"

THREADS = 1
"""onnxruntime intra-op threads per engine: one, so that a farm of phones does not oversubscribe the cores."""
DET_WIDTH = 360
"""Detection sees the region scaled so that the screen's full width is this many pixels (never enlarged)."""
ABOVE_FRACTION = 0.12
"""By default the region reaches this fraction of the frame's height above the point (a dialog's title)..."""
BELOW_FRACTION = 0.04
"""...and this fraction below it (the label under an icon)."""
MAX_LINES = 4
"""Default number of detected text runs, nearest the point first, that ``words_near`` recognises."""
WORDS_DET_WIDTH = 540
"""Detection width for ``words`` (a whole frame), where finding faint labels matters more than time."""
MIN_SCORE = 0.5
"""Recognitions scored below this are dropped (RapidOCR's own default)."""

# The files inside the rapidocr package that this module uses, best first. Any other file would be downloaded.
_DET_MODELS = ("PP-OCRv6_det_small.onnx",)
_REC_MODELS = ("PP-OCRv6_rec_small.onnx",)
# Recognition pads every line to at least this width. RapidOCR's default, 320, makes a 2-character label cost as
# much as a 15-character line: measured, a gate decision cost 122 ms median with it and 55 ms with 48, and the
# label under the finger was read in 97 % and 95 % of the taps (one tap of 87).
_REC_MIN_WIDTH = 48


@dataclass(frozen=True)
class OcrWord:
    """One run of text the engine detected (a label, a line, a phrase), not necessarily one word."""

    text: str
    box: tuple[int, int, int, int]
    """Left, top, right, bottom, in the pixels of the image that was passed in."""
    score: float

    @property
    def centre(self) -> tuple[int, int]:
        left, top, right, bottom = self.box
        return (left + right) // 2, (top + bottom) // 2

    def distance_to(self, point: tuple[int, int]) -> float:
        """Pixels from the point to the nearest edge of the box; 0 when the point is inside it."""
        left, top, right, bottom = self.box
        dx = max(left - point[0], 0, point[0] - right)
        dy = max(top - point[1], 0, point[1] - bottom)
        return math.hypot(dx, dy)


def _model_files() -> tuple[Path, Path] | None:
    """The detection and recognition models inside the installed rapidocr package, or None. Raises ImportError."""
    package = importlib.import_module("rapidocr")
    folder = Path(package.__file__).resolve().parent / "models"
    found = []
    for names in (_DET_MODELS, _REC_MODELS):
        path = next((folder / n for n in names if (folder / n).is_file()), None)
        if path is None:
            return None
        found.append(path)
    return found[0], found[1]


def _import_onnxruntime() -> Any:
    """onnxruntime with its usage telemetry off. Its Linux wheels (1.32 here) queue a OneDS event on import, in
    ~/.cache/Microsoft/DeveloperTools/.onnxruntime, for upload to Microsoft's collector: a farm that must work
    offline sends nothing. The variable has to be set before the import; the call covers an earlier import."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    onnxruntime = importlib.import_module("onnxruntime")
    if os.environ["ORT_DISABLE_TELEMETRY"] != "0" and hasattr(onnxruntime, "disable_telemetry_events"):
        onnxruntime.disable_telemetry_events()
    return onnxruntime


@cache
def _probe() -> tuple[str | None, str]:
    """(version, "") when the engine can run here from its own files, else (version or None, why not)."""
    try:
        _import_onnxruntime()
        files = _model_files()
        version = importlib.metadata.version(ENGINE)
    except Exception as exc:  # ImportError, a broken native library (OSError), no metadata: all mean "no"
        return None, f"{type(exc).__name__}: {exc}"
    if files is None:
        return version, f"{ENGINE} {version} has no {_DET_MODELS[0]} / {_REC_MODELS[0]} inside its package"
    return version, ""


def ocr_available() -> bool:
    """True when the OCR extra is installed and its weights are inside the package. Never raises.

    The answer is cached for the process (``_probe.cache_clear()`` forgets it, for tests).
    """
    try:
        return not _probe()[1]
    except Exception:  # pragma: no cover - _probe catches everything itself
        return False


def describe_mode() -> str:
    """One line for ``doctor``: which engine reads blind taps, or what happens without one."""
    version, why_not = _probe()
    if not why_not:
        return f"ocr: {ENGINE} {version} (weights inside the package)"
    if version is not None:
        return f"ocr: not usable ({why_not}) — blind taps in apps that can pay/send/delete are asked"
    return "ocr: not installed — blind taps in apps that can pay/send/delete are asked"


class _Engine:
    """One RapidOCR instance with its models loaded, and the lock that serialises calls into it."""

    def __init__(self, threads: int) -> None:
        det_model, rec_model = _model_files()  # type: ignore[misc]  # the caller checked ocr_available()
        from rapidocr import RapidOCR

        started = time.perf_counter()
        self._ocr = RapidOCR(
            params={
                "Global.log_level": "error",  # it warns on every region without text
                "Global.use_cls": False,  # screens are upright: no 180-degree classifier
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                # Explicit paths: RapidOCR downloads a model only when it is given none.
                "Det.model_path": str(det_model),
                "Rec.model_path": str(rec_model),
                # Callers scale the image for detection themselves; the engine must not enlarge it again.
                "Det.limit_type": "max",
                "Det.limit_side_len": 4096,
                "Rec.rec_img_shape": [3, 48, _REC_MIN_WIDTH],
            }
        )
        self._lock = threading.Lock()
        import numpy as np

        # RapidOCR loads each model on first use: load both now, so that no gate decision pays for it.
        self.detect(np.full((64, 64, 3), 255, np.uint8))
        self.recognise(np.full((48, 96, 3), 255, np.uint8))
        self.construction_s = time.perf_counter() - started
        log.debug(
            "ocr: %s ready in %.0f ms (%s, %s, %d thread)",
            ENGINE,
            self.construction_s * 1000,
            det_model.name,
            rec_model.name,
            threads,
        )

    def detect(self, bgr: Any) -> list[tuple[float, float, float, float]]:
        """Axis-aligned boxes (left, top, right, bottom) of the text runs in a BGR array, in its pixels."""
        try:
            with self._lock:
                out = self._ocr(bgr, use_det=True, use_cls=False, use_rec=False)
        except Exception as exc:
            raise MobileAgentError(f"OCR detection failed: {type(exc).__name__}: {exc}") from exc
        boxes = getattr(out, "boxes", None)
        if boxes is None:
            return []
        return [
            (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 0].max()), float(b[:, 1].max()))
            for b in boxes
        ]

    def recognise(self, bgr_line: Any) -> tuple[str, float]:
        """The text of one line image (BGR) and its score."""
        try:
            with self._lock:
                out = self._ocr(bgr_line, use_det=False, use_cls=False, use_rec=True)
        except Exception as exc:
            raise MobileAgentError(f"OCR recognition failed: {type(exc).__name__}: {exc}") from exc
        texts = getattr(out, "txts", None)
        if not texts:
            return "", 0.0
        return str(texts[0]).strip(), float(out.scores[0])


_engines: dict[int, _Engine] = {}
_engines_lock = threading.Lock()


def _engine(threads: int) -> _Engine:
    """The process's engine for this thread count, built on first use (thread-safe) and reused."""
    if not ocr_available():
        raise UserError(f"the OCR engine is not available ({_probe()[1]})", hint=INSTALL_HINT)
    engine = _engines.get(threads)
    if engine is None:
        with _engines_lock:
            engine = _engines.get(threads)
            if engine is None:
                engine = _engines[threads] = _Engine(threads)
    return engine


class OcrReader:
    """Reads text from screenshots. Cheap to create; the engine behind it is built once per process, when first used.

    Raises ``UserError`` (hint: ``pip install 'mobile-agent[ocr]'``) from ``words_near`` / ``words`` when the OCR
    extra is not installed; check ``ocr_available()`` first to decide without trying. Readers in several threads
    may share one image once it is loaded (``image.load()``): PIL decodes lazily, and that is not thread-safe.
    """

    def __init__(
        self, *, threads: int = THREADS, det_width: int = DET_WIDTH, max_lines: int = MAX_LINES
    ) -> None:
        if not 1 <= threads <= 2:
            raise ValueError("threads must be 1 or 2: more oversubscribes a farm's cores")
        self.threads = threads
        self.det_width = det_width
        self.max_lines = max_lines

    def warm_up(self) -> float:
        """Build the engine now (models loaded); returns how long that took in seconds (0 when it already was)."""
        built = self.threads in _engines
        engine = _engine(self.threads)
        return 0.0 if built else engine.construction_s

    def words_near(
        self,
        image: Image.Image,
        point: tuple[int, int],
        *,
        radius_x: int | None = None,
        radius_y: int | tuple[int, int] | None = None,
        max_lines: int | None = None,
    ) -> list[OcrWord]:
        """The text runs around ``point``, nearest first (distance from the point to each box, 0 inside it).

        Reads one region of the frame only: ``point`` ± ``radius_x`` pixels across (default: the full width) and
        ``radius_y`` pixels up and down, or ``(above, below)`` when a pair is given (default: 12 % of the height
        above the point and 4 % below, see the module's notes). Of the runs detected there, the ``max_lines``
        nearest the point are recognised (default ``MAX_LINES``). Boxes are in ``image``'s pixels.
        """
        engine = _engine(self.threads)
        started = time.perf_counter()
        width, height = image.size
        x = min(max(int(point[0]), 0), width - 1)
        y = min(max(int(point[1]), 0), height - 1)
        rx = width if radius_x is None else max(int(radius_x), 1)
        if radius_y is None:
            above, below = round(height * ABOVE_FRACTION), round(height * BELOW_FRACTION)
        elif isinstance(radius_y, tuple):
            above, below = max(int(radius_y[0]), 1), max(int(radius_y[1]), 1)
        else:
            above = below = max(int(radius_y), 1)
        region = (max(0, x - rx), max(0, y - above), min(width, x + rx + 1), min(height, y + below + 1))
        runs = self._detect(engine, image, region, self.det_width)
        runs.sort(key=lambda box: (_distance(box, (x, y)), _centre_distance(box, (x, y))))
        limit = self.max_lines if max_lines is None else max_lines
        detected = time.perf_counter()
        words = self._recognise(engine, image, runs[: max(limit, 0)])
        words.sort(key=lambda w: (w.distance_to((x, y)), _centre_distance(w.box, (x, y))))
        log.debug(
            "ocr: words_near %s in %.0f ms (detect %.0f ms, %d runs, read %d) %dx%d region of %dx%d",
            (x, y),
            (time.perf_counter() - started) * 1000,
            (detected - started) * 1000,
            len(runs),
            min(len(runs), max(limit, 0)),
            region[2] - region[0],
            region[3] - region[1],
            width,
            height,
        )
        return words

    def words(self, image: Image.Image, *, det_width: int | None = None) -> list[OcrWord]:
        """Every text run of the whole frame, in reading order (top to bottom, then left to right).

        Not for the gate's hot path (~0.6 s on a 1080x2400 frame). Detects at ``det_width``, by default the larger
        of the reader's and ``WORDS_DET_WIDTH``: faint and small labels matter more here than time.
        """
        engine = _engine(self.threads)
        started = time.perf_counter()
        width = det_width if det_width is not None else max(self.det_width, WORDS_DET_WIDTH)
        runs = self._detect(engine, image, (0, 0, image.width, image.height), width)
        words = _reading_order(self._recognise(engine, image, runs))
        log.debug(
            "ocr: words of a %dx%d frame in %.0f ms (%d runs)",
            image.width,
            image.height,
            (time.perf_counter() - started) * 1000,
            len(runs),
        )
        return words

    @staticmethod
    def _detect(
        engine: _Engine, image: Image.Image, region: tuple[int, int, int, int], det_width: int
    ) -> list[tuple[int, int, int, int]]:
        """Boxes of the text runs in ``region`` of ``image``, in the image's pixels, detected with the screen's
        width scaled to ``det_width``."""
        import numpy as np
        from PIL import Image as PILImage

        left, top, right, bottom = region
        if right - left < 2 or bottom - top < 2:
            return []
        crop = image.crop(region).convert("RGB")
        scale = min(1.0, det_width / image.width)
        if scale < 1.0:
            size = (max(1, round(crop.width * scale)), max(1, round(crop.height * scale)))
            crop = crop.resize(size, PILImage.Resampling.BILINEAR)
        bgr = np.ascontiguousarray(np.asarray(crop)[:, :, ::-1])
        boxes = []
        for bl, bt, br, bb in engine.detect(bgr):
            box = (
                max(left, int(bl / scale) + left),
                max(top, int(bt / scale) + top),
                min(right, math.ceil(br / scale) + left),
                min(bottom, math.ceil(bb / scale) + top),
            )
            if box[2] - box[0] >= 2 and box[3] - box[1] >= 2:
                boxes.append(box)
        return boxes

    @staticmethod
    def _recognise(
        engine: _Engine, image: Image.Image, boxes: list[tuple[int, int, int, int]]
    ) -> list[OcrWord]:
        """Recognise each box from the full-resolution pixels; drops empty and low-scored readings."""
        import numpy as np

        words = []
        for box in boxes:
            line = np.ascontiguousarray(np.asarray(image.crop(box).convert("RGB"))[:, :, ::-1])
            text, score = engine.recognise(line)
            if text and score >= MIN_SCORE:
                words.append(OcrWord(text, box, round(score, 4)))
        return words


def _distance(box: tuple[int, int, int, int], point: tuple[int, int]) -> float:
    dx = max(box[0] - point[0], 0, point[0] - box[2])
    dy = max(box[1] - point[1], 0, point[1] - box[3])
    return math.hypot(dx, dy)


def _centre_distance(box: tuple[int, int, int, int], point: tuple[int, int]) -> float:
    return math.hypot((box[0] + box[2]) / 2 - point[0], (box[1] + box[3]) / 2 - point[1])


def _reading_order(words: list[OcrWord]) -> list[OcrWord]:
    """Rows top to bottom (a run joins a row when its centre is within half its height of the row's), each left
    to right."""
    rows: list[list[OcrWord]] = []
    for word in sorted(words, key=lambda w: w.centre[1]):
        half = (word.box[3] - word.box[1]) / 2
        if rows and abs(word.centre[1] - rows[-1][0].centre[1]) <= half:
            rows[-1].append(word)
        else:
            rows.append([word])
    return [w for row in rows for w in sorted(row, key=lambda w: w.box[0])]
