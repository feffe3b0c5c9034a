"""Text folding (mobile_agent/screen/text.py): each way a label can be written so that it shows the same word
folds to the same form, and words of other scripts keep their own letters."""

import pytest

from mobile_agent.screen.text import (
    amounts,
    first_line,
    fold,
    has_line_break,
    plain,
    shown,
    shown_tree,
    spaced,
    without_amounts,
)


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        # Latin small capitals, alone and mixed with ordinary letters
        ("ᴘᴀʏ ɴᴏᴡ", "paynow"),
        ("ꜱᴇɴᴅ", "send"),
        ("Pᴀy", "pay"),
        ("ᴅᴇʟᴇᴛᴇ", "delete"),
        # bidi overrides: read as displayed
        ("\u202etnemyap mrifnoC\u202c", "confirmpayment"),
        ("Confirm \u202etnemyap\u202c", "confirmpayment"),
        ("\u202etnemyap mrifnoC", "confirmpayment"),  # never closed
        # nested: only the inner run is reversed
        ("\u202d\u202etnemyap\u202c mrifnoC\u202c", "paymentmrifnoc"),
        ("\u202eإرسال\u202c", fold("إرسال")),  # right-to-left letters under an RLO show as they are
        # default-ignorable code points of every kind
        ("立即\u034f付款", "立即付款"),
        ("提\u3164交订单", "提交订单"),
        ("提\uffa0交订单", "提交订单"),
        ("提\u115f交订单", "提交订单"),
        ("删\ufeff除", "删除"),
        ("删\ufe0f除", "删除"),
        ("删\U000e0041除", "删除"),
        ("确认\u2060支付", "确认支付"),
        ("Pa\u00adyment", "payment"),
        ("Se\u180end", "send"),
        # combining marks
        ("P\u0301a\u0308y", "pay"),
        ("S\u0338end", "send"),
        ("Löschen", "loschen"),
        # variant and compatibility characters
        ("立即付欵", "立即付款"),
        ("⽀付", "支付"),
        ("確認轉帳", "确认转帐"),
        ("ＰＡＹ　ＮＯＷ", "paynow"),
        ("𝗦𝗲𝗻𝗱", "send"),
        # Cyrillic and Greek letters spoofing Latin ones
        ("Ρау nоw", "paynow"),
        ("Dеlеtе аccount", "deleteaccount"),
        ("Р.а.у", "pay"),
        ("ᏢᎪY", "pay"),  # Cherokee
        ("Sеոd", "send"),  # Cyrillic е, Armenian ո
    ],
)
def test_what_shows_the_same_folds_the_same(written, shown):
    assert fold(written) == shown


@pytest.mark.parametrize(
    "word", ["Перевести", "Удалить", "Оплатить", "Отправить", "Купить", "Позвонить", "Καλημέρα"]
)
def test_words_that_are_russian_or_greek_for_real_keep_their_letters(word):
    folded = fold(word)
    assert folded == word.lower().replace("έ", "ε")
    assert spaced(f"{word} 1 500 ₽").startswith(folded)


def test_kana_voicing_and_hangul_survive():
    assert fold("ガ") != fold("カ")
    assert fold("결제하기") == "결제하기"
    assert plain("購入ボタンを押して") == "購入ボタンを押して"


@pytest.mark.parametrize("sep", ["\n", "\r", "\r\n", "\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c"])
def test_every_line_separator_is_a_line_break(sep):
    assert has_line_break(f"see you{sep}")
    assert first_line(f"see you{sep}later") == "see you"


@pytest.mark.parametrize("text", ["see you", "a\tb", "a\u3000b", "a\u00a0b", ""])
def test_spaces_and_tabs_are_not_line_breaks(text):
    assert not has_line_break(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("¥99.00", 99.0),
        ("￥ 5", 5.0),
        ("Pay $12.50", 12.5),
        ("25元", 25.0),
        ("CNY 100", 100.0),
        ("€99,00", 99.0),
        ("59,90 €", 59.9),
        ("1\u00a0500\u00a0₽", 1500.0),
        ("1\u202f500,00 ₽", 1500.0),
        ("12,900원", 12900.0),
        ("₩12,900", 12900.0),
        ("R$ 250,00", 250.0),
        ("US$6.99/month", 6.99),
        ("$1,299.00", 1299.0),
        ("1.299,00 €", 1299.0),
        ("3,300円", 3300.0),
        ("₹499", 499.0),
        ("玖拾玖元整", 99.0),
        ("壹仟元整", 1000.0),
        ("壹万贰仟叁佰元整", 12300.0),
        ("九十九元整", 99.0),
        # đồng, baht, rupiah, ringgit, riyal: local signs and words, before or after, and ISO codes
        ("Số tiền: 500.000đ", 500000.0),
        ("500.000 ₫", 500000.0),
        ("1.000.000 VND", 1000000.0),
        ("จำนวนเงิน 1,500.00 บาท", 1500.0),
        ("฿350", 350.0),
        ("Total Rp 249.000", 249000.0),
        ("Rp249.000", 249000.0),
        ("Jumlah RM 45.90", 45.9),
        ("SAR 300", 300.0),
        ("1.250,00 €", 1250.0),
        ("12,00 EUR", 12.0),
        # Arabic-Indic and Persian digits, with the Arabic decimal separator
        ("المبلغ: ٥٠٠ ر.س", 500.0),
        ("١٢٠٫٥٠ ر.س", 120.5),
        ("۲۵۰ ريال", 250.0),
        ("७५० ₹", 750.0),
    ],
)
def test_amounts_in_every_currency_and_numbering(text, value):
    found = amounts(text)
    assert found and found[0].value == pytest.approx(value), (text, found)


