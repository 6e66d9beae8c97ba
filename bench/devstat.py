"""Block-layer counters of the devices under a mount, shared by the bench scripts
(engine-variants/compare.py, fio-compare.sh).

For each layer an I/O passes through (the loop device under the mount, and the
whole disk under the loop's backing file), a run's counters give requests
completed per second of the tool's own measured runtime, their mean time from
allocation to completion at that device, and the mean number in flight
(iostat's aqu-sz: summed request time over that runtime). Little's law makes
rate = in flight / time at each layer, so a gap in IOPS shows as either fewer
requests kept in flight at a layer, or the same number each served slower; and
a tool that keeps more requests in flight at a device than its peer, at the
same rate, is offering that device more work than it completes: the device, not
the tool, sets the rate.

Divided by the tool's own runtime, not the process's wall time: fio spends
~0.25 s starting up, which would dilute its figures by 3 % in an 8 s run. Not
the device's busy time (field 10) either: on this VM it runs ~10 % short of the
runtime under constant load.
"""
import os
import subprocess


def devices(mnt):
    """The loop device under `mnt`, and the whole disk that holds its backing
    file (DISKS="loop0 vda" names others). Empty when `mnt` is on no block
    device (tmpfs)."""
    if os.environ.get("DISKS"):
        return os.environ["DISKS"].split()
    out = []
    src = subprocess.run(["findmnt", "-no", "SOURCE", "--target", mnt],
                         capture_output=True, text=True).stdout.strip()
    name = os.path.basename(src)
    if name.startswith("loop"):
        out.append(name)
        try:
            back = open("/sys/block/%s/loop/backing_file" % name).read().strip()
            part = subprocess.run(["findmnt", "-no", "SOURCE", "--target", back],
                                  capture_output=True, text=True).stdout.strip()
            disk = subprocess.run(["lsblk", "-no", "PKNAME", part],
                                  capture_output=True, text=True).stdout.split()
            disk = disk[0] if disk else os.path.basename(part)
            if os.path.exists("/sys/block/%s/stat" % disk):
                out.append(disk)
        except OSError:
            pass
    elif os.path.exists("/sys/class/block/%s/stat" % name):
        out.append(name)
    return out


def snapshot(devs):
    """/sys/block/N/stat of each device: 0 reads, 2 sectors read, 3 read ms,
    4 writes, 6 sectors written, 7 write ms, 10 summed request ms."""
    return [[int(x) for x in open("/sys/class/block/%s/stat" % d).read().split()] for d in devs]


def delta(a, b, secs):
    """Per device, between two snapshots over `secs` of the tool's runtime:
    (requests per second, mean us per request, mean in flight, KiB per request)."""
    out = []
    for x, y in zip(a, b):
        d = [q - p for p, q in zip(x, y)]
        ios = d[0] + d[4]
        out.append((ios / secs, 1000.0 * (d[3] + d[7]) / max(ios, 1), d[10] / (1000.0 * secs),
                    512.0 * (d[2] + d[6]) / 1024 / max(ios, 1)))
    return out


# Index of each figure in a delta() tuple.
RATE, TIME, IN_FLIGHT, KIB = 0, 1, 2, 3
