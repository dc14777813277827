"""One ``mmrhub`` command run in the test's process, and the Markdown tables it prints."""

from mmrhub.cli import main


def run_cli(capsys, *argv) -> tuple:
    """(exit code, stdout, stderr) of one ``mmrhub`` command."""
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def md_tables(text: str) -> list:
    """Every Markdown table of a command's output: rows of cells, the heading first, the separator left out."""
    found, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                current.append([cell.strip() for cell in line.strip("|").split("|")])
        elif current:
            found.append(current)
            current = []
    return found
