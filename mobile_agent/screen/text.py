"""On-screen text made comparable: one folded form for every script, width, case and spacing a label can come in.

``fold("確認\u200b付 款")`` and ``fold("确认付款")`` are equal: text read in the order bidi overrides show it, Unicode
NFKC (full-width letters and digits become ASCII), default-ignorable code points (zero-width spaces and joiners, bidi
marks, U+034F, Hangul fillers, variation selectors) and combining marks removed, Latin small capitals read as
letters, Cyrillic and Greek look-alikes read as Latin where they spoof it (never in a word that is Russian or Greek
for real), whitespace removed, traditional Chinese converted to simplified (OpenCC's ``t2s``) and variant
characters to their standard form (``zhconv-rs``), lower case, punctuation dropped. Amounts are read from the NFKC
text before folding removes their punctuation.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from copy import deepcopy
from dataclasses import dataclass
from functools import lru_cache

import regex
from lxml import etree

from mobile_agent.screen.viewtree import ViewTree

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
# Cyrillic and Greek lower and upper case. They are mapped only where they spoof Latin (see ``_unspoof``), so that
# a Russian or Greek word keeps its own letters and can be matched as itself.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһкмтвнАВЕКМНОРСТХУІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    # Armenian and Cherokee letters of the same table
    "օոսհցզՕՍՏᎪᏴᏟᎠᎬᏀᎻᎫᏦᏞᎷᏢᏚᎢᏙᏔᏃ",
    "aeopcyxijsdhkmtbhABEKMHOPCTXYIJSabeiknoptuxABEZHIKMNOPTYXonuhgqOUSABCDEGHJKLMPSTVWZ",
)
_CONFUSABLE_LETTERS = frozenset(chr(c) for c in _CONFUSABLES)
_SPOOF_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")


def _small_capitals() -> dict[int, str]:
    """Latin small capitals (ᴘᴀʏ), dotless i and j: Latin letters NFKC leaves alone, read as the letter they show.
    Derived from the character names of the blocks that hold them, not listed by hand."""
    table: dict[int, str] = {}
    for lo, hi in (
        (0x0130, 0x0250),
        (0x0250, 0x02B0),
        (0x1D00, 0x1D80),
        (0xA720, 0xA800),
        (0x1DF00, 0x1E000),
    ):
        for code in range(lo, hi):
            m = re.fullmatch(
                r"LATIN (?:CAPITAL )?(?:LETTER SMALL CAPITAL|SMALL LETTER DOTLESS) ([A-Z])",
                unicodedata.name(chr(code), ""),
            )
            if m:
                table[code] = m.group(1).lower()
    return table


def _letters_with_strokes() -> dict[int, str]:
    """Latin letters NFD does not take apart (đ, ł, ø, ħ): read as the letter under the stroke, like é is read as e."""
    table: dict[int, str] = {}
    for code in range(0x00C0, 0x0250):
        m = re.fullmatch(
            r"LATIN (?:CAPITAL|SMALL) LETTER ([A-Z]) WITH [A-Z ]+", unicodedata.name(chr(code), "")
        )
        if m and len(unicodedata.normalize("NFD", chr(code))) == 1:
            table[code] = m.group(1).lower()
    return table


def _decimal_digits() -> dict[int, str]:
    """Digits of every script (Arabic-Indic ٥٠٠, Persian ۵۰۰, Devanagari, Thai ...) as ASCII digits: NFKC leaves
    them alone, and an amount written in them is still an amount. From the Unicode decimal property."""
    table: dict[int, str] = {}
    for lo, hi in ((0x0660, 0x1C00), (0xA8D0, 0xAA60), (0xABF0, 0xAC00), (0x104A0, 0x104AA)):
        for code in range(lo, hi):
            value = unicodedata.decimal(chr(code), None)
            if value is not None:
                table[code] = str(value)
    table[0x066B] = "."  # ARABIC DECIMAL SEPARATOR
    table[0x066C] = ","  # ARABIC THOUSANDS SEPARATOR
    return table


_SMALL_CAPITALS = {**_small_capitals(), **_letters_with_strokes()}
DIGITS = _decimal_digits()
# Default-ignorable code points render as nothing (U+200B, U+034F, U+3164 HANGUL FILLER, variation selectors,
# tags ...): Unicode's Default_Ignorable_Code_Point property, as the regex module knows it.
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}+")
_LETTERS = re.compile(r"[^\W\d_]+")
# The bidi controls that reorder what is shown: LRO, RLO open an override; LRE, RLE an embedding; PDF closes one.
_LRE, _RLE, _PDF, _LRO, _RLO = "\u202a\u202b\u202c\u202d\u202e"
_KANA_VOICING = ("\u3099", "\u309a")


def _displayed(text: str) -> str:
    """The text in the order it is shown where bidi overrides reorder it: "\u202etnemyap\u202c" shows "payment"
    (an RLO lays left-to-right letters out right to left; an LRO does the same to right-to-left letters)."""
    if _RLO not in text and _LRO not in text:
        return text
    stack: list[tuple[str, list[str]]] = [("", [])]

    def close() -> None:
        opener, chars = stack.pop()
        run = "".join(chars)
        rtl = sum(unicodedata.bidirectional(ch) in ("R", "AL") for ch in run)
        ltr = sum(unicodedata.bidirectional(ch) == "L" for ch in run)
        if (opener == _RLO and ltr >= rtl) or (opener == _LRO and rtl > ltr):
            run = run[::-1]
        stack[-1][1].append(run)

    for ch in text:
        if ch in (_LRO, _RLO, _LRE, _RLE):
            stack.append((ch, []))
        elif ch == _PDF:
            if len(stack) > 1:
                close()
        elif ch in "\n\r\u2029":  # a paragraph ends every override
            while len(stack) > 1:
                close()
            stack[-1][1].append(ch)
        else:
            stack[-1][1].append(ch)
    while len(stack) > 1:
        close()
    return "".join(stack[0][1])


def _script(ch: str) -> str:
    return unicodedata.name(ch, "").split(" ", 1)[0]


def _unspoof(text: str) -> str:
    """Map Cyrillic and Greek look-alikes to Latin where they spoof it: inside a word that mixes those scripts
    ("Dеlеtе", "Ρау"), and in words made only of look-alikes ("Р.а.у") when nothing on the label is written in
    Cyrillic or Greek for real. "Перевести" and "Удалить" keep their letters."""
    if text.isascii():
        return text
    words = _LETTERS.findall(text)
    genuine = any(
        _script(ch) in _SPOOF_SCRIPTS[1:] and ch not in _CONFUSABLE_LETTERS for w in words for ch in w
    )

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        scripts = {s for s in map(_script, word) if s in _SPOOF_SCRIPTS}
        if len(scripts) > 1 or (not genuine and scripts and "LATIN" not in scripts):
            return word.translate(_CONFUSABLES)
        return word

    return _LETTERS.sub(fix, text)


# Scripts whose combining marks are vowels and tones, not accents (โอนเงิน without its vowels is another word):
# a mark of one of them stays when it follows a letter of its own script.
_SPELLING_MARK_SCRIPTS = frozenset(
    "THAI LAO KHMER MYANMAR TIBETAN SINHALA DEVANAGARI BENGALI GURMUKHI GUJARATI ORIYA TAMIL TELUGU KANNADA "
    "MALAYALAM".split()
)


def _base_letters(text: str) -> str:
    """Combining marks dropped (é → e, ü → u, a combining overlay or grapheme joiner → nothing); the kana voicing
    marks stay (が is not か), and so do the vowel and tone marks of Thai and the Indic scripts, on a letter of their
    own script. Hangul syllables decompose and recompose unchanged."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    kept: list[str] = []
    base_script = ""
    for ch in decomposed:
        if unicodedata.category(ch) not in ("Mn", "Me"):
            kept.append(ch)
            base_script = _script(ch)
        elif ch in _KANA_VOICING or (base_script in _SPELLING_MARK_SCRIPTS and _script(ch) == base_script):
            kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def _variants(text: str) -> str:
    """Variant Chinese characters OpenCC's t2s leaves alone (欵 for 款): MediaWiki's zh-hans table, through the
    maintained ``zhconv-rs`` package when it is installed."""
    global _zhconv, _zhconv_loaded
    if text.isascii():
        return text
    if not _zhconv_loaded:
        try:
            from zhconv_rs import zhconv

            _zhconv = zhconv
        except Exception as exc:  # not installed: t2s alone
            log.info("zhconv-rs unavailable (%s); variant characters are not folded", exc)
            _zhconv = None
        _zhconv_loaded = True
    return _zhconv(text, "zh-hans") if _zhconv is not None else text


