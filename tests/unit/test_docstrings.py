"""Every public definition in python_ops and the adapter has a docstring (house 4, item 4).

Public: a module-level function or class, or a method of a public class, whose name does not
start with an underscore. A method that overrides a documented one of a base class inherits its
docstring (``inspect.getdoc``), as the reader's tools show it; a class implementing a protocol
it does not inherit from documents its methods itself.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from types import ModuleType

import python_ops

ADAPTER = "dbt.adapters.sparkdelta"


def _modules() -> Iterator[ModuleType]:
    import dbt.adapters.sparkdelta as adapter

    for package in (python_ops, adapter):
        yield package
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__") or ".local_writer_worker" in info.name:
                continue
            yield importlib.import_module(info.name)


def _generated(function: object, module: ModuleType) -> bool:
    """A method a library generated for the class (a dataclass serializer), not written here."""
    code = getattr(function, "__code__", None)
    return code is None or code.co_filename != getattr(module, "__file__", None)


def _undocumented() -> Iterator[str]:
    for module in _modules():
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value) and not value.__doc__:
                yield f"{module.__name__}.{name}"
            elif inspect.isclass(value):
                if not value.__doc__:
                    yield f"{module.__name__}.{name}"
                for attr, member in vars(value).items():
                    if attr.startswith("_"):
                        continue
                    function = member.fget if isinstance(member, property) else member
                    if isinstance(function, (staticmethod, classmethod)):
                        function = function.__func__
                    if not inspect.isfunction(function) or _generated(function, module):
                        continue
                    if not inspect.getdoc(getattr(value, attr)):
                        yield f"{module.__name__}.{name}.{attr}"


def test_every_public_definition_has_a_docstring() -> None:
    missing = sorted(set(_undocumented()))
    assert not missing, f"{len(missing)} public definitions without a docstring: {missing}"