@pytest.mark.parametrize(
    "text",
    [
        "1000+人付款",
        "中国移动 SIM 1",
        "16M subscribers",
        "10:24",
        "三元里",
        "Visa ····4242",
        "Pay$",
        "30000抖币",
        "5000 rpm",
        "Try 7 days",
        "Top 5 apps",
        "Rpm 300",
        "Pen 2",
        "٣ صور",  # "3 photos": a count in Arabic digits
    ],
)
def test_counts_times_and_names_are_not_amounts(text):
    assert amounts(text) == []


def test_amounts_are_blanked_out_of_a_label():
    assert without_amounts("12,900원 결제하기") == "결제하기"
    assert without_amounts("Pay ¥99.00") == "Pay"
    assert without_amounts("Перевести 1\u00a0500\u00a0₽") == "Перевести"
    assert fold(without_amounts("本次缴费 玖拾玖元整，是否继续？")) == "本次缴费是否继续"


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("٥٠٠", "500"),  # Arabic-Indic digits
        ("۵۰۰", "500"),  # Persian
        ("๕๐๐", "500"),  # Thai
        ("५००", "500"),  # Devanagari
        ("Chuyển tiền", "chuyentien"),
        ("Đặt hàng", "dathang"),  # đ has no decomposition; read as the d under the stroke
        ("Łódź", "lodz"),
        ("Øre", "ore"),
    ],
)
def test_digits_of_every_script_and_struck_letters_fold_to_ascii(written, shown):
    assert fold(written) == shown
    assert spaced(written).replace(" ", "") == shown


def test_thai_and_indic_vowel_marks_stay_on_their_own_letters():
    # without its vowel marks ยืนยัน (confirm) would read ยนยน, and กลับ (back) would contain ลบ (delete)
    assert fold("ยืนยัน") == "ยืนยัน"
    assert "ลบ" not in fold("กลับ")
    assert fold("नमस्ते") == "नमस्ते"
    # a Thai mark hung on a Latin letter is no part of it: it is dropped like any stray mark
    assert fold("Pa\u0e31y") == "pay"


def test_plain_reads_other_digits_as_ascii():
    assert plain("ادفع ٥٠ ر.س") == "ادفع 50 ر.س"


@pytest.mark.parametrize(
    "written, read",
    [
        ("Ｐａｙ ￥９９.００", "Pay ¥99.00"),
        ("Share\u00a0your\u2007phone\u202fnumber?", "Share your phone number?"),
        ("Start\u200bmy free\u3000month", "Startmy free month"),
        ("無\u00a0料通話", "无料通话"),
        ("发 送", "发送"),
        ("塞錢進紅包", "塞钱进红包"),
        ("\u202etnemyap mrifnoC\u202c", "Confirm payment"),
    ],
)
def test_shown_is_the_text_a_person_reads_with_its_words_apart(written, read):
    assert shown(written) == read


@pytest.mark.parametrize("text", ["Hello world", "송금 하기", "Pay now", "Кнопка Оплатить"])
def test_shown_keeps_words_that_are_words_apart(text):
    assert shown(text) == text


@pytest.mark.parametrize(
    "text, value",
    [("€\u200b99,00", 99.0), ("¥\u200b6", 6.0), ("￥\u00a0９９", 99.0), ("¥\u2060200.00", 200.0)],
)
def test_invisible_characters_and_odd_spaces_inside_an_amount_keep_it_an_amount(text, value):
    assert [a.value for a in amounts(text)] == [value]


def test_no_amount_appears_from_invisible_characters():
    assert amounts("第\u200b6页") == [] and amounts("\u200b6 min") == []


def test_shown_tree_folds_every_attribute_and_leaves_a_plain_dump_alone():
    plain_dump = '<hierarchy><node text="Pay" content-desc="" bounds="[0,0][10,10]"/></hierarchy>'
    tree, xml = shown_tree(plain_dump)
    assert xml is plain_dump and tree.elements[0].text == "Pay"
    odd = '<hierarchy><node text="塞錢\u200b進紅包" content-desc="Ｐａｙ" hint="¥\u00a06" bounds="[0,0][10,10]"/></hierarchy>'
    tree, xml = shown_tree(odd)
    e = tree.elements[0]
    assert (e.text, e.content_desc, e.node.get("hint")) == ("塞钱进红包", "Pay", "¥ 6")
    assert "塞钱进红包" in xml
    assert shown_tree("not a dump") is None
