"""Contexts, modules and cp attributes (the C API's objects)."""

from . import _cp_mlir

Context = _cp_mlir.Context
Module = _cp_mlir.Module
Attribute = _cp_mlir.Attribute

_default = None


def default_context():
    """A process-wide Context with every upstream dialect and cp loaded."""
    global _default
    if _default is None:
        _default = Context()
    return _default


def parse(source, name="<input>", context=None):
    """Parses and verifies MLIR text; raises MLIRError with diagnostics."""
    return (context or default_context()).parse(source, name)
