# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The linear strategy, stopping the run at one task boundary for the interruption tests
(test_interruption.py, scripts/interruption_sweep.py).

CEPHOPS_FAULT=fail:N makes the Nth task the controller queues fail in its place (in its block,
so a rescue acts as on a real failure); CEPHOPS_FAULT=sigint:N sends the controller SIGINT just
before it, as an operator's Ctrl-C. Every task queued is appended to CEPHOPS_FAULT_LOG, one JSON
line each: its number, role and name. Meta tasks are not queued, so they are not counted."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal

from ansible.playbook.task import Task
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule

DOCUMENTATION = """
name: fault
short_description: linear, stopped at one task boundary (tests only)
description: See the module's docstring.
author: cephops maintainers (@cephops)
"""


class StrategyModule(LinearStrategyModule):

    def __init__(self, tqm):
        super(StrategyModule, self).__init__(tqm)
        kind, _sep, number = os.environ.get("CEPHOPS_FAULT", "").partition(":")
        self._fault = (kind, int(number)) if kind else None
        self._queued = 0

    def _queue_task(self, host, task, task_vars, play_context):
        self._queued += 1
        role = task._role.get_name() if task._role else None
        if os.environ.get("CEPHOPS_FAULT_LOG"):
            with open(os.environ["CEPHOPS_FAULT_LOG"], "a") as log:
                log.write(json.dumps({"task": self._queued, "role": role, "name": task.get_name()}) + "\n")
        if self._fault and self._fault[1] == self._queued:
            if self._fault[0] == "sigint":
                os.kill(os.getpid(), signal.SIGINT)
            task = Task.load({"name": task.get_name(),
                              "ansible.builtin.fail": {"msg": "fault injected at task %d" % self._queued}},
                             block=task._parent, role=task._role, variable_manager=self._variable_manager,
                             loader=self._loader)
        return super(StrategyModule, self)._queue_task(host, task, task_vars, play_context)
