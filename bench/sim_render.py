"""Benchmark the simulated phone's screens: render time, PNG / JPEG sizes and encode times, compared with the real
718x1280 screens in /work/shared/data/real-screens, plus in-process tap and cached-screenshot throughput.

    python bench/sim_render.py [--real-dir DIR] [--sizes 718x1280,1080x2400]

Prints one JSON document. Sizes are raw bytes and base64 bytes (what a step sends to a model).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import statistics
import time
from pathlib import Path

from PIL import Image

from mobile_agent.sim.phone.phone import Phone, PhoneConfig

REAL_DIR = Path("/work/shared/data/real-screens")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def _tap_text(phone: Phone, text: str) -> None:
    for node in phone.display.tree().walk():
        if node.shown_text() == text and (node.clickable or node.editable):
            phone.tap(*node.center)
            return
    for node in phone.display.tree().walk():
        if node.shown_text() == text or node.desc == text:
            phone.tap(*node.center)
            return
    raise LookupError(text)


def _screens(phone: Phone):
    """Yield (name, ready) for a tour through the built-in apps."""
    yield "launcher"
    phone.launch("com.tencent.mm")
    yield "wechat_home"
    _tap_text(phone, "张三")
    yield "wechat_chat"
    phone.key("back")
    _tap_text(phone, "发现")
    _tap_text(phone, "朋友圈")
    yield "wechat_moments"
    phone.launch("com.sankuai.meituan")
    yield "meituan_home"
    phone.launch("com.sankuai.meituan")
    _tap_text(phone, "搜索美食、商家")
    phone.input_text("黄焖鸡米饭")
    phone.key("enter")
    yield "meituan_results"
    _tap_text(phone, "杨铭宇黄焖鸡米饭(科技园店)")
    yield "meituan_shop"
    phone.launch("com.eg.android.AlipayGphone")
    yield "alipay_home"
    phone.launch("com.android.settings")
    yield "settings_home"


def measure_sim(width: int, height: int) -> dict:
    phone = Phone(PhoneConfig(width=width, height=height))
    rows = []
    for name in _screens(phone):
        built = phone.display.built()
        start = time.perf_counter()
        image = phone.display.renderer.render(built.tree, built.chrome, black=built.black)
        first_ms = _ms(start)
        start = time.perf_counter()
        phone.display.renderer.render(built.tree, built.chrome, black=built.black)
        warm_ms = _ms(start)
        rows.append(
            {"screen": name, "render_first_ms": first_ms, "render_warm_ms": warm_ms, **_encode(image)}
        )
    return {"size": f"{width}x{height}", "screens": rows, "summary": _summary(rows)}


def _encode(image: Image.Image) -> dict:
    out = {}
    start = time.perf_counter()
    buf = io.BytesIO()
    image.save(buf, "PNG", compress_level=1)
    out["png_encode_ms"] = _ms(start)
    out["png_bytes"] = len(buf.getvalue())
    out["png_base64_bytes"] = len(base64.b64encode(buf.getvalue()))
    start = time.perf_counter()
    buf = io.BytesIO()
    image.convert("RGB").save(buf, "JPEG", quality=80)
    out["jpeg_q80_encode_ms"] = _ms(start)
    out["jpeg_q80_bytes"] = len(buf.getvalue())
    out["jpeg_q80_base64_bytes"] = len(base64.b64encode(buf.getvalue()))
    return out


def measure_real(directory: Path) -> dict:
    rows = []
    for path in sorted(directory.glob("*.png")):
        image = Image.open(path).convert("RGB")
        rows.append({"screen": path.stem[:8], "size": f"{image.width}x{image.height}", **_encode(image)})
    return {"screens": rows, "summary": _summary(rows)}


def _summary(rows: list[dict]) -> dict:
    if not rows:
        return {}
    keys = ["png_base64_bytes", "jpeg_q80_base64_bytes", "png_encode_ms", "jpeg_q80_encode_ms"]
    if "render_first_ms" in rows[0]:
        keys = ["render_first_ms", "render_warm_ms", *keys]
    return {
        k: {
            "median": statistics.median(r[k] for r in rows),
            "min": min(r[k] for r in rows),
            "max": max(r[k] for r in rows),
        }
        for k in keys
    }


def throughput(seconds: float = 1.5) -> dict:
    """In-process rates with the instant profile (no adb, no HTTP): the ceiling the wire side builds on."""
    phone = Phone()
    phone.launch("com.tencent.mm")
    phone.screenshot("jpeg")
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        phone.screenshot("jpeg", quality=80)
        count += 1
    cached_rate = count / (time.perf_counter() - start)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        phone.tap(540, round(phone.config.height * 0.875))  # below the chat rows: a tap that changes nothing
        count += 1
    tap_rate = count / (time.perf_counter() - start)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _tap_text(phone, "通讯录" if count % 2 == 0 else "微信")  # a tab switch: a new screen each time
        phone.screenshot("jpeg", quality=80)
        count += 1
    switch_rate = count / (time.perf_counter() - start)
    return {
        "cached_jpeg_screenshots_per_s": round(cached_rate),
        "taps_per_s_no_change": round(tap_rate),
        "tab_switch_plus_screenshot_per_s": round(switch_rate, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-dir", type=Path, default=REAL_DIR)
    parser.add_argument("--sizes", default="718x1280,1080x2400")
    args = parser.parse_args()
    report = {"sim": [measure_sim(*map(int, s.split("x"))) for s in args.sizes.split(",")]}
    if args.real_dir.exists():
        report["real"] = measure_real(args.real_dir)
    report["throughput"] = throughput()
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
