//! What every integration test shares: include it with `mod support;`.
//!
//! - [`proc`]: children that start with default signal handling and
//!   waits that end (a deadline, then kill and a clear failure).
//! - [`bin`]: the innotune binary as a command, built on [`proc`].
//! - [`host`]: host commands, the live-test gate, scheduler reads.
//! - [`block`]: loop devices, mounts and labs (loop device + mkfs + mount),
//!   each undone on drop, panics included.
//! - [`sandbox`]: throwaway MariaDB servers, stopped on drop.
//! - [`report`]: real results (probe, check, a short sweep) for the report
//!   tests.
//!
//! Each test binary uses part of it, so unused items are expected.
#![allow(dead_code, unused_imports)]

pub mod bin;
pub mod block;
pub mod host;
pub mod proc;
pub mod report;
pub mod sandbox;

pub use bin::{innotune, innotune_in, innotune_sys, restore};
pub use block::{fill, Lab, LabOpts, Loop, Mount, RAM, VAR_TMP};
pub use host::{
    active_scheduler, fixture_host, live, servers_under, sh, sh_as_nobody, tree, umount_retry,
};
pub use proc::{spawn, sys, wait_for, Spawned, Start, RUN_LIMIT, WAIT};
pub use sandbox::{server, Planted, TestServer, PLANTED_POOL};
