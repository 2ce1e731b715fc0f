"""What tuning and compiling share: the tuning log's format (`log`), the identity of a kernel
(`workload`: its canonical IR and key) and replaying a recorded schedule (`apply`).

The tuner (`dlc.autotune`) writes logs; the `loop-apply-tuning-log` pass reads them.
"""
