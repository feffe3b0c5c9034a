"""Action overlays: the mark lands where the action happened, at any screen size."""

from __future__ import annotations

import io

from PIL import Image

from mobile_agent.actions import Action
from mobile_agent.report.draw import annotated_thumbnail, draw_action, jpeg_data_uri, thumbnail_jpeg

GREY = (128, 128, 128)


def _changed(before: Image.Image, after: Image.Image, xy: tuple[int, int]) -> bool:
    return before.getpixel(xy) != after.getpixel(xy)


def test_tap_ring_is_drawn_around_the_point_and_nowhere_far() -> None:
    screen = Image.new("RGB", (1080, 2400), GREY)
    drawn = draw_action(screen, Action.tap(300, 500))
    assert drawn.size == screen.size
    assert _changed(screen, drawn, (300, 500))  # the centre dot
    assert not _changed(screen, drawn, (900, 2000))
    assert screen.getpixel((300, 500)) == GREY  # the input is not modified


def test_swipe_arrow_covers_the_path_from_start_to_end() -> None:
    screen = Image.new("RGB", (720, 1600), GREY)
    drawn = draw_action(screen, Action.swipe(360, 1200, 360, 400))
    for y in (1150, 800, 450):
        assert _changed(screen, drawn, (360, y))
    assert not _changed(screen, drawn, (100, 800))


def test_text_actions_get_a_label_and_no_action_draws_nothing() -> None:
    screen = Image.new("RGB", (1080, 2400), GREY)
    typed = draw_action(screen, Action.type("晚上好"))
    assert typed.tobytes() != screen.tobytes()
    assert draw_action(screen, None).tobytes() == screen.tobytes()
    for action in (Action.press("back"), Action.launch("微信"), Action.finish("done"), Action.wait()):
        assert draw_action(screen, action).tobytes() != screen.tobytes()


def test_thumbnail_is_a_small_jpeg_and_never_enlarged() -> None:
    big = Image.new("RGB", (1080, 2400), GREY)
    data = thumbnail_jpeg(big, width=240)
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "JPEG" and img.size == (240, 533)
    small = Image.new("RGB", (100, 200), GREY)
    with Image.open(io.BytesIO(thumbnail_jpeg(small, width=240))) as img:
        assert img.size == (100, 200)
    assert jpeg_data_uri(b"\xff\xd8").startswith("data:image/jpeg;base64,")


def test_annotated_thumbnail_reads_a_screenshot_file(tmp_path) -> None:
    path = tmp_path / "shot.jpg"
    Image.new("RGB", (1080, 2400), GREY).save(path, "JPEG")
    with Image.open(io.BytesIO(annotated_thumbnail(path, Action.tap(540, 1200), width=360))) as img:
        assert img.size == (360, 800)
        assert img.getpixel((180, 400)) != GREY
