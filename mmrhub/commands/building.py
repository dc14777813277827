"""The options of the commands that build a benchmark's configs: the image checks, and where archives are."""


def add_build_arguments(parser, images_dir: bool = True) -> None:
    parser.add_argument("--no-check-images", dest="check_images", action="store_false",
                        help="skip the checks of the image folders and archives (M2KR then reads no archive)")
    if images_dir:
        parser.add_argument("--images-dir", help="M2KR: the folder of the image archives, if not DATA_DIR/images or DATA_DIR")


def build_options(benchmark, args) -> dict:
    """The builder's own keywords (``check_images``; M2KR's ``images_dir``) from the parsed arguments."""
    return benchmark.builder_options(args.check_images, getattr(args, "images_dir", None))
