"""The words of consequence beyond Chinese and English, and the ways a name can put its verb: after an amount,
after a qualifier, last (as Japanese, Korean and German do). And the look-alikes that name nothing."""

import pytest

from mobile_agent.agent.lexicon import (
    PASSWORD_HINT,
    id_kind,
    intent_kind,
    is_no,
    is_yes,
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
