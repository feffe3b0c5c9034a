"""The OCR that reads the screen around a blind tap: real phone screens, a synthetic 1080x2400 frame, no network.

Tests that need the engine skip when the OCR extra is not installed (CI installs `.[test]` only); the test of its
absence always runs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import unicodedata
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from mobile_agent.errors import UserError
from mobile_agent.screen import ocr

SCREENS = Path(__file__).resolve().parents[2] / "data" / "real_screens"
ACTION_SHEET = SCREENS / "b07c500b65336f687eeb3f7ee7ae3eed.png"  # 下载 分享 删除 … under icon-only buttons
DETAILS_DIALOG = SCREENS / "a47e1b25d9939b3fc76e9be1acd7bdb6.png"  # 文件详情 … 281KB … 取消
QUARK_HOME = SCREENS / "5842fa4411caad04cbcd67e514c2b426.png"  # "Quark" logo, AI 写作

CJK_FONTS = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
)
LATIN_FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", *CJK_FONTS)

needs_engine = pytest.mark.skipif(
    not ocr.ocr_available(), reason=f"the OCR extra is not installed ({ocr.INSTALL_HINT})"
)


def _norm(text: str) -> str:
    """Compare as a person reads: full-width and half-width punctuation alike, spaces ignored."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def _find(words: list[ocr.OcrWord], text: str) -> ocr.OcrWord:
    for word in words:
        if _norm(text) in _norm(word.text):
            return word
    raise AssertionError(f"{text!r} not read; read {[w.text for w in words]}")


def _font(paths: tuple[str, ...], size: int) -> ImageFont.FreeTypeFont | None:
    for path in paths:
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return None


def _refuse_network(*_args, **_kwargs):
    raise AssertionError("the OCR tried to use the network")


