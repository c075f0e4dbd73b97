"""A compiled module loaded on a HAL session, and its one-call invocation."""

from __future__ import annotations

import iree.runtime as rt

from vkml.errors import InvocationError
from vkml.runtime.hal import HalSession
from vkml.runtime.stats import bump


class Executable:
    """A ``.vmfb`` loaded into its own VM context; ``invoke`` runs its entry function once."""

    __slots__ = ("session", "context", "function", "entry", "num_results")

    def __init__(self, sess: HalSession, vmfb: bytes, entry: str, num_results: int) -> None:
        module = rt.VmModule.copy_buffer(sess.instance, vmfb)
        self.session = sess
        self.context = rt.VmContext(sess.instance, [sess.hal_module, module])
        function = module.lookup_function(entry)
        if function is None:
            raise InvocationError(f"compiled module has no function '{entry}'")
        self.function = function
        self.entry = entry
        self.num_results = num_results

    def invoke(self, args: list[rt.HalBufferView]) -> list[rt.HalBufferView]:
        """Run the entry function once on ``args``; return its result buffer views."""
        arg_list = rt.VmVariantList(len(args))
        for view in args:
            arg_list.push_ref(view)
        results = rt.VmVariantList(self.num_results)
        try:
            self.context.invoke(self.function, arg_list, results)
        except (RuntimeError, ValueError) as exc:
            raise InvocationError(
                f"invocation of '{self.entry}' failed on {self.session.driver}: {exc}"
            ) from exc
        bump("invocations")
        return [results.get_as_object(i, rt.HalBufferView) for i in range(self.num_results)]
