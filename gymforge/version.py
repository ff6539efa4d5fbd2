"""This gymforge's version, in a module of its own so that lower modules can read it without
importing the root facade (``gymforge/__init__.py``, which re-exports it as
``gymforge.__version__``)."""

__version__ = "0.1.0"
