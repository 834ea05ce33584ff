"""repolens: a local code-context engine for coding agents."""

__version__ = "0.1.0"
