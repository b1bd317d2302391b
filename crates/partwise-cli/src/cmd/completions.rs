//! `partwise completions SHELL` and `partwise man`: shell completions and a
//! man page, both generated from the clap definitions, so they never drift
//! from the flags.

use crate::exit::{CliError, ExitCode, Result};
use clap_complete::Shell;
use std::io::Write;

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// A subcommand's page (partwise-route(1), ...) instead of partwise(1)
    #[arg(value_name = "SUBCOMMAND")]
    subcommand: Option<String>,
}

pub fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> Result<ExitCode> {
    // Into memory first: clap_complete panics when its writer fails (a full
    // disk, a closed pipe), and a failed write here must be exit 2.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "partwise", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::Ok)
}

/// partwise(1), or partwise-SUBCOMMAND(1), as roff on stdout.
pub fn man(args: ManArgs, cmd: clap::Command) -> Result<ExitCode> {
    let page = match &args.subcommand {
        None => cmd,
        Some(name) => {
            let sub = cmd.find_subcommand(name).cloned().ok_or_else(|| {
                let known: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
                CliError::msg(format!(
                    "man: no subcommand '{name}' (known: {})",
                    known.join(", ")
                ))
            })?;
            let title = format!("partwise-{}", sub.get_name());
            sub.name(title)
        }
    };
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(page).render(&mut out)?;
    out.flush()?;
    Ok(ExitCode::Ok)
}
