"""A compiled module loaded on a HAL session, and its one-call invocation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import iree.runtime as rt

from vkml.dtypes import DType
from vkml.errors import BindingLimitError, InvocationError
from vkml.runtime.faults import BINDING_LIMIT, invocation_error
from vkml.runtime.hal import HalSession
from vkml.runtime.pending import Pending, ResultView, settle, wait_fence
from vkml.runtime.queue import StoragePool
from vkml.runtime.stats import bump


class Executable:
    """A ``.vmfb`` loaded into its own VM context; ``invoke`` runs its entry function once.

    ``queued``: the function takes a wait and a signal fence last (``Abi.queued``); ``invoke``
    passes them and returns once the signal fence is reached, so either way the results are
    computed when it returns, while ``submit`` returns at once with the call still running
    (``vkml.runtime.pending``). ``spin``: seconds a wait polls before it blocks.
    ``transients``: it takes a buffer for its transient values after the tensors
    (``Abi.transients``), one from the executable's pool per call in flight.
    """

    __slots__ = (
        "context", "entry", "function", "num_results", "queued", "session", "spin", "storage"
    )  # fmt: skip

    def __init__(
        self,
        sess: HalSession,
        vmfb: bytes,
        entry: str,
        num_results: int,
        queued: bool = False,
        transients: bool = False,
        spin: float = 0.0,
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
            kind = BindingLimitError if BINDING_LIMIT.search(str(exc)) else InvocationError
            raise kind(
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
        self.spin = spin
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
        """Run the entry function once on ``args``; return its result buffer views, computed.

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
        views, call = self.submit(args, device, physical, results, waited=True)
        if call is not None:
            call.wait(self.spin)
        return views

    def submit(
        self,
        args: list[rt.HalBufferView],
        device: str | None = None,
        physical: str = "",
        results: Sequence[tuple[Sequence[int], DType]] = (),
        *,
        waited: bool = False,
    ) -> tuple[list[rt.HalBufferView], Pending | None]:
        """Queue one call of the entry function on ``args`` (as ``invoke``), without waiting
        for a queued module's call to end: its result views, and the call (``Pending``:
        wait on it, or on the views through ``vkml.runtime.pending``, before reading them),
        None for a synchronous module (then the results are computed).

        An argument a queued call is still writing (a ``ResultView``) is waited for on the
        device, by a queued module, or here, by a synchronous one. ``waited``: the caller
        waits for the call at once (``invoke``), so a failure on the device leaves the
        tensors unrealized rather than lost, and its error says so.

        Raises:
            As ``invoke``; a failure on the device after queueing is raised by the wait.
        """
        name = device or self.session.driver

        def error(exc: Exception, queued: bool = False) -> Exception:
            return invocation_error(exc, name, physical, self.entry, results, queued=queued)

        pool = self.session.semaphores
        if self.queued:
            pool.reap()
            wait = wait_fence(args, pool.nothing)
        else:
            settle(args)
        storage = self.storage.take() if self.storage is not None else None
        arg_list = _argument_list(args, storage)
        outputs = rt.VmVariantList(self.num_results)
        call: Pending | None = None
        try:
            if self.queued:
                semaphore, value = pool.take()
                arg_list.push_ref(wait)
                arg_list.push_ref(rt.HalFence.create_at(semaphore, value))
                self.context.invoke(self.function, arg_list, outputs)
                finish = self._finisher(semaphore, value, storage)
                call = Pending(semaphore, value, finish, lambda e: error(e, not waited), args)
                pool.queued(call)
            else:
                self.context.invoke(self.function, arg_list, outputs)
        except (RuntimeError, ValueError) as exc:
            # a failed call keeps its semaphore and storage: the device may still use them
            raise error(exc) from exc
        if call is None and self.storage is not None and storage is not None:
            self.storage.give(*storage)
        bump("invocations")
        views = [outputs.get_as_object(i, rt.HalBufferView) for i in range(self.num_results)]
        if call is not None:  # results IREE allocated, which the call is still writing
            views = [_written_by(call, v) for v in views]
        return views, call

    def _finisher(
        self, semaphore: rt.HalSemaphore, value: int, storage: tuple[rt.HalBuffer, int] | None
    ) -> Callable[[], None]:
        """What a queued call gives back once it is done: its semaphore, its storage."""
        pool, storages = self.session.semaphores, self.storage

        def finish() -> None:
            pool.give(semaphore, value)
            if storages is not None and storage is not None:
                storages.give(*storage)

        return finish

    def release(self) -> None:
        """Drop the idle transient buffers (made again when next needed)."""
        if self.storage is not None:
            self.storage.release()


def _argument_list(
    args: list[rt.HalBufferView], storage: tuple[rt.HalBuffer, int] | None
) -> rt.VmVariantList:
    """A call's arguments: ``args``, then the storage buffer of a module that takes one (room
    is left for the wait and signal fences of a queued call)."""
    arg_list = rt.VmVariantList(len(args) + 3)
    for view in args:
        arg_list.push_ref(view)
    if storage is not None:
        arg_list.push_ref(storage[0])
    return arg_list


def _written_by(call: Pending, view: rt.HalBufferView) -> ResultView:
    """``view`` as a ``ResultView`` that ``call`` is still writing."""
    result = ResultView(view.get_buffer(), list(view.shape), view.element_type)
    result.pending = call
    return result


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
