"""The words of consequence beyond Chinese and English, by how they are matched.

Languages written with spaces between words (Russian, German, French, Spanish, Portuguese, Arabic, Vietnamese,
Indonesian and Malay) are matched like English: on the spaced form, with word starts. Languages written without
them (Japanese, Korean, Thai) are matched like Chinese: on the folded form. Every word is written as
:func:`~mobile_agent.screen.text.fold` or ``spaced`` leaves it (lower case, no accents: Vietnamese "chuyển tiền" is
"chuyen tien", đ is d; Arabic without its hamza marks), or folded here at import.
"""

from __future__ import annotations

from mobile_agent.screen.text import fold


def _alternation(words: str, *, whole: bool) -> str:
    """``|``-separated words, each folded; ``whole`` wraps each in word boundaries (for the spaced form)."""
    folded = dict.fromkeys(fold(w) if not whole else w for w in words.split("|"))
    return "|".join(rf"\b{w}\b" if whole else w for w in folded)


# Matched on the folded form, like Chinese. Korean 매수/매도 are buy and sell orders (an exchange's order button).
FOLDED_VERBS: dict[str, str] = {
    "transfer": _alternation("振込|振り込|送金|송금|이체|โอนเงิน|โอน", whole=False),
    "pay": _alternation("支払|払う|決済|お支払い|결제|지불|충전|ชำระเงิน|ชำระ|จ่ายเงิน|จ่าย|เติมเงิน", whole=False),
    "order": _alternation("購入|注文|買う|구매|주문|매수|매도|สั่งซื้อ|ซื้อ", whole=False),
    "delete": _alternation(
        "削除|消去|ゴミ箱に移動|ゴミ箱へ移動|삭제|지우기|휴지통으로 이동|탈퇴|ลบ", whole=False
    ),
    "send": _alternation("送信|送る|보내기|전송|ส่ง", whole=False),
    "post": _alternation("投稿|게시|올리기|โพสต์", whole=False),
    # โทร is "call"; โทรศัพท์ is "telephone", a place (the Phone app, a number's caption)
    "call": _alternation("発信|通話|전화|통화|보이스톡|페이스톡", whole=False) + f"|โทร(?!{fold('ศัพท์')})",
}
FOLDED_TOPICS: dict[str, str] = {
    **FOLDED_VERBS,
    "transfer": FOLDED_VERBS["transfer"] + "|" + _alternation("ผู้รับ|받는분|받는 분", whole=False),
    "pay": FOLDED_VERBS["pay"] + "|" + _alternation("จำนวนเงิน|ยอดชำระ|결제금액", whole=False),
    # ส่ง (send) is also the start of การจัดส่ง (delivery): as a topic only with what is sent
    "send": _alternation("送信|送る|보내기|전송|ส่งข้อความ", whole=False),
}
# What may stand before a folded verb: 전량 매도 (sell the whole holding), 바로 구매, 今すぐ購入.
FOLDED_LEADS = _alternation("전량|전체|바로|지금|즉시|시장가|지정가|ยืนยัน|ยืนยันการ|การ|กด", whole=False)

