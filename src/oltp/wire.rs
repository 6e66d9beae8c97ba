//! The OLTP hot path on the wire: COM_STMT_EXECUTE and COM_QUERY sent and
//! answered directly on the connection's socket, after the `mysql` crate
//! has done the hard part (handshake, authentication, COM_STMT_PREPARE).
//!
//! Why hand-written instead of the crate's `exec_iter`: the crate waits for
//! a reply in a blocking `recv`. On a Unix socket the kernel wakes a task
//! sleeping in `recv` not only when data arrives but also when the server
//! *reads our request* (`unix_write_space` wakes the same wait queue for
//! EPOLLOUT), so each query cost ~1.5 sleeps instead of 1: measured
//! 302k voluntary context switches for 200k oltp_read_write queries at 8
//! threads vs sysbench's 199k, and ~14% more client CPU per query. sysbench
//! (libmariadb) waits in `poll(POLLIN)`, which filters that wake-up out. We
//! do the same here. Rows are only counted, never decoded, as sysbench's
//! driver does (it frees them unread).
//!
//! The crate is still the owner of the connection: it is idle (no pending
//! result, nothing buffered) between its own calls, and every exchange here
//! is a complete command/response pair, so its state stays valid.
//!
//! What this module assumes of the `mysql` crate (pinned to `~25.0` in
//! Cargo.toml for that reason; re-check each point before moving on):
//! - `Conn::as_raw_fd` is the socket itself and the bytes on it are the
//!   plain protocol: no TLS (the `minimal` feature set has none) and no
//!   compression (`CLIENT_COMPRESS` only when `OptsBuilder::compress` is
//!   set, which innotune never does).
//! - The crate never asks for `CLIENT_DEPRECATE_EOF` (25.0's
//!   `get_client_flags`), so an EOF packet ends column definitions and rows.
//! - Between two of its own calls the crate holds no buffered bytes and no
//!   pending result (it drains every result set before returning), so a
//!   complete command/response pair sent here leaves it consistent.
//! - `Statement::id()` is the server's statement id, and with
//!   `stmt_cache_size(0)` the crate never closes a statement behind our back.
//! - The crate sets the socket's `SO_SNDTIMEO` from `write_timeout`; our
//!   blocking `send` inherits it. Reads here never block in `recv`
//!   (`MSG_DONTWAIT`), so its `SO_RCVTIMEO` does not apply: [`Wire`] bounds
//!   every wait itself ([`Wire::set_limits`]).

use mysql::Value;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// What a statement returned, as sysbench's driver classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// A result set came back (a read), possibly with no rows.
    pub has_rows: bool,
    /// Affected rows of an OK packet (0 for a result set).
    pub affected: u64,
}

const COM_QUERY: u8 = 0x03;
const COM_STMT_EXECUTE: u8 = 0x17;
const MYSQL_TYPE_LONGLONG: u8 = 8;
const MYSQL_TYPE_VAR_STRING: u8 = 253;
const MYSQL_TYPE_NULL: u8 = 6;
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
/// A payload of this length continues in the next packet.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// One connection's send/receive buffers, reused for every statement.
pub struct Wire {
    out: Vec<u8>,
    inb: Vec<u8>,
    /// Unparsed bytes are `inb[pos..end]`.
    pos: usize,
    end: usize,
    /// Give up waiting for the server at this instant (the run's end plus a
    /// grace), and never wait longer than `each_wait` for one reply.
    give_up_at: Option<Instant>,
    each_wait: Option<Duration>,
}

impl Default for Wire {
    fn default() -> Self {
        Wire {
            out: Vec::with_capacity(512),
            inb: vec![0; 64 * 1024],
            pos: 0,
            end: 0,
            give_up_at: None,
            each_wait: None,
        }
    }
}

impl Wire {
    /// Bound every wait for the server: until `give_up_at` at the latest,
    /// and at most `each_wait` per reply. A wait that runs out fails with
    /// an [`io::ErrorKind::TimedOut`] I/O error (see [`is_stall`]); the
    /// connection is then unusable (a reply may still arrive) and must be
    /// dropped.
    pub fn set_limits(&mut self, give_up_at: Option<Instant>, each_wait: Option<Duration>) {
        self.give_up_at = give_up_at;
        self.each_wait = each_wait;
    }

