"""Devices: where data lives and how a schedule runs there, one kind per module.

``device.Device`` is what every device offers (upload, download, one call per schedule);
``reference`` interprets a schedule with NumPy, implementing every contract exactly (the
oracle); ``iree`` compiles a schedule with IREE, caches it and invokes it once, for ``cpu``
(llvm-cpu) and ``vulkan`` (vulkan-spirv); ``registry`` names them (``vkml.device``).
``realize`` runs a pending graph on its device in one invocation (``coverage`` records which
ops ran where, when asked).
"""