_zhconv = None
_zhconv_loaded = False


@lru_cache(maxsize=8192)
def _letters_as_shown(text: str) -> str:
    """The steps ``fold`` and ``spaced`` share: display order, NFKC, default-ignorables and combining marks gone,
    small capitals and spoofing look-alikes read as Latin, traditional and variant characters simplified."""
    shown = unicodedata.normalize("NFKC", _displayed(text)).translate(DIGITS)
    shown = _IGNORABLE.sub("", shown)
    shown = _base_letters(shown).translate(_SMALL_CAPITALS)
    return _variants(_t2s(_unspoof(shown)))


@lru_cache(maxsize=2048)
def plain(text: str) -> str:
    """Running text (a model's thought) made comparable while keeping its words and punctuation apart: NFKC,
    default-ignorables and combining marks removed, lower case. Scripts are left as written."""
    if not text:
        return ""
    return _base_letters(_IGNORABLE.sub("", unicodedata.normalize("NFKC", text).translate(DIGITS))).lower()


# Runs of Unicode spaces (NBSP, U+2007, U+202F, ideographic ...) and of spaces between two Chinese or Japanese
# characters, which separate nothing a reader sees as words ("发 送", "無\u00a0料通話").
_SPACES = regex.compile(r"[\p{Zs}\t]+")
_CJK_GAP = regex.compile(r"(?<=[\p{Han}\p{Hiragana}\p{Katakana}]) (?=[\p{Han}\p{Hiragana}\p{Katakana}])")