    /// Execute prepared statement `stmt_id` with `params` (integers,
    /// strings or NULL: what the OLTP workloads bind).
    pub fn execute(&mut self, fd: RawFd, stmt_id: u32, params: &[Value]) -> mysql::Result<Outcome> {
        let o = &mut self.out;
        o.clear();
        o.extend_from_slice(&[0, 0, 0, 0, COM_STMT_EXECUTE]);
        o.extend_from_slice(&stmt_id.to_le_bytes());
        o.push(0); // CURSOR_TYPE_NO_CURSOR
        o.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if !params.is_empty() {
            let bitmap = o.len();
            o.resize(bitmap + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Value::NULL) {
                    o[bitmap + i / 8] |= 1 << (i % 8);
                }
            }
            o.push(1); // new-params-bound: types follow
            for p in params {
                let t = match p {
                    Value::Int(_) => MYSQL_TYPE_LONGLONG,
                    Value::Bytes(_) => MYSQL_TYPE_VAR_STRING,
                    Value::NULL => MYSQL_TYPE_NULL,
                    _ => return Err(unsupported()),
                };
                o.extend_from_slice(&[t, 0]);
            }
            for p in params {
                match p {
                    Value::Int(i) => o.extend_from_slice(&i.to_le_bytes()),
                    Value::Bytes(b) => {
                        put_lenenc(o, b.len() as u64);
                        o.extend_from_slice(b);
                    }
                    _ => {}
                }
            }
        }
        self.round_trip(fd)
    }

    /// A text-protocol statement (COM_QUERY).
    pub fn query(&mut self, fd: RawFd, sql: &str) -> mysql::Result<Outcome> {
        self.query_bytes(fd, sql.as_bytes())
    }

    /// A text-protocol statement given as bytes (a replayed log's
    /// statement, sent as the log holds it, valid UTF-8 or not).
    pub fn query_bytes(&mut self, fd: RawFd, sql: &[u8]) -> mysql::Result<Outcome> {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, COM_QUERY]);
        self.out.extend_from_slice(sql);
        self.round_trip(fd)
    }

    fn round_trip(&mut self, fd: RawFd) -> mysql::Result<Outcome> {
        let payload = self.out.len() - 4;
        if payload >= MAX_PAYLOAD {
            // OLTP statements are a few hundred bytes; a split command is
            // not worth the code.
            return Err(unsupported());
        }
        self.out[..3].copy_from_slice(&(payload as u32).to_le_bytes()[..3]);
        self.out[3] = 0; // sequence id: a new command
        send_all(fd, &self.out)?;
        self.pos = 0;
        self.end = 0;
        let r = self.response(fd);
        if r.is_ok() && self.pos != self.end {
            return Err(proto("bytes left over after the response"));
        }
        r
    }

    /// Read one complete response: OK, ERR, or a result set (column count,
    /// column definitions, EOF, rows, EOF), repeated while the server says
    /// more results follow.
    fn response(&mut self, fd: RawFd) -> mysql::Result<Outcome> {
        let mut outcome = Outcome {
            has_rows: false,
            affected: 0,
        };
        loop {
            let (first, len) = self.packet(fd)?;
            let status = match first {
                0x00 => {
                    let p = self.payload(len);
                    let (affected, n) = lenenc(&p[1..]).ok_or_else(|| proto("short OK packet"))?;
                    let (_, m) = lenenc(&p[1 + n..]).ok_or_else(|| proto("short OK packet"))?;
                    let s = &p[1 + n + m..];
                    outcome.affected = affected;
                    if s.len() >= 2 {
                        u16::from_le_bytes([s[0], s[1]])
                    } else {
                        0
                    }
                }
                0xFF => return Err(self.err_packet(len)),
                0xFB => return Err(unsupported()), // LOCAL INFILE request
                _ => {
                    let (cols, _) =
                        lenenc(self.payload(len)).ok_or_else(|| proto("bad column count"))?;
                    outcome.has_rows = true;
                    for _ in 0..cols {
                        self.packet(fd)?;
                    }
                    // The crate never asks for CLIENT_DEPRECATE_EOF, so an
                    // EOF packet ends the column definitions.
                    let (f, l) = self.packet(fd)?;
                    if !(f == 0xFE && l < 9) {
                        return Err(proto("no EOF after column definitions"));
                    }
                    loop {
                        let (f, l) = self.packet(fd)?;
                        match f {
                            0xFE if l < 9 => {
                                let p = self.payload(l);
                                break if p.len() >= 5 {
                                    u16::from_le_bytes([p[3], p[4]])
                                } else {
                                    0
                                };
                            }
                            0xFF => return Err(self.err_packet(l)),
                            _ => {}
                        }
                    }
                }
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(outcome);
            }
        }
    }

    /// Next logical packet: (first payload byte, payload length); the
    /// payload is the `len` bytes before `pos`. Continuation packets of a
    /// payload over 16 MiB are consumed with it (rows are never decoded).
    fn packet(&mut self, fd: RawFd) -> mysql::Result<(u8, usize)> {
        let mut first: Option<u8> = None;
        let mut total = 0usize;
        loop {
            self.fill(fd, 4)?;
            let h = &self.inb[self.pos..self.pos + 4];
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.pos += 4;
            if len > self.inb.len() {
                // A huge row: skip it in pieces.
                let mut left = len;
                while left > 0 {
                    self.fill(fd, 1)?;
                    if first.is_none() {
                        first = Some(self.inb[self.pos]);
                    }
                    let n = left.min(self.end - self.pos);
                    self.pos += n;
                    left -= n;
                }
            } else {
                self.fill(fd, len)?;
                if first.is_none() {
                    first = Some(if len > 0 { self.inb[self.pos] } else { 0 });
                }
                self.pos += len;
            }
            total += len;
            if len < MAX_PAYLOAD {
                // A split payload is over 16 MiB: a row, never decoded;
                // callers only compare its length with 9 (EOF detection).
                return Ok((first.unwrap_or(0), total));
            }
        }
    }

    /// The payload of the packet just read by `packet` (short packets only).
    fn payload(&self, len: usize) -> &[u8] {
        &self.inb[self.pos.saturating_sub(len)..self.pos]
    }

    fn err_packet(&self, len: usize) -> mysql::Error {
        let p = self.payload(len);
        let code = if p.len() >= 3 {
            u16::from_le_bytes([p[1], p[2]])
        } else {
            0
        };
        let (state, msg) = if p.len() >= 9 && p[3] == b'#' {
            (&p[4..9], &p[9..])
        } else {
            (&b"HY000"[..], p.get(3..).unwrap_or(&[]))
        };
        mysql::Error::MySqlError(mysql::MySqlError {
            state: String::from_utf8_lossy(state).into_owned(),
            message: String::from_utf8_lossy(msg).into_owned(),
            code,
        })
    }

    /// Make at least `need` unparsed bytes available (need ≤ buffer size).
    fn fill(&mut self, fd: RawFd, need: usize) -> mysql::Result<()> {
        if self.end - self.pos >= need {
            return Ok(());
        }
        if self.pos > 0 {
            self.inb.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end < need {
            let limit = match (self.give_up_at, self.each_wait) {
                (Some(at), Some(d)) => Some(at.min(Instant::now() + d)),
                (Some(at), None) => Some(at),
                (None, Some(d)) => Some(Instant::now() + d),
                (None, None) => None,
            };
            wait_readable(fd, limit)?;
            // SAFETY: reading into our own buffer's spare tail.
            let n = unsafe {
                libc::recv(
                    fd,
                    self.inb[self.end..].as_mut_ptr().cast(),
                    self.inb.len() - self.end,
                    libc::MSG_DONTWAIT,
                )
            };
            match n {
                0 => return Err(lost("the server closed the connection")),
                n if n > 0 => self.end += n as usize,
                _ => {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => continue,
                        _ => return Err(mysql::Error::IoError(e)),
                    }
                }
            }
        }
        Ok(())
    }
}

