"""The words of consequence beyond Chinese and English, and the ways a name can put its verb: after an amount,
after a qualifier, last (as Japanese, Korean and German do). And the look-alikes that name nothing."""

import pytest

from mobile_agent.gate.lexicon import (
    PASSWORD_HINT,
    id_kind,
    intent_kind,
    is_no,
    is_settled,
    is_yes,
    symbol_kind,
    topic_kind,
    verb_kind,
)
from mobile_agent.screen.text import fold


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        # Russian, with and without an amount, in upper case, with NBSP and a look-alike-free spelling
        ("Перевести 1\u00a0500\u00a0₽", "transfer"),
        ("ПЕРЕВЕСТИ", "transfer"),
        ("Оплатить 990 ₽", "pay"),
        ("Удалить", "delete"),
        ("Удалить чат", "delete"),
        ("Отправить", "send"),
        ("Купить", "order"),
        ("Позвонить", "call"),
        # German (verb last), French, Spanish, Portuguese
        ("Zahlungspflichtig bestellen", "pay"),
        ("Kostenpflichtig bestellen", "pay"),
        ("Jetzt kaufen", "order"),
        ("Überweisen", "transfer"),
        ("Löschen", "delete"),
        ("Payer 99,00 €", "pay"),
        ("Supprimer", "delete"),
        ("Envoyer", "send"),
        ("Enviar", "send"),
        ("Pagar R$ 250,00", "pay"),
        ("Transferir", "transfer"),
        ("Excluir", "delete"),
        ("Comprar agora", "order"),
        # Arabic, with a right-to-left mark
        ("\u200fإرسال", "send"),
        ("حذف", "delete"),
        # Japanese and Korean: after an amount, with the verb last, as product names for calls
        ("12,900원 결제하기", "pay"),
        ("₩12,900 결제하기", "pay"),
        ("無料通話", "call"),
        ("ビデオ通話", "call"),
        ("무료통화", "call"),
        ("보이스톡", "call"),
        ("ゴミ箱に移動", "delete"),
        ("ご注文を確定する", "order"),
        ("送る", "send"),
        # English with a qualifier before the verb
        ("1-tap buy", "order"),
        ("One-tap buy", "order"),
        ("Quick delete", "delete"),
        ("Join now", "call"),
        ("Move to trash", "delete"),
        ("Clear all chats", "delete"),
        ("Resend", "send"),
        ("Buy again", "order"),
        ("Checkout", "order"),
        ("Proceed to checkout", "order"),
        ("Tip $5", "pay"),
        ("Cash out", "transfer"),
        # a confirming word, then what it confirms
        ("Confirmar transferência", "transfer"),
        ("Bestätigen und bezahlen", "pay"),
        ("Подтвердить перевод", "transfer"),
        ("Continuer vers le paiement", "pay"),
        ("Continue to payment", "pay"),
        # Chinese words a rule-writer forgets
        ("重发", "send"),
        ("重新发送", "send"),
        ("再来一单", "order"),
        ("再次购买", "order"),
        ("送出", "pay"),
        ("赠送", "pay"),
        ("确认借款", "pay"),
        ("共享实时位置", "send"),
        ("发送位置", "send"),
        # folding gaps inside the verb
        ("立即\u034f付款", "pay"),
        ("提\u3164交订单", "order"),
        ("立即付欵", "pay"),
        ("ᴘᴀʏ ɴᴏᴡ", "pay"),
        ("\u202etnemyap mrifnoC\u202c", "pay"),
    ],
)
def test_labels_name_their_kind(label, kind):
    found = verb_kind(label)
    assert found is not None and found[0] == kind, (label, found)


