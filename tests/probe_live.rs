//! `innotune probe` on this machine: a loop device the test creates (file on
//! the real disk → losetup --direct-io=on → mkfs.ext4 → mount with chosen
//! options), probed through the public CLI. Expected values are read here
//! independently (stat of the backing file, sysfs directly), not copied from
//! innotune's own code. Needs root, losetup, mkfs.ext4 and mount.

mod support;
use support::{sh, Lab, LabOpts, Mount};

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Kernel name of the block device holding `p`, from stat's st_dev.
fn device_of(p: &Path) -> String {
    let dev = std::fs::metadata(p).unwrap().dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let target = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")).unwrap();
    target.file_name().unwrap().to_string_lossy().into_owned()
}

/// The sysfs block directory of a device, partition or not.
fn sys_dir(name: &str) -> PathBuf {
    std::fs::canonicalize(format!("/sys/class/block/{name}")).unwrap()
}

fn scheduler_line(name: &str) -> Option<String> {
    let dir = sys_dir(name);
    let disk = if dir.join("partition").exists() {
        dir.parent().unwrap().to_path_buf()
    } else {
        dir
    };
    std::fs::read_to_string(disk.join("queue/scheduler"))
        .ok()
        .map(|s| s.trim().to_string())
}

fn check_schedulers(d: &Value, line: &str) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let active = words
        .iter()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(['[', ']']))
        .unwrap_or(words[0]);
    let all: Vec<String> = words
        .iter()
        .map(|w| w.trim_matches(['[', ']']).to_string())
        .collect();
    assert_eq!(d["queue"]["scheduler"], active, "{}", d["name"]);
    assert_eq!(
        d["queue"]["schedulers_available"],
        serde_json::json!(all),
        "{}",
        d["name"]
    );
}

#[test]
fn probe_names_loop_backing_file_and_disk_under_it() {
    if !support::live() {
        return;
    }
    let g = Lab::new(LabOpts {
        tag: "probe-live",
        mount_opts: "noatime,nobarrier,discard",
        ..LabOpts::default()
    });
    let (dev, mnt, img) = (g.dev.clone(), g.mnt.clone(), g.img.clone());
    let data = mnt.join("datadir");
    std::fs::create_dir(&data).unwrap();

    let out = support::innotune()
        .args(["probe", "--format", "json"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    let loop_name = dev.trim_start_matches("/dev/");
    let canon_img = std::fs::canonicalize(&img).unwrap();

    // The mount, with the options chosen above.
    let m = &r["mount"];
    assert_eq!(m["mount_point"], mnt.to_str().unwrap());
    assert_eq!(m["source"], dev);
    assert_eq!(m["fs_type"], "ext4");
    assert_eq!(m["decoded"]["atime"], "noatime");
    assert_eq!(m["decoded"]["barrier"], "off");
    assert_eq!(m["decoded"]["discard"], "on");

    // Top: the loop device and its backing file.
    let stack = r["stack"].as_array().unwrap();
    let top = &stack[0];
    assert_eq!(top["name"], loop_name);
    assert_eq!(top["kind"], "loop");
    assert_eq!(top["relation"], "mounted");
    assert_eq!(top["loop"]["backing_file"], canon_img.to_str().unwrap());
    assert_eq!(top["loop"]["direct_io"], true);
    check_schedulers(top, &scheduler_line(loop_name).unwrap());

    // Below: the device holding the backing file, as stat sees it, and its disk.
    let under = device_of(&canon_img);
    let below = &stack[1];
    assert_eq!(below["name"], under, "device under the backing file");
    assert_eq!(below["relation"], "backing");
    assert_eq!(below["parent"], loop_name);
    let disk = if below["partition"].is_null() {
        below
    } else {
        assert_eq!(stack[2]["relation"], "whole_disk");
        &stack[2]
    };
    check_schedulers(
        disk,
        &scheduler_line(disk["name"].as_str().unwrap()).unwrap(),
    );
    if disk["name"].as_str().unwrap().starts_with("vd") {
        assert_eq!(disk["kind"], "virtio");
    }
    let rot: u64 =
        std::fs::read_to_string(sys_dir(disk["name"].as_str().unwrap()).join("queue/rotational"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
    assert_eq!(disk["queue"]["rotational"], rot == 1);

    // The library contract sweep relies on.
    let names = innotune::probe::stack_device_names(&innotune::host::Host::live(), &data).unwrap();
    assert_eq!(names[0], loop_name);
    assert_eq!(names[1], under);
    drop(g);
    assert!(
        !sh("losetup", &["-a"]).contains(canon_img.to_str().unwrap()),
        "loop device detached"
    );
}

/// A fresh ext4 on a loop device (direct I/O), mounted at `dir/<mnt_name>`.
fn loop_mount(mnt_name: &str) -> (Lab, String, PathBuf) {
    let g = Lab::new(LabOpts {
        tag: "probe-live",
        size: 32 << 20,
        mnt_name,
        ..LabOpts::default()
    });
    let (dev, mnt) = (g.dev.clone(), g.mnt.clone());
    (g, dev, mnt)
}

fn probe_out(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = support::innotune()
        .arg("probe")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The kernel writes a newline in a mount point as `\012` and leaves ESC
/// raw; probe decodes the one, finds the mount, and prints neither raw.
#[test]
fn a_mount_point_with_a_newline_and_an_escape_is_found_and_shown_escaped() {
    if !support::live() {
        return;
    }
    let (g, dev, mnt) = loop_mount("db\nline \x1b[31mred");
    let data = mnt.join("datadir");
    std::fs::create_dir(&data).unwrap();
    let out = probe_out(&["--format".as_ref(), "json".as_ref(), data.as_os_str()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"]["mount"]["mount_point"], mnt.to_str().unwrap());
    assert_eq!(v["result"]["mount"]["source"], dev);
    assert_eq!(
        v["result"]["stack"][0]["name"],
        dev.trim_start_matches("/dev/")
    );
    let out = probe_out(&["--color".as_ref(), "never".as_ref(), data.as_os_str()]);
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(!t.contains('\x1b'), "{t}");
    assert!(t.contains("db\\nline \\e[31mred/datadir"), "{t}");
    drop(g);
}

/// An overlay whose upperdir is on the test's loop filesystem: probe walks
/// from the overlay to that loop device.
#[test]
fn an_overlay_is_walked_through_its_upperdir() {
    if !support::live() {
        return;
    }
    let (g, dev, mnt) = loop_mount("base");
    for d in ["lower", "upper", "work", "merged"] {
        std::fs::create_dir(mnt.join(d)).unwrap();
    }
    let merged = mnt.join("merged");
    let opts = format!(
        "lowerdir={},upperdir={},workdir={}",
        mnt.join("lower").display(),
        mnt.join("upper").display(),
        mnt.join("work").display()
    );
    let _ov = Mount::on(&merged, "overlay", "overlay", &opts);
    let out = probe_out(&["--format".as_ref(), "json".as_ref(), merged.as_os_str()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["mount"]["fs_type"], "overlay");
    assert_eq!(r["mount"]["upperdir"], mnt.join("upper").to_str().unwrap());
    assert_eq!(
        r["overlays"][0]["upper_mount"]["mount_point"],
        mnt.to_str().unwrap()
    );
    assert_eq!(r["stack"][0]["name"], dev.trim_start_matches("/dev/"));
    assert_eq!(r["stack"][0]["relation"], "upperdir");
    assert_eq!(r["stack"][0]["kind"], "loop");
    drop(_ov);
    drop(g);
}
