"""The implementations vkml is compared with: PyTorch, JAX and hand-written raw IREE modules.

Each peer is imported lazily; a missing one raises ``PeerMissing`` with the reason, which the
harness turns into an "n/a" row. The raw IREE modules are StableHLO text written here by hand,
compiled straight with ``iree.compiler.compile_str`` (no vkml pass runs) using the same flags
vkml's cpu device uses, and invoked through ``iree.runtime`` on the ``local-task`` driver.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np


class PeerMissing(RuntimeError):
    """A peer library is not installed or cannot start here."""


@functools.cache
def torch_module() -> Any:
    try:
        import torch
    except Exception as exc:
        raise PeerMissing(f"torch not importable: {exc}") from exc
    return torch


def torch_mlp(weights: list[Any]) -> Any:
    """The digits MLP (64 -> 128 ReLU -> 10) as a ``torch.nn.Sequential`` holding ``weights``
    (NumPy arrays in vkml's order and (out, in) layout, which is torch's)."""
    torch = torch_module()
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(torch.from_numpy(w))
    return model


@functools.cache
def jax_modules() -> tuple[Any, Any]:
    """``(jax, jax.numpy)``, on the CPU platform."""
    try:
        import jax
        import jax.numpy as jnp
    except Exception as exc:
        raise PeerMissing(f"jax not importable: {exc}") from exc
    return jax, jnp


def torch_compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.compile(fn)`` with the default (inductor) backend; compiles at first call."""
    torch = torch_module()
    return torch.compile(fn, dynamic=False, fullgraph=True)


def jax_jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    jax, _ = jax_modules()
    return jax.jit(fn)


def jax_put(array: np.ndarray) -> Any:
    """``array`` resident on JAX's default (CPU) device."""
    jax, _ = jax_modules()
    return jax.block_until_ready(jax.device_put(array))


# --- raw IREE ---------------------------------------------------------------------------------


def raw_chain_text(n: int) -> str:
    """The 8-op elementwise chain of benchmark 3 as StableHLO, written by hand."""
    t = f"tensor<{n}xf32>"

    def splat(name: str, hex_bits: str) -> str:
        return f"    %{name} = stablehlo.constant dense<{hex_bits}> : {t}\n"

    return (
        "module @raw {\n"
        f"  func.func @main(%x: {t}) -> {t} {{\n"
        + splat("c1_5", "1.500000e+00")
        + splat("c0_5", "5.000000e-01")
        + splat("c0_25", "2.500000e-01")
        + splat("c2", "2.000000e+00")
        + f"    %0 = stablehlo.multiply %x, %c1_5 : {t}\n"
        f"    %1 = stablehlo.add %0, %c0_5 : {t}\n"
        f"    %2 = stablehlo.tanh %1 : {t}\n"
        f"    %3 = stablehlo.exponential %2 : {t}\n"
        f"    %4 = stablehlo.sqrt %3 : {t}\n"
        f"    %5 = stablehlo.log %4 : {t}\n"
        f"    %6 = stablehlo.maximum %5, %c0_25 : {t}\n"
        f"    %7 = stablehlo.multiply %6, %c2 : {t}\n"
        f"    return %7 : {t}\n"
        "  }\n"
        "}\n"
    )


def raw_sum_text(n: int) -> str:
    """A plain ``stablehlo.reduce`` add over a 1-D f32 tensor (IREE chooses the order)."""
    return (
        "module @raw {\n"
        f"  func.func @main(%x: tensor<{n}xf32>) -> tensor<f32> {{\n"
        "    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
        "    %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]"
        f" : (tensor<{n}xf32>, tensor<f32>) -> tensor<f32>\n"
        "    return %s : tensor<f32>\n"
        "  }\n"
        "}\n"
    )


def raw_matmul_text(m: int, k: int, n: int) -> str:
    a, b, c = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    return (
        "module @raw {\n"
        f"  func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
        "    %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
        f" : ({a}, {b}) -> {c}\n"
        f"    return %c : {c}\n"
        "  }\n"
        "}\n"
    )


class RawIreeModule:
    """A hand-written StableHLO module compiled by IREE alone and run on ``driver``
    (``local-task`` unless told; vkml's cpu device runs small graphs on ``local-sync``)."""

    def __init__(self, text: str, driver: str = "local-task") -> None:
        try:
            import iree.runtime as rt
            from iree import compiler
        except Exception as exc:
            raise PeerMissing(f"iree not importable: {exc}") from exc
        from vkml.compiler.target import CPU_TARGET

        self._rt = rt
        self.flags = list(CPU_TARGET.flags)
        vmfb = compiler.compile_str(
            text, target_backends=["llvm-cpu"], input_type="stablehlo", extra_args=self.flags
        )
        self.config = rt.Config(driver)
        self.context = rt.SystemContext(config=self.config)
        self.context.add_vm_module(rt.VmModule.copy_buffer(self.context.instance, vmfb))
        self.main = self.context.modules.raw["main"]

    def put(self, array: np.ndarray) -> Any:
        """``array`` uploaded once to this module's device (a resident input)."""
        return self._rt.asdevicearray(self.config.device, array)

    def __call__(self, *args: Any) -> Any:
        return self.main(*args)
