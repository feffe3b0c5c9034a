"""The words of consequence, in Chinese and English: verbs that name a consequential control, topics that say
what a yes in a dialog would do, yes and no labels, the model's "I am about to pay" phrasing, link schemes.

Chinese is matched on the folded form (no spaces, simplified, lower case), English on the spaced form with word
starts (see :mod:`mobile_agent.screen.text`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from mobile_agent.gate.lexicon_languages import (
    CONFIRM_WORDS,
    FOLDED_LEADS,
    FOLDED_TOPICS,
    FOLDED_VERBS,
    NO_WORDS,
    SPACED_TOPICS,
    SPACED_VERBS,
    YES_WORDS,
)
from mobile_agent.screen.text import fold, plain, shown, spaced, without_amounts

# share: handing personal data or control to a third party (a phone number to a mini-program, contacts to an app,
# full control of the device, a login on another device); security: lowering the device's own protection (the screen
# lock removed, Find My Device off, installing unknown apps allowed); sensitive: consequential, but no word says
# which kind.
KINDS = ("pay", "transfer", "order", "delete", "send", "post", "call", "share", "security", "sensitive")
MONEY_KINDS = frozenset({"pay", "transfer", "order"})

# Chinese on the folded form (no spaces, simplified, lower case); English on the spaced form with word starts.
_ZH_VERBS: dict[str, str] = {
    "transfer": r"转账|转帐|汇款|转给|转出|提现",
    "pay": r"支付|付款|付钱|买单|结账|结帐|收银台|确认收货|免密|自动扣款|代扣|立即充值|充值|缴费|打赏|赞赏|续费|赠送|送出|送礼物|借款|"
    r"捐款|捐赠|捐助|捐钱|捐(?=$|\d)|自动续费|自动扣费|免密支付|签约代扣|"
    # money put into something that carries it away: 塞钱进红包 (a red packet), 存钱 is not listed (a savings box)
    r"塞钱",
    "order": r"下单|提交订单|确认订单|立即购买|马上购买|立即抢购|抢购|立即预订|确认预订|立即兑换|买入|卖出|立即申购|申购|加购并结算|拼单|开通(?!权限|通知|定位|蓝牙)|再来一单|再买一单|再次购买|再买一次|叫车|立即叫车|确认叫车",
    "delete": r"删除|清空|清除|清理|移除|卸载|注销|解绑|撤回|粉碎|恢复出厂",
    "send": r"发送|发出|传送|拍一拍|邀请|重发|重新发送|(共享|分享|发送)(实时)?位置",
    "post": r"发表|发布|发帖|发动态|发朋友圈|发微博|投稿|转发|快转|快速转发|分享到朋友圈",
    "call": r"呼叫|拨打|拨号|通话|打电话|回拨|视频聊天|语音聊天|接听",
}
for _kind, _pattern in FOLDED_VERBS.items():
    _ZH_VERBS[_kind] += "|" + _pattern
_EN_VERBS: dict[str, str] = {
    "transfer": r"\btransfer|\bsend ?money\b|\bwire\b|\bwithdraw|\bremit|\bcash out\b|\bxfer\b|\btrf\b",
    "pay": r"\bpay(?!ment methods?\b|pal\b)|\btop ?up\b|\bconfirm payment|\bauto-?pay|\bauto-?debit|\btip( now)?$|"
    r"\bdonate\b|\brecharge\b|\bsend (a )?gift\b",
    "order": r"\bbuy\b|\bbuy ?now\b|\bplace ?(your )?order|\bsubmit ?order|\bpurchase|\border now|\bbook now|\bsubscribe\b|\bsell\b|\breorder\b|\border again\b|\bbuy again\b|"
    r"\bcheckout\b|\bproceed to checkout|\bpre-?order\b|\bplace (a )?bid\b|\bbid now\b|\bconfirm bid\b|"
    r"\b(reserve|rent|book) now\b|"
    # a ride is ordered by requesting it; a trial that renews by itself is a subscription
    r"\brequest (an? )?(uber\w*|lyft|rides?|cars?|taxis?|trips?|pickups?|drivers?)\b|\bbook (a |this )?(ride|taxi|cab)\b|"
    r"\b(start|try|get|begin) (my |your |the |a )?(\d+ (day|week|month)s? )?free (trial|month|week|period)\b|"
    r"\bstart (my |your )?(membership|subscription|premium)\b",
    "delete": r"\bdelete|\bremove\b|\berase|\bwipe|\bclear (all )?(chats?|history|data|messages|conversations?|records|photos|contacts)\b|\bempty trash|\buninstall|\bunsend|\breset\b|\bmove to (the )?trash|\bmove to bin\b",
    "send": r"\bsend\b|\bsend it\b|\bnudge\b|\binvite\b|\bresend\b|\bsend again\b|\bretry sending\b",
    "post": r"\bpost\b|\btweet\b|\bpublish|\bshare now\b|\brepost|\bretweet",
    "call": r"\bcall\b|\bdial\b|\bvideo call|\bvoice call|\bfacetime|\banswer\b|\bjoin (now|(the )?(meeting|call))\b|\bask to join\b",
}
for _kind, _pattern in SPACED_VERBS.items():
    _EN_VERBS[_kind] += "|" + _pattern
# Nouns for places to go: removed before the verbs are looked for ("查看订单" is not an order).
_ZH_PLACES = re.compile(
    r"最近删除|回收站|支付宝|支付方式|支付设置|支付管理|支付安全|付款方式|付款码|收付款|收款码|转账记录|交易记录|账单|订单详情|查看订单|"
    r"[\u4e00-\u9fff]{1,6}详情|我的订单|全部订单|订单列表|待付款|待支付|退款|通话记录|最近通话|发送记录|评论区|查看评论|全部评论|发布会|"
    r"捐赠记录|捐款记录|我的捐赠|发送验证码|获取验证码|重新发送验证码|重发验证码|清除搜索|清空搜索|搜索历史|清除缓存|清理缓存|缓存|删除线|回复我的|充值记录|结算规则|买入规则|发现|消息免打扰|"
    r"\d+\+?万?\+?人(付款|购买|已买|已购|收货|想要|评价)|允许.{0,24}?(发送和查看短信|拨打电话和管理通话)|未接来电|未接电话|"
    # what will not happen names nothing: "清理缓存不会删除你的作品", "将清理 1.2GB 缓存"
    r"(不会|并不会|不|无需|不用|不影响|不再)(删除|清除|清空|移除|清理)|(清理|清除|清空).{0,12}缓存"
)
_EN_PLACES = re.compile(
    r"\b(payment|pay|order|call|transfer|purchase|post)s? ?(history|details|methods?|settings|records?|list|log|status|options|menu)\b|"
    r"\bview (orders?|details|comments)\b|\bmy orders?\b|\bcall log\b|\bclear search|\bsearch history|\bclear cache|"
    r"\b(re)?send (the )?(verification )?code\b|\bsend (us )?feedback\b|\bsend to (your |my )?(own )?devices?\b|"
    r"\b(missed|incoming|recent|last) calls?\b|\brecently deleted\b|\bin order (to|for|that)\b|"
    r"\b(won ?t|will not|does not|doesn ?t|do not|never) (be )?(delete|remove|erase|clear|charge)[sd]?\b|"
    # a permission request names what the app may do, not what this tap does
    r"\ballow\b.{0,60}? to (send and view|view and send|make and manage|read and send|send and receive)\b.*"
)


def _folded_words(words: str) -> str:
    """Space-separated words as a regex alternation of their folded forms (the form labels are matched in)."""
    return "|".join(re.escape(fold(w)) for w in dict.fromkeys(words.split()))


# A generic yes: the whole label is one of these (folded).
_YES = re.compile(
    r"(确定|确认|好|好的|是|是的|对|继续|提交|同意|完成|下一步|立即|马上|我确认|确认无误|确认提交|确定提交|同意并继续|"
    r"接受|允许|授权|ok|okay|yes|y|confirm|continue|submit|agree|accept|done|next|proceed|go|allow|sure|"
    r"√|✓|✔|"
    # "Clear all" stores nothing by itself (notifications, recents); under "Delete all messages?" it deletes
    r"clearall|" + _folded_words(YES_WORDS) + ")"
)
_NO = re.compile(
    r"(取消|返回|关闭|暂不|以后再说|稍后|我再想想|再想想|不了|不用了|否|不同意|拒绝|放弃|跳过|知道了|我知道了|"
    r"cancel|back|close|notnow|no|nothanks|later|dismiss|skip|gotit|×|x|" + _folded_words(NO_WORDS) + ")"
)
# Words in a dialog or on a screen that say what a yes there would do.
_ZH_TOPICS: dict[str, str] = {
    "transfer": r"转账|转帐|汇款|收款人|收款方|对方账户|提现",
    "pay": r"支付|付款|付钱|实付|应付|需付|合计|总计|收银台|支付密码|交易密码|免密|确认收货|充值",
    "order": r"下单|提交订单|确认订单|订单金额|购买|买入|卖出|委托|申购|预订|兑换|开通",
    "delete": r"删除|清空|清除|清理|移除|卸载|注销|解绑|撤回|不可恢复|无法恢复|恢复出厂",
    "send": r"发送|发给|发送给|转发给|分享给|添加群成员|邀请.{0,4}(加入|进群|入群)|发起群聊|拉.{0,3}进群",
    "post": r"发表|发布|公开|投稿",
    "call": r"呼叫|拨打|通话|来电|接听|打电话|打给",
}
_ZH_TOPICS["pay"] += (
    r"|缴费|扣款|扣除|付费|借款|充值|打赏|捐款|善款|捐赠|自动续费|连续包月|到期自动|免密支付|代扣|发红包|塞钱"
)
for _kind, _pattern in FOLDED_TOPICS.items():
    _ZH_TOPICS[_kind] += "|" + _pattern
_EN_TOPICS: dict[str, str] = {
    "transfer": r"\btransfer|\bsend money|\brecipient|\bwithdraw|\bwire\b",
    "pay": r"\bpay|\bpayment|\bcharge|\btotal\b|\bcheckout|\bpin\b|\bbilling agreement|\bauto[- ]?renew|"
    r"\bfuture (purchases|payments)|\brecurring (payments?|charges?|billing)|\b(month|year|week|mo|yr) after\b|"
    r"\bafter (your |the )?(free )?trial\b|\bdirect debit|\bdonat(e|ion)",
    "order": r"\border\b|\bpurchase|\bbuy\b|\bsell\b|\bsubscription",
    "delete": r"\bdelete|\bremove|\berase|\bwipe|\bcannot be undone|\bpermanently|\breset\b|\buninstall|\btrash\b|\brecycle bin\b",
    "send": r"\bsend\b|\bsend to\b|\bforward to|\badd (group )?(members|participants|people)\b|\binvite to\b",
    "post": r"\bpost\b|\bpublish|\bpublic\b",
    "call": r"\bcall\b|\bdial\b|\bincoming\b",
}
for _kind, _pattern in SPACED_TOPICS.items():
    _EN_TOPICS[_kind] += "|" + _pattern
SLIDER = re.compile(r"滑|拖动|拖到|slide|swipe|drag")
HOLD = re.compile(r"长按|按住|holdto|pressandhold|longpress")
CHAT_FIELD = re.compile(
    r"chat|message|msg|comment|reply|input|compose|说点什么|发消息|输入|评论|回复|留言|弹幕|写点|聊天|消息",
    re.I,
)
SEARCH_FIELD = re.compile(r"search|query|搜索|查找|搜一搜|keyword|url|address", re.I)
PASSWORD_HINT = re.compile(
    r"密码|口令|pin\b|password|passcode|验证码|支付验证|交易密码|cvv|cvc|"
    + _folded_words(
        "暗証番号 暗証 パスワード 認証番号 비밀번호 인증번호 пароль пин-код passwort geheimzahl mot de passe code pin senha contraseña clave"
    )
)
# The model says it is about to do it: a verb of touching, then a consequential verb, close together.
_INTENT = re.compile(
    r"(点击|点|按下|按|轻触|触摸|选择|确认|完成|执行|进行|tap|click|press|hit|select|confirm|complete|submit|finish)"
    r"(?:(?!然后|之后|再|then|after)[^，,。;；\n]){0,14}?(支付|付款|转账|转帐|汇款|下单|购买|删除|清空|发送|发布|发表|拨打|呼叫|打电话|通话|"
    r"pay|transfer|wire|purchase|buy|order|delete|remove|send|post|publish|call|dial)",
    re.I | re.S,
)
# The same in other languages, on the plain text (no accents, lower case). Russian, French, Spanish and Portuguese
# put the touch first ("нажать «Оплатить»", "appuyer sur Payer"); Japanese, Korean and German put the thing first
# ("購入ボタンを押して", "결제 버튼을 누릅니다", "auf Bestellen tippen").
_WINDOW = r"(?:(?!そして|それから|그리고|затем|потом|puis|ensuite|luego|depois|dann)[^，,。、;；\n]){0,16}?"
_INTENT_TOUCH_FIRST = re.compile(
    r"(нажать|нажму|нажимаю|нажмите|тапнуть|выбрать|подтвердить|appuyer|appuie|cliquer|clique|toucher|touche|"
    r"selectionner|confirmer|valider|tocar|toco|pulsar|presionar|hacer clic|clicar|clico|seleccionar|selecionar|"
    r"confirmar)"
    + _WINDOW
    + r"(оплат\w*|заплат\w*|перевест\w*|перевод\w*|купи\w*|заказ\w*|удал\w*|отправ\w*|"
    r"позвон\w*|payer|paiement|virement|acheter|commande\w*|supprimer|envoyer|publier|appeler|pagar|pago|"
    r"transferir|transferencia|comprar|pedido|eliminar|borrar|excluir|apagar|enviar|publicar|llamar|ligar)",
    re.S,
)
_INTENT_THING_FIRST = re.compile(
    r"(購入|注文|支払|決済|送金|振込|振り込|削除|送信|送る|発信|通話|投稿|결제|구매|주문|송금|이체|삭제|전송|보내기|전화|통화|게시|"
    r"bezahl\w*|bestell\w*|kauf\w*|uberweis\w*|losch\w*|send\w*|anruf\w*|veroffentlich\w*)"
    + _WINDOW
    + r"(押す|押し|押します|タップ|クリック|選択|確定|実行|누르|누릅|눌러|탭|클릭|선택|확정|진행|tippen|tippe|klicken|klicke|"
    r"drucken|drucke|bestatigen|bestatige|auswahlen)",
    re.S,
)


def _first(patterns: dict[str, str], text: str) -> str | None:
    for kind, pattern in patterns.items():
        if re.search(pattern, text):
            return kind
    return None


# What may stand before the verb in a control's name: "确认支付", "¥99.00 立即支付", "一键清理", "同意并支付".
_ZH_LEAD = re.compile(
    r"^[¥$€£\d.,元]*(.{0,2}?(确认|确定|立即|马上|去|再|一键|全部|批量|永久|彻底|同意并|同意协议并|完成|继续|"
    r"提交并|重新|视频|语音|免密|开通|我要|点击|快速|安全|极速|立刻|现在|一起|今すぐ|すぐに|确认して|ご|お|"
    + FOLDED_LEADS
    + r")+)?$"
)
_EN_LEAD = re.compile(
    r"^[¥$€£\d., ]*((confirm|and|yes|ok|now|secure|instant|quick|express|one-click|start|make|place|begin|a|an|the|"
    r"jetzt|sofort|ahora|agora|maintenant|sekarang|ngay)( |& |and )*)*$"
)


def _leads_well(before: str, lead: re.Pattern[str]) -> bool:
    return lead.fullmatch(before.strip()) is not None


# A verb may also close a short name after a word or two that qualify it, as Japanese, Korean and German put the
# verb last ("無料通話", "Zahlungspflichtig bestellen") and English does with "1-tap buy", "Group call". Not for
# pay and transfer: "微信支付", "Apple Pay", "银行卡转账" name a method or a form, not the last step. Never after a
# negation or a status ("已发送", "未支付", "Undo send", "Missed call").
_END_KINDS = frozenset({"order", "delete", "send", "post", "call"})
_ZH_NOT_BEFORE = re.compile(
    r"不|别|勿|未|已|待|没|非|取消|暂|停止|撤销|最近|历史|记录|我的|查看|如何|怎么|关于|帮助|设置"
)
_EN_NOT_BEFORE = re.compile(
    r"\b(not|no|don ?t|never|cancel|undo|stop|missed|incoming|recent|last|auto|my|view|how|about|help|nicht|kein|"
    r"не|nao|pas|ne)\b"
)
_ZH_TAIL = re.compile(r"(する|します|하기|합니다|해요|ください|下さい)?")
# English words that are nouns as often as verbs: after another word they are its object ("Hide post", "Mute call").
_EN_NOUN_VERBS = re.compile(
    r"(post|posts|call|calls|order|orders|purchase|reply|answer|tweet|invite|share)\b"
)


def _closes_short_name(kind: str, before: str, verb: str, after: str, *, zh: bool) -> bool:
    if kind not in _END_KINDS or (not zh and _EN_NOUN_VERBS.match(verb.strip())):
        return False
    before = before.strip()
    if zh:
        return (
            len(before) <= 4
            and _ZH_TAIL.fullmatch(after) is not None
            and _ZH_NOT_BEFORE.search(before) is None
        )
    return not after.strip() and len(before.split()) <= 2 and _EN_NOT_BEFORE.search(before) is None


# What a pictograph shows, by its Unicode name: 🗑 WASTEBASKET, 📞 TELEPHONE RECEIVER, ☎ BLACK TELEPHONE,
# 💸 MONEY WITH WINGS, ✉ ENVELOPE, 📤 OUTBOX TRAY, 🛒 SHOPPING TROLLEY. A label that is only such a sign names
# what the sign shows, as an icon would.
_SYMBOL_NAMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("delete", re.compile(r"\bWASTEBASKET\b|\bWASTE ?BASKET\b")),
    ("call", re.compile(r"^(BLACK |WHITE )?TELEPHONE( RECEIVER)?$|^TELEPHONE RECEIVER\b")),
    ("pay", re.compile(r"^MONEY WITH WINGS$")),
    ("send", re.compile(r"^(ENVELOPE|OUTBOX TRAY|ENVELOPE WITH DOWNWARDS ARROW ABOVE|WHITE ENVELOPE)$")),
    ("order", re.compile(r"^SHOPPING (TROLLEY|CART)$")),
)


def symbol_kind(label: str) -> tuple[str, str] | None:
    """(kind, label) when a label written only in pictographs (and spaces, variation selectors, a count) shows a
    consequence: "🗑️", "📞", "💸 ", "✉️". Letters anywhere in it make it a name, read by ``verb_kind``."""
    shown = [ch for ch in label if unicodedata.category(ch) == "So"]
    if not shown or fold(label).strip("0123456789"):
        return None
    for ch in shown:
        name = unicodedata.name(ch, "")
        for kind, pattern in _SYMBOL_NAMES:
            if pattern.search(name):
                return kind, label.strip()
    return None


def verb_kind(label: str, *, anywhere: bool = False) -> tuple[str, str] | None:
    """(kind, the words that named it) when a control's label is a consequential verb.

    The verb must open the name (after an amount or a word such as 确认, 立即, 一键, Confirm): running text that
    merely mentions paying ("记得转账AA", "Step 1: Pay with the app") names no control. ``anywhere`` drops that
    condition (for a model's message, a slider's track text).
    """
    if re.fullmatch(r"\s*[\[【(（].*[\]】)）]\s*", label):
        return None  # "[转账]", "【红包】": a message's type tag, not a control's name
    if (symbol := symbol_kind(label)) is not None:
        return symbol
    # Amounts say how much, not what: "12,900원 결제하기" and "Pay ¥99.00" are read as "결제하기" and "Pay".
    bare = without_amounts(label) or label
    zh = _ZH_PLACES.sub("", fold(bare))
    en = _EN_PLACES.sub("", spaced(bare))
    # Written as one word ("無料通話"), not a name beside a preview ("李四 删除", two texts of a chat row).
    one_word = " " not in spaced(bare)
    for kind, pattern in _ZH_VERBS.items():
        for m in re.finditer(pattern, zh):
            if (
                anywhere
                or _leads_well(zh[: m.start()], _ZH_LEAD)
                or (
                    one_word and _closes_short_name(kind, zh[: m.start()], m.group(0), zh[m.end() :], zh=True)
                )
            ):
                return kind, label.strip()
    # A short label spelled out with separators ("P-a-y", "S.E.N.D") reads as one word once they are dropped.
    folded = fold(bare)
    forms = [en, folded] if len(folded) <= 12 and folded != en else [en]
    for form in forms:
        for kind, pattern in _EN_VERBS.items():
            for m in re.finditer(pattern, form):
                if (
                    anywhere
                    or _leads_well(form[: m.start()], _EN_LEAD)
                    or _closes_short_name(kind, form[: m.start()], m.group(0), form[m.end() :], zh=False)
                ):
                    return kind, label.strip()
    # "Confirmar transferência", "Bestätigen und bezahlen", "Continue to payment": a confirming word, then what it
    # confirms (the Chinese and English leads above cover "确认支付" and "Confirm payment").
    first, _, rest = en.partition(" ")
    if rest and _CONFIRM.fullmatch(fold(first)):
        found = verb_kind(rest, anywhere=True) or topic_kind([rest])
        if found is not None:
            return found[0], label.strip()
    return None


_CONFIRM = re.compile("confirm|continue|ok|yes|submit|proceed|next|" + _folded_words(CONFIRM_WORDS))


# What already happened, or money coming in: a receipt's "支付成功", "Payment sent", "Maria sent you $250.00"
# say what a yes would not do. Never with what is still to come ("支付成功后发货": after paying, it ships).
_SETTLED = re.compile(
    r"(支付|付款|转账|转帐|汇款|购买|下单|充值|缴费|提现|捐款|捐赠|兑换|预订|交易)(已)?(成功|完成)(?!后|之后|以后|即可|才)|"
    r"已(支付|付款|转账|转帐|转出|到账|收款|购买|下单|完成|捐赠|捐款)|收款成功|到账成功|收到.{0,12}(转账|红包|付款|汇款)|"
    r"^收款$|向你转账|给你转账|"
    r"\b(payment|transfer|money|order|purchase|donation|gift)s? (was |has been )?(sent|successful|succeeded|complete|"
    r"completed|confirmed|placed|received)\b|\byou (ve |have )?(sent|paid|received|got money)\b|\bsent you\b|"
    r"\bpaid you\b|\badded to your (\w+ )?balance\b|\bthank(s| you) for your (order|purchase|payment|donation)\b|"
    r"\byou ve got money\b"
)


def is_settled(text: str) -> bool:
    """The text says a payment, transfer or order already went through, or that money came in."""
    return _SETTLED.search(fold(text)) is not None or _SETTLED.search(spaced(text)) is not None


def topic_kind(texts: Sequence[str]) -> tuple[str, str] | None:
    """(kind, the text that named it) when a dialog's or screen's texts say what a yes would do. What a text says
    already happened ("支付成功", "You received $50") names nothing to come; the rest of it still may."""
    for text in texts:
        zh, en = _SETTLED.sub(" ", fold(text)), _SETTLED.sub(" ", spaced(text))
        kind = _first(_ZH_TOPICS, _ZH_PLACES.sub("", zh)) or _first(_EN_TOPICS, _EN_PLACES.sub("", en))
        if kind:
            return kind, text.strip()[:80]
    return None


_COUNT = re.compile(r"\s*[(（\[【]?\s*\d{1,3}\s*[)）\]】]$")


# Two yeses joined: "Agree and Continue", "Accept & continue", "Zustimmen und fortfahren", "同意并继续".
_AND = frozenset({"and", "und", "et", "y", "e", "dan", "va", "и"})


def is_yes(label: str) -> bool:
    """A generic yes, also with the count of what it commits ("确定(1)", "OK (2)", "Done（3）"), and two of them
    joined ("Agree and Continue")."""
    f = fold(_COUNT.sub("", label.strip()) or label)
    if bool(f) and (_YES.fullmatch(f) is not None or (len(f) <= 6 and f.startswith(("确认", "确定")))):
        return True
    words = spaced(label.replace("&", " and ")).split()
    return any(
        w in _AND
        and _YES.fullmatch("".join(words[:i])) is not None
        and _YES.fullmatch("".join(words[i + 1 :])) is not None
        for i, w in enumerate(words)
    )


def is_no(label: str) -> bool:
    f = fold(label)
    return bool(f) and _NO.fullmatch(f) is not None


def intent_kind(words: str) -> tuple[str, str] | None:
    """(kind, the words) when the model's thought or message says it is about to do a consequential thing."""
    if not words:
        return None
    # As written (Japanese kanji stay kanji) and folded like the screen's texts (我將付\u200b款 reads 我将付款).
    for form in dict.fromkeys((words, shown(words))):
        found = _intent_in(form)
        if found is not None:
            return found
    return None


