# Shared set-up for the bench scripts, sourced, not run:
#   . "$(dirname "$0")/lib.sh"          (from bench/)
#   . "$(dirname "$0")/../lib.sh"       (from bench/engine-variants/)
#
# Every bench makes the same scratch stack: a work directory under /var/tmp,
# perhaps a tmpfs (RAM backing: no disk under the loop device, so the tools'
# own cost decides), a loop device with direct I/O, perhaps ext4 on it, and
# perhaps hugetlb pages for fio --mem=mmaphuge. Each helper here registers
# its own undo the moment its step succeeds, and one EXIT trap runs the
# undos newest first, so an interrupted bench (Ctrl-C, a failed command
# under `set -e`) leaves no mount, loop device, reservation or directory
# behind. Until this file, each script carried its own copy of that
# clean-up, and they had drifted (retry counts, scheduler reset or not).
#
# Plain bash, no framework: the scripts must run on a fresh Debian with
# nothing but fio, python3 and util-linux.

BENCH_UNDO=()

# Run the undos, newest first; every one runs even if an earlier one fails.
bench_cleanup() {
  set +e
  local i
  for ((i = ${#BENCH_UNDO[@]} - 1; i >= 0; i--)); do
    eval "${BENCH_UNDO[i]}"
  done
  BENCH_UNDO=()
}
trap bench_cleanup EXIT
# A signal ends the script through `exit`, so the EXIT trap runs once.
trap 'exit 130' INT
trap 'exit 143' TERM

# bench_undo CMD: run CMD (a string, evaluated then) on exit.
bench_undo() { BENCH_UNDO+=("$1"); }

# bench_umount DIR: unmount, retrying. io_uring rings release their files in
# a deferred kernel worker after the tool exits, and a detached loop device
# lets go of its backing file a moment later, so the first umount can see
# EBUSY.
bench_umount() {
  local _
  for _ in $(seq 40); do
    mountpoint -q "$1" || return 0
    umount "$1" 2>/dev/null || sleep 0.25
  done
  echo "bench: could not unmount $1" >&2
}

# bench_workdir NAME: WORK=/var/tmp/innotune-NAME.XXXXXX, removed on exit.
# innotune's journal and lock go there too (INNOTUNE_STATE_DIR, unless the
# caller set one): a bench must not leave /var/lib/innotune on the host.
bench_workdir() {
  WORK=$(mktemp -d "/var/tmp/innotune-$1.XXXXXX")
  bench_undo "rm -rf '$WORK'"
  export INNOTUNE_STATE_DIR=${INNOTUNE_STATE_DIR:-$WORK/state}
}

# bench_tmpfs DIR SIZE_MB: a tmpfs of SIZE_MB MiB on DIR, unmounted on exit.
bench_tmpfs() {
  mkdir -p "$1"
  mount -t tmpfs -o "size=$2m" tmpfs "$1"
  bench_undo "bench_umount '$1'"
}

# bench_loop FILE: a loop device with direct I/O over FILE, in LOOP; put
# back on scheduler none (a bench may switch it) and detached on exit.
bench_loop() {
  LOOP=$(losetup --direct-io=on -f --show "$1")
  bench_undo "echo none > /sys/block/${LOOP#/dev/}/queue/scheduler 2>/dev/null; losetup -d '$LOOP'"
}

# bench_ext4 DEV DIR: ext4 (inode tables written now, not by a background
# thread during the measurement) on DEV, mounted on DIR, unmounted on exit.
bench_ext4() {
  mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$1"
  mkdir -p "$2"
  mount "$1" "$2"
  bench_undo "bench_umount '$2'"
}

# bench_ram_ext4 [MB]: the RAM-backed device of the engine A/B scripts,
# under $WORK (bench_workdir first): ext4 on a loop device (direct I/O) over
# a file of MB MiB (default 1700: room for one 1 GiB job file; 2560 for
# two) on a tmpfs, mounted on $WORK/mnt and named in MNT; everything is
# undone on exit.
bench_ram_ext4() {
  local mb=${1:-1700}
  bench_tmpfs "$WORK/ram" $((mb + 140))
  truncate -s "${mb}M" "$WORK/ram/backing"
  bench_loop "$WORK/ram/backing"
  bench_ext4 "$LOOP" "$WORK/mnt"
  MNT=$WORK/mnt
}

# bench_job_file RW BS QD [ENGINE]: lay out $MNT/innotune-j.0 (1 GiB), the
# file the engine scripts point both tools at, with one I/O of the job
# ($INNOTUNE's own layout, so fio finds it whole and never extends it).
bench_job_file() {
  "$INNOTUNE" bench --name j --rw "$1" --bs "$2" --iodepth "$3" --ioengine "${4:-io_uring}" \
    --direct=1 --size 1024m --io_size "$2" --directory "$MNT" > /dev/null
}

# bench_tool_cmd TOOL T [JOBS [ENGINE]]: CMD, the command that runs TOOL
# (fio or innotune) for T seconds on bench_job_file's file with the job in
# RW, BS and QD (JOBS threads or processes, default 1; ENGINE io_uring or
# sync, fio's psync), each tool printing JSON. The engine scripts that set
# the two tools side by side (host-cpu, loop-worker, profile) take it from
# here, so they run the same pair of commands.
bench_tool_cmd() {
  local jobs=${3:-1} engine=${4:-io_uring} fioengine
  if [ "$1" = fio ]; then
    [ "$engine" = sync ] && fioengine=psync || fioengine=$engine
    CMD=(fio --name=j --filename="$MNT/innotune-j.0" --rw="$RW" --bs="$BS" --iodepth="$QD" --numjobs="$jobs" --ioengine="$fioengine" --direct=1 --size=1024m --time_based --runtime="$2" --norandommap --group_reporting --output-format=json)
  else
    CMD=("$INNOTUNE" --format json bench --name j --rw "$RW" --bs "$BS" --iodepth "$QD" --numjobs "$jobs" --ioengine "$engine" --direct=1 --size 1024m --runtime "$2" --directory "$MNT")
  fi
}

# bench_hugepages N: at least N hugetlb pages reserved (vm.nr_hugepages) for
# fio --mem=mmaphuge; the old value is put back on exit.
bench_hugepages() {
  local old
  old=$(cat /proc/sys/vm/nr_hugepages)
  bench_undo "echo $old > /proc/sys/vm/nr_hugepages"
  [ "$old" -ge "$1" ] || echo "$1" > /proc/sys/vm/nr_hugepages
}

# bench_disk_of PATH: the whole disk under PATH's filesystem (vda, not
# vda1), for the benches that switch the disk's scheduler.
bench_disk_of() {
  local src parent
  src=$(findmnt -no SOURCE -T "$1")
  parent=$(lsblk -no PKNAME "$src" | head -1)
  echo "${parent:-$(basename "$src")}"
}
