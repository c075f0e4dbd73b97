"""The Array API namespace a tensor names (``Tensor.__array_namespace__``).

The namespace, ``vkml.array_api``, is built on the frontend, so the frontend cannot import
it: it registers itself here when it is imported, which ``import vkml`` does.
"""

from __future__ import annotations

from types import ModuleType

from vkml.errors import ConfigError

VERSIONS = ("2023.12", "2024.12")
_registered: list[ModuleType] = []


def register(namespace: ModuleType) -> None:
    """Make ``namespace`` the one ``Tensor.__array_namespace__`` returns."""
    _registered[:] = [namespace]


def array_namespace(api_version: str | None) -> ModuleType:
    """The Array API namespace for ``api_version`` (None: the newest vkml implements)."""
    if api_version is not None and api_version not in VERSIONS:
        raise ValueError(
            f"api_version={api_version!r} is not an Array API version vkml implements; "
            f"pass one of {', '.join(VERSIONS)} or None"
        )
    if not _registered:
        raise ConfigError("vkml.array_api is not imported: import vkml first")
    return _registered[0]
