//! The desktop app (Bevy + egui) — not built yet (issue #4). Until it is, running the
//! binary without a subcommand explains that and points at the headless commands.

use std::process::ExitCode;

/// Open the app. Not implemented yet: prints what is available instead.
pub fn run(_args: crate::cli::AppArgs) -> ExitCode {
    eprintln!(
        "impulse-cloth: the desktop app is not implemented yet (issue #4).\n\
         Headless commands that work today:\n  \
         impulse-cloth run --help\n  impulse-cloth bench paper --quick"
    );
    ExitCode::from(2)
}
