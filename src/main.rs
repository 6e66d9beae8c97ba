//! The binary: parse → run → render → exit. Everything else is in the library.

use clap::Parser;
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
    let cli = match innotune::cli::Cli::try_parse_from(&argv.args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::ERROR
            } else {
                exit::OK
            };
            if e.use_stderr() && argv.leaks(&e.to_string()) {
                eprintln!("innotune: error: {}", innotune::db::argv::REDACTED_USAGE);
            } else {
                let _ = e.print();
            }
            std::process::exit(code);
        }
    };
    match innotune::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("innotune: error: {}", one_line(&e));
            std::process::exit(exit::ERROR);
        }
    }
}
