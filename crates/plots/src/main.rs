//! twophase-plots: benchmark CSVs in, `<out>/<group>_variants.svg` out (see the library docs).

use std::process::ExitCode;

use twophase_plots::{parse_args, write_plots, Command, USAGE};

/// Exit status of a bad command line (the conventional one for usage errors).
const USAGE_ERROR: u8 = 2;

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Plot { csvs, out }) => match write_plots(&csvs, &out) {
            Ok(written) => {
                for path in written {
                    println!("wrote {}", path.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("twophase-plots: {e}");
                ExitCode::FAILURE
            }
        },
        Err(message) => {
            eprintln!("twophase-plots: {message}\n\n{USAGE}");
            ExitCode::from(USAGE_ERROR)
        }
    }
}
