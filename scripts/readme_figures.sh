#!/usr/bin/env bash
# Regenerates the key figures the README shows (docs/figures/*.png) from their configs:
# Table 1 and Figures 4-7 of the Cluster Trellis paper, the flat cluster trellis paper's
# pairwise-marginal heatmap, and the Pythia jets' truth recovery. Each config is run (--force) and checked against its expected numbers
# before its figure is copied, so the README never shows a figure whose numbers drifted.
#
#   scripts/readme_figures.sh          # pythia_jets is long-running (experiments/run_times.toml)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/trellis-lab"
out=docs/figures
mkdir -p "$out"

# config : figure in its results folder : name under docs/figures
figures=(
  "jets:table1.png:table1.png"
  "jets:fig5_logz_vs_map.png:fig5_logz_vs_map.png"
  "posterior_sampling:fig6_posterior_sampling.png:fig6_posterior_sampling.png"
  "sparse:fig7_sparse_trellis.png:fig7_sparse_trellis.png"
  "dasgupta:fig4_0.png:fig4_dasgupta.png"
  "flat_pam50:fig5_marginals.png:flat_marginals.png"
  "pythia_jets:truth_recovery.png:pythia_truth_recovery.png"
)

done_configs=" "
for f in "${figures[@]}"; do
  IFS=: read -r config file name <<<"$f"
  if [[ "$done_configs" != *" $config "* ]]; then
    "$bin" run "configs/$config.toml" --force
    "$bin" check "results/$config" >/dev/null
    done_configs+="$config "
  fi
  cp "results/$config/$file" "$out/$name"
  echo "docs/figures/$name <- results/$config/$file"
done
