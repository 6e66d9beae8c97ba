use clap::Args;

#[derive(Debug, Args)]
pub struct SweepArgs {}
