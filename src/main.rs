//! The `twophase` command: sort, merge and search files, diagnose the GPU, benchmark; with no subcommand, a short verified demo.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
