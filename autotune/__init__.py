"""dlc's auto-tuner: search over schedules (transform scripts), measured for real.

Counterpart: Apache TVM's AutoTVM / Ansor / MetaSchedule. The pieces, one module each:

- `workload`: a tuning task's kernel: one loop-level function as a canonical module
  (`@kernel`, constants as inputs, no SSA names), its key (hash of that text), FLOPs, blocks;
- `space`: search spaces: `TemplateSpace` (a transform script whose annotated
  `transform.param.constant`s are knobs: `dlc.candidates`, or `dlc.split` = divisor splits),
  `matmul_template`, and `SketchSpace` (generated from the block structure: SSRSRS tiling,
  inline, pack, cache write, parallel, vectorize, unroll, epilogue fusion, as `Action`s);
  invalid points are rejected before building with the numbers of the target's description
  (`dlc.target.CpuTarget`);
- `search`: `RandomSearch`, `GridSearch`, `EvolutionarySearch` (xgboost cost model from
  `cost_model`, trained online, epsilon-greedy);
- `measure`: `Measurer`: builds in worker processes, runs one at a time, checks against the
  untuned kernel, median of repeats; crash / hang / wrong result cost one trial;
  `ray_runner.RayBackend` does the same on Ray;
- `log`: the append-only JSON-lines tuning log (one write + fsync per record);
- `tuner`: `tune_workload`; `tasks`: `extract_tasks` + `tune_tasks` (gradient task scheduler);
- `apply`: the best records at compile time (`apply_tuning_log`, called by
  `dlc.compile(path, tuning_log=F)`);
- `plot`: the best-so-far curve as a PNG.

Command line: `python3 tools/dlc_tune.py tune model.onnx --trials 64` (`dlc tune`), and
`... tune replay model.onnx --log LOG --emit-scripts DIR` to replay records; a record's script
replays on its kernel with
`dlc-opt DIR/T.kernel.mlir -p 'loop-interpret-transforms{library="DIR/T.schedule.mlir"}'`.
"""
