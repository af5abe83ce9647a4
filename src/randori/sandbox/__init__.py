"""The sandbox and the judge: run tests and exploits against code in processes the code cannot reach.

It sits low in the layers (just above `registry`) so that both the code track and the agent track's
suites (the `coding` suite judges the repository an agent leaves behind) can use it."""
