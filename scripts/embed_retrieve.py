"""Embed queries and corpus of MIPR or M2KR, retrieve the exact top-k, write the run and print its scores.

Same as ``mmrhub retrieve``; see ``--help``. Several processes: ``torchrun --nproc_per_node N
scripts/embed_retrieve.py ...`` or ``accelerate launch scripts/embed_retrieve.py ...``.
"""

import sys

from mmrhub.retrieve.options import build_parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from mmrhub.retrieve.pipeline import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
