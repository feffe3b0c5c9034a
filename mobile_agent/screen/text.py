"""On-screen text made comparable: one folded form for every script, width, case and spacing a label can come in.

``fold("確認\u200b付 款")`` and ``fold("确认付款")`` are equal: Unicode NFKC (full-width letters and digits become
ASCII), format characters (zero-width spaces and joiners, bidi marks) and whitespace removed, traditional Chinese
converted to simplified (OpenCC's ``t2s`` tables when the ``opencc`` package is installed), lower case,
punctuation dropped. Amounts are read from the NFKC text before folding removes their punctuation.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

log = logging.getLogger(__name__)

_converter_lock = threading.Lock()
_converter: object | None = None
_converter_loaded = False

# A small fallback table for the labels that matter most, used only when OpenCC is not installed.
_T2S_FALLBACK = str.maketrans(
    "確認發轉賬帳刪訂單購買結視頻語話確繼續記錄聯繫與設置務費總額應額價錢匯號碼傳說請輸無實際銀紅閱鍵權開關這個幫條見點擊選擇為會員產贈領讚評論覆發",
    "确认发转账帐删订单购买结视频语话确继续记录联系与设置务费总额应额价钱汇号码传说请输无实际银红阅键权开关这个帮条见点击选择为会员产赠领赞评论复发",
)


def _t2s(text: str) -> str:
    global _converter, _converter_loaded
    if not _converter_loaded:
        with _converter_lock:
            if not _converter_loaded:
                try:
                    import opencc

                    _converter = opencc.OpenCC("t2s")
                except Exception as exc:  # not installed, or its data missing: fall back, never fail
                    log.info("OpenCC unavailable (%s); using the built-in traditional->simplified table", exc)
                    _converter = None
                _converter_loaded = True
    if _converter is None:
        return text.translate(_T2S_FALLBACK)
    return _converter.convert(text)  # type: ignore[attr-defined]


# Letters of other scripts drawn like Latin ones ("Ρау" in Greek and Cyrillic reads "Pay"): NFKC keeps them apart,
# a person cannot tell them apart, so neither may the gate. The common confusables of Unicode's table for
# Cyrillic and Greek lower and upper case.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһкмтвнАВЕКМНОРСТХУІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhkmtbhABEKMHOPCTXYIJSabeiknoptuxABEZHIKMNOPTYX",
)


def _is_dropped(ch: str) -> bool:
    cat = unicodedata.category(ch)
    # Cf: format characters (U+200B..U+200F, U+2060, U+FEFF ...); Z*: separators; P*: punctuation; S* but
    # currency: symbols such as arrows and emoji that decorate labels.
    return cat == "Cf" or cat[0] in "ZP" or cat in ("Cc", "Sk", "So", "Sm")


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """The comparable form of a label (see the module docstring). Idempotent."""
    if not text:
        return ""
    nfkc = unicodedata.normalize("NFKC", text)
    kept = "".join(ch for ch in nfkc if not ch.isspace() and not _is_dropped(ch))
    return _t2s(kept).translate(_CONFUSABLES).lower()


@lru_cache(maxsize=8192)
def spaced(text: str) -> str:
    """Like ``fold`` but words stay apart (one space between them), for matching English words whole:
    ``spaced("Display  Settings")`` is ``"display settings"``, where ``fold`` would give ``"displaysettings"``."""
    if not text:
        return ""
    nfkc = unicodedata.normalize("NFKC", text)
    out = "".join(
        " " if (ch.isspace() or _is_dropped(ch)) and unicodedata.category(ch) != "Cf" else ch
        for ch in nfkc
        if unicodedata.category(ch) != "Cf"
    )
    return " ".join(_t2s(out).translate(_CONFUSABLES).lower().split())


_AMOUNT_RE = re.compile(
    r"(?:(?P<cur1>[¥$€£]|rmb|cny|usd|hk\$)\s*(?P<num1>\d[\d,]*(?:\.\d{1,2})?))"
    r"|(?:(?P<num2>\d[\d,]*(?:\.\d{1,2})?)\s*(?P<cur2>元|块|rmb|cny|usd|美元|港币))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Amount:
    value: float
    currency: str
    text: str


def amounts(text: str) -> list[Amount]:
    """Money amounts written in ``text``: ¥99.00, ￥ 5, $12.50, 25元, CNY 100 (full-width forms included)."""
    if not text:
        return []
    nfkc = unicodedata.normalize("NFKC", text).replace("\u00a5", "¥")
    found = []
    for m in _AMOUNT_RE.finditer(nfkc):
        number = (m.group("num1") or m.group("num2") or "").replace(",", "")
        currency = (m.group("cur1") or m.group("cur2") or "").lower()
        try:
            found.append(Amount(float(number), currency, m.group(0).strip()))
        except ValueError:
            continue
    return found


def has_amount(text: str) -> bool:
    return bool(amounts(text))


__all__ = ["Amount", "amounts", "fold", "has_amount", "spaced"]
