"""Writes a tuning log for the lit test of `loop-apply-tuning-log`: one record whose script is
SCRIPT for each kernel of MODULE whose name starts with `tuned`.

    python3 write_tuning_log.py MODULE SCRIPT LOG
"""

import sys
from pathlib import Path

from dlc.dialects import make_context
from dlc.rewrites.tuning.log import LogHeader, LogWriter, Record
from dlc.rewrites.tuning.workload import Workload, kernel_functions
from xdsl.parser import Parser

module_path, script_path, log_path = sys.argv[1:]
module = Parser(make_context(), Path(module_path).read_text()).parse_module()
script = Path(script_path).read_text()
Path(log_path).unlink(missing_ok=True)
header = LogHeader("graph-opt", "convert-tensor-expr-to-loop", "sketch")
with LogWriter(log_path, header) as log:
    for function in kernel_functions(module):
        if function.sym_name.data.startswith("tuned"):
            workload = Workload.from_function(function)
            log.write(Record(workload.key, "llvm -mcpu=test -threads=1", script,
                             costs=[1e-4], space="sketch"))