/// Sleep until the socket has data, or until `limit`. poll(2) with POLLIN
/// only: the wake-up the kernel sends when the peer consumes our request
/// (EPOLLOUT) does not reach us, unlike a sleep inside recv(2).
fn wait_readable(fd: RawFd, limit: Option<Instant>) -> mysql::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        let timeout_ms: libc::c_int = match limit {
            None => -1,
            Some(at) => {
                let left = at.saturating_duration_since(Instant::now());
                // Round up: a 0 ms poll would spin through the last millisecond.
                left.as_micros()
                    .div_ceil(1000)
                    .min(libc::c_int::MAX as u128) as libc::c_int
            }
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
        if r > 0 {
            return Ok(());
        }
        if r == 0 {
            return Err(mysql::Error::IoError(io::Error::new(
                io::ErrorKind::TimedOut,
                STALL,
            )));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(mysql::Error::IoError(e));
        }
    }
}

fn send_all(fd: RawFd, mut buf: &[u8]) -> mysql::Result<()> {
    while !buf.is_empty() {
        // SAFETY: sending from a valid slice; MSG_NOSIGNAL turns a closed
        // peer into EPIPE instead of SIGPIPE.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(mysql::Error::IoError(e));
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// A length-encoded integer at the start of `b`: (value, bytes used).
fn lenenc(b: &[u8]) -> Option<(u64, usize)> {
    let le = |n: usize| -> Option<(u64, usize)> {
        let s = b.get(1..1 + n)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(s);
        Some((u64::from_le_bytes(v), 1 + n))
    };
    match *b.first()? {
        x @ 0..=0xFA => Some((x as u64, 1)),
        0xFC => le(2),
        0xFD => le(3),
        0xFE => le(8),
        _ => None,
    }
}

fn put_lenenc(o: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => o.push(v as u8),
        0xFB..=0xFFFF => {
            o.push(0xFC);
            o.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            o.push(0xFD);
            o.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            o.push(0xFE);
            o.extend_from_slice(&v.to_le_bytes());
        }
    }
}

const STALL: &str = "the server sent no reply in time";

/// Did a [`Wire`] call fail because the server did not answer within the
/// limits of [`Wire::set_limits`]?
pub fn is_stall(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::IoError(io) if io.kind() == io::ErrorKind::TimedOut)
}

