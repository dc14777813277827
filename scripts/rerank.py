"""Rerank each query's candidate pool of a baseline run with a multimodal cross-encoder, write and score the run.

Same as ``mmrhub rerank``; see ``--help``. Several processes: ``torchrun --nproc_per_node N scripts/rerank.py ...``
or ``accelerate launch scripts/rerank.py ...``.
"""

import sys

from mmrhub.commands.rerank import build_parser
from mmrhub.commands.rerank import run


def main(argv=None) -> int:
    """Parse ``argv`` and rerank."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
