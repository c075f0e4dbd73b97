"""A compiled module loaded on a HAL session, and its one-call invocation."""

from __future__ import annotations

from collections.abc import Sequence

import iree.runtime as rt

from vkml.dtypes import DType
from vkml.errors import InvocationError
from vkml.runtime.faults import invocation_error
from vkml.runtime.hal import HalSession
from vkml.runtime.queue import StoragePool
from vkml.runtime.stats import bump


class Executable:
    """A ``.vmfb`` loaded into its own VM context; ``invoke`` runs its entry function once.

    ``queued``: the function takes a wait and a signal fence last (``Abi.queued``); ``invoke``
    passes them and returns once the signal fence is reached, so either way the results are
    computed when it returns. ``transients``: it takes a buffer for its transient values after
    the tensors (``Abi.transients``), one from the executable's pool per call in flight.
    """

    __slots__ = ("context", "entry", "function", "num_results", "queued", "session", "storage")

    def __init__(
        self,
        sess: HalSession,
        vmfb: bytes,
        entry: str,
        num_results: int,
        queued: bool = False,
        transients: bool = False,
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
        self.storage = (
            StoragePool(sess.allocator, _transients_size(function)) if transients else None
        )

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
        arg_list = rt.VmVariantList(len(args) + 3)
        for view in args:
            arg_list.push_ref(view)
        outputs = rt.VmVariantList(self.num_results)
        storage = self.storage.take() if self.storage is not None else None
        if storage is not None:
            arg_list.push_ref(storage[0])
        try:
            if self.queued:
                self._queued_call(arg_list, outputs)
            else:
                self.context.invoke(self.function, arg_list, outputs)
        except (RuntimeError, ValueError) as exc:
            name = device or self.session.driver
            raise invocation_error(exc, name, physical, self.entry, results) from exc
        if self.storage is not None and storage is not None:
            self.storage.give(*storage)
        bump("invocations")
        return [outputs.get_as_object(i, rt.HalBufferView) for i in range(self.num_results)]

    def release(self) -> None:
        """Drop the idle transient buffers (made again when next needed)."""
        if self.storage is not None:
            self.storage.release()

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


def _transients_size(function: rt.VmFunction) -> int:
    """The bytes a module's transients need, as IREE's reflection states them: no size
    function when it keeps nothing between dispatches (a module that only fills an empty
    result), else a constant for a module of static shapes, which is all vkml compiles."""
    reflection = function.reflection
    if "iree.abi.transients.size" not in reflection:
        return 0
    size = reflection.get("iree.abi.transients.size.constant")
    if size is None:
        raise InvocationError(
            f"compiled function '{function.name}' takes transient storage of a size that is "
            f"not constant (iree.abi.transients.size.constant); this is vkml's bug"
        )
    return int(size)
