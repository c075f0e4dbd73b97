"""Fuzzed graphs for vkml: generator (strategies), builder (programs, steps), checker."""