# Matched on the spaced form, like English.
SPACED_VERBS: dict[str, str] = {
    "transfer": r"\bперевест\w*|\bпереведи(те)?\b|\bвывест\w*|\bвыведи(те)?\b|\buberweis(en|ung (senden|bestatigen|freigeben))\b|"
    r"\bgeld senden|\bvirement\b|\beffectuer le virement|\btransfer(er|ez)\b|\btransferir\b|\btransfira\b|"
    r"\benviar (dinero|dinheiro)\b|\bpix\b|\bxfer\b|"
    r"\bchuyen (tien|khoan)\b|\bkirim (uang|dana|saldo)\b|\btarik tunai\b|\bpindah(kan)? dana\b",
    "pay": r"\bоплат(ить|ите|и|а)\b|\bзаплат(ить|ите|и)\b|\bпополн(ить|ите|и)\b|\bbezahlen\b|\bzahlen\b|"
    r"\bzahlungspflichtig|\bkostenpflichtig|\bzahlung bestatigen|\bpay(er|ez)\b|\bconfirmer (le )?paiement|\bregler\b|"
    r"\bpag(ar|a|ue)\b|\bconfirmar (pago|pagamento)\b|"
    # a mandate or agreement lets the payee take money later: agreeing to it is paying
    r"\b(sepa )?(lastschrift)?mandat (erteilen|bestatigen|akzeptieren)\b|\bauthori[sz]e (the )?(direct debit|mandate)\b|"
    r"\bset up (a )?direct debit\b|"
    r"\bthanh toan\b|\btra tien\b|\bnap tien\b|\bbayar\b|\bbayar sekarang\b|\bisi (ulang )?saldo\b|\btop-?up\b|"
    r"\bdonasi\b|\bderma\b",
    "order": r"\bкуп(ить|ите|и)\b|\bзаказ(ать|ите|ать сейчас)\b|\bоформ(ить|ите)( заказ)?\b|\bbestellen\b|\bkaufen\b|"
    r"\bkauf bestatigen|\bachet(er|ez)\b|\bcommand(er|ez)\b|\bpasser (la )?commande|\bvalider (la |ma )?commande|"
    r"\bcompr(ar|e)\b|\bfinalizar (compra|pedido)|\b(realizar|hacer|fazer|confirmar) (el |o )?pedido\b|"
    r"\bconfirmar compra\b|"
    # mua (buy) folds like mùa (season): only alone or with what makes it an order
    r"\bmua( ngay| hang| lai)?$|\bdat (hang|mua|ngay)\b|\bbeli( sekarang)?\b|\bpesan( sekarang)?\b|\bbuat pesanan\b",
    "delete": r"\bудал(ить|ите|и)\b|\bочист(ить|ите|и)\b|\bстере(ть|ть все)\b|\bloschen\b|\bentfernen\b|\bdeinstallieren|"
    r"\bsupprim(er|ez)\b|\beffac(er|ez)\b|\bdesinstaller|\belimin(ar|a|e)\b|\bborr(ar|a)\b|\bexclu(ir|a)\b|\bapag(ar|ue)\b|"
    r"\bremover\b|\bdesinstalar|\bxoa\b|\bgo cai dat\b|\bhapus\b|\bpadam\b|\bcopot\b",
    "send": r"\bотправ(ить|ьте|ь)\b|\bпосла(ть)?\b|\bsenden\b|\babsenden\b|\bschicken\b|\benvoy(er|ez)\b|\benvi(ar|a|e)\b|"
    r"\bgui\b|\bkirim\b|\bhantar\b",
    "post": r"\bопубликов\w*|\bveroffentlichen|\bpubli(er|ez)\b|\bpublic(ar|a)\b|\bpubliqu(e|er)\b|\bdang bai\b|"
    r"\bunggah\b|\bterbitkan\b",
    # Vietnamese gọi (call) folds like gói (a package, "Gói cước"): only the whole label or with what it calls
    "call": r"\bпозвон(ить|ите|и)\b|\banrufen\b|\bappel(er|ez)\b|\bllam(ar|a)\b|\blig(ar|ue)\b|"
    r"\bgoi( dien( thoai)?| video| thoai| lai)?$|\bpanggil\b|\btelepon\b",
}
# Arabic (folded: the hamza of إرسال is a combining mark once decomposed, so it reads ارسال).
for _kind, _words in {
    "transfer": "تحويل حول حوّل",
    "pay": "ادفع دفع سداد سدد",
    "order": "شراء اشتر اطلب",
    "delete": "حذف احذف",
    "send": "ارسال ارسل",
    "call": "اتصال اتصل",
}.items():
    SPACED_VERBS[_kind] += "|" + "|".join(rf"\b{w}\b" for w in dict.fromkeys(fold(x) for x in _words.split()))
SPACED_TOPICS: dict[str, str] = {
    "transfer": r"\bперевод|\bполучател|\buberweisung|\bempfanger|\bvirement|\bbeneficiaire|\btransferencia|"
    r"\btransferindo|\bdestinatari|\bpix\b|\bxfer\b|\bchuyen (tien|khoan)\b|\bnguoi nhan\b|\bkirim (uang|dana|saldo)\b|"
    r"\bpenerima\b|\b(ال)?(تحويل|مستفيد|مستلم)",
    "pay": r"\bоплат|\bк оплате|\bитого\b|\bzahlung|\bgesamtsumme|\bzu zahlen|\bpaiement|\ba payer|\bpago\b|"
    r"\bpagamento|\bpagar\b|\blastschrift|\bmandat\b|\bthanh toan\b|\bso tien\b|\bpembayaran\b|\bbayar\b|"
    r"\btotal bayar\b|\btagihan\b|\bdonasi\b|\b(ال)?(دفع|سداد|مبلغ)",
    "order": r"\bзаказ|\bпокупк|\bbestellung|\bcommande\b|\bpedido\b|\bcompra\b|\bdon hang\b|\bpesanan\b|\bpembelian\b",
    "delete": r"\bудал|\bбезвозвратно|\bloschen|\bendgultig|\bsupprim|\bdefinitivement|\belimin|\bborrar|"
    r"\bexclu|\bapagar|\bpermanentemente|\bxoa\b|\bhapus\b|\b(ال)?حذف",
    "send": r"\bотправ|\bsenden\b|\benvoyer|\benviar|\bgui\b|\bkirim\b|\b(ال)?ارسال",
    "post": r"\bпубликац|\bopublik|\bveroffentlich|\bpublier|\bpublicar|\bdang bai\b|\bunggah\b",
    "call": r"\bзвонок|\bвызов|\banruf|\bappel\b|\bllamada|\bchamada|\bligacao|\bcuoc goi\b|\bpanggilan\b|"
    r"\b(ال)?اتصال",
}

