#!/usr/bin/env bash
# Who finds which planted problem: innotune check, MySQLTuner and
# pt-variable-advisor on the same throwaway server.
#
# A correctness comparison, not a timing: the numbers do not depend on a
# quiet machine. The server is an `innotune sandbox` whose datadir is on a
# loop device this script makes (ext4 mounted relatime, bfq as scheduler),
# started with planted server mistakes; `innotune oltp oltp_write_only`
# writes during innotune's sample window (and before MySQLTuner reads its
# since-uptime counters). The host's own vm.swappiness and fs.aio-max-nr
# count as planted when they are off (this project's VM: 60 and 65536).
#
# Writes bench/out/advisor-compare/{innotune.json,mysqltuner.txt,pt-variable-advisor.txt,table.md}
# and replaces the "Advisor comparison" section of bench/log/advisor-compare.md.
#
# Usage (root): bench/advisor-compare.sh          # SAMPLE=30s by default
# Needs: mysqltuner, percona-toolkit (pt-variable-advisor), mariadb-server,
# losetup, mkfs.ext4. Nothing outside its scratch directory is changed; the
# loop device, the mount and the server go away on every exit path.
set -euo pipefail
cd "$(dirname "$0")/.."

SAMPLE=${SAMPLE:-30s}
BIN=${BIN:-target/release/innotune}
OUT=bench/out/advisor-compare
[ "$(id -u)" = 0 ] || { echo "run as root (loop device, scheduler)" >&2; exit 2; }
for t in mysqltuner pt-variable-advisor losetup mkfs.ext4; do
  command -v "$t" >/dev/null || { echo "missing $t (apt-get install mysqltuner percona-toolkit)" >&2; exit 2; }
done
[ -x "$BIN" ] || cargo build --release
mkdir -p "$OUT"

. bench/lib.sh
bench_workdir advisor-compare; work=$WORK
truncate -s 2G "$work/disk.img"
bench_loop "$work/disk.img"; dev=$LOOP
bench_ext4 "$dev" "$work/mnt"
mount -o remount,relatime "$work/mnt"
# The load generator and the sandbox go before the filesystem under them.
load=""
bench_undo '[ -n "$load" ] && kill "$load" 2>/dev/null; [ -d "$work/mnt/sb" ] && "$BIN" sandbox stop --dir "$work/mnt/sb" >/dev/null 2>&1'
echo bfq > "/sys/block/${dev#/dev/}/queue/scheduler"

cat > "$work/planted.cnf" <<'EOF'
query_cache_type = 1
query_cache_size = 64M
innodb_buffer_pool_chunk_size = 64M
innodb_buffer_pool_size = 200M
innodb_log_file_size = 8M
innodb_flush_log_at_trx_commit = 0
innodb_flush_method = fsync
tmp_table_size = 64M
max_heap_table_size = 16M
innodb_file_per_table = OFF
EOF
sb=$work/mnt/sb
"$BIN" sandbox start --dir "$sb" --profile "$work/planted.cnf" >/dev/null
conn=(--socket "$sb/mysql.sock" --user root --no-defaults)
"$BIN" oltp oltp_write_only prepare "${conn[@]}" --tables 4 --table-size 20000 --threads 4 >/dev/null
secs=${SAMPLE%s}
"$BIN" oltp oltp_write_only run "${conn[@]}" --tables 4 --table-size 20000 --threads 4 \
  --time $((secs + 20)) --report-interval 1 > "$work/load.txt" 2>&1 &
load=$!
# Start measuring once the load reports its first interval.
until grep -q "tps:" "$work/load.txt"; do
  kill -0 "$load" 2>/dev/null || { cat "$work/load.txt" >&2; exit 1; }
  sleep 0.2
done
set +e
"$BIN" check --format json --sample "$SAMPLE" "${conn[@]}" > "$OUT/innotune.json"
set -e
wait "$load" || true
load=""
mysqltuner --defaults-file "$sb/my.cnf" --nocolor --verbose --server-log "$sb/error.log" \
  > "$OUT/mysqltuner.txt" 2>&1 || true
pt-variable-advisor "S=$sb/mysql.sock,u=root" > "$OUT/pt-variable-advisor.txt" 2>&1 || true

python3 - "$OUT" <<'PY'
import json, re, sys, datetime
out = sys.argv[1]
inno = json.load(open(f"{out}/innotune.json"))["result"]
mt = open(f"{out}/mysqltuner.txt").read().splitlines()
pt = open(f"{out}/pt-variable-advisor.txt").read().splitlines()

# MySQLTuner's findings: [!!] lines and its "Variables to adjust" list.
mt_lines, adjust = [], False
for l in mt:
    if l.startswith("Variables to adjust"):
        adjust = True
        continue
    if adjust and l.startswith("    "):
        mt_lines.append("adjust: " + l.strip())
    elif l.startswith("[!!]"):
        mt_lines.append(l[4:].strip())
