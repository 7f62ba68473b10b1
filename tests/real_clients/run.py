"""Runs every real-client test in this folder and prints one closing line:
`real clients: N passed, M failed` (and expected failures or skips when
there are any). Exit status 0 only when none failed.

    python tests/real_clients/run.py [-k PATTERN ...]
"""

import logging
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    sys.path.insert(0, HERE)
    # marathon-python logs every 4xx it gets as an error; the tests check
    # those answers themselves.
    logging.getLogger("marathon").addHandler(logging.NullHandler())
    logging.getLogger("marathon").propagate = False

    loader = unittest.TestLoader()
    patterns = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-k"]
    if patterns:
        loader.testNamePatterns = [p if "*" in p else f"*{p}*" for p in patterns]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)

    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped) - len(result.expectedFailures)
    extra = []
    if result.expectedFailures:
        extra.append(f"{len(result.expectedFailures)} expected failures")
    if result.skipped:
        extra.append(f"{len(result.skipped)} skipped")
    suffix = f" ({', '.join(extra)})" if extra else ""
    print(f"real clients: {passed} passed, {failed} failed{suffix}", flush=True)
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
