"""What PreFLMR's DataLoader workers hand the main process for a batch of passages: its token ids and attention
mask as one int32 array (``TokenBatch``). A batch of tensors crosses from a worker as one shared-memory segment per
tensor, which the main process maps, wraps and later unmaps, and then pins one by one: with passages' small
tensors that handling, not the bytes, was the main process's cost. One array travels inside the batch's pickle,
the DataLoader's pin-memory thread copies it once into pinned memory (CUDA runs), and one copy moves it to the
device, where the ids are widened and the kept-token mask is computed (``inputs.passage_mask``: a function of the
ids alone).
"""

import numpy as np
import torch


class TokenBatch:
    """A batch's (ids, attention mask), each (B, T), packed as one (2, B, T) int32 array."""

    def __init__(self, ids, attention):
        self.array = np.stack([np.asarray(ids, dtype=np.int32), np.asarray(attention, dtype=np.int32)])
        self.pinned = None

    def __len__(self) -> int:
        return self.array.shape[1]

    def pin_memory(self, device=None) -> "TokenBatch":
        """Called by the DataLoader's pin-memory thread (``pin_memory=True``): the array copied once into pinned
        memory, so that ``to`` moves it without waiting."""
        self.pinned = torch.from_numpy(self.array).pin_memory()
        return self

    def host(self) -> torch.Tensor:
        """The packed values on the host: pinned where they were pinned, else the array itself (no copy)."""
        return self.pinned if self.pinned is not None else torch.from_numpy(self.array)

    def to(self, device) -> tuple:
        """(ids, attention mask) on ``device``, both int64 as the tokenizer makes them: one copy, then unpacked."""
        values = self.host().to(device, non_blocking=self.pinned is not None)
        return values[0].long(), values[1].long()