@pytest.fixture(scope="module")
def reader():
    """The engine built and used with every socket connection refused: it runs from the package's own files."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _refuse_network)
        mp.setattr(socket.socket, "connect_ex", _refuse_network)
        mp.setattr(socket, "create_connection", _refuse_network)
        ocr._engines.clear()  # build it here, under the refusal, even if another test built one before
        reading = ocr.OcrReader()
        assert reading.warm_up() > 0
        yield reading


# --- without the engine -------------------------------------------------------------------------------------------


@pytest.fixture
def forget_probe():
    ocr._probe.cache_clear()
    yield
    ocr._probe.cache_clear()


def test_without_the_engine_it_says_so_and_refuses_only_when_used(monkeypatch, forget_probe):
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # `import rapidocr` now raises ImportError
    assert ocr.ocr_available() is False
    assert ocr.describe_mode().startswith("ocr: not installed")
    reader = ocr.OcrReader()  # creating a reader is fine
    frame = Image.new("RGB", (1080, 2400), "white")
    with pytest.raises(UserError) as raised:
        reader.words_near(frame, (540, 1200))
    assert raised.value.hint == "pip install 'mobile-agent[ocr]'"
    with pytest.raises(UserError):
        reader.words(frame)


def test_importing_the_module_loads_no_engine():
    code = (
        "import sys, mobile_agent.screen.ocr; print([m in sys.modules for m in ('rapidocr', 'numpy', 'cv2')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[False, False, False]"


def test_threads_are_limited():
    with pytest.raises(ValueError):
        ocr.OcrReader(threads=4)


# --- with the engine: real phone screens --------------------------------------------------------------------------


@needs_engine
def test_onnxruntime_telemetry_is_off(tmp_path):
    """onnxruntime's Linux wheels queue usage events under ~/.cache/Microsoft for upload; using the OCR must not."""
    code = (
        "from PIL import Image; from mobile_agent.screen import ocr; "
        "ocr.OcrReader().words_near(Image.new('RGB', (1080, 2400), 'white'), (540, 1200))"
    )
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env |= {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    assert not (tmp_path / ".cache" / "Microsoft").exists()


@needs_engine
def test_describe_mode_names_the_engine_and_where_its_weights_are(forget_probe):
    mode = ocr.describe_mode()
    assert mode.startswith("ocr: rapidocr 3.") and mode.endswith("(weights inside the package)")


@needs_engine
def test_the_label_under_an_icon_only_button_is_read(reader):
    frame = Image.open(ACTION_SHEET)
    point = (359, 1037)  # the trash-can icon; its label 删除 is printed below it
    words = reader.words_near(frame, point)
    delete = _find(words[:2], "删除")
    left, top, right, bottom = delete.box
    assert left <= point[0] <= right and 0 < top - point[1] < 60, delete.box
    assert delete.score > 0.9


@needs_engine
def test_boxes_are_in_the_frames_pixels_whatever_the_crop(reader):
    frame = Image.open(ACTION_SHEET)
    label = (359, 1075)  # where a person sees 删除 on this frame
    boxes = [
        _find(reader.words_near(frame, (359, 1037)), "删除").box,  # the region around the icon
        _find(reader.words_near(frame, (359, 1150)), "删除").box,  # a region 113 px lower
        _find(reader.words_near(frame, (359, 1037), radius_x=120, radius_y=80), "删除").box,  # a small region
    ]
    for left, top, right, bottom in boxes:
        assert left <= label[0] <= right and top <= label[1] <= bottom, boxes
    for box in boxes[1:]:  # detection varies by a few pixels with the crop; an offset error would be 100+
        assert all(abs(a - b) <= 12 for a, b in zip(boxes[0], box, strict=True)), boxes


@needs_engine
def test_words_come_nearest_first(reader):
    frame = Image.open(ACTION_SHEET)
    point = (359, 1037)
    words = reader.words_near(frame, point)
    assert len(words) >= 2
    distances = [w.distance_to(point) for w in words]
    assert distances == sorted(distances)


@needs_engine
def test_a_dialog_button_and_an_english_size_are_read(reader):
    frame = Image.open(DETAILS_DIALOG)
    cancel = reader.words_near(frame, (359, 1013))[0]  # the dialog's 取消 button
    assert _norm(cancel.text) == "取消"
    assert cancel.distance_to((359, 1013)) == 0
    size = _find(reader.words_near(frame, (150, 637)), "281KB")
    assert size.distance_to((150, 637)) < 20


@needs_engine
def test_english_and_mixed_labels_are_read(reader):
    frame = Image.open(QUARK_HOME)
    assert _norm(reader.words_near(frame, (360, 365))[0].text) == "Quark"
    assert _norm(reader.words_near(frame, (358, 703))[0].text) == "AI写作"


@needs_engine
def test_a_whole_frame_is_read_in_reading_order(reader):
    words = reader.words(Image.open(DETAILS_DIALOG))
    texts = [_norm(w.text) for w in words]
    title, cancel = _find(words, "文件详情"), _find(words, "取消")
    assert _find(words, "281KB")
    assert words.index(title) < words.index(cancel)
    assert any(t.startswith("文件ID:32c52190") for t in texts), texts
    for word in words:
        left, top, right, bottom = word.box
        assert 0 <= left < right <= 718 and 0 <= top < bottom <= 1280


@needs_engine
def test_one_engine_serves_concurrent_readers(reader):
    frame = Image.open(ACTION_SHEET)
    frame.load()  # a PIL image decodes lazily, and that is not thread-safe: share only loaded images
    results: list[list[str]] = []

    def read() -> None:
        results.append([w.text for w in ocr.OcrReader().words_near(frame, (359, 1037))])

    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and results[0] == results[1] == results[2]
    assert len(ocr._engines) == 1


# --- with the engine: a synthetic 1080x2400 frame -----------------------------------------------------------------


def _payment_frame() -> tuple[Image.Image, dict[str, tuple[int, int]]]:
    """A Material-style confirm dialog (title, one message line, 取消 / 确认支付 ¥99.00) and a chat "Send" button,
    drawn at a 1080x2400 phone's sizes (2.75 px per dp). Points are the buttons' centres; CJK only with a CJK font."""
    frame = Image.new("RGB", (1080, 2400), (120, 120, 120))
    draw = ImageDraw.Draw(frame)
    latin = _font(LATIN_FONTS, 44)
    points = {}
    if latin is not None:
        draw.rounded_rectangle((30, 2210, 820, 2320), radius=55, fill="white")
        draw.rounded_rectangle((850, 2210, 1050, 2320), radius=55, fill=(0, 122, 255))
        draw.text((950, 2265), "Send", font=latin, fill="white", anchor="mm")
        points["send"] = (950, 2265)
    title, body = _font(CJK_FONTS, 66), _font(CJK_FONTS, 38)
    if title is not None and body is not None:
        draw.rounded_rectangle((111, 952, 969, 1447), radius=77, fill=(250, 248, 252))
        draw.text((177, 1062), "确认支付", font=title, fill=(28, 27, 31), anchor="lm")
        draw.text((177, 1177), "向 张三 付款 ¥99.00", font=body, fill=(73, 69, 79), anchor="lm")
        draw.text((403, 1326), "取消", font=body, fill=(103, 80, 164), anchor="mm")
        draw.rounded_rectangle((503, 1271, 903, 1381), radius=55, fill=(103, 80, 164))
        draw.text((703, 1326), "确认支付 ¥99.00", font=body, fill="white", anchor="mm")
        points["confirm"] = (703, 1326)
    return frame, points


@needs_engine
def test_send_is_read_back_from_a_1080x2400_frame(reader):
    frame, points = _payment_frame()
    if "send" not in points:
        pytest.skip("no TrueType font to draw with")
    send = reader.words_near(frame, points["send"])[0]
    assert send.text == "Send" and send.distance_to(points["send"]) == 0


@needs_engine
def test_a_payment_button_and_its_dialog_title_are_both_read(reader):
    frame, points = _payment_frame()
    if "confirm" not in points:
        pytest.skip("no CJK font installed (fonts-wqy-microhei or fonts-noto-cjk)")
    words = reader.words_near(frame, points["confirm"])
    button = words[0]
    assert _norm(button.text) == _norm("确认支付 ¥99.00")
    left, top, right, bottom = button.box
    assert left <= 703 <= right and top <= 1326 <= bottom
    texts = [_norm(w.text) for w in words]
    assert "确认支付" in texts, texts  # the title, ~260 px above the button
    assert _norm("向 张三 付款 ¥99.00") in texts
