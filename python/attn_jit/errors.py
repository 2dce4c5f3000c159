"""Exceptions: one per kind of attn_status, all under AttnJitError.

The runtime's message (attn_last_error) is the exception's text. Checks made
in Python before the call (shapes, dtypes, enable_gqa) raise the same classes.
"""


class AttnJitError(Exception):
    """Any failure of attn_jit. `status` is the C attn_status (an int), None
    for failures that are no C status (the library not found)."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(AttnJitError, ValueError):
    """Bad sizes, strides, dtypes or arguments (ATTN_ERROR_INVALID_ARGUMENT)."""

    status = 1


class UnsupportedError(AttnJitError):
    """Valid, but not supported here: head dim, dtype on this device, arch
    (ATTN_ERROR_UNSUPPORTED)."""

    status = 2


class DeviceError(AttnJitError):
    """No CUDA driver, no usable GPU, or a failed driver call
    (ATTN_ERROR_NO_DRIVER, ATTN_ERROR_NO_DEVICE, ATTN_ERROR_CUDA)."""

    status = 5


class CompileError(AttnJitError):
    """The compiler failed: a bug in attn-jit (ATTN_ERROR_COMPILE)."""

    status = 6


class InternalError(AttnJitError):
    """ATTN_ERROR_INTERNAL."""

    status = 7


class LibraryNotFoundError(AttnJitError):
    """libattn-jit.so could not be found or loaded."""


_BY_STATUS = {1: InvalidArgumentError, 2: UnsupportedError, 3: DeviceError, 4: DeviceError,
              5: DeviceError, 6: CompileError, 7: InternalError}


def from_status(status, message):
    """The exception for a failed C call."""
    return _BY_STATUS.get(status, AttnJitError)(message, status)
