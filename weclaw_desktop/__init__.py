"""WeClaw Desktop: a desktop AI assistant with a visible, policy-governed tool system."""

__version__ = "0.1.0"
