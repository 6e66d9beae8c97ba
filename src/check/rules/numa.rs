//! NUMA: a buffer pool allocated on one node of a multi-node host.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source};

pub const RULE: Rule = Rule {
    id: "os.numa",
    layer: Layer::Os,
    scope: Scope::Server(Versions::ALL),
    about: "innodb_numa_interleave on multi-node hosts",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let (Some(s), Some(nodes)) = (&f.server, f.host.numa_nodes) else {
        return Vec::new();
    };
    // The variable exists only in servers built with NUMA support.
    if nodes < 2 || s.var_on("innodb_numa_interleave") != Some(false) {
        return Vec::new();
    }
    vec![server_advice(
        s,
        "server.numa_interleave",
        Severity::Notice,
        "innodb_numa_interleave",
        "ON",
        format!("this host has {nodes} NUMA nodes: without interleaving, the buffer pool fills the memory of the node mysqld started on first, and once it is full the kernel swaps or reclaims there while other nodes have free memory. ON interleaves the buffer pool's allocation over every node."),
        Source::RuleOfThumb,
        format!("/sys/devices/system/node/online: {nodes} nodes; MySQLTuner flags OFF on multi-node hosts"),
    )]
}
