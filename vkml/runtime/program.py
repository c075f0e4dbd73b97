"""A ``.vmfb`` with several public functions loaded into one VM context, with the modules it
imports (a parameter archive): what ``vkml.aot.load`` runs exported modules with.

``Executable`` (one entry function, vkml's own calling convention) serves realize; a
``Program`` serves a module someone else may also run with IREE's tools.
"""

from __future__ import annotations

from collections.abc import Sequence

import iree.runtime as rt

from vkml.dtypes import DType
from vkml.runtime.faults import invocation_error
from vkml.runtime.hal import HalSession
from vkml.runtime.pending import settle
from vkml.runtime.stats import bump


def read_module(sess: HalSession, vmfb: bytes) -> rt.VmModule:
    """The VM module in ``vmfb`` (not yet loaded into a context).

    Raises:
        ValueError: IREE cannot read it (truncated, not a module, another IREE release's
            bytecode); the message is IREE's.
    """
    return rt.VmModule.copy_buffer(sess.instance, vmfb)


def reflection(module: rt.VmModule, function: str) -> dict[str, str] | None:
    """The reflection metadata of ``function`` in ``module``, or None if it has no such
    function."""
    found = module.lookup_function(function)
    return None if found is None else dict(found.reflection)


class Program:
    """``module`` loaded on ``sess`` after the HAL module and ``imports`` (modules it needs,
    such as a parameter archive's); ``invoke`` runs one of its functions once."""

    __slots__ = ("_functions", "context", "module", "session")

    def __init__(
        self, sess: HalSession, module: rt.VmModule, imports: Sequence[rt.VmModule]
    ) -> None:
        self.session = sess
        self.module = module
        self.context = rt.VmContext(sess.instance, [sess.hal_module, *imports, module])
        self._functions: dict[str, rt.VmFunction] = {}

    def invoke(
        self,
        function: str,
        args: list[rt.HalBufferView],
        num_results: int,
        device: str,
        results: Sequence[tuple[Sequence[int], DType]] = (),
    ) -> list[rt.HalBufferView]:
        """Run ``function`` once on ``args``; its result buffer views.

        Raises:
            DeviceMemoryError, DeviceFaultError, InvocationError: as ``Executable.invoke``.
        """
        entry = self._functions.get(function)
        if entry is None:
            entry = self.module.lookup_function(function)
            if entry is None:
                raise KeyError(function)
            self._functions[function] = entry
        settle(args)  # a realize's result that a queued call is still writing
        arg_list = rt.VmVariantList(len(args))
        for view in args:
            arg_list.push_ref(view)
        outputs = rt.VmVariantList(num_results)
        try:
            self.context.invoke(entry, arg_list, outputs)
        except (RuntimeError, ValueError) as exc:
            raise invocation_error(exc, device, "", function, results) from exc
        bump("invocations")
        return [outputs.get_as_object(i, rt.HalBufferView) for i in range(num_results)]
