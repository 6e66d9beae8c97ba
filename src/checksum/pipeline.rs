//! The threads of one check: checkers verifying pages, fed either by one
//! io_uring reader ([`super::ring`], `--direct` where the kernel allows it)
//! or by blocking readers per checker ([`super::reader`]).

use super::reader::{
    check, make_shards, prefetch, Msg, Options, ShardResult, Target, BUFFERS_PER_READER,
    DIRECT_READERS,
};
use super::ring;
use crate::aligned::AlignedBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{mpsc, Arc};

/// How the pages were read (reported, so a run says which path it measured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadPath {
    /// `--direct` through io_uring (see [`super::ring`]).
    IoUring,
    /// `--direct` through blocking preads: io_uring unavailable or refused.
    Pread,
    /// Without `--direct`: mapped from or read through the page cache.
    PageCache,
}

/// Check every target; `on_bytes` is called after each chunk (progress).
pub fn run(
    targets: &[Target],
    opts: Options,
    on_bytes: &(dyn Fn(u64) + Sync),
) -> (Vec<ShardResult>, ReadPath) {
    let shards = make_shards(targets, opts.threads.max(1), opts.direct);
    let workers = opts.threads.max(1).min(shards.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<ShardResult> = Vec::new();
    let ring = if opts.direct {
        ring::Ring::new(workers)
    } else {
        None
    };
    let path = match (&ring, opts.direct) {
        (Some(_), _) => ReadPath::IoUring,
        (None, true) => ReadPath::Pread,
        (None, false) => ReadPath::PageCache,
    };
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        if let Some(ring) = ring {
            // One reader, one stream in file order, feeding every checker.
            let (empty_tx, empty_rx) = mpsc::channel::<AlignedBuf>();
            let mut outs = Vec::new();
            for _ in 0..workers {
                let (full_tx, full_rx) = mpsc::sync_channel::<Msg>(ring::CHANNEL);
                outs.push(full_tx);
                let (shards, empty_tx) = (&shards, empty_tx.clone());
                handles.push(
                    s.spawn(move || check(targets, shards, opts, full_rx, empty_tx, on_bytes)),
                );
            }
            drop(empty_tx);
            let (shards, next) = (&shards, &next);
            s.spawn(move || {
                ring::Reader::new(ring, targets, shards, next, opts, outs, empty_rx).run()
            });
        } else {
            let readers = if opts.direct { DIRECT_READERS } else { 1 };
            for _ in 0..workers {
                let (full_tx, full_rx) =
                    mpsc::sync_channel::<Msg>(BUFFERS_PER_READER * readers + 2);
                let (empty_tx, empty_rx) = mpsc::channel::<AlignedBuf>();
                let empty_rx = Arc::new(std::sync::Mutex::new(empty_rx));
                let shards = &shards;
                let next = &next;
                for _ in 0..readers {
                    let (tx, rx) = (full_tx.clone(), empty_rx.clone());
                    s.spawn(move || prefetch(targets, shards, next, opts, tx, &rx));
                }
                drop(full_tx);
                handles.push(
                    s.spawn(move || check(targets, shards, opts, full_rx, empty_tx, on_bytes)),
                );
            }
        }
        for h in handles {
            match h.join() {
                Ok(mut r) => results.append(&mut r),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
    });
    results.sort_by_key(|r| r.file);
    (results, path)
}
