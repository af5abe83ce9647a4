"""Validity: the rules a suite's checks must hold (`randori suites check`) and the machinery that
tests them. It runs the built-in agent with a scripted model and the attacks, so it sits above
both; `randori.tasks` only defines what a task is."""
