"""`python -m tests.workflow_imports worker`: `ag-ui-temporal worker`, writing to the file
`IMPORT_LOG` names every module that a workflow task imports (tests/test_worker_imports.py).

A finder first on `sys.meta_path` is asked only for modules not loaded yet, whether the
sandbox loads them for itself or passes them through to the process: what it is asked while
Temporal's worker creates a workflow's sandbox or activates it is what that task imported."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType

# temporalio/worker/_workflow.py: the workflow worker's two steps that run a task's code
TASK_STEPS = frozenset({"_create_workflow_instance", "activate"})
WORKFLOW_WORKER = os.path.join("temporalio", "worker", "_workflow.py")


def _in_a_workflow_task() -> bool:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name in TASK_STEPS and code.co_filename.endswith(WORKFLOW_WORKER):
            return True
        frame = frame.f_back
    return False


class ImportRecorder:
    """Finds nothing; notes each module it is asked for inside a workflow task."""

    def __init__(self, path: str) -> None:
        self.log = open(path, "a", buffering=1)  # open for the process's life

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if _in_a_workflow_task():
            self.log.write(name + "\n")
        return None


if __name__ == "__main__":
    sys.meta_path.insert(0, ImportRecorder(os.environ["IMPORT_LOG"]))
    from ag_ui_temporal.cli import main

    main()
