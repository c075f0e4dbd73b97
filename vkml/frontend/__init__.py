"""Tensor, Node, ops, realize, lowering and the reference interpreter."""