@lru_cache(maxsize=8192)
def shown(text: str) -> str:
    """A screen text as a person reads it, words and punctuation kept: in display order (bidi overrides), NFKC (full-width Latin, digits and currency
    signs as ASCII), digits of every script as ASCII, default-ignorables removed, every Unicode space one ASCII
    space (none between two Chinese or Japanese characters), traditional and variant characters simplified. The
    gate reads every text of a screen in this form (``shown_tree``), so a pattern on raw text and ``amounts`` see
    "Pay ¥99.00" in "Ｐａｙ ￥\u200b９９.００"."""
    if text.isascii() and "\t" not in text:
        return text
    out = _IGNORABLE.sub("", unicodedata.normalize("NFKC", _displayed(text)).translate(DIGITS))
    out = _CJK_GAP.sub("", _SPACES.sub(" ", out))
    return out if out.isascii() else _variants(_t2s(out))


def _shown_root(root: etree._Element) -> etree._Element:
    changes = [
        (i, key, read)
        for i, node in enumerate(root.iter(etree.Element))
        for key, value in node.attrib.items()
        if key != "bounds" and not value.isascii() and (read := shown(value)) != value
    ]
    if not changes:
        return root
    copy = deepcopy(root)  # the parsed dump is shared (ViewTree.parse caches it) and never changed
    nodes = list(copy.iter(etree.Element))
    for i, key, read in changes:
        nodes[i].set(key, read)
    return copy


