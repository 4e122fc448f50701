#include "logs/builtin_profiles.h"

#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace goodput::logs {
namespace {

// NVIDIA Megatron-LM at d98e8a6 (2026-08): megatron/training/training.py
// (pretrain's print_datetime lines, training_log's log_string) and
// megatron/training/checkpointing.py (save_checkpoint,
// _load_base_checkpoint, load_checkpoint). Python's datetime.now(): local
// time, printed without a zone; set time_zone if the hosts are not on UTC.
constexpr absl::string_view kMegatron = R"yaml(
name: megatron
description: >-
  Megatron-LM (NVIDIA/Megatron-LM megatron/training/training.py pretrain,
  training_log; megatron/training/checkpointing.py save_checkpoint,
  _load_base_checkpoint, load_checkpoint). Also NeMo jobs that run
  Megatron's own training loop.
framework: pytorch
time_format: '%Y-%m-%d %H:%M:%E*S'
rules:
  - kind: start
    then: INIT
    pattern: '^\[after in-process setup and before initialize_megatron\] datetime: (?P<time>\S+ \S+)'
  - kind: prep
    pattern: '^\[after megatron is initialized\] datetime: (?P<time>\S+ \S+)'
  - kind: prep
    pattern: '^\[after model, optimizer, and learning rate scheduler are built\] datetime: (?P<time>\S+ \S+)'
  - kind: training
    pattern: '^\[after dataloaders are built\] datetime: (?P<time>\S+ \S+)'
  - kind: step
    pattern: '\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\] iteration\s+(?P<step>\d+)/\s*\d+ \|'
  - kind: checkpoint_start
    pattern: '\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\] saving checkpoint at iteration\s+(?P<step>\d+) '
  - kind: checkpoint_done
    pattern: '\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\] successfully saved (?:local )?checkpoint from iteration\s+(?P<step>\d+)'
  - kind: restore_start
    pattern: '^ loading (?:distributed )?checkpoint from \S+ at iteration (?P<step>\d+)'
  - kind: restore_done
    pattern: '^\s*successfully loaded checkpoint from \S+ .* at iteration (?P<step>\d+)'
  - kind: interruption
    reason: PREEMPTED
    pattern: '^\[exiting program after receiving SIGTERM\.\] datetime: (?P<time>\S+ \S+)'
  - kind: end
    pattern: '^\[after training is done\] datetime: (?P<time>\S+ \S+)'
)yaml";

// pytorch/torchtitan at b5bcd76 (2026-08): torchtitan/tools/logging.py
// (init_logger's format), torchtitan/train.py (main),
// torchtitan/trainer.py (Trainer.__init__, Trainer.train),
// torchtitan/components/metrics.py (MetricsProcessor.log: "step: N" after
// an optional ANSI color) and torchtitan/components/checkpointer/dcp.py
// (save, load; checkpoint ids "<folder>/step-N").
constexpr absl::string_view kTorchtitan = R"yaml(
name: torchtitan
description: >-
  torchtitan (pytorch/torchtitan torchtitan/tools/logging.py init_logger,
  torchtitan/train.py main, torchtitan/trainer.py Trainer,
  torchtitan/components/metrics.py MetricsProcessor.log,
  torchtitan/components/checkpointer/dcp.py save and load).
framework: pytorch
line_prefix: '^\[titan\] (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+) - \S+ - \w+ - '
time_format: '%Y-%m-%d %H:%M:%S,%E*f'
rules:
  - kind: start
    then: INIT
    pattern: 'torchtitan version: '
  - kind: prep
    pattern: 'Building \S+ \S+'
  - kind: restore_start
    pattern: 'Loading the checkpoint from \S*step-(?P<step>\d+)\.'
  - kind: restore_done
    pattern: 'Finished loading the checkpoint in '
  - kind: training
    pattern: 'Training starts at step \d+'
  - kind: step
    pattern: '(?:\x1b\[31m)?step:\s*(?P<step>\d+)\s'
  - kind: checkpoint_start
    pattern: 'Saving the checkpoint\.'
  - kind: checkpoint_done
    pattern: '(?:Finished saving the checkpoint in |Last step checkpoint completed in )'
  - kind: end
    pattern: 'Training completed$'
)yaml";

