"""Cheaper history screenshots (PromptOptions.history_image_scale / _quality): the default sends each earlier frame
exactly as the model saw it; the option sends smaller frames; each frame is encoded once per way of sending it,
and a turn with another image is never answered with the old image's frame."""

from __future__ import annotations

import base64
import io
from dataclasses import replace

import pytest
from PIL import Image

from mobile_agent.actions import Size
from mobile_agent.model import base
from mobile_agent.model.base import HistoryTurn, PromptOptions
from mobile_agent.model.families import get_family
from mobile_agent.model.images import history_frame, prepare_image

FAMILIES = ("ui-venus-2", "ui-tars")


def screen(shade: int, size: Size = Size(1080, 2400)) -> bytes:
    img = Image.new("RGB", tuple(size), (240, 240, 240))
    for y in range(0, size.height, 97):
        img.paste((shade, 90, 200), (0, y, size.width, y + 30))
        img.paste((20, shade, 60), (y % size.width, y, y % size.width + 200, y + 60))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def image_urls(messages: list[dict]) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in messages
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]


def decoded(url: str) -> bytes:
    assert url.startswith("data:image/jpeg;base64,")
    return base64.b64decode(url.split(",", 1)[1])


def turns(family, shades=(10, 80, 160)) -> list[HistoryTurn]:
    return [HistoryTurn(prepare_image(screen(s), family).jpeg, f"reply {s}") for s in shades]


@pytest.mark.parametrize("name", FAMILIES)
def test_by_default_history_frames_are_sent_as_the_model_saw_them(name: str) -> None:
    family = get_family(name)
    history = turns(family)
    urls = image_urls(family.build_messages("task", history, screen(200)))
    assert [decoded(u) for u in urls[:-1]] == [t.image for t in history[-2:]]


@pytest.mark.parametrize("name", FAMILIES)
def test_cheaper_history_frames_are_smaller_and_the_current_one_is_not_touched(name: str) -> None:
    family = get_family(name)
    history, current = turns(family), screen(200)
    default = family.build_messages("task", history, current)
    options = PromptOptions(history_image_scale=0.5, history_image_quality=50)
    cheaper = family.build_messages("task", history, current, options=options)
    full, small = image_urls(default), image_urls(cheaper)
    assert len(full) == len(small) == 3
    assert small[-1] == full[-1]  # the screen the model acts on is never made cheaper
    policy = family.image_policy
    for before, after in zip(full[:-1], small[:-1], strict=True):
        big, little = Image.open(io.BytesIO(decoded(before))), Image.open(io.BytesIO(decoded(after)))
        assert len(after) < len(before) / 2
        assert abs(little.width - big.width / 2) <= 1 and abs(little.height - big.height / 2) <= 1
        assert little.width * little.height >= policy.min_pixels  # never below what the server would upscale


def test_a_tiny_scale_stops_at_the_family_pixel_floor() -> None:
    family = get_family("ui-venus-2")
    jpeg = prepare_image(screen(30), family).jpeg
    frame = Image.open(io.BytesIO(jpeg))
    tiny = Image.open(io.BytesIO(history_frame(jpeg, family.image_policy, scale=0.05)))
    assert family.image_policy.min_pixels * 0.98 <= tiny.width * tiny.height < frame.width * frame.height / 10


def test_a_lower_quality_alone_keeps_the_size_and_costs_fewer_bytes() -> None:
    family = get_family("ui-venus-2")
    jpeg = prepare_image(screen(30), family).jpeg
    lower = history_frame(jpeg, family.image_policy, quality=30)
    assert len(lower) < len(jpeg)
    assert Image.open(io.BytesIO(lower)).size == Image.open(io.BytesIO(jpeg)).size


def test_a_frame_is_never_made_bigger_and_non_images_pass_as_they_are() -> None:
    family = get_family("ui-venus-2")
    jpeg = prepare_image(screen(30), family).jpeg
    # A re-encode with more bytes than the frame itself is not sent.
    assert history_frame(jpeg, family.image_policy, quality=95) == jpeg
    assert history_frame(b"<marker>", family.image_policy, scale=0.5) == b"<marker>"
    assert history_frame(jpeg, family.image_policy) is jpeg


def test_each_history_frame_is_encoded_once_and_a_changed_frame_is_never_stale(monkeypatch) -> None:
    family = get_family("ui-venus-2")
    calls: list[bytes] = []
    real = base.history_frame

    def counting(jpeg, *args):
        calls.append(jpeg)
        return real(jpeg, *args)

    monkeypatch.setattr(base, "history_frame", counting)
    options = PromptOptions(history_image_scale=0.5)
    history = turns(family)
    first = family.build_messages("task", history, screen(200), options=options)
    again = family.build_messages("task", history, screen(210), options=options)
    assert len(calls) == 2  # the two frames sent, each encoded once over both steps
    assert image_urls(first)[:-1] == image_urls(again)[:-1]

    changed = [*history[:-1], replace(history[-1], image=prepare_image(screen(250), family).jpeg)]
    after = image_urls(family.build_messages("task", changed, screen(200), options=options))
    expected = history_frame(changed[-1].image, family.image_policy, 0.5, None)
    assert decoded(after[-2]) == expected != decoded(image_urls(first)[-2])

    other = image_urls(family.build_messages("task", history, screen(200), options=PromptOptions()))
    # Other options: their own frames, not the cheaper ones kept for these turns.
    assert [decoded(u) for u in other[:-1]] == [t.image for t in history[-2:]]


@pytest.mark.parametrize(
    "kwargs", [{"history_image_scale": 0}, {"history_image_scale": 1.5}, {"history_image_quality": 0}]
)
def test_bad_history_frame_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        PromptOptions(**kwargs)


def test_only_the_turns_sent_with_an_image_keep_their_encoded_image() -> None:
    family = get_family("ui-venus-2")
    history: list[HistoryTurn] = []
    for shade in (10, 60, 110, 160):
        history.append(HistoryTurn(prepare_image(screen(shade), family).jpeg, f"reply {shade}"))
        family.build_messages("task", history, screen(200))
    assert [bool(turn._sent) for turn in history] == [False, False, True, True]
