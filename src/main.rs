//! The binary: parse → run → render → exit. Everything else is in the library.

use innotune::error::{exit, one_line};

fn main() {
    // A closed stdout pipe (`innotune … | head`) is not an error worth a panic.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Passwords on the command line leave argv before anything else runs.
    let argv = innotune::db::argv::scan(std::env::args_os().collect());
    if let Err(e) = argv.wipe() {
        innotune::output::warn(format!(
            "could not hide the password from ps ({e}): prefer ~/.my.cnf [client]"
        ));
    }
    let cli = match innotune::cli::Cli::parse_args(&argv.args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            // Help and version (and a bare command that shows its help)
            // are clap's own output and exit codes; usage errors are one
            // line naming the fix, exit 2, like every other error.
            let shows_help = matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            );
            if shows_help {
                let _ = e.print();
                std::process::exit(e.exit_code());
            }
            if argv.leaks(&e.to_string()) {
                eprintln!("innotune: error: {}", innotune::db::argv::REDACTED_USAGE);
            } else {
                eprintln!(
                    "innotune: error: {}",
                    innotune::cli::usage_error_line(&e, &argv.args)
                );
            }
            std::process::exit(exit::ERROR);
        }
    };
    match innotune::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // The one place error lines are printed: control bytes in a
            // path or a server's message never reach the terminal raw.
            eprintln!(
                "innotune: error: {}",
                innotune::output::escape_controls(&one_line(&e))
            );
            std::process::exit(exit::ERROR);
        }
    }
}
