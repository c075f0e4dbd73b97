"""The lazy graph: immutable nodes that may own regions (``node``), and the walks over them (``walk``)."""
