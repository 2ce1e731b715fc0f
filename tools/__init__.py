"""dlc's command-line tools: dlc-opt (this package's `dlc_opt`) and, as they come, the others."""
