"""Embed queries and corpus of MIPR or M2KR, retrieve the exact top-k, write the run and print its scores.

Same as ``mmrhub retrieve``; see ``--help``. Several processes: ``torchrun --nproc_per_node N
scripts/embed_retrieve.py ...`` or ``accelerate launch scripts/embed_retrieve.py ...``.
"""

import sys

from mmrhub.commands.retrieve import build_parser
from mmrhub.commands.retrieve import run


def main(argv=None) -> int:
    """Parse ``argv`` and run the pipeline."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
