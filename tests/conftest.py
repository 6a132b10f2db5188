import os
import sys

# The oracles live beside the tests; make them importable as `oracle`.
sys.path.insert(0, os.path.dirname(__file__))
