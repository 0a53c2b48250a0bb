"""weft's backend for torch.distributed.

``import weft_torch`` registers the c10d backend ``"weft"``; then

    torch.distributed.init_process_group("weft", ...)

runs the process group's collectives and point-to-point transfers on weft communicators
(CPU tensors), with any init method (``env://``, ``tcp://``, ``file://``) or an explicit store.
"""

import atexit
import inspect

import torch.distributed as _dist

if not _dist.is_available():
    raise ImportError("weft_torch needs torch.distributed, which this PyTorch was built without")

from ._C import ProcessGroupWeft, weft_version, _shutdown_all  # noqa: E402

__all__ = ["ProcessGroupWeft", "weft_version", "BACKEND"]

BACKEND = "weft"


def _create_process_group(store, rank, size, timeout):
    # torch.distributed calls this for every process group of backend "weft" (the default group
    # and each new_group), with a store private to that group.
    return ProcessGroupWeft(store, rank, size, timeout)


def _register():
    register = _dist.Backend.register_backend
    if "devices" in inspect.signature(register).parameters:
        # PyTorch >= 2.0 attaches a backend per device type; weft drives CPU tensors for now.
        register(BACKEND, _create_process_group, devices=["cpu"])
    else:
        register(BACKEND, _create_process_group)


_register()
# Every weft process group runs what it was given and tells its peers it is leaving before the
# interpreter exits, so that a rank that ends first does not look like a dead one to the others.
atexit.register(_shutdown_all)
