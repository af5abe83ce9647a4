"""What a benchmark is made of: environments, user and injection tasks, suites."""

from randori.tasks.environment import Environment, EnvironmentTemplate, state_diff
from randori.tasks.suite import TaskSuite
from randori.tasks.task import InjectionTask, UserTask

__all__ = ["Environment", "EnvironmentTemplate", "InjectionTask", "TaskSuite", "UserTask", "state_diff"]
