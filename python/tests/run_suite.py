"""The Python suite as one ctest case (tests/CMakeLists.txt): pytest over python/tests, against the
library named by GPUHASH_LIBRARY. Exit 77 (ctest's skip) when numpy or pytest is missing, saying
what to install; pytest's own code otherwise (5, no test collected, counts as a failure)."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as missing:
    print("SKIPPED: the Python tests need numpy and pytest (python3 -m pip install numpy pytest): %s" % missing)
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))]))
