"""FunctionBuilder: one public ``func.func`` (its arguments, results and signature) over the
layers of ops every emitter uses (``vkml.dialect.function_body``), and the module's text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vkml.dialect.exported_module import global_type
from vkml.dialect.run_time_fence import FENCE_ARG, FENCE_GLOBAL, FencedOps
from vkml.dialect.types import TensorType, Value, reflection_attr, string_attr
from vkml.dtypes import int32

STOP_ARG = "%stop"


class FunctionBuilder(FencedOps):
    """Builds the text of one public function; SSA names are numbered in emission order.

    With ``fence_float_ops`` (Vulkan, ADR 0009) no float operation's operand is something a
    driver could fold it with: a float literal used by arithmetic is hidden behind the fence,
    the right operand of a subtraction differs from the left one even when both are the same
    value, and the results of float unary ops, powers and casts to or from float pass through
    the fence, as every multiply does (ADR 0007). Without the option (cpu) only multiplies are
    fenced.
    """

    def __init__(
        self, name: str = "main", fence_float_ops: bool = False, fence_global: bool = False
    ) -> None:
        super().__init__(fence_float_ops)
        self.name = name
        # a last argument, the caller's buffer for the values IREE keeps between dispatches
        # (``iree.abi.transients``; ``vkml.compiler.abi``)
        self.transients = False
        # whether the target computes float64 (and the int64 bit operations vkml's float64
        # functions use): float32 sin, cos and tan are computed through them where it does
        self.float64_math = True
        # whether device loops read a stop flag the caller can set mid-call (``stop_flag``):
        # a module compiled for realize, not an exported one
        self.stoppable = False
        self.uses_stop = False
        # where the multiply fence comes from: the last argument, or (an exported module,
        # ``vkml.dialect.exported_module``) the global FENCE_GLOBAL, loaded first in the body
        self.fence_global = fence_global
        self.args: list[Value] = []
        self.results: list[Value] = []
        self._result_names: list[str] = []
        self._arg_attrs: dict[str, str] = {}

    def arg(self, ttype: TensorType, name: str | None = None) -> Value:
        """The next argument; ``name`` is what IREE shows for it (``iree.abi.name``)."""
        value = Value(f"%arg{len(self.args)}", ttype)
        self.args.append(value)
        self._vary(value)
        if name is not None:
            self._arg_attrs[value.name] = f" {{iree.abi.name = {string_attr(name)}}}"
        return value

    def stop_flag(self) -> Value:
        """The ``tensor<2xi32>`` argument the caller passes as zeros and sets to ones to end
        every device loop at its next turn (Ctrl-C, ``vkml.runtime.stop``); it comes after
        the arguments and output buffers, before the multiply fence (``vkml.compiler.abi``)."""
        self.uses_stop = True
        return self._vary(Value(STOP_ARG, TensorType((2,), int32)))

    def global_load(self, symbol: str, ttype: TensorType) -> Value:
        """The value of the module's global ``symbol`` (a parameter of an exported module),
        declared as ``vkml.dialect.exported_module.global_type`` says."""
        stored = global_type(ttype)
        value = self._vary(self.emit(f"util.global.load @{symbol} : {stored}", stored))
        return value if stored == ttype else self.bitcast(value, ttype.dtype)

    def output_arg(self, ttype: TensorType, result: int) -> Value:
        """An argument whose buffer receives result number ``result`` (IREE's
        ``iree.abi.output``): the caller allocates the result's storage before the call."""
        value = self.arg(ttype)
        self._arg_attrs[value.name] = f" {{iree.abi.output = {result} : index}}"
        return value

    def ret(self, values: Sequence[Value], names: Sequence[str] = ()) -> None:
        """Return ``values``; ``names`` (one per value) is what IREE shows for them."""
        self.results = list(values)
        self._result_names = list(names)

    def module_text(self) -> str:
        """The whole module: one public function taking the args and returning the results."""
        return f"module {{\n{self.function_text()}\n}}\n"

    def function_text(self, reflection: Mapping[str, str] | None = None) -> str:
        """The public function alone (``reflection``: string metadata IREE keeps with it)."""
        params = ", ".join(
            f"{a.name}: {a.type}{self._arg_attrs.get(a.name, '')}" for a in self.args
        )
        lines = self.lines
        if self.uses_stop:
            params += f"{', ' if params else ''}{STOP_ARG}: tensor<2xi32>"
        if self.uses_fence and self.fence_global:
            load = f"    {FENCE_ARG} = util.global.load @{FENCE_GLOBAL} : tensor<i32>"
            lines = [load, *lines]
        elif self.uses_fence:
            params += f"{', ' if params else ''}{FENCE_ARG}: tensor<i32>"
        if self.transients:
            params += f"{', ' if params else ''}%transients: !hal.buffer {{iree.abi.transients}}"
        labels: list[str | None] = [*self._result_names] or [None] * len(self.results)
        rtypes = ", ".join(
            f"{r.type}" + ("" if n is None else f" {{iree.abi.name = {string_attr(n)}}}")
            for r, n in zip(self.results, labels)
        )
        values = ", ".join(r.name for r in self.results)
        types = ", ".join(str(r.type) for r in self.results)
        body = "\n".join(lines)
        ret = f"    return {values} : {types}" if self.results else "    return"
        attributes = "" if reflection is None else f" attributes {{{reflection_attr(reflection)}}}"
        return (
            f"  func.func @{self.name}({params}) -> ({rtypes}){attributes} {{\n{body}\n{ret}\n  }}"
        )
