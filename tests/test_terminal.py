"""Data quoted in messages and tables cannot drive the terminal: control characters are escaped."""

import json

from _paths import ROOT

from mmrhub.cli import main
from mmrhub.terminal import printable

EMBEDDING = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
TITLE = "\x1b]0;pwned\x07"


def test_printable_escapes_controls_and_keeps_lines():
    assert printable(f"id {TITLE}\n\tnext\x9b") == "id \\x1b]0;pwned\\x07\n\tnext\\x9b"
    assert printable("產品 ok") == "產品 ok"


def test_an_id_with_an_escape_sequence_is_printed_escaped(tmp_path, capsys):
    entries = json.loads(EMBEDDING.read_text(encoding="utf-8"))
    entries[0]["ranked"][0]["did"] = TITLE
    run = tmp_path / "run.json"
    run.write_text(json.dumps(entries), encoding="utf-8")
    assert main(["evaluate", "mipr", str(run)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "'\\x1b]0;pwned\\x07' is not in the corpus" in err


def test_a_row_name_with_an_escape_sequence_is_printed_escaped(capsys):
    assert main(["evaluate", "mipr", str(EMBEDDING), "--name", f"run{TITLE}"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "| run\\x1b]0;pwned\\x07 |" in out
