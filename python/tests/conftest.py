# Lets pytest import the in-tree package (python/warpkit) when it is not installed.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