@pytest.mark.parametrize(
    "label",
    [
        "Send feedback about this device",
        "Send feedback",
        "Send to your devices",
        "Send to devices",
        "Clear all",
        "CLEAR ALL",
        "Hide post",
        "Report post",
        "Missed call",
        "Incoming call",
        "Undo send",
        "Don't send",
        "Cancel payment",
        "Apple Pay",
        "微信支付",
        "银行卡转账",
        "已发送",
        "未支付",
        "不删除",
        "最近转账",
        "1000+人付款",
        "10万+人付款",
        "李四 删除",
        "张三 转发",
        "记得转账AA",
        "Step 1: Pay with the app",
        "Allow SMS Backup to send and view SMS messages?",
        "Перевод клиенту Сбера",
        "Bestellung prüfen",
        "Check out this video",
        "Tip: swipe left to go back",
        "Tips",
        "Continue shopping",
        "Accept transfer",
        "Confirm address",
        "OK 3 new messages",
    ],
)
def test_look_alikes_name_no_control(label):
    assert verb_kind(label) is None, (label, verb_kind(label))


@pytest.mark.parametrize(
    "label",
    [
        "Confirmar",
        "Bestätigen",
        "Weiter",
        "Подтвердить",
        "ОК",
        "Continuer",
        "확인",
        "次へ",
        "続ける",
        "はい",
        "Sí",
    ],
)
def test_yes_in_other_languages(label):
    assert is_yes(label) and not is_no(label)


@pytest.mark.parametrize(
    "label", ["Отмена", "Abbrechen", "Annuler", "Cancelar", "Não", "キャンセル", "취소", "Schließen", "Нет"]
)
def test_no_in_other_languages(label):
    assert is_no(label) and not is_yes(label)


@pytest.mark.parametrize(
    ("texts", "kind"),
    [
        (["Transferindo", "R$ 250,00", "para Maria Souza"], "transfer"),
        (["Перевод клиенту Сбера"], "transfer"),
        (["Gesamtsumme: 59,90 €"], "pay"),
        (["本次缴费 玖拾玖元整，是否继续？"], "pay"),
        (["Do you want to uninstall this app?"], "delete"),
        (["Allow Photos to move 3 items to trash?"], "delete"),
        (["3件の写真をゴミ箱に移動しますか？"], "delete"),
        (["Удалить чат с Иваном?"], "delete"),
    ],
)
def test_topics_in_other_languages(texts, kind):
    found = topic_kind(texts)
    assert found is not None and found[0] == kind, (texts, found)


@pytest.mark.parametrize(
    "text",
    [
        "Allow SMS Backup to send and view SMS messages?",
        "Allow Dialer to make and manage phone calls?",
        "允许“短信备份”发送和查看短信吗？",
    ],
)
def test_a_permission_request_names_no_topic(text):
    assert topic_kind([text]) is None


@pytest.mark.parametrize(
    ("thought", "kind"),
    [
        ("購入ボタンを押して注文を確定します。", "order"),
        ("「送信」をタップします", "send"),
        ("결제 버튼을 누릅니다", "pay"),
        ("송금 버튼을 탭합니다", "transfer"),
        ("Ich werde auf Bestellen tippen", "order"),
        ("Je vais appuyer sur Payer", "pay"),
        ("Voy a tocar Enviar", "send"),
        ("Vou clicar em Transferir", "transfer"),
        ("Нажать «Оплатить»", "pay"),
        ("Нажимаю «Удалить чат»", "delete"),
    ],
)
def test_the_models_words_in_other_languages(thought, kind):
    found = intent_kind(thought)
    assert found is not None and found[0] == kind, (thought, found)


@pytest.mark.parametrize(
    "thought",
    [
        "購入履歴を見る",
        "設定を開きます",
        "Ich öffne die Einstellungen",
        "Je vais ouvrir la liste",
        "Открою настройки",
    ],
)
def test_harmless_thoughts_in_other_languages(thought):
    assert intent_kind(thought) is None


@pytest.mark.parametrize(
    "hint",
    [
        "暗証番号",
        "暗証番号（4桁）",
        "비밀번호 6자리",
        "Mot de passe",
        "Contraseña",
        "PIN-код",
        "Passwort",
        "Senha",
    ],
)
def test_pin_words_in_other_languages(hint):
    assert PASSWORD_HINT.search(fold(hint))


