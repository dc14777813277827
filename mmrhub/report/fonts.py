"""The fonts the report names for Chinese text, in the page's styles and in every plot's SVG text, so a browser
finds one wherever it runs: Noto Sans CJK and WenQuanYi (Linux; Debian's fonts-noto-cjk, fonts-wqy-microhei),
Microsoft YaHei (Windows), PingFang SC (macOS)."""

CJK_FONTS = ("Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "Microsoft YaHei", "PingFang SC")


def font_stack(*first: str) -> str:
    """A CSS font-family list: ``first``, then the CJK fonts, then the browser's sans-serif."""
    return ", ".join(f'"{name}"' if " " in name else name for name in (*first, *CJK_FONTS, "sans-serif"))
