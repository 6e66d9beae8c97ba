//! The binary: parse → run → render → exit. Everything else is in the library.

use clap::Parser;
use innotune::error::{exit, one_line};

fn main() {
    // A closed stdout pipe (`innotune … | head`) is not an error worth a panic.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match innotune::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::ERROR
            } else {
                exit::OK
            };
            let _ = e.print();
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