// AI-Hypercomputer/maxtext at e591f30 (2026-08): absl-py's log prefix
// (absl/logging/__init__.py get_absl_log_prefix: no year),
// src/maxtext/utils/max_logging.py (log),
// src/maxtext/common/metric_logger.py (the "completed step" line),
// src/maxtext/common/checkpointing.py (create_orbax_checkpoint_manager,
// print_save_message, load_state_if_possible) and
// src/maxtext/trainers/pre_train/train.py (eval).
constexpr absl::string_view kMaxtext = R"yaml(
name: maxtext
description: >-
  MaxText (AI-Hypercomputer/maxtext src/maxtext/common/metric_logger.py,
  src/maxtext/common/checkpointing.py, src/maxtext/trainers/pre_train/train.py)
  through absl logging, whose prefix has no year.
framework: jax
line_prefix: '^[IWEF](?P<time>\d{4} \d\d:\d\d:\d\d\.\d+)\s+\d+ \S+:\d+\] '
time_format: '%m%d %H:%M:%E*S'
rules:
  - kind: start
    pattern: '(?:Creating checkpoint manager with |Checkpointing disabled, not creating checkpoint manager)'
  - kind: restore_start
    pattern: 'restoring from this run''s directory step (?P<step>\d+)'
  - kind: step
    pattern: 'completed step: (?P<step>\d+), seconds: '
  - kind: checkpoint_done
    pattern: 'Saved a checkpoint at step (?P<step>\d+)\.'
  - kind: custom
    name: eval
    pattern: 'Starting eval after train step \d+'
)yaml";

// huggingface/transformers: src/transformers/trainer.py
// (Trainer._inner_training_loop's "***** Running training *****",
// "Continuing training from global step N", "Training completed...";
// Trainer._save's "Saving model checkpoint to .../checkpoint-N") and
// src/transformers/trainer_callback.py (ProgressCallback.on_log and
// PrinterCallback.on_log print the logs dict, which has no step: every
// line counts logging_steps, 500 by default; copy the profile and set
// steps_per_line to the job's logging_steps). The Trainer's lines carry
// no timestamp: times are read times, or the CRI prefix of container logs.
constexpr absl::string_view kHfTrainer = R"yaml(
name: hf_trainer
description: >-
  Hugging Face Transformers Trainer (src/transformers/trainer.py
  _inner_training_loop, _save; src/transformers/trainer_callback.py
  ProgressCallback.on_log). Lines have no step: each logs dict counts
  steps_per_line (logging_steps, default 500).
framework: pytorch
rules:
  - kind: start
    pattern: '\*\*\*\*\* Running training \*\*\*\*\*'
  - kind: restore_done
    pattern: 'Continuing training from global step (?P<step>\d+)'
  - kind: step
    pattern: '^\{''loss'': '
    steps_per_line: 500
  - kind: checkpoint_start
    pattern: 'Saving model checkpoint to \S*checkpoint-(?P<step>\d+)'
  - kind: end
    pattern: 'Training completed\. Do not forget to share your model'
)yaml";

// microsoft/DeepSpeed at 38327e0 (2025-02): deepspeed/utils/logging.py
// (LoggerFactory.create_logger's format, log_dist's "[Rank N] "),
// deepspeed/__init__.py (initialize's "DeepSpeed info"),
// deepspeed/runtime/engine.py (DeepSpeedEngine._report_progress, every
// steps_per_print steps; checkpoint tags "global_stepN") and
// deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py
// (TorchCheckpointEngine.create, commit, load).
constexpr absl::string_view kDeepspeed = R"yaml(
name: deepspeed
description: >-
  DeepSpeed (microsoft/DeepSpeed deepspeed/utils/logging.py,
  deepspeed/runtime/engine.py _report_progress,
  deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py).
framework: pytorch
line_prefix: '^\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\] \[\w+\] \[[^\]]*\] '
time_format: '%Y-%m-%d %H:%M:%S,%E*f'
rules:
  - kind: start
    pattern: '\[Rank 0\] DeepSpeed info: version='
  - kind: step
    pattern: '\[Rank 0\] step=(?P<step>\d+), skipped='
  - kind: checkpoint_start
    pattern: '\[Rank 0\] \[Torch\] Checkpoint global_step(?P<step>\d+) is about to be saved!'
  - kind: checkpoint_done
    pattern: '\[Torch\] Checkpoint global_step(?P<step>\d+) is ready now!'
  - kind: restore_start
    pattern: '\[Torch\] Loading checkpoint from \S*global_step(?P<step>\d+)'
  - kind: restore_done
    pattern: '\[Torch\] Loaded checkpoint from '
)yaml";

