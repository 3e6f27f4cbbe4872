"""The exceptions sloth raises.

Each derives from :class:`SlothError` and from the built-in exception a
Python user would catch for that kind of mistake, so ``except
FileNotFoundError`` works on a missing input as it does with open().
The message is the one the ``sloth`` command line prints.
"""


class SlothError(Exception):
    """Any error sloth reports while planning or running a query."""


class SlothFileNotFoundError(SlothError, FileNotFoundError):
    """An input file or directory that does not exist or cannot be read."""


class SqlSyntaxError(SlothError, ValueError):
    """SQL that does not parse; the message gives the line and column."""


class ColumnNotFoundError(SlothError, LookupError):
    """A column the input does not have; the message lists those it has."""


class TableNotFoundError(SlothError, LookupError):
    """A table name that is not registered (or whose file cannot be read)."""


class SlothTypeError(SlothError, TypeError):
    """Operand types that an operator or function does not accept."""


class NotSupportedError(SlothError, NotImplementedError):
    """SQL or an API feature that sloth does not support."""


class InvalidInputError(SlothError, ValueError):
    """A plan, argument or setting that makes no sense."""


class MemoryLimitError(SlothError, MemoryError):
    """A query that needs more memory than its limit and could not spill."""


class DataError(SlothError, ValueError):
    """Malformed input data: CSV that does not parse, a failed cast."""


class QueryCancelled(SlothError):
    """A query stopped before it finished."""
