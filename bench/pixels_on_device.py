"""Whether pixel values the workers send as one frame of bytes reach the model, on this device, as the very values
the processor computes on the CPU (``model_inputs.Compact``): Qwen-VL's image processor (transformers' torchvision
backend, Qwen3-VL's 16-pixel patches, and both the 0.5 and the CLIP means and deviations), noise images of several
sizes whose bytes cover every value of every channel, in bfloat16, float16 and float32.

    python bench/pixels_on_device.py [--device cuda]

Prints one line per case and exits 1 if any value differs. ``bench/gpu_check.sh`` runs it on the GPU;
tests/retrieve/rerank/test_qwen3vl.py holds the same on CPU.
"""

import argparse
import sys

import torch


def cases():
    """(name, image processor) of each normalisation checked."""
    from transformers.image_utils import OPENAI_CLIP_MEAN
    from transformers.image_utils import OPENAI_CLIP_STD
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor

    for name, mean, std in (
        ("mean 0.5, std 0.5 (Qwen3-VL)", [0.5] * 3, [0.5] * 3),
        ("CLIP", OPENAI_CLIP_MEAN, OPENAI_CLIP_STD),
    ):
        yield (
            name,
            Qwen2VLImageProcessor(patch_size=16, temporal_patch_size=2, merge_size=2, image_mean=mean, image_std=std),
        )


def images():
    """Noise images whose sides are multiples of 32 (resized by nobody, as under the presets' pixel budgets)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    return [
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in ((64, 96), (96, 64), (320, 320))
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
    from mmrhub.retrieve.model_inputs import Compact
    from mmrhub.retrieve.model_inputs import to_device

    failed = 0
    for name, processor in cases():
        batch = images()
        whole = processor(images=batch, do_resize=False, return_tensors="pt")["pixel_values"]
        raw = processor(images=batch, do_resize=False, temporal_patch_size=1, do_rescale=False, do_normalize=False)
        assert raw["pixel_values"].dtype == torch.uint8 and raw["pixel_values"].shape[1] * 2 == whole.shape[1]
        for dtype in (torch.bfloat16, torch.float16, None):
            compact = Compact(dtype, 2, 768, processor)
            features = compact({"pixel_values": raw["pixel_values"]})
            got = to_device(features, args.device, compact)["pixel_values"]
            expected = whole.to(dtype) if dtype is not None else whole
            same = torch.equal(got.cpu(), expected)
            failed += not same
            label = str(dtype).replace("torch.", "") if dtype is not None else "float32"
            print(f"{args.device}, {name}, {label}: {'identical' if same else 'DIFFERENT'} ({got.numel():,} values)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
