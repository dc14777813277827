"""Rerank each query's candidate pool of a baseline run with a multimodal cross-encoder, write and score the run.

Same as ``mmrhub rerank``; see ``--help``. Several processes: ``torchrun --nproc_per_node N scripts/rerank.py ...``
or ``accelerate launch scripts/rerank.py ...``.
"""

import sys

from mmrhub.retrieve.rerank_options import build_parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from mmrhub.retrieve.rerank import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
