"""A run file's bytes, after its byte-order mark."""



BOM = b"\xef\xbb\xbf"


def file_bytes(path: str, bom: int) -> bytes:
    """The whole file without its first ``bom`` bytes."""
    with open(path, "rb") as handle:
        return handle.read()[bom:]

