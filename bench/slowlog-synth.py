# Synthetic slow log: MariaDB 10.11 format at long_query_time=0 (default log_slow_verbosity),
# sysbench oltp_read_write statements in statement mode, the shape bench/slowlog-compare.sh's
# sandbox writes, without a server (for profiling and for that script's KEEP_LOG= on a busy
# machine). Usage: python3 bench/slowlog-synth.py SIZE_MB OUT (seeded: the same bytes every time).
# Synthetic MariaDB 10.11 slow log (long_query_time=0, default verbosity),
# sysbench oltp_read_write in statement mode: the shape bench/slowlog-compare.sh's sandbox writes.
import random, sys, time
random.seed(1)
size = int(sys.argv[1]) * 1048576
out = open(sys.argv[2], 'w')
ts = 1764300000
written = 0
head = "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:\nTcp port: 0  Unix socket: /tmp/sb/mysql.sock\nTime\t\t    Id Command\tArgument\n"
out.write(head); written += len(head)
def s(n): return '-'.join(''.join(random.choice('0123456789') for _ in range(11)) for _ in range(n))
first = True
tick = 0
while written < size:
    tid = random.randint(5, 8)
    t = random.randint(1, 4)
    r = lambda: random.randint(1, 10000)
    stmts = ["BEGIN"]
    for _ in range(10): stmts.append(f"SELECT c FROM sbtest{t} WHERE id={r()}")
    a = r(); stmts.append(f"SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {a+99}")
    a = r(); stmts.append(f"SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN {a} AND {a+99}")
    a = r(); stmts.append(f"SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {a+99} ORDER BY c")
    a = r(); stmts.append(f"SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN {a} AND {a+99} ORDER BY c")
    stmts.append(f"UPDATE sbtest{t} SET k=k+1 WHERE id={r()}")
    stmts.append(f"UPDATE sbtest{t} SET c='{s(10)}' WHERE id={r()}")
    i = r(); stmts.append(f"DELETE FROM sbtest{t} WHERE id={i}")
    stmts.append(f"INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({i}, {r()}, '{s(10)}', '{s(5)}')")
    stmts.append("COMMIT")
    buf = []
    for q in stmts:
        tick += 1
        if tick % 40 == 0:
            ts += 1
            g = time.gmtime(ts); buf.append(time.strftime("# Time: %y%m%d ", g) + f"{g.tm_hour:2d}:{g.tm_min:02d}:{g.tm_sec:02d}\n")
        qt = random.randint(20, 3000)
        buf.append(f"# User@Host: root[root] @ localhost []\n# Thread_id: {tid}  Schema: sbtest  QC_hit: No\n# Query_time: 0.{qt:06d}  Lock_time: 0.{random.randint(0,60):06d}  Rows_sent: {random.randint(0,100)}  Rows_examined: {random.randint(0,200)}\n# Rows_affected: {random.randint(0,1)}  Bytes_sent: {random.randint(11,2000)}\n")
        if first:
            buf.append("use sbtest;\n"); first = False
        buf.append(f"SET timestamp={ts};\n{q};\n")
    chunk = ''.join(buf)
    out.write(chunk); written += len(chunk)