def test_a_clear_all_id_says_no_more_than_its_label():
    assert id_kind(["com.google.android.apps.nexuslauncher:id/clear_all"]) is None
    assert id_kind(["com.example:id/clear_all_messages"]) is not None
    assert id_kind(["com.example:id/delete_all"]) == ("delete", "com.example:id/delete_all")


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        # Vietnamese (accents folded, đ read as d)
        ("Chuyển tiền", "transfer"),
        ("Xác nhận chuyển tiền", "transfer"),
        ("Thanh toán 250.000đ", "pay"),
        ("Mua ngay", "order"),
        ("Đặt hàng", "order"),
        ("Xóa", "delete"),
        ("Gửi", "send"),
        ("Gọi", "call"),
        # Indonesian and Malay
        ("Bayar", "pay"),
        ("Bayar Sekarang", "pay"),
        ("Konfirmasi pembayaran", "pay"),
        ("Beli Sekarang", "order"),
        ("Kirim Uang", "transfer"),
        ("Transfer Sekarang", "transfer"),
        ("Hapus", "delete"),
        ("Padam", "delete"),
        ("Kirim", "send"),
        # Thai (no spaces; vowel marks kept)
        ("โอนเงิน", "transfer"),
        ("ยืนยันการโอน", "transfer"),
        ("ชำระเงิน", "pay"),
        ("ยืนยันการชำระเงิน", "pay"),
        ("ซื้อเลย", "order"),
        ("ลบ", "delete"),
        ("โทร", "call"),
        ("โทรออก", "call"),
        # Arabic, with and without the article
        ("تحويل", "transfer"),
        ("تأكيد التحويل", "transfer"),
        ("ادفع الآن", "pay"),
        # Korean buy and sell orders, with the words that may stand before them
        ("매수", "order"),
        ("전량 매도", "order"),
        ("시장가 매도", "order"),
        ("지정가 매수", "order"),
        ("매도하기", "order"),
        ("7,302,000원 매도", "order"),
        # German: the transfer released, the mandate given
        ("Jetzt überweisen", "transfer"),
        ("Überweisung freigeben", "transfer"),
        ("Mandat erteilen", "pay"),
        ("SEPA-Lastschriftmandat erteilen", "pay"),
        ("Authorize mandate", "pay"),
        # abbreviations, donations, quick reposts, rides, trials that renew
        ("Xfer", "transfer"),
        ("XFER", "transfer"),
        ("Xfer funds", "transfer"),
        ("一起捐", "pay"),
        ("立即捐款", "pay"),
        ("我要捐", "pay"),
        ("捐10元", "pay"),
        ("开通自动续费", "pay"),
        ("快转", "post"),
        ("快速转发", "post"),
        ("Request UberX", "order"),
        ("Request a ride", "order"),
        ("Swipe to request UberX", "order"),
        ("Start my free month", "order"),
        ("Start free trial", "order"),
        ("Try 1 month free trial", "order"),
    ],
)
def test_more_languages_and_words_name_their_kind(label, kind):
    found = verb_kind(label)
    assert found is not None and found[0] == kind, (label, found)


@pytest.mark.parametrize(
    "label",
    [
        "Gói cước",  # a data plan: gói folds like gọi (call)
        "Mùa hè",  # summer: mùa folds like mua (buy)
        "Bạn bè",  # friends: bạn folds like bán (sell)
        "โทรศัพท์",  # telephone: the Phone app's name
        "เบอร์โทร",  # a phone number's caption
        "捐赠记录",
        "我的捐赠",
        "最近删除",
        "Recently deleted",
        "Request money",  # asks someone else to pay
        "Request to join",
        "Metode pembayaran",
        "Riwayat transaksi",
        "💰",
        "❌",
        "🛍️",
        "➤",
        "In order to provide you with services",
    ],
)
def test_more_look_alikes_name_no_control(label):
    assert verb_kind(label) is None, (label, verb_kind(label))


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("🗑️", "delete"),
        ("🗑", "delete"),
        ("🗑️ 3", "delete"),
        ("📞", "call"),
        ("☎️", "call"),
        ("☎", "call"),
        ("💸", "pay"),
        ("✉️", "send"),
        ("📤", "send"),
        ("🛒", "order"),
    ],
)
def test_a_pictograph_names_what_it_shows(label, kind):
    assert symbol_kind(label) is not None and symbol_kind(label)[0] == kind
    assert verb_kind(label) == (kind, label)