fn lost(why: &str) -> mysql::Error {
    mysql::Error::IoError(io::Error::new(io::ErrorKind::ConnectionAborted, why))
}

fn proto(why: &str) -> mysql::Error {
    mysql::Error::IoError(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("protocol error: {why}"),
    ))
}

fn unsupported() -> mysql::Error {
    proto("a parameter type or reply the OLTP fast path does not handle")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trip() {
        for v in [
            0u64,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            assert_eq!(lenenc(&b), Some((v, b.len())), "{v}");
        }
        assert_eq!(lenenc(&[0xFB]), None);
        assert_eq!(lenenc(&[0xFC, 1]), None);
    }

    /// A scripted server on a socketpair: an OK, an ERR, and a result set
    /// whose second row arrives split across writes.
    #[test]
    fn responses_over_a_socketpair() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        use std::os::unix::net::UnixStream;
        let (client, mut server) = UnixStream::pair().unwrap();
        let pkt = |seq: u8, p: &[u8]| {
            let mut v = (p.len() as u32).to_le_bytes()[..3].to_vec();
            v.push(seq);
            v.extend_from_slice(p);
            v
        };
        let t = std::thread::spawn(move || {
            let mut r = [0u8; 256];
            use std::io::Read;
            // 1: OK, 3 affected rows.
            let _ = server.read(&mut r).unwrap();
            server.write_all(&pkt(1, &[0, 3, 0, 2, 0, 0, 0])).unwrap();
            // 2: ERR 1213.
            let _ = server.read(&mut r).unwrap();
            let mut e = vec![0xFF, 0xBD, 0x04, b'#'];
            e.extend_from_slice(b"40001Deadlock found");
            server.write_all(&pkt(1, &e)).unwrap();
            // 3: one column, two rows, the second split in the middle.
            let _ = server.read(&mut r).unwrap();
            let mut all = pkt(1, &[1]);
            all.extend(pkt(2, b"\x03defcoldef"));
            all.extend(pkt(3, &[0xFE, 0, 0, 2, 0]));
            all.extend(pkt(4, &[0, 0, 1, b'a']));
            let row2 = pkt(5, &[0, 0, 1, b'b']);
            all.extend(&row2[..3]);
            server.write_all(&all).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
            let mut rest = row2[3..].to_vec();
            rest.extend(pkt(6, &[0xFE, 0, 0, 2, 0]));
            server.write_all(&rest).unwrap();
        });
        let fd = client.as_raw_fd();
        let mut w = Wire::default();
        let ok = w.execute(fd, 7, &[Value::Int(1)]).unwrap();
        assert_eq!(
            ok,
            Outcome {
                has_rows: false,
                affected: 3
            }
        );
        match w.query(fd, "UPDATE") {
            Err(mysql::Error::MySqlError(e)) => {
                assert_eq!(e.code, 1213);
                assert_eq!(e.state, "40001");
                assert_eq!(e.message, "Deadlock found");
            }
            other => panic!("{other:?}"),
        }
        let rs = w
            .execute(fd, 7, &[Value::Bytes(b"x".to_vec()), Value::NULL])
            .unwrap();
        assert!(rs.has_rows);
        t.join().unwrap();
        drop(client);
    }

    /// A peer that reads the request and never answers: the wait ends at
    /// the limit with a stall error, not never.
    #[test]
    fn silent_peer_times_out_at_the_limit() {
        use std::os::fd::AsRawFd;
        use std::os::unix::net::UnixStream;
        let (client, _server) = UnixStream::pair().unwrap();
        let mut w = Wire::default();
        let t0 = Instant::now();
        w.set_limits(Some(t0 + Duration::from_millis(300)), None);
        let e = w.query(client.as_raw_fd(), "SELECT 1").unwrap_err();
        assert!(is_stall(&e), "{e:?}");
        let took = t0.elapsed();
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // The per-reply bound alone works too.
        let (client, _server) = UnixStream::pair().unwrap();
        w.set_limits(None, Some(Duration::from_millis(100)));
        let e = w.query(client.as_raw_fd(), "SELECT 1").unwrap_err();
        assert!(is_stall(&e), "{e:?}");
    }

    #[test]
    fn closed_connection_is_an_io_error() {
        use std::os::fd::AsRawFd;
        use std::os::unix::net::UnixStream;
        let (client, server) = UnixStream::pair().unwrap();
        drop(server);
        let mut w = Wire::default();
        let e = w.query(client.as_raw_fd(), "SELECT 1").unwrap_err();
        assert!(matches!(e, mysql::Error::IoError(_)), "{e:?}");
    }
}