@lru_cache(maxsize=4)
def shown_tree(hierarchy_xml: str | bytes) -> tuple[ViewTree, str | bytes] | None:
    """The dump with every attribute text in its ``shown`` form, and that dump as XML (for rules that read XML);
    the dump itself when nothing changes. None when it is not a dump."""
    tree = ViewTree.parse(hierarchy_xml)
    if tree is None:
        return None
    root = _shown_root(tree.root)
    if root is tree.root:
        return tree, hierarchy_xml
    return ViewTree(root), etree.tostring(root, encoding="unicode")


def _is_dropped(ch: str) -> bool:
    cat = unicodedata.category(ch)
    # Cf: format characters (U+200B..U+200F, U+2060, U+FEFF ...); Z*: separators; P*: punctuation; S* but
    # currency: symbols such as arrows and emoji that decorate labels.
    return cat == "Cf" or cat[0] in "ZP" or cat in ("Cc", "Sk", "So", "Sm")


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """The comparable form of a label (see the module docstring)."""
    if not text:
        return ""
    return "".join(ch for ch in _letters_as_shown(text) if not ch.isspace() and not _is_dropped(ch)).lower()


@lru_cache(maxsize=8192)
def spaced(text: str) -> str:
    """Like ``fold`` but words stay apart (one space between them), for matching English words whole:
    ``spaced("Display  Settings")`` is ``"display settings"``, where ``fold`` would give ``"displaysettings"``."""
    if not text:
        return ""
    out = "".join(
        " " if ch.isspace() or _is_dropped(ch) else ch
        for ch in _letters_as_shown(text)
        if unicodedata.category(ch) != "Cf"
    )
    return " ".join(out.lower().split())


# Every character that ends a line for ``str.splitlines``: \n, \r, \v, \f, U+001C..U+001E, U+0085 (NEL),
# U+2028 (line separator), U+2029 (paragraph separator). A typed one of these submits a field like Enter does.
LINE_BREAKS = frozenset(ch for ch in map(chr, range(0x3000)) if len(f"a{ch}b".splitlines()) == 2)


def has_line_break(text: str) -> bool:
    return any(ch in LINE_BREAKS for ch in text)


def first_line(text: str) -> str:
    lines = text.splitlines()
    return lines[0] if lines else ""


_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f\u2009' ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
# A currency sign is any Unicode currency symbol (¥ $ € £ ₩ ₽ ₹ ...); codes and words are the common ones, "R$",
# "US$" and "HK$" included.
# ISO 4217 codes of the currencies phones pay in most, written before or after the number ("SAR 500", "500 VND").
_CODES = (
    "rmb|cny|usd|eur|gbp|jpy|krw|rub|brl|hkd|twd|inr|chf|vnd|thb|idr|myr|sgd|php|sar|aed|egp|qar|kwd|pln|"
    "czk|huf|sek|nok|dkk|mxn|ars|clp|zar|ngn|kes|pkr|bdt|aud|cad|nzd|ils|uah|kzt"
)
# Local signs and words: Rp (rupiah) and RM (ringgit) before; đ/₫ (đồng), บาท (baht), ر.س (riyal) and the
# riyal, dirham and pound words of Arabic after.
_CURRENCY_BEFORE = rf"\p{{Sc}}|(?<![a-z])(?:[a-z]{{1,2}}\$|{_CODES}|rp\.?|rm)(?![a-z])"
_CURRENCY_AFTER = (
    r"\p{Sc}|元|块|圆|円|원|руб(?:\.|лей|ля|ль)?|美元|港币|港元|日元|欧元|英镑|韩元|卢布|台币|澳元|加元|"
    rf"(?:{_CODES}|đ|đồng|dong|baht|บาท|ر\.?س|ريال|درهم|جنيه|د\.?إ)(?![a-z])"
)
_AMOUNT_RE = regex.compile(
    rf"(?:(?P<cur1>{_CURRENCY_BEFORE})\s*(?P<num1>{_NUMBER}))"
    rf"|(?:(?P<num2>{_NUMBER})\s*(?P<cur2>{_CURRENCY_AFTER}))",
    regex.IGNORECASE | regex.V0,
)
# Capital numerals as cheques and bank slips write them (玖拾玖元整, 壹仟元整, 叁佰元伍角), and plain numerals with 整.
_CN_DIGITS = {
    c: i
    for i, cs in enumerate(
        ("零〇", "壹一", "贰貳二两", "叁參三", "肆四", "伍五", "陆陸六", "柒七", "捌八", "玖九")
    )
    for c in cs
}
_CN_UNITS = {
    "拾": 10,
    "十": 10,
    "佰": 100,
    "百": 100,
    "仟": 1000,
    "千": 1000,
    "万": 10**4,
    "萬": 10**4,
    "亿": 10**8,
    "億": 10**8,
}
_CN_AMOUNT_RE = re.compile(
    r"[零〇壹贰貳叁參肆伍陆陸柒捌玖拾佰仟万萬亿億]*[壹贰貳叁參肆伍陆陸柒捌玖][零〇壹贰貳叁參肆伍陆陸柒捌玖拾佰仟万萬亿億]*[元圆圓]"
    r"(?:[整正]|(?:[零壹贰貳叁參肆伍陆陸柒捌玖][角分])+)?"
    r"|[零〇一二两三四五六七八九十百千万亿]+[元圆]整"
)


