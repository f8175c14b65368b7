//! The desktop app (Bevy + egui).

use std::process::ExitCode;

/// Open the app.
pub fn run(_args: crate::cli::AppArgs) -> ExitCode {
    eprintln!("the app is not built yet");
    ExitCode::from(2)
}