# Generic yes and no, whole labels (folded).
YES_WORDS = (
    "はい 次へ 続ける 続行 確定する 同意する 承認 확인 예 네 다음 계속 동의 승인 "
    "да ок подтвердить подтверждаю продолжить далее готово принять "
    "ja weiter fortfahren bestätigen akzeptieren fertig freigeben ausführen oui confirmer continuer suivant accepter valider "
    "sí sim confirmar continuar siguiente seguinte próximo aceptar aceitar listo pronto "
    "xác_nhận đồng_ý tiếp_tục tiếp_theo "
    "lanjut lanjutkan konfirmasi ya setuju oke berikutnya teruskan sahkan seterusnya "
    "ยืนยัน ตกลง ต่อไป ถัดไป ดำเนินการต่อ ใช่ "
    "تأكيد تاكيد أكد موافق نعم متابعة التالي استمرار"
)
NO_WORDS = (
    "キャンセル いいえ 閉じる 戻る 취소 아니요 닫기 나중에 отмена отменить нет назад закрыть "
    "abbrechen nein zurück schließen annuler non retour fermer cancelar não volver voltar cerrar fechar "
    "hủy hủy_bỏ quay_lại không để_sau đóng batal batalkan tidak kembali tutup nanti "
    "ยกเลิก ไม่ใช่ ปิด ย้อนกลับ ไม่ "
    "إلغاء الغاء لا رجوع إغلاق اغلاق"
)
# Whole labels known to be harmless on any screen (precaution lets them through where money is on the page): going
# back, showing details, carting, liking, following. Words are joined by "_" where the label has a space.
HARMLESS_WORDS = (
    "カートに入れる カートへ カートに追加 いいね いいね! お気に入り お気に入り登録 フォロー 詳細 詳細を見る もっと見る 戻る "
    "장바구니 장바구니_담기 장바구니에_담기 좋아요 찜 찜하기 팔로우 상세보기 자세히 더보기 뒤로 "
    "в_корзину добавить_в_корзину нравится избранное в_избранное подписаться подробнее ещё назад "
    "in_den_warenkorb warenkorb merken gefällt_mir folgen details mehr zurück "
    "ajouter_au_panier panier favoris j'aime suivre détails plus retour "
    "añadir_al_carrito agregar_al_carrito carrito favoritos me_gusta seguir detalles más atrás "
    "adicionar_ao_carrinho carrinho favoritos curtir seguir detalhes mais voltar "
    "aggiungi_al_carrello carrello preferiti mi_piace segui dettagli indietro "
    "thêm_vào_giỏ thêm_vào_giỏ_hàng giỏ_hàng yêu_thích theo_dõi chi_tiết xem_thêm quay_lại "
    "tambah_ke_keranjang masukkan_keranjang keranjang favorit suka ikuti detail lihat_detail kembali "
    "ใส่ตะกร้า เพิ่มลงตะกร้า ตะกร้า ถูกใจ ติดตาม รายละเอียด ดูเพิ่มเติม กลับ "
    "sepete_ekle sepet favoriler beğen takip_et detaylar geri "
    "أضف_إلى_السلة السلة المفضلة إعجاب متابعة التفاصيل رجوع "
    "सूची_में_जोड़ें कार्ट_में_जोड़ें पसंद विवरण वापस "
    "コピー 복사 копировать kopieren copier copiar copia sao_chép salin kopyala نسخ "
    "シェア 共有 공유 поделиться teilen partager compartir compartilhar condividi chia_sẻ bagikan paylaş แชร์ مشاركة"
)
# A confirming word that may open a longer name: "Xác nhận chuyển tiền", "Konfirmasi pembayaran".
CONFIRM_WORDS = (
    "confirmar confirmer bestätigen подтвердить continuar continuer weiter продолжить 확인 確認 確定 "
    "xác konfirmasi lanjutkan ยืนยัน تأكيد"
)

__all__ = [
    "CONFIRM_WORDS",
    "HARMLESS_WORDS",
    "FOLDED_LEADS",
    "FOLDED_TOPICS",
    "FOLDED_VERBS",
    "NO_WORDS",
    "SPACED_TOPICS",
    "SPACED_VERBS",
    "YES_WORDS",
]
