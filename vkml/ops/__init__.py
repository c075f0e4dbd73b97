"""The ops: what each primitive op is (``table``) and its NumPy implementation (``reference``)."""
