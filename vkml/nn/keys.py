"""Where a layer's initial parameters come from: the ``key=`` it is given, or, when none is,
the module-level key ``manual_seed`` set, split once per layer in the order layers are
made. Both are explicit (nothing is drawn from a hidden clock or global generator) and
reproducible: the same seed and the same layers give the same parameters on every device."""

from __future__ import annotations

from typing import Any

from vkml.frontend import random
from vkml.frontend.tensor import Tensor

# the key the next layer made without ``key=`` splits, once manual_seed has set it
_HELD: list[Tensor | None] = [None]


def manual_seed(seed: int, device: Any = None) -> None:
    """Seed the key that layers made without ``key=`` draw from: each such layer splits it
    once, in the order they are made, and their parameters live on ``device`` (default
    ``vkml.cpu``). ``vkml.nn.manual_seed(0)`` then ``nn.Linear(4, 2)`` is
    ``nn.Linear(4, 2, key=k)`` for a key ``k`` that seed 0 and the layer's position fix."""
    _HELD[0] = random.key(seed, device)


def layer_key(layer: str, key: Any) -> Tensor:
    """``key`` checked, or the next key of the module-level one; TypeError naming ``layer``
    and both remedies when there is neither."""
    if key is not None:
        return random.check_key(layer, key)
    held = _HELD[0]
    if held is None:
        raise TypeError(
            f"{layer}: give key=vkml.random.key(seed), or call vkml.nn.manual_seed(seed) once "
            f"and every layer made after it draws its own key from that seed"
        )
    keys = random.split(held, 2)
    _HELD[0] = keys[0]
    return keys[1]


def two_keys(layer: str, key: Any) -> tuple[Tensor, Tensor]:
    """Two independent keys from ``layer_key(layer, key)``: a weight's and a bias's."""
    keys = random.split(layer_key(layer, key), 2)
    return keys[0], keys[1]