@dataclass(frozen=True)
class Amount:
    value: float
    currency: str
    text: str


def _number(text: str) -> float:
    digits = re.sub(r"[\s\u00a0\u202f\u2009']", "", text)
    m = re.fullmatch(r"(.*?)[.,](\d{1,2})", digits)
    if m and re.search(r"[.,]\d{3}$", digits) is None:
        return float(re.sub(r"[.,]", "", m.group(1)) + "." + m.group(2))
    return float(re.sub(r"[.,]", "", digits))


def _cn_value(text: str) -> float:
    total, section, digit = 0, 0, 0
    for ch in re.sub(r"[元圆圓整正].*", "", text):
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif _CN_UNITS.get(ch, 0) >= 10**4:
            total += (section + digit) * _CN_UNITS[ch]
            section, digit = 0, 0
        elif ch in _CN_UNITS:
            section += (digit or 1) * _CN_UNITS[ch]
            digit = 0
    return float(total + section + digit)


def _nfkc(text: str) -> str:
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", _displayed(text)).translate(DIGITS))


def amounts(text: str) -> list[Amount]:
    """Money amounts written in ``text``: ¥99.00, ￥ 5, $12.50, 25元, CNY 100, €99,00, 1 500 ₽, 12,900원, R$ 250,00,
    玖拾玖元整 (full-width forms included)."""
    if not text:
        return []
    nfkc = _nfkc(text)
    found = []
    for m in _AMOUNT_RE.finditer(nfkc):
        currency = (m.group("cur1") or m.group("cur2") or "").lower()
        try:
            found.append(
                Amount(_number(m.group("num1") or m.group("num2") or ""), currency, m.group(0).strip())
            )
        except ValueError:
            continue
    found.extend(Amount(_cn_value(m.group(0)), "元", m.group(0)) for m in _CN_AMOUNT_RE.finditer(nfkc))
    return found


def without_amounts(text: str) -> str:
    """``text`` (NFKC) with its amounts blanked out: "12,900원 결제하기" reads "결제하기", "Pay ¥99.00" reads "Pay"."""
    if not text:
        return ""
    return _CN_AMOUNT_RE.sub(" ", _AMOUNT_RE.sub(" ", _nfkc(text))).strip()


def has_amount(text: str) -> bool:
    return bool(amounts(text))


__all__ = [
    "LINE_BREAKS",
    "Amount",
    "amounts",
    "first_line",
    "fold",
    "has_amount",
    "has_line_break",
    "plain",
    "shown",
    "shown_tree",
    "spaced",
    "without_amounts",
]
