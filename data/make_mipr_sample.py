"""Write the bundled MIPR sample (data/mipr/) in the official layout. Deterministic: rerun to regenerate.

Each scenario is one situational image with one or more questions, the leaf categories that solve it (L1),
partial solutions (L2), constraint violations (N1) and related non-solutions (N2); products of other
scenarios are judged irrelevant (N3). The two runs imitate an embedding retriever's top-50 and a reranker
that reorders the same candidate pool.
"""

import hashlib
import json
import random
from pathlib import Path

from PIL import Image
from PIL import ImageDraw

OUT = Path(__file__).resolve().parent / "mipr"
RUN_DEPTH = 50

# (image, [questions], {grade: [(category path, [product titles])]})
SCENARIOS = [
    (
        "kettle_scale",
        ["表面的老垢用啥清洗剂除", "烧水壶底部一层白色水垢怎么去掉"],
        {
            "L1": [
                (
                    "家清-环境清洁-清洁剂-除垢剂",
                    [
                        "凯易牌除垢剂水垢清除剂制冰机专用",
                        "柠檬酸除垢剂食品级电水壶清洁剂",
                        "家用水垢清除剂热水壶去垢神器",
                    ],
                ),
                ("家清-环境清洁-清洁剂-柠檬酸", ["食品级柠檬酸粉500g除水垢清洁", "无水柠檬酸清洁剂饮水机除垢"]),
            ],
            "L2": [("家清-环境清洁-清洁工具-清洁刷", ["长柄软毛清洁刷水壶杯子刷"])],
            "N1": [("家清-环境清洁-清洁剂-洁厕剂", ["强力洁厕灵马桶清洁剂除臭"])],
            "N2": [("厨房电器-生活电器-电水壶-电热水壶", ["304不锈钢电热水壶1.7L家用"])],
        },
    ),
    (
        "balcony_mold",
        ["阳台墙角发霉长黑斑了怎么办"],
        {
            "L1": [
                ("家清-环境清洁-清洁剂-除霉剂", ["墙体除霉剂去霉斑喷雾家用", "瓷砖缝除霉啫喱强力去黑"]),
                ("家装主材-涂料-墙面漆-防霉涂料", ["防霉乳胶漆内墙卫生间墙面漆"]),
                ("家清-环境清洁-除湿用品-除湿盒", ["除湿盒吸湿袋防潮防霉室内"]),
            ],
            "L2": [("家清-环境清洁-清洁工具-百洁布", ["百洁布海绵擦洗碗布10片装"])],
            "N1": [("家清-环境清洁-清洁剂-漂白水", ["84消毒液含氯漂白水衣物"])],
            "N2": [("家装主材-墙纸-墙贴-自粘墙纸", ["自粘墙纸卧室温馨墙贴防水"])],
        },
    ),
    (
        "cat_sofa",
        ["猫老是抓沙发，有什么办法", "猫咪磨爪子把真皮沙发抓烂了"],
        {
            "L1": [
                ("宠物用品-猫咪玩具-猫抓板-瓦楞纸猫抓板", ["瓦楞纸猫抓板耐磨不掉屑立式", "猫抓板沙发型大号猫窝一体"]),
                ("家居布艺-沙发垫-沙发保护-防猫抓贴", ["沙发防猫抓贴透明保护膜"]),
            ],
            "L2": [("宠物用品-猫咪玩具-逗猫棒-羽毛逗猫棒", ["羽毛逗猫棒带铃铛伸缩杆"])],
            "N1": [("宠物用品-猫咪洗护-指甲护理-猫指甲套", ["猫咪指甲套防抓软胶套20个"])],
            "N2": [("家具-客厅家具-沙发-布艺沙发", ["北欧布艺沙发小户型三人位"])],
        },
    ),
    (
        "baby_rash",
        ["宝宝屁股红红的一片用什么"],
        {
            "L1": [("母婴-婴童洗护-护臀膏-婴儿护臀膏", ["婴儿护臀膏新生儿红屁屁霜", "宝宝鞣酸软膏护臀霜25g"])],
            "L2": [("母婴-尿裤湿巾-湿巾-婴儿湿巾", ["婴儿手口湿巾80抽5包"])],
            "N1": [("美妆护肤-面部护理-面霜-成人面霜", ["成人保湿面霜含香精50g"])],
            "N2": [("母婴-尿裤湿巾-纸尿裤-拉拉裤", ["超薄透气拉拉裤L码"])],
        },
    ),
    (
        "phone_crack",
        ["手机屏幕摔裂了先怎么保护一下"],
        {
            "L1": [
                ("3C数码配件-手机配件-手机贴膜-钢化膜", ["全屏钢化膜防摔防指纹2片装", "高清钢化玻璃膜手机屏幕保护"]),
                ("3C数码配件-手机配件-手机壳-防摔手机壳", ["气囊防摔手机壳全包软壳"]),
            ],
            "L2": [("3C数码配件-手机配件-手机支架-桌面支架", ["桌面手机支架可调节铝合金"])],
            "N1": [("3C数码配件-手机配件-手机贴膜-后膜", ["手机背膜磨砂彩膜后贴"])],
            "N2": [("手机-手机-智能手机-5G手机", ["5G智能手机大屏长续航"])],
        },
    ),
    (
        "dry_hands",
        ["冬天手裂口子疼用啥好"],
        {
            "L1": [
                ("美妆护肤-身体护理-护手霜-修护护手霜", ["尿素护手霜防裂修护干裂", "凡士林护手霜深层滋润"]),
                ("个护健康-家庭医疗-创可贴-液体创可贴", ["液体创可贴手裂口防水保护"]),
            ],
            "L2": [("服饰配件-手套-保暖手套-加绒手套", ["加绒保暖手套冬季骑行"])],
            "N1": [("美妆护肤-身体护理-护手霜-香氛护手霜", ["酒精香氛护手霜小样礼盒"])],
            "N2": [("美妆护肤-身体护理-身体乳-美白身体乳", ["烟酰胺美白身体乳400ml"])],
        },
    ),
    (
        "fridge_smell",
        ["冰箱一开门就有味道"],
        {
            "L1": [("家清-环境清洁-除味用品-冰箱除味剂", ["冰箱除味剂活性炭包除异味", "冰箱除臭盒竹炭去味"])],
            "L2": [("厨房用品-保鲜收纳-保鲜盒-玻璃保鲜盒", ["玻璃保鲜盒微波炉饭盒套装"])],
            "N1": [("家清-环境清洁-除味用品-香薰", ["车载香薰精油扩香石"])],
            "N2": [("厨房电器-大家电-冰箱-双门冰箱", ["双门小冰箱家用节能"])],
        },
    ),
    (
        "ant_kitchen",
        ["厨房台面上一排小蚂蚁"],
        {
            "L1": [
                ("家清-驱虫用品-杀虫剂-蚂蚁药", ["蚂蚁药全窝端家用灭蚁饵剂", "灭蚂蚁胶饵诱杀剂室内"]),
                ("家清-驱虫用品-驱虫工具-粘虫板", ["黄色粘虫板双面强力"]),
            ],
            "L2": [("家清-环境清洁-清洁剂-厨房清洁剂", ["厨房重油污清洁剂喷雾"])],
            "N1": [("家清-驱虫用品-杀虫剂-杀虫气雾剂", ["强效杀虫气雾剂600ml油性"])],
            "N2": [("厨房用品-保鲜收纳-密封罐-储物罐", ["密封罐五谷杂粮储物罐"])],
        },
    ),
    (
        "car_fog",
        ["下雨天车窗起雾看不清"],
        {
            "L1": [
                ("汽车用品-车内用品-车窗防雾剂-防雾喷剂", ["汽车玻璃防雾剂车窗长效", "后视镜防雨防雾喷剂"]),
                ("汽车用品-车内用品-清洁工具-防雾湿巾", ["车用防雾湿巾一次性10片"]),
            ],
            "L2": [("汽车用品-车内用品-清洁工具-麂皮巾", ["麂皮巾擦车巾吸水不掉毛"])],
            "N1": [("汽车用品-车外用品-雨刮器-无骨雨刷", ["无骨雨刮器一对通用"])],
            "N2": [("汽车用品-车外用品-车衣-车罩", ["汽车车衣防晒防雨车罩"])],
        },
    ),
    (
        "hiking_blister",
        ["徒步脚磨起泡了"],
        {
            "L1": [("个护健康-家庭医疗-创可贴-水泡贴", ["水凝胶水泡贴脚后跟防磨", "防磨脚贴隐形后跟贴"])],
            "L2": [("运动户外-户外鞋袜-袜子-徒步袜", ["加厚毛巾底徒步袜吸汗"])],
            "N1": [("个护健康-家庭医疗-创可贴-普通创可贴", ["布质创可贴100片家用"])],
            "N2": [("运动户外-户外鞋袜-登山鞋-徒步鞋", ["防水登山鞋男女徒步"])],
        },
    ),
    (
        "dog_walk_night",
        ["晚上遛狗怕车看不见狗"],
        {
            "L1": [
                ("宠物用品-出行用品-牵引绳-反光牵引绳", ["反光狗狗牵引绳夜间防走失"]),
                ("宠物用品-出行用品-项圈-发光项圈", ["LED发光项圈充电狗狗夜光"]),
                ("宠物用品-宠物服饰-马甲-反光马甲", ["宠物反光马甲荧光背心"]),
            ],
            "L2": [("户外照明-手电筒-头灯-充电头灯", ["户外充电头灯强光夜跑"])],
            "N1": [("宠物用品-出行用品-项圈-皮质项圈", ["真皮狗项圈复古铆钉"])],
            "N2": [("宠物用品-出行用品-宠物包-外出包", ["宠物外出包双肩太空舱"])],
        },
    ),
    (
        "toddler_corner",
        ["孩子学走路老撞桌角"],
        {
            "L1": [("母婴-安全防护-防撞条-桌角防撞角", ["加厚桌角防撞角硅胶透明", "婴儿防撞条桌边包边条"])],
            "L2": [("母婴-安全防护-护具-宝宝护头帽", ["宝宝学步护头帽防摔"])],
            "N1": [("母婴-安全防护-防撞条-泡沫防撞条", ["泡沫防撞条含甲醛款低价"])],
            "N2": [("家具-客厅家具-茶几-圆角茶几", ["圆角实木茶几小户型"])],
        },
    ),
    (
        "screen_glare",
        ["电脑屏幕反光看久了眼睛累"],
        {
            "L1": [
                ("3C数码配件-电脑配件-屏幕膜-防蓝光防眩光膜", ["显示器防眩光膜防蓝光27寸"]),
                ("3C数码配件-电脑配件-显示器配件-屏幕挂灯", ["显示器挂灯护眼无频闪"]),
            ],
            "L2": [("眼镜-功能眼镜-防蓝光眼镜-平光镜", ["防蓝光眼镜电脑护目镜"])],
            "N1": [("3C数码配件-电脑配件-屏幕膜-高亮膜", ["高清高亮屏幕保护膜镜面"])],
            "N2": [("电脑-电脑整机-显示器-曲面显示器", ["32寸曲面显示器高刷"])],
        },
    ),
    (
        "rice_bugs",
        ["米里面生了小黑虫"],
        {
            "L1": [
                ("厨房用品-保鲜收纳-米桶-密封米桶", ["防虫密封米桶10kg带量杯", "米缸防潮储米箱抽屉式"]),
                ("家清-驱虫用品-防虫用品-米虫净", ["大米防虫包花椒米虫净"]),
            ],
            "L2": [("厨房用品-保鲜收纳-密封罐-储物罐", ["玻璃密封罐厨房杂粮"])],
            "N1": [("家清-驱虫用品-杀虫剂-杀虫气雾剂", ["家用杀虫喷雾剂灭蟑螂"])],
            "N2": [("粮油调味-米面杂粮-大米-东北大米", ["东北大米5kg新米"])],
        },
    ),
    (
        "garden_dry",
        ["出差一周阳台花没人浇"],
        {
            "L1": [("园艺用品-浇水工具-自动浇花器-滴灌器", ["自动浇花器懒人滴灌定时", "渗水器陶瓷自动浇水神器"])],
            "L2": [("园艺用品-花盆-吸水花盆-懒人花盆", ["懒人自吸水花盆塑料"])],
            "N1": [("园艺用品-浇水工具-喷壶-手动喷壶", ["手压式喷壶浇花洒水壶"])],
            "N2": [("园艺用品-花卉-绿植-绿萝盆栽", ["绿萝盆栽室内吸甲醛"])],
        },
    ),
    (
        "sweater_pill",
        ["毛衣起球了怎么弄"],
        {
            "L1": [("生活电器-个护电器-毛球修剪器-充电毛球修剪器", ["充电式毛球修剪器衣服去球", "剃毛球器家用不伤衣"])],
            "L2": [("家清-衣物清洁-洗衣液-羊毛洗涤剂", ["羊毛羊绒专用洗涤剂中性"])],
            "N1": [("个护健康-剃须刀-电动剃须刀-往复式", ["电动剃须刀男士往复式"])],
            "N2": [("服饰-女装-针织衫-羊毛衫", ["羊毛衫女宽松套头毛衣"])],
        },
    ),
    (
        "tent_rain",
        ["露营帐篷下雨漏水"],
        {
            "L1": [
                ("运动户外-露营装备-帐篷配件-防水喷剂", ["帐篷防水喷剂户外涂层修复"]),
                ("运动户外-露营装备-帐篷配件-天幕", ["户外天幕防雨遮阳大号"]),
            ],
            "L2": [("运动户外-露营装备-防潮垫-铝膜防潮垫", ["铝膜防潮垫加厚野餐"])],
            "N1": [("运动户外-露营装备-帐篷配件-遮阳网", ["遮阳网透光防晒网"])],
            "N2": [("运动户外-露营装备-帐篷-自动帐篷", ["全自动速开帐篷2人"])],
        },
    ),
    (
        "office_nap",
        ["中午在工位趴着睡脖子疼"],
        {
            "L1": [("家居日用-午睡用品-午睡枕-趴睡枕", ["午睡枕趴睡枕办公室", "U型护颈午休抱枕"])],
            "L2": [("家居日用-眼罩-遮光眼罩-蒸汽眼罩", ["蒸汽眼罩热敷遮光"])],
            "N1": [("家居日用-枕头-乳胶枕-高枕", ["高枕乳胶枕成人"])],
            "N2": [("家具-办公家具-办公椅-人体工学椅", ["人体工学椅电脑椅"])],
        },
    ),
    (
        "old_man_bath",
        ["老人洗澡怕滑倒", "卫生间地面湿了老人站不稳"],
        {
            "L1": [
                ("家居日用-浴室用品-防滑垫-浴室防滑垫", ["浴室防滑垫吸盘淋浴房", "卫生间防滑地垫老人"]),
                ("家装五金-卫浴五金-扶手-浴室扶手", ["浴室扶手老人安全不锈钢"]),
                ("家居日用-浴室用品-洗澡凳-老人洗澡椅", ["老人洗澡椅防滑淋浴凳"]),
            ],
            "L2": [("家清-环境清洁-清洁剂-瓷砖清洁剂", ["瓷砖清洁剂浴室去污"])],
            "N1": [("家居日用-浴室用品-防滑垫-装饰地毯", ["装饰地毯浴室门口吸水"])],
            "N2": [("卫浴-淋浴花洒-花洒套装-增压花洒", ["增压花洒喷头套装"])],
        },
    ),
    (
        "snore",
        ["老公打呼噜吵得睡不着"],
        {
            "L1": [
                ("家居日用-睡眠用品-耳塞-降噪耳塞", ["降噪耳塞睡眠专用防噪音", "硅胶耳塞隔音睡觉"]),
                ("个护健康-保健器械-止鼾器-止鼾贴", ["止鼾贴鼻贴通气防打呼噜"]),
            ],
            "L2": [("家居日用-眼罩-遮光眼罩-蒸汽眼罩", ["真丝睡眠眼罩遮光"])],
            "N1": [("3C数码配件-耳机-蓝牙耳机-运动耳机", ["运动蓝牙耳机挂耳式"])],
            "N2": [("家居日用-枕头-乳胶枕-低枕", ["泰国乳胶枕头护颈"])],
        },
    ),
    (
        "window_gap",
        ["窗户缝漏风冬天很冷"],
        {
            "L1": [
                ("家装五金-门窗五金-密封条-窗户密封条", ["窗户密封条门窗隔音防风", "自粘海绵密封条缝隙"]),
                ("家居日用-窗帘-保温窗帘-加厚窗帘", ["加厚保温遮光窗帘"]),
            ],
            "L2": [("家电-取暖器-暖风机-小太阳", ["小太阳取暖器家用"])],
            "N1": [("家装五金-门窗五金-密封条-门底挡风条", ["门底挡风条防虫"])],
            "N2": [("家装主材-门窗-塑钢窗-推拉窗", ["塑钢推拉窗定制"])],
        },
    ),
    (
        "acne_mask",
        ["戴口罩下巴闷出痘"],
        {
            "L1": [
                ("美妆护肤-面部护理-祛痘-祛痘凝胶", ["水杨酸祛痘凝胶闭口粉刺"]),
                ("个护健康-口罩-一次性口罩-透气口罩", ["冰丝透气口罩夏季薄款"]),
            ],
            "L2": [("美妆护肤-面部护理-洁面-氨基酸洗面奶", ["氨基酸洗面奶温和清洁"])],
            "N1": [("美妆护肤-面部护理-面霜-滋润面霜", ["滋润厚重面霜干皮"])],
            "N2": [("美妆护肤-彩妆-粉底-遮瑕膏", ["遮瑕膏遮痘印"])],
        },
    ),
    (
        "luggage_lost",
        ["托运行李箱老是认错"],
        {
            "L1": [
                ("箱包-旅行配件-行李牌-行李吊牌", ["行李牌硅胶登机牌防丢"]),
                ("箱包-旅行配件-行李带-十字打包带", ["行李箱十字打包带彩色"]),
            ],
            "L2": [("3C数码配件-智能设备-防丢器-蓝牙防丢器", ["蓝牙防丢器定位追踪"])],
            "N1": [("箱包-旅行配件-行李牌-纸质标签", ["一次性纸质行李标签"])],
            "N2": [("箱包-拉杆箱-万向轮-铝框箱", ["铝框拉杆箱20寸"])],
        },
    ),
    (
        "wine_spill",
        ["白衬衫沾了红酒"],
        {
            "L2": [("家清-衣物清洁-洗衣液-机洗洗衣液", ["洗衣液薰衣草香2kg"])],
            "N1": [("家清-衣物清洁-漂白剂-含氯漂白剂", ["含氯漂白剂彩色衣物慎用"])],
            "N2": [("服饰-男装-衬衫-白衬衫", ["男士白衬衫商务长袖"])],
        },
    ),
]
# Scenarios whose image is shown with two questions give queries that share an image.

