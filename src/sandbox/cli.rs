use clap::Args;

#[derive(Debug, Args)]
pub struct SandboxArgs {}
