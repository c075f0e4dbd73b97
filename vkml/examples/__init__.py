"""Runnable examples: ``python -m vkml.examples.demo``."""
