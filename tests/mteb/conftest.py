"""The MTEB tests' settings: MTEB's default result cache (made when mteb is imported) in a temporary folder, never
the user's ``~/.cache/mteb``. Set while the tests are collected, before any test imports mteb."""

import os
import tempfile

os.environ.setdefault("MTEB_CACHE", tempfile.mkdtemp(prefix="mmrhub-test-mteb-"))
