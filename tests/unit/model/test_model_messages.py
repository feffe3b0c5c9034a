"""Prompt building: bounded history, images at the working size, hints and corrections, the registry."""

from __future__ import annotations

import base64
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from mobile_agent.actions import Action, Size
from mobile_agent.errors import UserError
from mobile_agent.model.base import HistoryTurn, PromptOptions
from mobile_agent.model.families import FAMILIES, get_family
from mobile_agent.model.images import ImagePolicy, prepare_image, smart_resize


def frame(size: Size = Size(1080, 2400), fmt: str = "PNG") -> bytes:
    img = Image.new("RGB", tuple(size), (240, 240, 240))
    for y in range(0, size.height, 97):
        img.paste((20, 90, 200), (0, y, size.width, y + 30))
    out = io.BytesIO()
    img.save(out, fmt)
    return out.getvalue()


def images_in(messages: list[dict]) -> list[Image.Image]:
    found = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            for part in content:
                if part["type"] == "image_url":
                    url = part["image_url"]["url"]
                    assert url.startswith("data:image/jpeg;base64,")
                    found.append(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
    return found


def all_text(messages: list[dict]) -> str:
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(part.get("text", "") for part in content)
    return "\n".join(out)


@pytest.fixture(scope="module")
def history() -> list[HistoryTurn]:
    jpeg = prepare_image(frame(), get_family("ui-venus-2")).jpeg
    return [
        HistoryTurn(image=jpeg, reply=f"<think>step {i}</think><action>Wait()</action>") for i in range(12)
    ]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_history_is_bounded_and_images_are_working_size_jpegs(name: str, history: list[HistoryTurn]) -> None:
    family = FAMILIES[name]
    options = PromptOptions(max_history_turns=8, history_images=2)
    messages = family.build_messages(
        "给张三发微信说晚上好", history, frame(), options=options, hints="微信的搜索在右上角"
    )
    json.dumps(messages)  # plain JSON, ready for the SDK
    cap = family.max_history_images
    expected_images = 1 + min(2, cap if cap is not None else 2)
    images = images_in(messages)
    assert len(images) == expected_images
    assert images[-1].size == tuple(family.working_size(Size(1080, 2400)))
    text = all_text(messages)
    assert "给张三发微信说晚上好" in text
    assert "微信的搜索在右上角" in text
    assert "step 3" not in text and "step 4" in text and "step 11" in text  # only the newest 8 of 12 turns
    assert sum(m["role"] == "assistant" for m in messages) <= 8


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_correction_goes_after_the_current_screenshot(name: str) -> None:
    family = FAMILIES[name]
    messages = family.build_messages("t", [], frame(), correction="unknown action 'Clik'")
    last = messages[-1]
    assert last["role"] == "user"
    assert last["content"][-1]["type"] == "text"
    assert "could not be parsed: unknown action 'Clik'" in last["content"][-1]["text"]


def test_venus2_keeps_the_reference_turn_structure(history: list[HistoryTurn]) -> None:
    messages = get_family("ui-venus-2").build_messages("task", history[:3], frame())
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[1]["content"] == ""  # oldest kept turn: beyond the two history images
    assert messages[3]["content"][0]["text"] == "History Screenshot:"
    assert messages[-1]["content"][0]["text"].startswith("Current Screenshot:")


def test_zero_history_turns() -> None:
    messages = get_family("ui-venus-2").build_messages(
        "task", [HistoryTurn(None, "r")], frame(), options=PromptOptions(max_history_turns=0)
    )
    assert [m["role"] for m in messages] == ["system", "user"]


def test_qwen25_prompt_states_the_resized_resolution() -> None:
    messages = get_family("qwen2.5-vl").build_messages("t", [], frame())
    assert "The screen's resolution is 672x1484." in messages[0]["content"]


def test_venus15_history_lines_drop_the_conclusion() -> None:
    turn = HistoryTurn(None, "<think>a</think><action>PressBack()</action><conclusion>went back</conclusion>")
    text = all_text(get_family("ui-venus-1.5").build_messages("t", [turn], frame()))
    assert "Step 0: <think>a</think><action>PressBack()</action>" in text
    assert "went back" not in text


def test_prepare_image_resizes_and_passes_through() -> None:
    family = get_family("ui-venus-2")
    prepared = prepare_image(frame(fmt="PNG"), family)
    assert prepared.device_size == Size(1080, 2400)
    assert prepared.size == family.working_size(Size(1080, 2400))
    assert Image.open(io.BytesIO(prepared.jpeg)).format == "JPEG"
    again = prepare_image(prepared.jpeg, family)  # already a JPEG at the working size: same bytes
    assert again.jpeg == prepared.jpeg
    rgba = Image.new("RGBA", (718, 1280), (0, 0, 0, 0))
    assert prepare_image(rgba, family).device_size == Size(718, 1280)
    with pytest.raises(ValueError, match="not an image"):
        prepare_image(b"not an image", family)


def test_geometry_matches_prepared_image() -> None:
    for family in FAMILIES.values():
        prepared = family.prepare(frame(Size(720, 1600), "JPEG"))
        assert prepared.geometry == family.geometry(Size(720, 1600))


@settings(max_examples=200, deadline=None)
@given(
    width=st.integers(30, 5000),
    height=st.integers(30, 5000),
    factor=st.sampled_from([28, 32]),
)
def test_smart_resize_is_idempotent_and_within_bounds(width: int, height: int, factor: int) -> None:
    policy = ImagePolicy(factor=factor, min_pixels=64 * factor * factor, max_pixels=1024 * factor * factor)
    size = smart_resize(Size(width, height), policy)
    assert size.width % factor == 0 and size.height % factor == 0
    assert size.width * size.height <= policy.max_pixels
    assert smart_resize(size, policy) == size


def test_get_family_lists_the_names() -> None:
    assert get_family("UI-Venus-2").name == "ui-venus-2"
    with pytest.raises(UserError) as info:
        get_family("gpt-5")
    assert "ui-venus-2" in (info.value.hint or "") and "autoglm" in (info.value.hint or "")


def test_action_describe_used_for_qwen_history_without_tool_call() -> None:
    turn = HistoryTurn(None, "garbled", Action.tap(1, 2))
    text = all_text(get_family("qwen-vl").build_messages("t", [turn], frame()))
    assert "Step 1: tap(1, 2)" in text
