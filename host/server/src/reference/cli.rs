//! `docs/reference/cli.md`: every command's `--help`, as clap prints it.

use clap::{Command, CommandFactory};

/// The page: the top command, then each subcommand depth first.
fn render() -> String {
    let mut cli = quiet(crate::Cli::command());
    cli.build();
    let mut page = String::from(
        "# Command line\n\n\
         Every command of the `toolhost` binary with its `--help`. A flag that names an \
         environment variable (`[env: TOOLHOST_…]`) takes its value from it when the flag \
         is not given; `toolhost serve` and `toolhost worker` also read a configuration \
         file ([Configuration file](config.md)).\n\n",
    );
    section(&mut cli, 1, &mut page);
    page
}

/// The help of `cmd` under a heading, then its subcommands'.
fn section(cmd: &mut Command, depth: usize, page: &mut String) {
    let name = cmd
        .get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_owned();
    if depth > 1 {
        page.push_str(&format!("{} `{name}`\n\n", "#".repeat(depth.min(4))));
    }
    let help = cmd.render_long_help().to_string();
    let help: Vec<&str> = help.trim_end().lines().map(str::trim_end).collect();
    page.push_str(&format!("```text\n{}\n```\n\n", help.join("\n")));
    for sub in cmd.get_subcommands_mut() {
        // clap's own `help` subcommand prints what this page already shows.
        if !sub.is_hide_set() && sub.get_name() != "help" {
            section(sub, depth + 1, page);
        }
    }
}

/// Help that does not depend on who renders it: no environment variable's
/// value is shown, only its name.
fn quiet(cmd: Command) -> Command {
    cmd.mut_args(|a| a.hide_env_values(true))
        .mut_subcommands(quiet)
}

#[test]
fn the_command_line_reference_is_every_commands_help() {
    super::check("docs/reference/cli.md", &render());
}
