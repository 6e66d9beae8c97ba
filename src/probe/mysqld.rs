//! The running servers moved to [`crate::model::server`] (and their pids to
//! [`crate::model::process`]); these names stay so callers outside probe
//! (safety, the journal) keep compiling until they switch to the model.

pub use crate::model::process::{server_pids, Limit, LimitValue};
pub use crate::model::server::{datadir, find, Mysqld};
