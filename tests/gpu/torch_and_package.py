"""torch when it is importable, then the attn_jit package, in that order: the package
registers its torch custom ops only when torch came first. The package is the installed
one (PYTHONPATH, e.g. a bundle's python/), else this checkout's python/.

    from torch_and_package import torch, attn_jit, NO_TORCH, NO_CUDA

NO_TORCH / NO_CUDA: why the torch tests cannot run here (None when they can).
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import torch
except ImportError as ex:
    torch = None
    NO_TORCH = f"torch not importable ({ex})"
else:
    NO_TORCH = None
try:
    import attn_jit
except ImportError:
    sys.path.append(os.path.join(REPO, "python"))
    import attn_jit
NO_CUDA = NO_TORCH or (None if torch.cuda.is_available() else "torch sees no CUDA device")
