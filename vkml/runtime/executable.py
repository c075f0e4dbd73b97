"""A compiled module loaded on a HAL session, and its one-call invocation."""

from __future__ import annotations

from collections.abc import Sequence

import iree.runtime as rt

from vkml.dtypes import DType
from vkml.errors import InvocationError
from vkml.runtime.faults import invocation_error
from vkml.runtime.hal import HalSession
from vkml.runtime.stats import bump


class Executable:
    """A ``.vmfb`` loaded into its own VM context; ``invoke`` runs its entry function once.

    ``queued``: the function takes a wait and a signal fence last (``Abi.queued``); ``invoke``
    passes them and returns once the signal fence is reached, so either way the results are
    computed when it returns.
    """

    __slots__ = ("context", "entry", "function", "num_results", "queued", "session")

    def __init__(
        self, sess: HalSession, vmfb: bytes, entry: str, num_results: int, queued: bool = False
    ) -> None:
        module = rt.VmModule.copy_buffer(sess.instance, vmfb)
        self.session = sess
        try:
            self.context = rt.VmContext(sess.instance, [sess.hal_module, module])
        except (
            RuntimeError,
            ValueError,
            IndexError,
        ) as exc:  # IREE's status, as its bindings map it
            raise InvocationError(
                f"IREE could not load a module vkml compiled onto {sess.driver}: {exc}. This is "
                f"vkml's bug (a module it should have split or refused); please report the graph"
            ) from exc
        function = module.lookup_function(entry)
        if function is None:
            raise InvocationError(f"compiled module has no function '{entry}'")
        self.function = function
        self.entry = entry
        self.num_results = num_results
        self.queued = queued

    def invoke(
        self,
        args: list[rt.HalBufferView],
        device: str | None = None,
        physical: str = "",
        results: Sequence[tuple[Sequence[int], DType]] = (),
    ) -> list[rt.HalBufferView]:
        """Run the entry function once on ``args``; return its result buffer views.

        Args:
            args: the argument buffer views, in the function's order.
            device: the device's vkml name for error messages (default: the IREE driver).
            physical: the physical device's name, shown after ``device`` where there is one.
            results: each result's shape and dtype, so an out-of-memory error says what was
                asked for.

        Raises:
            DeviceMemoryError: the device ran out of memory (IREE's RESOURCE_EXHAUSTED).
            DeviceFaultError: the device was lost or faulted (INTERNAL, UNAVAILABLE, ...).
            InvocationError: any other failure. ``invocations`` is counted only on success.
        """
        arg_list = rt.VmVariantList(len(args) + 2 * self.queued)
        for view in args:
            arg_list.push_ref(view)
        outputs = rt.VmVariantList(self.num_results)
        try:
            if self.queued:
                self._queued_call(arg_list, outputs)
            else:
                self.context.invoke(self.function, arg_list, outputs)
        except (RuntimeError, ValueError) as exc:
            name = device or self.session.driver
            raise invocation_error(exc, name, physical, self.entry, results) from exc
        bump("invocations")
        return [outputs.get_as_object(i, rt.HalBufferView) for i in range(self.num_results)]

    def _queued_call(self, arg_list: rt.VmVariantList, outputs: rt.VmVariantList) -> None:
        """Queue the call, then wait until it is done (on a semaphore of the session's pool:
        a failed call leaves its semaphore failed, so it is not given back)."""
        pool = self.session.semaphores
        semaphore, value = pool.take()
        done = rt.HalFence.create_at(semaphore, value)
        arg_list.push_ref(pool.nothing)
        arg_list.push_ref(done)
        self.context.invoke(self.function, arg_list, outputs)
        done.wait()
        pool.give(semaphore, value)