# Products no query judges: the corpus is larger than the judged pools, as in the benchmark.
UNJUDGED = [
    ("食品-休闲零食-坚果-每日坚果", ["每日坚果混合果仁", "盐焗腰果罐装", "碧根果奶油味", "夏威夷果开口"]),
    ("服饰-女装-连衣裙-碎花连衣裙", ["碎花连衣裙法式", "雪纺连衣裙夏季", "收腰连衣裙显瘦", "长款连衣裙度假"]),
    ("3C数码配件-充电器-快充头-氮化镓充电器", ["氮化镓充电器65W", "快充头双口20W", "多口充电器桌面", "折叠插脚充电头"]),
    ("文具-书写工具-中性笔-按动中性笔", ["按动中性笔0.5黑", "速干中性笔学生", "金属中性笔商务", "彩色中性笔套装"]),
    ("运动户外-健身器材-瑜伽垫-加厚瑜伽垫", ["加厚瑜伽垫防滑", "TPE瑜伽垫双色", "折叠瑜伽垫便携", "天然橡胶瑜伽垫"]),
    ("家居日用-收纳整理-收纳箱-折叠收纳箱", ["折叠收纳箱布艺", "透明收纳箱衣物", "抽屉式收纳柜", "车载收纳箱后备箱"]),
    (
        "个护健康-口腔护理-电动牙刷-声波电动牙刷",
        ["声波电动牙刷成人", "儿童电动牙刷软毛", "电动牙刷替换头", "冲牙器便携家用"],
    ),
    ("宠物用品-宠物食品-猫粮-全价猫粮", ["全价猫粮成猫10斤", "幼猫粮奶糕", "冻干猫粮混合", "无谷猫粮鸡肉"]),
    ("厨房用品-锅具-炒锅-不粘炒锅", ["不粘炒锅麦饭石", "铁锅无涂层老式", "平底锅煎蛋", "珐琅锅炖锅"]),
    ("图书-童书-绘本-儿童绘本", ["儿童绘本睡前故事", "恐龙科普绘本", "英文原版绘本", "洞洞书婴儿"]),
]
UNJUDGED_BRANDS = ["优品", "云朵", "青禾", "拾光", "南极星", "初见", "暖居"]


