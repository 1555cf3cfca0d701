"""Exceptions raised by cp_mlir."""


class MLIRError(Exception):
    """An MLIR failure (parse, verify, pass, builder) with its diagnostics.

    ``diagnostics`` holds one formatted string per diagnostic, e.g.
    ``layer.mlir:4:8: error: 'cp.attention' op cannot use scheme ...``.
    """

    def __init__(self, message, diagnostics=()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class RunError(RuntimeError):
    """A compiled program failed under MPI; the message has every rank's
    report (rank, call and reason) and the launcher's exit status."""