def _intent_in(words: str) -> tuple[str, str] | None:
    m = _INTENT.search(unicodedata_nfkc(words))
    if m is not None:
        kind = verb_kind(m.group(2))
        return (kind[0] if kind else "sensitive", m.group(0).strip()[:80])
    text = plain(words)
    for pattern, thing in ((_INTENT_TOUCH_FIRST, 2), (_INTENT_THING_FIRST, 1)):
        m = pattern.search(text)
        if m is not None:
            kind = verb_kind(m.group(thing))
            return (kind[0] if kind else "sensitive", m.group(0).strip()[:80])
    return None


def unicodedata_nfkc(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")


# A bare money word on a tile or row (转账 on a bank's home screen, 支付 on WeChat's 我 tab) opens a form; the same
# word on a screen that shows an amount, or in a dialog, is the last step. Only these kinds have such entry tiles.
ENTRY_WORDS = re.compile(
    r"(转账|转帐|支付|付款|收付款|充值|买入|卖出|借款|借钱|transfer|pay|payments?|buy|sell|top ?up|"
    r"(subscribe(to.{0,40})?)+|"  # "Subscribe" to a channel is free; with a price on screen it is an order
    r"(start|try|get|begin)(my|your|the|a)?(\d+(day|week|month)s?)?free(trial|month|week|period)|xfer|"
    + _folded_words(
        "оплата платежи переводы перевести pagar pagamentos transferir pix zahlungen überweisung paiements virements "
        # the same tiles and trading tabs in Vietnamese, Indonesian, Thai, Korean, Arabic
        "thanh_toán chuyển_tiền chuyển_khoản bayar beli transfer_dana โอนเงิน โอน จ่าย ชำระเงิน เติมเงิน ซื้อ "
        "송금 이체 결제 매수 매도 تحويل ادفع"
    )
    + ")"
)
# A bare publish verb on a control: where nothing is written yet it opens the composer ("Post" FAB over a feed,
# "Repost" in a tweet's action row); in the composer it publishes.
BARE_POST = re.compile(r"(post|repost|retweet|tweet|newpost|newtweet|quote|发布|发帖|发动态|转发|转推)")
# The paper plane under a post ("Send post", "Enviar post", "分享给朋友"): it opens the pick of recipients.
SEND_POST = re.compile(
    r"(send|enviar|envoyer|senden|share|compartilhar)(this)?post|sharepost|分享给朋友|发给朋友"
)
# Who will see it: the buttons of a share bar that publish to an audience ("Your story", "Close Friends").
AUDIENCE = re.compile(r"(yourstory|mystory|closefriends|addtostory|sharetostory|快拍|你的快拍|我的日常|密友)")
# A notice that the thing was refused or failed: acknowledging it does nothing ("当前时间不允许委托", "支付失败").
_REFUSED = re.compile(
    r"(不允许|不能|无法|暂不|暂时无法|不支持|未能|不可以)(?!恢复|撤销|撤回|找回|还原)|失败|未成功|"
    r"not allowed|\bcannot\b(?! be undone)|can't|\bunable to\b|\bfailed\b|unsuccessful"
)


def is_refusal(text: str) -> bool:
    return _REFUSED.search(fold(text)) is not None or _REFUSED.search(spaced(text)) is not None


AVATAR = re.compile(r"avatar|头像|portrait|head_?img|profile_?(image|photo)", re.I)


_ID_SPLIT = re.compile(r"[/_.:\-]+|(?<=[a-z])(?=[A-Z])")
_ID_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(p, re.I))
    for kind, p in (
        ("transfer", r"^(transfer|remit|withdraw)$"),
        ("pay", r"^(pay|payment|paynow|checkout|cashier|purchase)$"),
        ("order", r"^(order|buy|buynow|placeorder|submitorder|booking)$"),
        ("delete", r"^(delete|del|remove|clear|erase|trash|uninstall)$"),
        ("send", r"^(send|sendbtn|reply)$"),
        ("post", r"^(post|publish|tweet|repost)$"),
        ("call", r"^(call|dial|voip|videocall|voicecall)$"),
    )
)