def _item_id(title: str) -> str:
    return hashlib.sha256(title.encode()).hexdigest()[:16]


def _jpeg(path: Path, seed: str):
    rng = random.Random(seed)
    image = Image.new("RGB", (48, 48), tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    for _ in range(4):
        box = sorted(rng.sample(range(48), 2)) + sorted(rng.sample(range(48), 2))
        draw.rectangle([box[0], box[2], box[1], box[3]], fill=tuple(rng.randrange(256) for _ in range(3)))
    image.save(path, "JPEG", quality=60)


def _write_jsonl(path: Path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def build():
    rng = random.Random(20261129)
    (OUT / "images" / "query_images").mkdir(parents=True, exist_ok=True)
    (OUT / "images" / "product_images").mkdir(parents=True, exist_ok=True)
    (OUT / "baseline").mkdir(exist_ok=True)

    products, scenario_items = {}, []
    for _, _, graded in SCENARIOS:
        items = []
        for grade, groups in graded.items():
            for category, titles in groups:
                for title in titles:
                    item_id = _item_id(title)
                    products[item_id] = {
                        "item_id": item_id,
                        "title": title,
                        "pict_url": f"{item_id}.jpg",
                        "treecate_full_path": category,
                    }
                    items.append((item_id, grade))
        scenario_items.append(items)
    for category, names in UNJUDGED:
        for name in names:
            for brand in rng.sample(UNJUDGED_BRANDS, 3):
                title = f"{brand}{name}"
                item_id = _item_id(title)
                products[item_id] = {
                    "item_id": item_id,
                    "title": title,
                    "pict_url": f"{item_id}.jpg",
                    "treecate_full_path": category,
                }

    queries, qrels = [], []
    for number, ((image, questions, _), items) in enumerate(zip(SCENARIOS, scenario_items), start=1):
        _jpeg(OUT / "images" / "query_images" / f"{number}.jpg", image)
        own = {item for item, _ in items}
        others = sorted(set(products) - own)
        for question in questions:
            idx = str(len(queries) + 1)
            queries.append({"idx": idx, "query": question, "image_url": f"{number}.jpg"})
            irrelevant = [(item, "N3") for item in rng.sample(others, 4)]
            judged = items + irrelevant
            rng.shuffle(judged)
            qrels.append({"idx": idx, "items": [{"item_id": i, "final_grade": g} for i, g in judged]})

    for item_id in products:
        _jpeg(OUT / "images" / "product_images" / f"{item_id}.jpg", item_id)
    _write_jsonl(OUT / "mipr_query.jsonl", queries)
    _write_jsonl(OUT / "mipr_corpus.jsonl", products.values())
    _write_jsonl(OUT / "mipr_annotation.jsonl", qrels)
    _write_runs(rng, queries, qrels, sorted(products))


def _write_runs(rng, queries, qrels, item_ids):
    signal = {"L1": 2.0, "L2": 1.4, "N1": 1.2, "N2": 1.0, "N3": 0.2}
    embedding, reranked = [], []
    for query, judged in zip(queries, qrels):
        grade = {item["item_id"]: item["final_grade"] for item in judged["items"]}
        # Embedding scores: the grade's signal buried in noise, so the top 50 misses and misorders some.
        scores = {item: signal.get(grade.get(item), 0.0) + rng.gauss(0, 0.8) for item in item_ids}
        pool = sorted(item_ids, key=lambda item: -scores[item])[:RUN_DEPTH]
        embedding.append(_ranking(query["idx"], pool, scores))
        # The reranker sees the same pool with less noise.
        rescored = {item: signal.get(grade.get(item), 0.0) + rng.gauss(0, 0.4) for item in pool}
        reranked.append(_ranking(query["idx"], sorted(pool, key=lambda item: -rescored[item]), rescored))
    for name, run in [("simulated_embedding_top50.json", embedding), ("simulated_reranker_top50.json", reranked)]:
        (OUT / "baseline" / name).write_text(json.dumps(run, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _ranking(qid, items, scores):
    return {"qid": qid, "ranked": [{"did": item, "score": round(scores[item], 4)} for item in items]}


if __name__ == "__main__":
    build()
