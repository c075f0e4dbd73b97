"""The NumPy references: one function per op of the table, ``ref(operands, dtype, shape,
attrs) -> ndarray``, which the ``reference`` device runs and every compiled device is checked
against (bit for bit where the op's contract says so).

``common`` holds the references of the elementwise, cast, view and creation ops and the
factories most ops name (``unary(np.exp)``); ``axes`` holds those of the ops along axes
(matmul, the reductions, the scan, the gathers, argsort), each in the published order of its
emitter in ``vkml.ops.emitters``. An ``OpDef`` names its reference beside its emitter.
"""
