"""The guide's runnable example learns: its mean reward rises from the first fifth to the last."""

import re
import subprocess
import sys


def test_the_example_policy_learns_to_ignore_injected_text():
    done = subprocess.run([sys.executable, "examples/training/learn_to_ignore.py", "--episodes", "100"],
                          capture_output=True, text=True, timeout=600, check=True)
    means = [float(m) for m in re.findall(r"mean reward (\d\.\d\d)", done.stdout)]
    assert len(means) == 5 and means[-1] > means[0] and means[-1] >= 0.8, done.stdout
