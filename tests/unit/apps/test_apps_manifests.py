"""Every shipped manifest validates, and the shipped set covers the reference apps honestly."""

from __future__ import annotations

import pytest

from mobile_agent.apps.registry import check_dirs, shipped_apps_dir
from mobile_agent.apps.schema import AppManifest, SharedRules
from mobile_agent.apps.yamlsrc import load_yaml, validate

SHIPPED = sorted(shipped_apps_dir().glob("*.yaml"))

# From the reference table of packages seen in public agent runtimes (every Chinese app must have a manifest).
REFERENCE_PACKAGES = """
com.tencent.mm com.tencent.mobileqq com.tencent.wework com.sina.weibo com.xingin.xhs com.zhihu.android
com.douban.frodo com.taobao.taobao com.tmall.wireless com.taobao.idlefish com.jingdong.app.mall
com.xunmeng.pinduoduo com.achievo.vipshop com.shizhuang.duapp com.cainiao.wireless com.eg.android.AlipayGphone
com.unionpay com.sankuai.meituan com.sankuai.meituan.takeoutnew me.ele com.dianping.v1
com.yek.android.kfc.activitys com.wudaokou.hippo com.yaya.zone com.autonavi.minimap com.baidu.BaiduMap
com.tencent.map com.sdu.didi.psnger com.jingyao.easybike ctrip.android.view com.Qunar com.tongcheng.android
com.taobao.trip com.MobileTicket com.wuba com.lianjia.beike com.anjuke.android.app tv.danmaku.bili
com.ss.android.ugc.aweme com.smile.gifmaker com.tencent.qqlive com.qiyi.video com.youku.phone
com.hunantv.imgo.activity com.phoenix.read com.netease.cloudmusic com.tencent.qqmusic com.kugou.android
cn.kuwo.player com.luna.music com.ximalaya.ting.android fm.qingting.qtradio com.dragon.read com.kmxs.reader
com.ss.android.article.news com.tencent.news com.baidu.searchbox com.quark.browser com.ss.android.lark
com.alibaba.android.rimet com.tencent.wemeet.app com.tencent.androidqqmail cn.wps.moffice_eng
com.chaoxing.mobile com.hpbr.bosszhipin com.zhaopin.social com.larus.nova com.tencent.hunyuan.app.chat com.aliyun.tongyi
com.gotokeep.keep com.lingan.seeyou com.hexin.plat.android com.android.settings
""".split()

SYSTEM_APPS = ["settings", "camera", "gallery", "contacts", "phone", "messages", "clock", "calendar", "files"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_manifest_validates(path):
    model = SharedRules if path.name.startswith("_") else AppManifest
    validate(model, load_yaml(path))


def test_shipped_folder_has_no_problems():
    assert [e.one_line() for e in check_dirs([shipped_apps_dir()])] == []


def test_at_least_sixty_manifests(registry):
    assert len(registry) >= 60


def test_every_reference_package_has_a_manifest(registry):
    missing = [pkg for pkg in REFERENCE_PACKAGES if registry.by_package(pkg) is None]
    assert missing == []


@pytest.mark.parametrize("app_id", SYSTEM_APPS)
def test_system_apps_exist_with_vendor_variants(registry, app_id):
    manifest = registry.get(app_id)
    assert manifest is not None and manifest.category == "system"


def test_vendor_variants_are_recorded(registry):
    assert registry.by_package("com.miui.gallery").id == "gallery"
    assert registry.by_package("com.coloros.alarmclock").id == "clock"
    assert registry.by_package("com.android.mms").id == "messages"
    assert registry.by_package("com.vivo.gallery").id == "gallery"


def test_meituan_waimai_is_the_consumer_app_not_meituan(registry):
    waimai = registry.resolve("美团外卖")
    assert waimai.package == "com.sankuai.meituan.takeoutnew"
    assert registry.resolve("美团").package == "com.sankuai.meituan"
    assert "com.sankuai.meituan.takeoutmanage" not in waimai.packages


def test_no_shipped_manifest_claims_a_device_check(registry):
    # Nothing has been verified on a phone yet: `apps verify --write` is the only thing allowed to add these.
    for manifest in registry:
        assert manifest.source.kind != "device", manifest.id
        assert manifest.source.verified == [], manifest.id


def test_public_list_sources_name_known_lists(registry):
    for manifest in registry:
        if manifest.source.kind == "public_list":
            assert set(manifest.source.lists) <= {"UI-Venus", "Open-AutoGLM"}, manifest.id


def test_manifest_file_names_match_ids():
    for path in SHIPPED:
        if not path.name.startswith("_"):
            assert load_yaml(path).data["id"] == path.stem


def test_shipped_package_is_importable():
    import importlib.resources

    files = {p.name for p in importlib.resources.files("mobile_agent.app_manifests").iterdir()}
    assert "wechat.yaml" in files and "_common.yaml" in files
