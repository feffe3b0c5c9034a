"""Bytes each step sends to the model, and the CPU cost of preparing and parsing a step. Prints JSON.

    python bench/model_bytes.py [/work/shared/data/real-screens] [--repeat 20]

For every family: the size of the chat request that ``build_messages`` produces for each real screenshot (JSON as
sent, no history) against the full-resolution PNG as base64, which is what most peer runtimes send per step.
Then the CPU milliseconds of ``prepare_image``, ``build_messages`` and ``parse`` for a 1080x2400 frame.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import statistics
import sys
import time
from pathlib import Path

from PIL import Image

from mobile_agent.actions import Action, Size
from mobile_agent.model.base import HistoryTurn
from mobile_agent.model.families import DEFAULT_FAMILY, FAMILIES
from mobile_agent.model.images import prepare_image

DEFAULT_FOLDER = Path("/work/shared/data/real-screens")
GOAL_RATIO = 0.20
TASK = "给张三发微信说晚上好"


def request_bytes(messages: list[dict]) -> int:
    return len(json.dumps(messages, ensure_ascii=False).encode())


def cpu_ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return round(statistics.median(samples), 2)


def bytes_per_family(frames: list[tuple[str, bytes]]) -> dict:
    out = {}
    for name, family in FAMILIES.items():
        rows = []
        for frame_name, png in frames:
            png_b64 = len(base64.b64encode(png))
            sent = request_bytes(family.build_messages(TASK, [], png))
            rows.append(
                {
                    "frame": frame_name,
                    "png_base64": png_b64,
                    "request": sent,
                    "ratio": round(sent / png_b64, 3),
                }
            )
        total_png = sum(r["png_base64"] for r in rows)
        total_sent = sum(r["request"] for r in rows)
        out[name] = {
            "working_size": list(family.working_size(Size(*Image.open(io.BytesIO(frames[0][1])).size))),
            "frames": rows,
            "total_png_base64": total_png,
            "total_request": total_sent,
            "ratio": round(total_sent / total_png, 3),
            "worst_frame_ratio": max(r["ratio"] for r in rows),
        }
    return out


def with_history(frames: list[tuple[str, bytes]]) -> dict:
    """A step with a full default history (8 turns, 2 history images) for the default family."""
    family = FAMILIES[DEFAULT_FAMILY]
    jpeg = prepare_image(frames[0][1], family).jpeg
    history = [HistoryTurn(jpeg, f"<think>step {i}</think><action>Wait()</action>") for i in range(20)]
    sent = request_bytes(family.build_messages(TASK, history, frames[1 % len(frames)][1]))
    return {"family": DEFAULT_FAMILY, "history_turns_given": 20, "request": sent}


def cpu_costs(frame_png: bytes, repeat: int) -> dict:
    big = Image.open(io.BytesIO(frame_png)).convert("RGB").resize((1080, 2400), Image.Resampling.BICUBIC)
    encoded = {}
    for fmt in ("PNG", "JPEG"):
        buf = io.BytesIO()
        big.save(buf, fmt, **({"quality": 80} if fmt == "JPEG" else {}))
        encoded[fmt] = buf.getvalue()
    out = {}
    for name, family in FAMILIES.items():
        geometry = family.geometry(Size(1080, 2400))
        reply = family.format(Action.tap(540, 1200), geometry, thought="点击搜索框，然后输入联系人的名字")
        out[name] = {
            "prepare_image_from_png_bytes": cpu_ms(lambda f=family: prepare_image(encoded["PNG"], f), repeat),
            "prepare_image_from_jpeg_bytes": cpu_ms(
                lambda f=family: prepare_image(encoded["JPEG"], f), repeat
            ),
            "prepare_image_from_pil": cpu_ms(lambda f=family: prepare_image(big, f), repeat),
            "build_messages_from_jpeg_bytes": cpu_ms(
                lambda f=family: f.build_messages(TASK, [], encoded["JPEG"]), repeat
            ),
            "parse": round(
                cpu_ms(lambda f=family, g=geometry, r=reply: [f.parse(r, g) for _ in range(100)], repeat)
                / 100,
                4,
            ),
        }
    out["_frame"] = {
        "size": [1080, 2400],
        "png_bytes": len(encoded["PNG"]),
        "jpeg_q80_bytes": len(encoded["JPEG"]),
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folder", nargs="?", type=Path, default=DEFAULT_FOLDER, help="folder of PNG screenshots"
    )
    parser.add_argument("--repeat", type=int, default=15, help="timing repetitions (median is reported)")
    args = parser.parse_args(argv)
    files = sorted(args.folder.glob("*.png"))
    if not files:
        print(json.dumps({"error": f"no PNG screenshots in {args.folder}"}))
        return 2
    frames = [(f.stem[:8], f.read_bytes()) for f in files]
    sizes = bytes_per_family(frames)
    report = {
        "folder": str(args.folder),
        "frames": len(frames),
        "goal_ratio": GOAL_RATIO,
        "bytes_per_step": sizes,
        "meets_goal": {name: row["ratio"] <= GOAL_RATIO for name, row in sizes.items()},
        "with_history": with_history(frames),
        "cpu_ms_at_1080x2400": cpu_costs(frames[0][1], args.repeat),
    }
    json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
