"""Small JPEG data URIs from decoded images, so the page carries its pictures inline."""

import base64
import io

THUMBNAIL_PX = 96
JPEG_QUALITY = 75  # 96 px thumbnails of about 3-5 KB: a 50-query page stays well under 20 MB


def thumbnail_uri(image, size: int = THUMBNAIL_PX) -> str:
    image = image.convert("RGB")  # JPEG has no alpha or palette (PNG screenshots)
    image.thumbnail((size, size))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
