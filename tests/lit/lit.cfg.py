# lit configuration: IR text tests for vkml's passes and emission.
import os
import sys

import lit.formats

config.name = "vkml"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
python = sys.executable
config.substitutions.append(("%python", python))
config.substitutions.append(("%vkml-opt", f"{python} -m vkml.passes"))
config.environment["PYTHONPATH"] = os.path.dirname(os.path.dirname(config.test_source_root))
for name in ("VKML_CACHE_DIR", "HOME", "PATH"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
