"""Ahead-of-time artefacts: functions exported to a ``.vmfb`` (with their weights in an
``.irpa``) that run without Python, under IREE's own tools or ``vkml.aot.load``.

``export`` captures and compiles (it needs iree-base-compiler); ``load`` needs only
iree-base-runtime and NumPy. See docs/deploy.md.
"""

from vkml.aot.artifact import Artifact, export
from vkml.aot.loaded import Loaded, load
from vkml.aot.manifest import Manifest, Signature, Slot

__all__ = ["Artifact", "Loaded", "Manifest", "Signature", "Slot", "export", "load"]