_ID_DATA = frozenset(
    {"msg", "msgs", "message", "messages", "chat", "chats", "data", "photo", "photos", "contacts"}
)


def id_words(rid: str) -> list[str]:
    tail = rid.rsplit("/", 1)[-1]
    return [w for w in _ID_SPLIT.split(tail) if w]


def id_kind(ids: Sequence[str]) -> tuple[str, str] | None:
    for rid in ids:
        words = id_words(rid)
        if any(
            w.lower()
            in (
                "tab",
                "tabs",
                "history",
                "list",
                "record",
                "records",
                "detail",
                "details",
                "setting",
                "settings",
                "method",
                "capture",
                "container",
                "layout",
                "root",
                "holder",
                "wrapper",
                "preview",
                "overlay",
                "background",
                "placeholder",
                "stub",
                "select",
                "sort",
                "index",
                "sequence",
            )
            for w in words
        ):
            continue
        lowered = [w.lower() for w in words]
        if "clear" in lowered and "all" in lowered and not _ID_DATA.intersection(lowered):
            # "clear_all", like "Clear all": nothing stored is named
            words = [w for w in words if w.lower() != "clear"]
        for kind, pattern in _ID_WORDS:
            if any(pattern.search(w) for w in words):
                return kind, rid
    return None


def is_yes_id(ids: Sequence[str]) -> bool:
    return any(
        w.lower() in ("confirm", "ok", "positive", "yes", "submit", "done", "sure")
        for rid in ids
        for w in id_words(rid)
    )


__all__ = [
    "AUDIENCE",
    "AVATAR",
    "BARE_POST",
    "CHAT_FIELD",
    "ENTRY_WORDS",
    "HOLD",
    "KINDS",
    "MONEY_KINDS",
    "PASSWORD_HINT",
    "SEARCH_FIELD",
    "SEND_POST",
    "SLIDER",
    "id_kind",
    "symbol_kind",
    "id_words",
    "intent_kind",
    "is_no",
    "is_refusal",
    "is_settled",
    "is_yes",
    "is_yes_id",
    "topic_kind",
    "verb_kind",
]