@pytest.mark.parametrize(
    "label",
    [
        "Xác nhận",
        "Tiếp tục",
        "Đồng ý",
        "Lanjut",
        "Lanjutkan",
        "Konfirmasi",
        "Teruskan",
        "ยืนยัน",
        "ตกลง",
        "ถัดไป",
        "تأكيد",
        "موافق",
        "متابعة",
        "Freigeben",
        "Ausführen",
        "Agree and Continue",
        "Accept & continue",
        "Akzeptieren und weiter",
        "Đồng ý và tiếp tục",
    ],
)
def test_yes_in_more_languages(label):
    assert is_yes(label) and not is_no(label)


@pytest.mark.parametrize(
    "label",
    [
        "Hủy",
        "Đóng",
        "Batal",
        "Kembali",
        "ยกเลิก",
        "ย้อนกลับ",
        "إلغاء",
        "رجوع",
        "Agree and Cancel",
        "Continue and",
    ],
)
def test_no_or_nothing_in_more_languages(label):
    assert not is_yes(label)


@pytest.mark.parametrize(
    ("texts", "kind"),
    [
        (["Chuyển khoản", "Người nhận: Trần B"], "transfer"),
        (["Số tiền: 500.000đ"], "pay"),
        (["Tagihan listrik"], "pay"),
        (["تحويل أموال"], "transfer"),
        (["رسوم التحويل"], "transfer"),
        (["SEPA-Lastschriftmandat"], "pay"),
        (["Netflix will be able to charge your PayPal account for future purchases"], "pay"),
        (["€10.99/month after"], "pay"),
        (["Auto-renews at $4.99"], "pay"),
        (["善款由中国社会福利基金会接收"], "pay"),
        (["开通连续包月"], "pay"),
        (["จำนวนเงิน 1,500.00 บาท"], "pay"),
        (["โทรหา 081 234 5678 ใช่ไหม"], "call"),
    ],
)
def test_topics_in_more_languages(texts, kind):
    found = topic_kind(texts)
    assert found is not None and found[0] == kind, (texts, found)


@pytest.mark.parametrize(
    "text",
    [
        "支付成功",
        "转账成功",
        "已支付",
        "¥200.00 已转出",
        "收款",
        "收到一笔转账",
        "Payment sent",
        "You sent $40.00 to Alex",
        "Maria Lopez sent you $250.00",
        "You received $50.00",
        "You've got money",
        "Added to your PayPal balance",
        "Thank you for your order",
    ],
)
def test_what_already_happened_names_no_topic(text):
    assert is_settled(text)
    assert topic_kind([text]) is None, (text, topic_kind([text]))


@pytest.mark.parametrize(
    "text",
    [
        "支付成功后将自动发货",  # after paying it ships: the payment is still to come
        "确认支付 ¥36.50",
        "Send payment to Alex",
        "You will receive a receipt",
        "预计2小时内到账",
    ],
)
def test_what_is_still_to_come_is_not_settled(text):
    assert not is_settled(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("已完成填写，确认支付 ¥99.00？", "pay"),
        ("Payment sent. Send another $40.00 to Alex?", "send"),
        ("转账成功。再转一笔？确认转账 ¥200", "transfer"),
    ],
)
def test_a_report_of_the_past_does_not_hide_what_comes_next(text, kind):
    found = topic_kind([text])
    assert found is not None and found[0] == kind, (text, found)