// NVIDIA NeMo 2 at 8cfedd7 (2026-09), Lightning with MegatronStrategy:
// nemo/utils/formatters/base.py (the "[NeMo I %(asctime)s
// %(module)s:%(lineno)d] " prefix, '%Y-%m-%d %H:%M:%S', local time),
// nemo/lightning/nemo_logger.py NeMoLogger.setup ("Experiments will be logged
// at"), nemo/lightning/pytorch/callbacks/progress_printer.py
// ProgressPrinter.on_train_batch_end and format_string (print(), no
// timestamp), nemo/lightning/pytorch/strategies/megatron_strategy.py
// training_step (logs `global_step` before the optimizer step: a 0-based
// index, so step_offset 1), nemo/utils/exp_manager.py TimingCallback
// ("train_step_timing in s", averaged over the printer's interval),
// nemo/lightning/pytorch/callbacks/model_checkpoint.py (async finalize:
// "Async checkpoint save for step N", N steps done; file names carry the
// 0-based "step=N-1"), and Lightning's checkpoint connector ("Restoring
// states from the checkpoint path at", "Restored all states").
constexpr absl::string_view kNemo = R"yaml(
name: nemo
description: >-
  NeMo 2 (NVIDIA/NeMo nemo/lightning: NeMoLogger, ProgressPrinter,
  MegatronStrategy.training_step, TimingCallback, ModelCheckpoint async
  save; Lightning's checkpoint restore messages). NeMo jobs that run
  Megatron-LM's own training loop print Megatron's lines: use megatron.
framework: pytorch
time_format: '%Y-%m-%d %H:%M:%S'
rules:
  - kind: start
    then: INIT
    pattern: '\[NeMo I (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) nemo_logger:\d+\] Experiments will be logged at '
  - kind: prep
    pattern: '\[NeMo I (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) utils:\d+\] Setting up DistributedDataParallel with config'
  - kind: training
    pattern: '\d+\s+Modules in eval mode\s*$'
  - kind: step
    step_offset: 1
    pattern: 'Training epoch \d+, iteration \d+/\d+ .*\| global_step: (?P<step>\d+)(?:.*\| train_step_timing in s: (?P<step_time>\d+(?:\.\d*)?(?:e[+-]?\d+)?))?'
  - kind: checkpoint_done
    pattern: '\[NeMo I (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) model_checkpoint:\d+\] Async checkpoint save for step (?P<step>\d+) .*finalized successfully'
  - kind: restore_start
    step_offset: 1
    pattern: 'Restoring states from the checkpoint path at \S*step=(?P<step>\d+)'
  - kind: restore_done
    pattern: 'Restored all states from the checkpoint at '
  - kind: end
    pattern: '`Trainer\.fit` stopped: '
)yaml";

constexpr std::array<std::pair<absl::string_view, absl::string_view>, 6>
    kBuiltins = {{
        {"deepspeed", kDeepspeed},
        {"hf_trainer", kHfTrainer},
        {"maxtext", kMaxtext},
        {"megatron", kMegatron},
        {"nemo", kNemo},
        {"torchtitan", kTorchtitan},
    }};

absl::StatusOr<std::string> ReadFile(absl::string_view path) {
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "--log_profile=", path, ": no built-in profile of that name (",
        absl::StrJoin(BuiltinProfileNames(), ", "), ") and no readable file"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<std::string> BuiltinProfileNames() {
  std::vector<std::string> names;
  for (const auto& [name, yaml] : kBuiltins) names.emplace_back(name);
  return names;
}

absl::StatusOr<absl::string_view> BuiltinProfileYaml(absl::string_view name) {
  for (const auto& [builtin, yaml] : kBuiltins) {
    if (builtin == name) return yaml;
  }
  return absl::NotFoundError(absl::StrCat(
      "no built-in log profile '", name,
      "' (known: ", absl::StrJoin(BuiltinProfileNames(), ", "), ")"));
}

absl::StatusOr<LogProfile> LoadLogProfile(absl::string_view name_or_path) {
  absl::StatusOr<absl::string_view> builtin = BuiltinProfileYaml(name_or_path);
  if (builtin.ok()) {
    return ParseLogProfile(*builtin, absl::StrCat("builtin:", name_or_path));
  }
  absl::StatusOr<std::string> text = ReadFile(name_or_path);
  if (!text.ok()) return text.status();
  return ParseLogProfile(*text, name_or_path);
}

}  // namespace goodput::logs