pt_lines = [l[2:].strip() for l in pt if re.match(r"# (NOTE|WARN|CRIT) ", l)]

def first(lines, rx):
    for l in lines:
        if re.search(rx, l, re.I):
            return l if len(l) <= 110 else l[:107] + "..."
    return None

def first_mt(rx):
    """MySQLTuner's warning line and its value from "Variables to adjust"."""
    bang = first([l for l in mt_lines if not l.startswith("adjust: ")], rx)
    adj = first([l for l in mt_lines if l.startswith("adjust: ")], rx)
    got = [x for x in (bang, adj) if x]
    return " / ".join(got) if got else None

def inn(ids, subject=None):
    for f in inno["findings"]:
        if f["id"] in ids and (subject is None or f["subject"]["name"] == subject):
            rec = f.get("recommended")
            return f'{f["subject"]["name"]}: {f["observed"]} → {rec}' if rec else f'{f["subject"]["name"]}: {f["observed"]}'
    return None

facts = inno["facts"]
sw = facts["host"].get("swappiness")
aio = facts["host"].get("aio_max_nr")
rows = [
    ("query cache on (query_cache_type=1, 64 MiB)", inn({"server.query_cache"}, "query_cache_type"),
     first_mt( r"query.cache|query_cache"), first(pt_lines, r"query_cache")),
    ("buffer pool 200 MiB, not a multiple of chunk 64 MiB", inn({"server.buffer_pool.chunk", "server.buffer_pool.size"}),
     first_mt( r"chunk|aligned with"), first(pt_lines, r"buffer_pool")),
    ("redo log 8 MiB under oltp_write_only", inn({"server.redo"}),
     first_mt( r"log file size|innodb_log_file_size|redo"), first(pt_lines, r"log_file_size")),
    ("innodb_flush_log_at_trx_commit = 0", inn({"server.durability.flush_log_at_trx_commit"}),
     first_mt( r"flush_log_at_trx_commit"), first(pt_lines, r"flush_log_at_trx_commit")),
    ("innodb_flush_method = fsync", inn({"server.flush_method"}),
     first_mt( r"flush_method"), first(pt_lines, r"flush_method")),
    ("tmp_table_size 64 MiB > max_heap_table_size 16 MiB", inn({"server.tmp_tables"}),
     first_mt( r"max_heap_table_size|tmp_table_size"), first(pt_lines, r"tmp_table_size")),
    ("innodb_file_per_table = OFF", inn({"server.file_per_table"}),
     first_mt( r"file per table|file_per_table"), first(pt_lines, r"file_per_table")),
    (f"vm.swappiness = {sw} (this host)", inn({"os.swappiness"}),
     first_mt( r"swappiness"), first(pt_lines, r"swappiness")),
    (f"fs.aio-max-nr = {aio} (this host)", inn({"os.aio"}),
     first_mt( r"number of events|aio"), first(pt_lines, r"aio")),
    ("bfq on the datadir's disk (a loop device)", inn({"storage.scheduler"}),
     first_mt( r"scheduler"), first(pt_lines, r"scheduler")),
    ("relatime on the datadir's mount", inn({"filesystem.atime"}),
     first_mt( r"atime"), first(pt_lines, r"atime")),
]
cell = lambda v: "—" if v is None else v.replace("|", "\\|")
srv = inno["server"].get("version", "?")
table = [
    f"Server: {srv} (`innotune sandbox`), datadir on a loop device; innotune sampled {inno['server'].get('sample_s', 0):.0f} s under `oltp_write_only`, MySQLTuner read since-uptime counters after the load. A cell shows what the tool printed; — means it said nothing about it.",
    "",
    "| planted problem | innotune check | MySQLTuner | pt-variable-advisor |",
    "|---|---|---|---|",
]
for name, a, b, c in rows:
    table.append(f"| {name} | {cell(a)} | {cell(b)} | {cell(c)} |")
found = lambda i: sum(1 for r in rows if r[i] is not None)
table += ["", f"Found: innotune {found(1)} of {len(rows)}, MySQLTuner {found(2)}, pt-variable-advisor {found(3)}."]
missed = [r[0] for r in rows if r[1] is None and (r[2] or r[3])]
if missed:
    table.append("innotune missed what another tool found: " + "; ".join(missed))
text = "\n".join(table) + "\n"
open(f"{out}/table.md", "w").write(text)
print(text)

# Replace the section in bench/log/advisor-compare.md.
res = open("bench/log/advisor-compare.md").read()
stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
section = f"<!-- advisor-compare -->\n## Advisor comparison ({stamp}, `bench/advisor-compare.sh`)\n\n{text}<!-- /advisor-compare -->\n"
if "<!-- advisor-compare -->" in res:
    res = re.sub(r"<!-- advisor-compare -->.*?<!-- /advisor-compare -->\n", lambda m: section, res, flags=re.S)
else:
    res = res.rstrip("\n") + "\n\n" + section
open("bench/log/advisor-compare.md", "w").write(res)
PY
