#!/usr/bin/env bash
#! Plot benchmark CSVs (header group,variant,key,n,ms,gkeys_per_s) into docs/plots/<group>_variants.svg.
# Usage, from the repository root: bash scripts/plots.sh results/variants.csv [more.csv ...]
cargo run -p twophase-plots --release -- "$@" --out docs/plots
