# The installed warpkit package (with its compiled extension) when there is one, else the in-tree
# python/warpkit (which imports and traces without the extension; GPU tests then fail saying how to
# build it).
import os
import sys

try:
    import warpkit  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
